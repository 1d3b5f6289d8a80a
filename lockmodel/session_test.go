package lockmodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

func TestConnectionStatesFollowCurator(t *testing.T) {
	h := newHarness(t, 41, 1, true)
	a := h.app("a", Bugs{})
	var seen []ConnectionState
	a.s.addListener(func(st ConnectionState) { seen = append(seen, st) })
	assert.Equal(t, StateLatent, a.s.State())
	h.run(time2s)
	event := func(st proto.KeeperState) { a.s.ConnectionEvent(client.Event{Type: proto.EventNone, State: st}) }
	event(proto.StateSyncConnected) // heard again: no change
	event(proto.StateDisconnected)
	event(proto.StateDisconnected)
	event(proto.StateSyncConnected)
	a.s.ConnectionEvent(client.Event{Type: proto.EventNodeDeleted, Path: "/x"}) // not a state event
	event(proto.StateExpired)
	event(proto.StateSyncConnected) // nothing comes back from LOST
	assert.Equal(t, []ConnectionState{StateConnected, StateSuspended, StateReconnected, StateLost}, seen)
	assert.Equal(t, "RECONNECTED", StateReconnected.String())
	assert.True(t, StateReconnected.IsConnected())
	assert.False(t, StateSuspended.IsConnected())
}

func TestNewSessionRefusesBadConfigurations(t *testing.T) {
	h := newHarness(t, 42, 1, true)
	a := h.app("a", Bugs{})
	_, err := NewSession(nil, a.c, Config{})
	assert.Error(t, err)
	_, err = NewSession(h.w, nil, Config{})
	assert.Error(t, err)
	_, err = NewSession(h.w, a.c, Config{ConnectionTimeout: -clock.Second})
	assert.Error(t, err)
	_, err = NewSession(h.w, a.c, Config{Retry: RetryPolicy{BaseSleep: clock.Second, MaxRetries: 30, MaxSleep: clock.Second}})
	assert.Error(t, err, "more retries than Curator allows")
	s, err := NewSession(h.w, a.c, Config{})
	require.NoError(t, err)
	assert.Equal(t, "a", s.Name(), "the node's name by default")
	assert.Equal(t, DefaultRetryPolicy, s.cfg.Retry)
}

func TestRetryPolicyIsExponentialBackoff(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w, err := sim.New(sim.Config{Seed: rapid.Uint64().Draw(rt, "seed")})
		require.NoError(t, err)
		p := RetryPolicy{BaseSleep: 100 * clock.Millisecond, MaxRetries: rapid.IntRange(0, 10).Draw(rt, "max"), MaxSleep: 2 * clock.Second}
		count := rapid.IntRange(0, 12).Draw(rt, "count")
		d, ok := p.sleep(w, count)
		if ok != (count < p.MaxRetries) {
			rt.Fatalf("retry %d of at most %d allowed=%v", count, p.MaxRetries, ok)
		}
		if ok && (d < p.BaseSleep || d > p.MaxSleep || d > p.BaseSleep*clock.Duration(1<<(count+1))) {
			rt.Fatalf("sleep %v before retry %d is outside [base, min(cap, base*2^(n+1))]", d, count)
		}
	})
	for _, code := range []proto.Code{proto.ConnectionLoss, proto.OperationTimeout, proto.SessionMoved} {
		assert.True(t, retryable(code), "%v", code)
	}
	assert.False(t, retryable(proto.SessionExpired), "a Session is one ZooKeeper session")
	assert.False(t, retryable(proto.NoNode))
	assert.False(t, retryable(proto.NewConfigNoQuorum), "Curator 5's RetryPolicy.allowRetry does not retry it")
}

func TestExclusiveLockContention(t *testing.T) {
	h := newHarness(t, 43, 3, true)
	h.ensure("/locks")
	var locks []*ExclusiveLock
	for _, n := range []string{"a", "b", "c"} {
		a := h.app(n, Bugs{})
		l, err := NewExclusiveLock(a.s, "/locks/x", nil)
		require.NoError(t, err)
		locks = append(locks, l)
	}
	h.run(time2s)
	ga := acquire(t, locks[0], 0)
	h.run(time2s)
	require.True(t, ga.Held)
	gb, gc := acquire(t, locks[1], 0), acquire(t, locks[2], 0)
	h.run(time2s)
	assert.False(t, gb.Held || gc.Held)
	require.NoError(t, locks[0].Release(func(error) {}))
	h.run(time2s)
	assert.True(t, gb.Held != gc.Held, "exactly one of the waiters gets the node")
	assert.Greater(t, max(gb.Token, gc.Token), ga.Token, "a new node, a newer token")
	_, err := NewExclusiveLock(locks[0].s, "/", nil)
	assert.ErrorIs(t, err, ErrInvalidPath)
}
