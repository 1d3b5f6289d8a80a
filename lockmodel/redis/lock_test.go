package redis

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
)

type idle struct{}

func (idle) Crash()   {}
func (idle) Restart() {}

type testWorld struct {
	t       *testing.T
	w       *sim.World
	nw      *net.Network
	servers []*Server
}

func newTestWorld(t *testing.T, n int, persistence Persistence) *testWorld {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: 7})
	require.NoError(t, err)
	nw, err := net.New(w, net.Config{})
	require.NoError(t, err)
	tw := &testWorld{t: t, w: w, nw: nw}
	for i := range n {
		s, err := NewServer(w, nw, Config{Name: "redis" + string(rune('1'+i)), Persistence: persistence})
		require.NoError(t, err)
		tw.servers = append(tw.servers, s)
	}
	return tw
}

// lock makes a lock on a new node over the given targets.
func (tw *testWorld) lock(name string, cfg LockConfig, targets ...Target) (*Lock, sim.NodeID) {
	tw.t.Helper()
	node := tw.w.AddNode(name, idle{})
	var clients []*Client
	for _, target := range targets {
		c, err := NewClient(tw.w, tw.nw, node, target)
		require.NoError(tw.t, err)
		clients = append(clients, c)
	}
	if cfg.Key == "" {
		cfg.Key = "lock"
	}
	l, err := NewLock(tw.w, node, cfg, clients...)
	require.NoError(tw.t, err)
	return l, node
}

func fixed(s *Server) Target { return func() *Server { return s } }

func (tw *testWorld) all() []Target {
	var out []Target
	for _, s := range tw.servers {
		out = append(out, fixed(s))
	}
	return out
}

// acquire runs an acquisition to its end.
func (tw *testWorld) acquire(l *Lock) Grant {
	tw.t.Helper()
	var got *Grant
	require.NoError(tw.t, l.Acquire(func(g Grant) { got = &g }))
	for got == nil && tw.w.RunFor(10*clock.Millisecond) {
	}
	require.NotNil(tw.t, got)
	return *got
}

func (tw *testWorld) release(l *Lock) int {
	tw.t.Helper()
	deleted := -1
	require.NoError(tw.t, l.Release(func(n int) { deleted = n }))
	for deleted < 0 && tw.w.RunFor(10*clock.Millisecond) {
	}
	return deleted
}

func TestSingleInstanceLockExcludesAndReleases(t *testing.T) {
	tw := newTestWorld(t, 1, PersistenceNone)
	a, _ := tw.lock("a", LockConfig{Fencing: true}, tw.all()...)
	b, _ := tw.lock("b", LockConfig{Fencing: true, Tries: 3}, tw.all()...)
	ga := tw.acquire(a)
	require.True(t, ga.Held)
	assert.Equal(t, int64(1), ga.Token)
	assert.Len(t, ga.Value, 32)
	assert.True(t, a.Held())
	gb := tw.acquire(b)
	assert.False(t, gb.Held, "a second holder is refused while the first holds")
	assert.Equal(t, 3, gb.Rounds)
	assert.Equal(t, 1, tw.release(a))
	gb = tw.acquire(b)
	require.True(t, gb.Held)
	assert.Greater(t, gb.Token, ga.Token, "INCR gives the later holder a larger token")
	assert.ErrorIs(t, a.Release(func(int) {}), ErrBusy, "nothing to release")
	v, ok := tw.servers[0].Get("lock")
	require.True(t, ok)
	assert.Equal(t, gb.Value, v)
}

func TestLeaseExpiresOnTheServersWallClock(t *testing.T) {
	tw := newTestWorld(t, 1, PersistenceNone)
	a, _ := tw.lock("a", LockConfig{}, tw.all()...)
	b, _ := tw.lock("b", LockConfig{Tries: 1}, tw.all()...)
	require.True(t, tw.acquire(a).Held)
	assert.False(t, tw.acquire(b).Held)
	// An NTP step of the server's wall clock past the TTL expires the key at once, while the
	// holder's own clock says it still holds the lock.
	tw.w.Clock(tw.servers[0].Node()).StepWall(tw.w.Now(), DefaultTTL)
	assert.True(t, a.Held())
	assert.True(t, tw.acquire(b).Held, "the key expired by the server's stepped wall clock")
}

func TestExtendKeepsTheLock(t *testing.T) {
	tw := newTestWorld(t, 1, PersistenceNone)
	a, _ := tw.lock("a", LockConfig{TTL: clock.Second}, tw.all()...)
	require.True(t, tw.acquire(a).Held)
	tw.w.RunFor(700 * clock.Millisecond)
	var ok *bool
	require.NoError(t, a.Extend(func(v bool) { ok = &v }))
	tw.w.RunFor(50 * clock.Millisecond)
	require.NotNil(t, ok)
	assert.True(t, *ok)
	tw.w.RunFor(700 * clock.Millisecond)
	assert.True(t, a.Held(), "extended past the first TTL")
	_, held := tw.servers[0].Get("lock")
	assert.True(t, held)
	tw.w.RunFor(time2s)
	_, held = tw.servers[0].Get("lock")
	assert.False(t, held, "and expired after the extension")
}

const time2s = 2 * clock.Second

func TestAOFEverySecLosesTheUnsyncedTail(t *testing.T) {
	for _, c := range []struct {
		name  string
		after clock.Duration
		kept  bool
	}{{"crash before the fsync", 10 * clock.Millisecond, false}, {"crash after the fsync", 1500 * clock.Millisecond, true}} {
		t.Run(c.name, func(t *testing.T) {
			tw := newTestWorld(t, 1, PersistenceAOFEverySec)
			tw.w.RunFor(500 * clock.Millisecond) // between fsyncs
			a, _ := tw.lock("a", LockConfig{}, tw.all()...)
			require.True(t, tw.acquire(a).Held)
			tw.w.RunFor(c.after)
			tw.w.Crash(tw.servers[0].Node())
			tw.w.Restart(tw.servers[0].Node())
			_, held := tw.servers[0].Get("lock")
			assert.Equal(t, c.kept, held)
		})
	}
	tw := newTestWorld(t, 1, PersistenceNone)
	a, _ := tw.lock("a", LockConfig{}, tw.all()...)
	require.True(t, tw.acquire(a).Held)
	tw.w.RunFor(5 * clock.Second)
	tw.w.Crash(tw.servers[0].Node())
	tw.w.Restart(tw.servers[0].Node())
	assert.Zero(t, tw.servers[0].Keys(), "without persistence a restart starts empty")
}

// TestFailoverLosesAnUnreplicatedLock is the classic objection: the master acknowledges the lock,
// dies before the asynchronous replication delivers it, Sentinel promotes the replica, and a
// second client takes the lock while the first still holds it.
func TestFailoverLosesAnUnreplicatedLock(t *testing.T) {
	tw := newTestWorld(t, 1, PersistenceNone)
	replica, err := NewServer(tw.w, tw.nw, Config{Name: "replica", ReplicaOf: tw.servers[0]})
	require.NoError(t, err)
	sentinel, err := NewSentinel(tw.w, 0, tw.servers[0], replica)
	require.NoError(t, err)
	target := func() *Server { return sentinel.Master() }
	tw.w.RunFor(clock.Second)
	assert.Equal(t, 0, replica.Keys())
	a, aNode := tw.lock("a", LockConfig{TTL: 30 * clock.Second}, target)
	b, bNode := tw.lock("b", LockConfig{TTL: 30 * clock.Second, Tries: 1}, target)

	// Replicated: the replica has the key.
	require.True(t, tw.acquire(a).Held)
	tw.w.RunFor(10 * clock.Millisecond)
	v, ok := replica.Get("lock")
	require.True(t, ok)
	assert.Equal(t, a.value, v)
	assert.Equal(t, 1, tw.release(a))

	// Not replicated: the replication link is cut when the master acknowledges, and b is on the
	// replica's side.
	tw.nw.Partition([]sim.NodeID{tw.servers[0].Node(), aNode}, []sim.NodeID{replica.Node(), bNode})
	require.True(t, tw.acquire(a).Held)
	tw.w.Crash(tw.servers[0].Node())
	// A crashed process's kernel still delivers what it had sent; the link stays cut until the
	// failover has happened, and the promoted replica ignores its old link.
	tw.w.RunFor(DefaultDownAfter + clock.Second)
	tw.nw.Heal()
	require.Equal(t, 1, sentinel.Failovers())
	require.Same(t, replica, sentinel.Master())
	assert.True(t, a.Held(), "the first holder's validity has not run out")
	assert.True(t, tw.acquire(b).Held, "the promoted replica never heard of the lock")

	// The old master comes back and is made a replica: its copy of the key is wiped.
	tw.w.Restart(tw.servers[0].Node())
	tw.w.RunFor(clock.Second)
	assert.False(t, tw.servers[0].IsMaster())
	v, ok = tw.servers[0].Get("lock")
	require.True(t, ok)
	assert.Equal(t, b.value, v, "resynchronised from the new master")
}

func TestRedlockNeedsAQuorum(t *testing.T) {
	tw := newTestWorld(t, 5, PersistenceNone)
	a, _ := tw.lock("a", LockConfig{Fencing: true}, tw.all()...)
	b, _ := tw.lock("b", LockConfig{Tries: 2}, tw.all()...)
	assert.Equal(t, 3, a.Quorum())
	tw.w.Crash(tw.servers[0].Node())
	tw.w.Crash(tw.servers[1].Node())
	ga := tw.acquire(a)
	require.True(t, ga.Held, "three of five suffice")
	assert.Equal(t, 3, ga.Votes)
	assert.Equal(t, int64(1), ga.Token)
	assert.False(t, tw.acquire(b).Held)
	// A wall-clock jump on one of the three masters that granted a's lock expires its key there;
	// with the two crashed masters back (empty, no persistence) b reaches a quorum of its own.
	tw.w.Restart(tw.servers[0].Node())
	tw.w.Restart(tw.servers[1].Node())
	tw.w.Clock(tw.servers[2].Node()).StepWall(tw.w.Now(), DefaultTTL)
	gb := tw.acquire(b)
	assert.True(t, gb.Held, "two holders at once: the classic Redlock objection")
	assert.True(t, a.Held())
}

func TestRedlockWithoutQuorumReleasesWhatItGot(t *testing.T) {
	tw := newTestWorld(t, 5, PersistenceNone)
	for _, s := range tw.servers[:3] {
		tw.w.Crash(s.Node())
	}
	a, _ := tw.lock("a", LockConfig{Tries: 2}, tw.all()...)
	g := tw.acquire(a)
	assert.False(t, g.Held)
	tw.w.RunFor(100 * clock.Millisecond)
	for _, s := range tw.servers[3:] {
		assert.Zero(t, s.Keys(), "the failed round released its keys")
	}
}

// TestRedlockTokensAreNotMonotonic shows why Redlock offers no fencing token, even without a
// crash: the INCR variant's token is the largest counter among the granting masters, but the
// masters' counters diverge (each counts the rounds it saw) and two quorums need share only one
// master, so a later holder can get a smaller token.
func TestRedlockTokensAreNotMonotonic(t *testing.T) {
	tw := newTestWorld(t, 5, PersistenceNone)
	a, aNode := tw.lock("a", LockConfig{Fencing: true}, tw.all()...)
	b, bNode := tw.lock("b", LockConfig{Fencing: true}, tw.all()...)
	// r3's counter runs ahead: rounds that reached only r3 (their SET NX failed elsewhere or
	// they gave up) each incremented it.
	other := tw.w.AddNode("other", idle{})
	c, err := NewClient(tw.w, tw.nw, other, fixed(tw.servers[2]))
	require.NoError(t, err)
	for range 50 {
		require.NoError(t, c.Do(clock.Second, func(Reply, error) {}, "INCR", "lock:token"))
	}
	tw.w.RunFor(100 * clock.Millisecond)
	node := func(i int) sim.NodeID { return tw.servers[i].Node() }
	// a reaches r1, r2, r3; b reaches r1, r2, r4, r5.
	tw.nw.Partition([]sim.NodeID{aNode, node(2)}, []sim.NodeID{node(3), node(4), bNode})
	ga := tw.acquire(a)
	require.True(t, ga.Held)
	assert.Equal(t, 3, ga.Votes)
	assert.Equal(t, 3, tw.release(a), "released on the three it reached")
	gb := tw.acquire(b)
	require.True(t, gb.Held, "b's quorum shares r1 and r2 with a's")
	assert.Less(t, gb.Token, ga.Token, "the later holder's token is smaller: no fencing")
}
