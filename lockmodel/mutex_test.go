package lockmodel

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

func newMutexes(t *testing.T, h *harness, bugs Bugs, names ...string) ([]*testApp, []*Mutex) {
	t.Helper()
	var apps []*testApp
	var locks []*Mutex
	for _, n := range names {
		a := h.app(n, bugs)
		m, err := NewMutex(a.s, "/locks/m", []byte(n))
		require.NoError(t, err)
		apps, locks = append(apps, a), append(locks, m)
	}
	h.run(2 * clock.Second)
	return apps, locks
}

func TestMutexGrantsInQueueOrderAndWatchesOnlyThePredecessor(t *testing.T) {
	h := newHarness(t, 1, 3, true)
	h.ensure("/locks", "/locks/m")
	_, m := newMutexes(t, h, Bugs{}, "a", "b", "c")

	ga := acquire(t, m[0], 0)
	h.run(time2s)
	require.True(t, ga.Held, "a is alone: it gets the lock")
	gb := acquire(t, m[1], 0)
	h.run(clock.Second)
	gc := acquire(t, m[2], 0)
	h.run(time2s)
	assert.False(t, gb.Held || gc.Held, "b and c wait while a holds")
	assert.True(t, m[1].Acquiring() && m[2].Acquiring())

	name := ga.Node[strings.LastIndexByte(ga.Node, '/')+1:]
	assert.True(t, strings.HasPrefix(name, ProtectedPrefix), "protected node name %q", name)
	assert.True(t, hasSequenceSuffix(name, MutexLockName), "sequential node name %q", name)

	watching := h.eventsOf(EventWatching, "")
	require.Len(t, watching, 2, "one watch per waiter")
	assert.Equal(t, "b", watching[0].Client)
	assert.Equal(t, ga.Node, watching[0].Path, "b watches a's node")
	assert.Equal(t, "c", watching[1].Client)
	assert.NotEqual(t, ga.Node, watching[1].Path, "c watches b's node, not the holder's")

	*release(t, m[0]) = nil
	h.run(time2s)
	require.True(t, gb.Held, "a's release lets the next in line in")
	assert.False(t, gc.Held, "and only it")
	assert.Greater(t, gb.Token, ga.Token, "tokens grow with the queue")
	assert.Equal(t, gb.Node, watching[1].Path, "c's predecessor was b")

	require.NoError(t, m[1].Release(func(error) {}))
	h.run(time2s)
	require.True(t, gc.Held)
	assert.Greater(t, gc.Token, gb.Token)
	assert.Len(t, h.children("/locks/m"), 1, "released nodes are gone")
}

const time2s = 2 * clock.Second

func TestMutexIsReentrant(t *testing.T) {
	h := newHarness(t, 2, 1, true)
	h.ensure("/locks", "/locks/m")
	_, m := newMutexes(t, h, Bugs{}, "a", "b")
	g1 := acquire(t, m[0], 0)
	h.run(time2s)
	require.True(t, g1.Held)
	g2 := acquire(t, m[0], 0)
	h.run(clock.Millisecond)
	require.True(t, g2.Held)
	assert.True(t, g2.Reentrant)
	assert.Equal(t, g1.Token, g2.Token)
	gb := acquire(t, m[1], 0)
	first := release(t, m[0])
	h.run(time2s)
	require.NoError(t, *first)
	assert.True(t, m[0].Held(), "one release of two holds keeps the lock")
	assert.False(t, gb.Held)
	second := release(t, m[0])
	h.run(time2s)
	require.NoError(t, *second)
	assert.False(t, m[0].Held())
	assert.True(t, gb.Held, "the last release lets b in")
}

func TestMutexRefusesMisuse(t *testing.T) {
	h := newHarness(t, 3, 1, true)
	h.ensure("/locks", "/locks/m")
	_, m := newMutexes(t, h, Bugs{}, "a")
	assert.ErrorIs(t, m[0].Release(func(error) {}), ErrNotHeld)
	require.NoError(t, m[0].Acquire(0, func(Grant) {}))
	assert.ErrorIs(t, m[0].Acquire(0, func(Grant) {}), ErrBusy)
	assert.Error(t, m[0].Acquire(-clock.Second, func(Grant) {}))
	_, err := NewMutex(m[0].s, "no-slash", nil)
	assert.ErrorIs(t, err, ErrInvalidPath)
	_, err = NewMutex(m[0].s, "/", nil)
	assert.ErrorIs(t, err, ErrInvalidPath)
	_, err = NewMutex(nil, "/x", nil)
	assert.Error(t, err)
}

func TestMutexAcquireTimesOutAndLeavesTheQueue(t *testing.T) {
	h := newHarness(t, 4, 1, true)
	h.ensure("/locks", "/locks/m")
	_, m := newMutexes(t, h, Bugs{}, "a", "b")
	ga := acquire(t, m[0], 0)
	h.run(time2s)
	require.True(t, ga.Held)
	gb := acquire(t, m[1], clock.Second)
	h.run(3 * clock.Second)
	assert.False(t, gb.Held)
	assert.NoError(t, gb.Err, "a timeout is no error")
	assert.False(t, m[1].Acquiring())
	assert.Len(t, h.children("/locks/m"), 1, "the timed-out waiter deleted its node")
	notGranted := h.eventsOf(EventNotGranted, "b")
	require.Len(t, notGranted, 1)
	assert.Nil(t, notGranted[0].Err)
}

func TestMutexCreatesAMissingParent(t *testing.T) {
	h := newHarness(t, 5, 1, true)
	_, m := newMutexes(t, h, Bugs{}, "a")
	g := acquire(t, m[0], 0)
	h.run(time2s)
	require.True(t, g.Held, "creatingParentsIfNeeded makes /locks/m: %v", g.Err)
	assert.Len(t, h.children("/locks/m"), 1)
}

// TestMutexReleaseLetsGoAtOnce: Curator 5's InterProcessMutex.release decrements the hold count,
// and the last release calls LockInternals.releaseLock (a guaranteed delete) in a try whose
// finally removes the thread's lock data: the holder stops holding before the delete is done. The
// recipe reports that moment (EventReleasing), then the delete's outcome (EventReleased).
func TestMutexReleaseLetsGoAtOnce(t *testing.T) {
	h := newHarness(t, 2, 1, true)
	h.ensure("/locks", "/locks/m")
	_, m := newMutexes(t, h, Bugs{}, "a")
	g := acquire(t, m[0], 0)
	h.run(time2s)
	require.True(t, g.Held)
	require.Empty(t, h.eventsOf(EventReleasing, "a"))
	done := release(t, m[0])
	assert.False(t, m[0].Held(), "not held from the call on")
	releasing := h.eventsOf(EventReleasing, "a")
	require.Len(t, releasing, 1, "reported at once")
	assert.Equal(t, g.Token, releasing[0].Token)
	assert.Empty(t, h.eventsOf(EventReleased, "a"), "the delete is still on its way")
	h.run(time2s)
	require.NoError(t, *done)
	assert.Len(t, h.eventsOf(EventReleased, "a"), 1)
	assert.ErrorIs(t, m[0].Release(func(error) {}), ErrNotHeld, "IllegalMonitorStateException")
}

// A waiter cut off from every server uses up its retry policy while disconnected: Curator's
// foreground retry loop (RetryLoop.callWithRetry) waits for a connection only before the first
// attempt, and each retry, queued in a client that is not connected, fails with CONNECTIONLOSS when
// the client's next connection attempt fails. A loop that waited up to the connection timeout
// before every retry would still be waiting long after Curator's acquire had thrown.
func TestMutexRetriesDoNotWaitForAConnection(t *testing.T) {
	h := newHarness(t, 41, 3, true)
	h.ensure("/locks", "/locks/m")
	apps, m := newMutexes(t, h, Bugs{}, "a", "b")
	ga := acquire(t, m[0], 0)
	h.run(time2s)
	require.True(t, ga.Held)
	gb := acquire(t, m[1], 0)
	h.run(time2s)
	require.True(t, m[1].Acquiring(), "b waits behind a")

	h.nw.Isolate(apps[1].node)
	// Two foreground operations, each blocking for the connection timeout (15 s) once: the listing
	// (then four attempts that fail as the client's connection attempts fail, with the policy's
	// sleeps between them) and the guaranteed delete of b's node (the same), about 57 s in all
	// with this seed. Blocking before every retry as well took 152 s.
	h.run(70 * clock.Second)
	assert.False(t, m[1].Acquiring(), "b's acquisition has ended")
	assert.False(t, gb.Held)
	var ce *CodeError
	require.ErrorAs(t, gb.Err, &ce, "b's listing failed: %v", gb.Err)
	assert.Equal(t, "getChildren", ce.Op)
	assert.Equal(t, proto.ConnectionLoss, ce.Code)
}

// deleteResetter is a Tracer that resets the application's connections whenever it is about to
// delete path, at most times times, so that the delete fails with CONNECTIONLOSS.
type deleteResetter struct {
	h     *harness
	app   *testApp
	path  string
	times int
}

func (d *deleteResetter) Request(_ int64, r Request) func(Reply) {
	if r.Kind == proto.OpDelete && r.Path == d.path && d.times > 0 {
		d.times--
		for _, conn := range d.h.nw.Conns(d.app.node) {
			if peer, _ := d.h.nw.Peer(d.app.node, conn); peer != d.h.res.Node() {
				d.h.nw.Reset(conn)
			}
		}
	}
	return func(Reply) {}
}

func (d *deleteResetter) WatchEvent(int64, client.Event) {}

// A waiter that finds its node gone ("Sequential path not found") deletes it and starts over, even
// if that delete fails: LockInternals.internalLockLoop deletes it with deleteOurPathQuietly, whose
// failure is only suppressed into the NoNodeException that attemptLock catches and retries.
func TestMutexStartsOverWhenTheDeleteOfAMissingNodeFails(t *testing.T) {
	h := newHarness(t, 42, 3, true)
	h.ensure("/locks", "/locks/m")
	_, m := newMutexes(t, h, Bugs{}, "a")
	tracer := &deleteResetter{h: h}
	b := h.appWith("b", Config{Retry: RetryPolicy{BaseSleep: clock.Second, MaxRetries: 1, MaxSleep: clock.Second}, Tracer: tracer})
	tracer.app = b
	mb, err := NewMutex(b.s, "/locks/m", []byte("b"))
	require.NoError(t, err)
	h.run(time2s)
	ga := acquire(t, m[0], 0)
	h.run(time2s)
	require.True(t, ga.Held)
	gb := acquire(t, mb, 0)
	h.run(time2s)
	require.True(t, mb.Acquiring(), "b waits behind a")
	created := h.eventsOf(EventCreated, "b")
	require.Len(t, created, 1)

	// Someone deletes b's node while b waits; b notices only when a releases and it lists the
	// children. Its delete of the missing node then fails twice (the policy allows one retry).
	admin := h.app("admin", Bugs{})
	h.run(time2s)
	var deleted *client.Result
	require.NoError(t, admin.c.Delete(created[0].Node, -1, func(r client.Result) { deleted = &r }))
	h.run(time2s)
	require.NotNil(t, deleted)
	require.Equal(t, proto.OK, deleted.Err)
	tracer.path, tracer.times = created[0].Node, 2
	*release(t, m[0]) = nil
	h.run(20 * clock.Second)
	require.Zero(t, tracer.times, "both deletes of b's missing node lost their connection")
	assert.True(t, gb.Held, "b started over with a new node and took the lock: %v", gb.Err)
	assert.Len(t, h.eventsOf(EventCreated, "b"), 2, "a second node")
}

// An acquisition that times out deletes its node with LockInternals.deleteOurPath, which throws
// when the guaranteed delete fails: acquire then throws that exception rather than returning
// false.
func TestMutexTimeoutWhoseDeleteFailsReportsTheDelete(t *testing.T) {
	h := newHarness(t, 43, 3, true)
	h.ensure("/locks", "/locks/m")
	_, m := newMutexes(t, h, Bugs{}, "a")
	tracer := &deleteResetter{h: h}
	b := h.appWith("b", Config{Retry: RetryPolicy{BaseSleep: clock.Second, MaxRetries: 0, MaxSleep: clock.Second}, Tracer: tracer})
	tracer.app = b
	mb, err := NewMutex(b.s, "/locks/m", []byte("b"))
	require.NoError(t, err)
	h.run(time2s)
	ga := acquire(t, m[0], 0)
	h.run(time2s)
	require.True(t, ga.Held)
	gb := acquire(t, mb, 3*clock.Second)
	h.run(clock.Second)
	created := h.eventsOf(EventCreated, "b")
	require.Len(t, created, 1)
	tracer.path, tracer.times = created[0].Node, 1
	h.run(10 * clock.Second)
	require.Zero(t, tracer.times, "the delete at the deadline lost its connection")
	assert.False(t, mb.Acquiring())
	assert.False(t, gb.Held)
	var ce *CodeError
	require.ErrorAs(t, gb.Err, &ce, "the delete's failure, not a plain timeout")
	assert.Equal(t, "delete", ce.Op)
	assert.Equal(t, proto.ConnectionLoss, ce.Code)
}

// An interrupted acquisition ends at once, even with a ZooKeeper call in flight: the Java thread
// blocked in the call (or in the retry policy's sleep, or in the wait for a connection) gets an
// InterruptedException there. The node its create makes after all is deleted in the background
// (FindAndDeleteProtectedNodeInBackground).
func TestMutexInterruptedWithACreateInFlightEndsAtOnce(t *testing.T) {
	h := newHarness(t, 46, 3, true)
	h.ensure("/locks", "/locks/m")
	_, m := newMutexes(t, h, Bugs{}, "a")
	g := acquire(t, m[0], 0)
	require.True(t, m[0].Acquiring(), "the create is in flight")
	m[0].interrupt()
	assert.False(t, m[0].Acquiring(), "the acquisition ended with the interrupt")
	assert.ErrorIs(t, g.Err, ErrInterrupted)
	h.run(5 * clock.Second)
	assert.False(t, g.Held)
	assert.Len(t, h.eventsOf(EventNotGranted, "a"), 1)
	assert.Empty(t, h.children("/locks/m"), "the node the create made was deleted")
}
