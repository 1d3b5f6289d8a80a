package zabmodel

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
)

// TestServerTimersAreNamedValues runs an ensemble through elections, discovery, sync and a crash
// and restart of its leader, with the trace rendered, and requires every timer a server's process
// fired to be a timer value with a name (timers.go), none a closure (rendered "tag=0"): the
// protocol code has no other way to run later. It also requires the timers that show the cores'
// steps to be among them, so that the test is looking at the right thing.
func TestServerTimersAreNamedValues(t *testing.T) {
	names := map[string]int{}
	var closures []string
	w, err := sim.New(sim.Config{Seed: 3, Trace: sim.TraceConfig{Records: func(r sim.Record) {
		if r.Event != sim.KindTimer.String() || !strings.HasPrefix(r.Node, "zk") {
			return
		}
		if strings.HasPrefix(r.Detail, "tag=") {
			closures = append(closures, r.Time+" "+r.Node)
			return
		}
		names[r.Detail]++
	}}})
	require.NoError(t, err)
	nw, err := net.New(w, net.Config{})
	require.NoError(t, err)
	e, err := NewEnsemble(w, nw, Config{Voters: 3})
	require.NoError(t, err)
	e.Start()
	w.RunFor(5 * clock.Second)
	for _, s := range e.Servers() {
		if s.State().Role == Leading {
			w.Crash(s.node)
			w.RunFor(3 * clock.Second)
			w.Restart(s.node)
		}
	}
	w.RunFor(5 * clock.Second)
	require.False(t, w.Ended(), "run ended: %v", w.Outcome())

	t.Logf("named timers fired: %v", names)
	assert.Empty(t, closures, "server timers fired as closures")
	for _, want := range []string{"election timeout", "leader tick", "handler sender-turn", "peer start-election"} {
		assert.Positive(t, names[want], "no %q timer fired; fired: %v", want, names)
	}
}
