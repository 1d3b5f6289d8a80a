package scenarios

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/sim"
)

// TestBoundaryActionsFireWhereTheyAreArmed: a crash, a pause and a reset armed at effect
// boundaries each happen at the boundary's next hit, say so in the trace, count as faults, and
// leave a run that passes every check.
func TestBoundaryActionsFireWhereTheyAreArmed(t *testing.T) {
	script, err := ParseScript(strings.NewReader(`servers 3
observers 0
clients 2
duration 20s
at 1s resetpoint leader after-send:PING
at 3s pausepoint zk1 before-send:ACK for 2s
at 8s crashpoint leader after-send:COMMIT restart 1s
`))
	require.NoError(t, err)
	var trace bytes.Buffer
	rep, r := runScripted(t, Options{Seed: 2, Script: script, Trace: sim.TraceConfig{Text: &trace}})
	require.False(t, rep.Failed(), rep.Explain())
	for i, a := range script.Actions {
		assert.True(t, r.actionResults[i].done, "%s: %s", a, r.actionResults[i].idle)
	}
	assert.Equal(t, 3+1, rep.Stats.FaultsInjected, "three injections and the crash's restart")
	out := trace.String()
	assert.Regexp(t, `reset at after-send:PING of zk\d`, out)
	assert.Contains(t, out, "pause at before-send:ACK of zk1 for 2s")
	assert.Regexp(t, `zk\d +fault +crash at after-send:COMMIT`, out)
}

// TestBoundaryActionsParse: the boundary verbs read back what they write, and refuse what they
// cannot mean.
func TestBoundaryActionsParse(t *testing.T) {
	for _, good := range []string{
		"crashpoint zk1 after-send:SNAP", "crashpoint leader before-fsync 3 restart 2s",
		"pausepoint zk2 after-send:SNAPSHOT for 1.5s", "pausepoint all before-append 2 for 100ms",
		"resetpoint follower after-send:COMMIT", "resetpoint zk3 after-epoch-write:currentEpoch 4",
	} {
		f := strings.Fields(good)
		spec, err := parsePointAction(f[0], f[1:])
		require.NoError(t, err, good)
		assert.Equal(t, strings.Join(f[1:], " "), strings.Join(crashpointArgs(spec), " "), good)
	}
	for bad, want := range map[string]string{
		"pausepoint zk1 after-send:SNAP":                   "for DUR",
		"pausepoint zk1 after-send:SNAP for 0s":            "positive duration",
		"pausepoint zk1 after-send:SNAP restart 1s for 1s": "for DUR",
		"pausepoint zk1 after-send:SNAP restart for 1s":    "restart takes one duration",
		"resetpoint zk1 after-send:SNAP restart 1s":        "2 or 3 arguments",
		"resetpoint zk1 after-send:NOPE":                   "unknown crash point",
		"crashpoint c1 after-send:SNAP":                    "a server",
	} {
		f := strings.Fields(bad)
		_, err := parsePointAction(f[0], f[1:])
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), want, bad)
	}
}
