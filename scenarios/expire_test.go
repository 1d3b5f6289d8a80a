package scenarios

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestForcedExpiryClosesTheVictimsSession runs the named forced-expiry script and looks in the
// history for what the killer did to c1: the session it recorded closing was closed by a
// closeSession with the killer's xid (not the leader's expiry) soon after, c1's client learned
// that its session had expired, and c1 went on working with a new session.
func TestForcedExpiryClosesTheVictimsSession(t *testing.T) {
	script := namedScript(t, "forced-expiry")
	for seed := uint64(1); seed <= 3; seed++ {
		rep, err := Run(Options{Seed: seed, Script: script})
		require.NoError(t, err)
		require.False(t, rep.Failed(), "seed %d: %s", seed, rep.Explain())
		h := rep.History
		assert.GreaterOrEqual(t, len(h.ForcedExpiries), 3, "seed %d: c1, c2 and at least one more by 'all'", seed)
		i := slices.IndexFunc(h.ForcedExpiries, func(e checkers.ForcedExpiry) bool { return e.Client == "c1" })
		require.GreaterOrEqual(t, i, 0, "seed %d: c1's session was forced out", seed)
		forced := h.ForcedExpiries[i]
		assert.Equal(t, "killer-c1", forced.Killer)
		expireAt := actionTime(t, script, "expire")
		assert.GreaterOrEqual(t, forced.Time, expireAt, "seed %d: recorded when the killer sent its close", seed)
		assert.Less(t, forced.Time.Sub(expireAt), clock.Second, "seed %d: the killer connected at once", seed)

		end := sessionEnd(t, h, forced.Session)
		assert.False(t, end.Expired, "seed %d: closed by a client's closeSession, not by the leader's expiry", seed)
		assert.GreaterOrEqual(t, end.Time, forced.Time)
		assert.Less(t, end.Time.Sub(forced.Time), clock.Second, "seed %d: the close committed at once", seed)
		txn := h.Committed[slices.IndexFunc(h.Committed, func(c checkers.CommittedTxn) bool { return c.Entry.Header.Zxid == end.Zxid })]
		assert.Equal(t, proto.OpCloseSession, txn.Entry.Header.Type)
		assert.NotZero(t, txn.Entry.Header.Cxid, "seed %d: the killer's closeSession carries its xid", seed)

		c1 := clientHistory(t, h, "c1")
		learned := slices.ContainsFunc(c1.Arrivals, func(a checkers.Arrival) bool {
			return a.Kind == checkers.ArrivalState && a.State == proto.StateExpired && a.Session == forced.Session && a.Time >= end.Time
		})
		assert.True(t, learned, "seed %d: c1's client was told its session expired", seed)
		after := slices.ContainsFunc(c1.Ops, func(op checkers.Operation) bool {
			return op.Call > end.Time && op.Session != 0 && op.Session != forced.Session && op.Outcome == checkers.OutcomeReplied
		})
		assert.True(t, after, "seed %d: c1 worked on with a new session", seed)
	}
}

func sessionEnd(t *testing.T, h *checkers.History, session int64) *checkers.SessionEnd {
	t.Helper()
	i := slices.IndexFunc(h.Sessions, func(s checkers.SessionFacts) bool { return s.Session == session })
	require.GreaterOrEqual(t, i, 0, "facts of session %#x", session)
	require.NotNil(t, h.Sessions[i].End, "session %#x ended", session)
	return h.Sessions[i].End
}

func clientHistory(t *testing.T, h *checkers.History, name string) *checkers.ClientHistory {
	t.Helper()
	i := slices.IndexFunc(h.Clients, func(c checkers.ClientHistory) bool { return c.Name == name })
	require.GreaterOrEqual(t, i, 0, "client %s in the history", name)
	return &h.Clients[i]
}

// TestExpireWithoutASessionIsANoOp: a forced expiry of an application whose process is down has no
// session to take. It does nothing but say so in the trace, and the run passes.
func TestExpireWithoutASessionIsANoOp(t *testing.T) {
	script, err := ParseScript(strings.NewReader(`servers 3
clients 2
workload registry
duration 10s
at 1s kill c1
at 2s expire c1
at 3s revive c1
`))
	require.NoError(t, err)
	var trace strings.Builder
	rep, err := Run(Options{Seed: 1, Script: script, Trace: sim.TraceConfig{Text: &trace}})
	require.NoError(t, err)
	require.False(t, rep.Failed(), rep.Explain())
	assert.Empty(t, rep.History.ForcedExpiries)
	assert.Contains(t, trace.String(), "expire c1: nothing to do, its process is down")
	assert.NotContains(t, trace.String(), "killer-c1")
}

// TestExpireIsAFaultFamilyOfItsOwn: the swarm draws forced expiries only where the expire family is
// allowed, and draws them for some seeds.
func TestExpireIsAFaultFamilyOfItsOwn(t *testing.T) {
	families, err := ParseFaults("expire")
	require.NoError(t, err)
	drawn := 0
	for seed := uint64(1); seed <= 20; seed++ {
		only, err := DrawScript(Options{Seed: seed, Faults: families})
		require.NoError(t, err)
		for _, a := range only.Actions {
			require.Equal(t, "expire", a.Verb, "seed %d", seed)
			require.NoError(t, checkArgs(a.Verb, a.Args))
			drawn++
		}
		others, err := DrawScript(Options{Seed: seed, Faults: slices.DeleteFunc(slices.Clone(FaultFamilies), func(f string) bool { return f == FaultExpire })})
		require.NoError(t, err)
		assert.False(t, slices.ContainsFunc(others.Actions, func(a Action) bool { return a.Verb == "expire" }), "seed %d", seed)
	}
	assert.Positive(t, drawn)
}

// TestForcedExpiryUnrecordedIsWrongful: the record of a forced expiry is what tells the session
// checker that a heartbeating client's session was closed on purpose. The named script's history
// without its records fails the wrongful-expiry rule for a victim that was healthy for its whole
// timeout before the killer came.
func TestForcedExpiryUnrecordedIsWrongful(t *testing.T) {
	rep, err := Run(Options{Seed: 1, Script: namedScript(t, "forced-expiry")})
	require.NoError(t, err)
	require.False(t, rep.Failed(), rep.Explain())
	h := *rep.History
	h.ForcedExpiries = nil
	res, err := checkers.CheckSessions(&h, checkers.SessionOptions{})
	require.NoError(t, err)
	require.Equal(t, checkers.Violation, res.Status, res.String())
	assert.Equal(t, "wrongful-expiry", res.Findings[0].Rule)
	assert.Contains(t, res.Findings[0].Message, "neither its client nor a recorded forced expiry asked for it")
}
