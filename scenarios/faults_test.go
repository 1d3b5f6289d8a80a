package scenarios

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/sim"
)

// runScripted runs a seed as Run does, and also returns the runner, whose record of what each
// action did (and whose workload) the tests read.
func runScripted(t *testing.T, opts Options) (*Report, *runner) {
	t.Helper()
	opts = opts.withDefaults()
	require.NoError(t, opts.Validate())
	r, err := newRunner(opts)
	require.NoError(t, err)
	r.runFaultPhase()
	return r.judge(r.runLivenessPhase()), r
}

// TestActionsThatFindNothingAreNotCounted: a legal target may find nothing to act on when the
// action comes (no leader, a server already down or running, a client already dead, a crash point
// never reached). Such an action does nothing, says so in the trace, and is not counted as an
// injected fault.
func TestActionsThatFindNothingAreNotCounted(t *testing.T) {
	script, err := ParseScript(strings.NewReader(`servers 3
clients 2
duration 10s
at 0s crashpoint zk1 log-appended 10000000
at 1s crash all
at 2s crash leader
at 2s crash zk1
at 3s restart all
at 3s restart zk2
at 4s kill c1
at 5s kill c1
at 6s pause c1 1s
at 7s revive all
at 9s partition leader | zk1 zk2 zk3
`))
	require.NoError(t, err)
	var trace bytes.Buffer
	rep, r := runScripted(t, Options{Seed: 1, Script: script, Trace: sim.TraceConfig{Text: &trace}})
	require.False(t, rep.Failed(), rep.Explain())
	done := []string{"at 1s crash all", "at 3s restart all", "at 4s kill c1", "at 7s revive all"}
	for i, a := range script.Actions {
		res := r.actionResults[i]
		if slices.Contains(done, a.String()) {
			assert.True(t, res.done, "%s: %s", a, res.idle)
			continue
		}
		assert.False(t, res.done, "%s took effect", a)
		require.NotEmpty(t, res.idle, "%s: why it did nothing", a)
		assert.Contains(t, trace.String(), a.String()+" did nothing: "+res.idle)
	}
	assert.Equal(t, len(done), rep.Stats.FaultsInjected)
	assert.Contains(t, trace.String(), "at 2s crash leader did nothing: no such node at this moment")
	assert.Contains(t, trace.String(), "at 2s crash zk1 did nothing: already down")
	assert.Contains(t, trace.String(), "at 3s restart zk2 did nothing: already running")
	assert.Contains(t, trace.String(), "did nothing: no armed server reached the point before the end of the fault phase")
}
