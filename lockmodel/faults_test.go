package lockmodel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// loseCreateReply resets the application's ZooKeeper connection the moment the create of one of its
// lock nodes commits, so that the reply is lost: the client reports CONNECTIONLOSS for a create
// that happened.
func loseCreateReply(h *harness, a *testApp, base string) *int {
	resets := new(int)
	h.onCommit = func(txn *proto.TxnEntry) {
		c, ok := txn.Txn.(*proto.CreateTxn)
		if !ok || *resets > 0 || txn.Header.ClientID != a.s.SessionID() || !strings.HasPrefix(c.Path, base+"/") {
			return
		}
		*resets++
		for _, conn := range h.nw.Conns(a.node) {
			if peer, _ := h.nw.Peer(a.node, conn); peer != h.res.Node() {
				h.nw.Reset(conn)
			}
		}
	}
	return resets
}

func TestProtectedCreateFindsTheNodeALostReplyMade(t *testing.T) {
	h := newHarness(t, 11, 3, true)
	h.ensure("/locks", "/locks/m")
	apps, m := newMutexes(t, h, Bugs{}, "a", "b")
	resets := loseCreateReply(h, apps[0], "/locks/m")
	ga := acquire(t, m[0], 0)
	h.run(10 * clock.Second)
	require.Equal(t, 1, *resets, "the create's reply was lost")
	require.True(t, ga.Held, "a finds its node after reconnecting: %v", ga.Err)
	assert.Len(t, h.children("/locks/m"), 1, "no orphan node")
	gb := acquire(t, m[1], 0)
	h.run(time2s)
	require.NoError(t, m[0].Release(func(error) {}))
	h.run(time2s)
	assert.True(t, gb.Held, "the queue moves on")
}

func TestUnprotectedCreateLeavesAnOrphanThatBlocksTheQueue(t *testing.T) {
	h := newHarness(t, 11, 3, true)
	h.ensure("/locks", "/locks/m")
	apps, m := newMutexes(t, h, Bugs{}.With(BugUnprotectedCreate), "a", "b")
	resets := loseCreateReply(h, apps[0], "/locks/m")
	ga := acquire(t, m[0], 0)
	h.run(10 * clock.Second)
	require.Equal(t, 1, *resets)
	children := h.children("/locks/m")
	require.Len(t, children, 2, "the blind retry made a second node")
	assert.False(t, strings.HasPrefix(children[0], ProtectedPrefix), "no protected prefix: %v", children)
	assert.False(t, ga.Held, "a waits behind its own orphan")
	gb := acquire(t, m[1], 0)
	h.run(20 * clock.Second)
	assert.False(t, gb.Held, "and so does everyone after it, while a's session lives")
}

func TestExclusiveLockRecognisesItsOwnNodeAfterALostReply(t *testing.T) {
	for _, bug := range []bool{false, true} {
		h := newHarness(t, 12, 3, true)
		h.ensure("/locks")
		bugs := Bugs{}
		if bug {
			bugs = bugs.With(BugUnprotectedCreate)
		}
		a := h.app("a", bugs)
		h.run(time2s)
		l, err := NewExclusiveLock(a.s, "/locks/x", nil)
		require.NoError(t, err)
		resets := loseCreateReply(h, a, "/locks")
		g := acquire(t, l, 0)
		h.run(10 * clock.Second)
		require.Equal(t, 1, *resets)
		assert.Equal(t, !bug, g.Held, "bug=%v: the owner check decides", bug)
	}
}

// A create whose reply is lost, with a retry policy that then gives up, may have made the lock
// node: left alone it is an orphan of a live session that blocks the lock. The recipes delete it
// (the exclusive lock by its owner, the Mutex by its protected id, as Curator's
// FindAndDeleteProtectedNodeInBackground does); with BugUnprotectedCreate it stays.
func TestAGivenUpCreateLeavesNoOrphan(t *testing.T) {
	type acquirer interface {
		Acquire(clock.Duration, func(Grant)) error
	}
	recipes := []struct {
		name   string
		seed   uint64
		parent string // where the lock node goes, made beforehand
		make   func(*Session) (acquirer, error)
	}{
		{"exclusive", 12, "/locks", func(s *Session) (acquirer, error) { return NewExclusiveLock(s, "/locks/x", nil) }},
		{"mutex", 11, "/locks/m", func(s *Session) (acquirer, error) { return NewMutex(s, "/locks/m", nil) }},
	}
	noRetries := RetryPolicy{BaseSleep: clock.Second, MaxRetries: 0, MaxSleep: clock.Second}
	for _, recipe := range recipes {
		for _, bug := range []bool{false, true} {
			bugs := Bugs{}
			if bug {
				bugs = bugs.With(BugUnprotectedCreate)
			}
			t.Run(fmt.Sprintf("%s/bug=%v", recipe.name, bug), func(t *testing.T) {
				h := newHarness(t, recipe.seed, 3, true)
				h.ensure("/locks", recipe.parent)
				a := h.appWith("a", Config{Bugs: bugs, Retry: noRetries})
				h.run(time2s)
				before := len(h.children(recipe.parent))
				l, err := recipe.make(a.s)
				require.NoError(t, err)
				resets := loseCreateReply(h, a, recipe.parent)
				g := acquire(t, l, 0)
				h.run(10 * clock.Second)
				require.Equal(t, 1, *resets)
				require.False(t, g.Held)
				require.ErrorContains(t, g.Err, "CONNECTIONLOSS")
				left := len(h.children(recipe.parent)) - before
				assert.Equal(t, bug, left == 1, "the node a's lost create made: %v", h.children(recipe.parent))
			})
		}
	}
}

func TestSessionExpiryEndsTheHoldAndLetsTheNextIn(t *testing.T) {
	h := newHarness(t, 13, 3, true)
	h.ensure("/locks", "/locks/m")
	apps, m := newMutexes(t, h, Bugs{}, "a", "b")
	ga := acquire(t, m[0], 0)
	h.run(time2s)
	require.True(t, ga.Held)
	gb := acquire(t, m[1], 0)
	h.run(time2s)
	h.w.Pause(apps[0].node) // a long GC pause, past the session timeout
	h.run(20 * clock.Second)
	assert.True(t, gb.Held, "the expired holder's node went with its session")
	h.w.Resume(apps[0].node)
	h.run(10 * clock.Second)
	assert.Equal(t, StateLost, apps[0].s.State())
	lost := h.eventsOf(EventLost, "a")
	require.Len(t, lost, 1, "a learns that it lost the lock")
	assert.Equal(t, ga.Token, lost[0].Token)
	released := release(t, m[0])
	h.run(time2s)
	assert.ErrorIs(t, *released, ErrLost)
}

func TestWaiterExpiryLeavesTheQueueIntact(t *testing.T) {
	h := newHarness(t, 14, 3, true)
	h.ensure("/locks", "/locks/m")
	apps, m := newMutexes(t, h, Bugs{}, "a", "b", "c")
	ga := acquire(t, m[0], 0)
	h.run(time2s)
	gb := acquire(t, m[1], 0)
	h.run(time2s)
	gc := acquire(t, m[2], 0)
	h.run(time2s)
	require.True(t, ga.Held)
	h.w.Pause(apps[1].node)
	h.run(20 * clock.Second)
	require.NoError(t, m[0].Release(func(error) {}))
	h.run(time2s)
	assert.True(t, gc.Held, "c re-checked when its predecessor b expired, and then got the lock")
	h.w.Resume(apps[1].node)
	h.run(10 * clock.Second)
	assert.False(t, gb.Held)
	assert.Error(t, gb.Err, "b's acquisition failed with its session")
}

func TestPersistentNodeOutlivesACrashedHolder(t *testing.T) {
	for _, bug := range []bool{false, true} {
		h := newHarness(t, 15, 3, true)
		h.ensure("/locks", "/locks/m")
		bugs := Bugs{}
		if bug {
			bugs = bugs.With(BugPersistentNode)
		}
		apps, m := newMutexes(t, h, bugs, "a", "b")
		ga := acquire(t, m[0], 0)
		h.run(time2s)
		require.True(t, ga.Held)
		gb := acquire(t, m[1], 0)
		h.run(time2s)
		h.w.Crash(apps[0].node)
		h.run(30 * clock.Second)
		assert.Equal(t, !bug, gb.Held, "bug=%v", bug)
	}
}

func TestHerdBugWakesEveryWaiter(t *testing.T) {
	for _, bug := range []bool{false, true} {
		h := newHarness(t, 16, 1, true)
		h.ensure("/locks", "/locks/m")
		bugs := Bugs{}
		if bug {
			bugs = bugs.With(BugHerd)
		}
		_, m := newMutexes(t, h, bugs, "a", "b", "c", "d")
		g := []*Grant{acquire(t, m[0], 0)}
		h.run(time2s)
		for _, l := range m[1:] {
			g = append(g, acquire(t, l, 0))
			h.run(clock.Second)
		}
		before := len(h.eventsOf(EventWatching, ""))
		require.NoError(t, m[0].Release(func(error) {}))
		h.run(time2s)
		assert.True(t, g[1].Held, "bug=%v: the queue still works", bug)
		assert.False(t, g[2].Held || g[3].Held)
		rewatched := len(h.eventsOf(EventWatching, "")) - before
		if bug {
			assert.Equal(t, 3, rewatched, "every waiter woke up and listed the children (watching them again)")
		} else {
			assert.Equal(t, 0, rewatched, "no other waiter woke up")
		}
	}
}

// TestExclusiveReleaseGivenUpDeletesInTheBackground: a release whose delete the retry policy gave
// up on (the connection reset before the delete reached a server) reports the failure and goes on
// deleting in the background, as delete().guaranteed() does through Curator's FailedDeleteManager:
// left alone, the node of a live session blocks the lock with no one holding it (lock seed
// 1005265). Meanwhile the same session's next acquisition does not adopt the released node as
// its own lost create, and gets a node of its own once the old one is gone.
func TestExclusiveReleaseGivenUpDeletesInTheBackground(t *testing.T) {
	h := newHarness(t, 12, 3, true)
	h.ensure("/locks")
	noRetries := RetryPolicy{BaseSleep: clock.Second, MaxRetries: 0, MaxSleep: clock.Second}
	a := h.appWith("a", Config{Retry: noRetries})
	b := h.app("b", Bugs{})
	h.run(time2s)
	la, err := NewExclusiveLock(a.s, "/locks/x", nil)
	require.NoError(t, err)
	lb, err := NewExclusiveLock(b.s, "/locks/x", nil)
	require.NoError(t, err)
	ga := acquire(t, la, 0)
	h.run(time2s)
	require.True(t, ga.Held)
	gb := acquire(t, lb, 0)
	h.run(time2s)
	require.False(t, gb.Held, "b waits for a")

	done := release(t, la)
	for _, conn := range h.nw.Conns(a.node) {
		if peer, _ := h.nw.Peer(a.node, conn); peer != h.res.Node() {
			h.nw.Reset(conn)
		}
	}
	for i := 0; i < 100 && *done == errPending; i++ {
		h.run(10 * clock.Millisecond)
	}
	require.ErrorContains(t, *done, "CONNECTIONLOSS", "the policy gave up on the delete")
	for _, txn := range h.commits {
		if d, ok := txn.Txn.(*proto.DeleteTxn); ok {
			require.NotEqual(t, "/locks/x", d.Path, "the delete was lost, not only its reply")
		}
	}
	again := acquire(t, la, 0)
	h.run(10 * clock.Second)
	require.NotEqual(t, gb.Held, again.Held, "the background delete let one of a and b in: a %v, b %v", again.Err, gb.Err)
	if again.Held {
		assert.NotEqual(t, ga.Token, again.Token, "a node of its own, not the released one")
		require.NoError(t, la.Release(func(error) {}))
	} else {
		require.NoError(t, lb.Release(func(error) {}))
	}
	h.run(10 * clock.Second)
	require.True(t, again.Held && gb.Held, "then the other: a %v, b %v", again.Err, gb.Err)
	assert.NotEqual(t, ga.Token, again.Token, "a node of its own, not the released one")
}

// createResetter is a Tracer that resets the application's connections when it is about to send
// its first create under base, so that the create is lost before it reaches a server.
type createResetter struct {
	h    *harness
	app  *testApp
	base string
	done bool
}

func (c *createResetter) Request(_ int64, r Request) func(Reply) {
	if r.Kind == proto.OpCreate && strings.HasPrefix(r.Path, c.base+"/") && !c.done {
		c.done = true
		for _, conn := range c.h.nw.Conns(c.app.node) {
			if peer, _ := c.h.nw.Peer(c.app.node, conn); peer != c.h.res.Node() {
				c.h.nw.Reset(conn)
			}
		}
	}
	return func(Reply) {}
}

func (c *createResetter) WatchEvent(int64, client.Event) {}

// The first create of a's lock node is lost before it reaches a server, the protected-mode search
// finds nothing, and the reply of the second create, which commits, is lost. Curator 5's
// foreground create then returns null (its search marked the shared retry loop complete), and
// the committed node is an orphan of a's live session that blocks the queue
// (BugNestedRetryNull); the correct retry loop goes on, and its next search finds the node.
func TestNestedRetryNullOrphansTheNode(t *testing.T) {
	for _, bug := range []bool{false, true} {
		h := newHarness(t, 44, 3, true)
		h.ensure("/locks", "/locks/m")
		bugs := Bugs{}
		if bug {
			bugs = bugs.With(BugNestedRetryNull)
		}
		tracer := &createResetter{h: h, base: "/locks/m"}
		a := h.appWith("a", Config{Bugs: bugs, Tracer: tracer})
		tracer.app = a
		m, err := NewMutex(a.s, "/locks/m", []byte("a"))
		require.NoError(t, err)
		h.run(time2s)
		resets := loseCreateReply(h, a, "/locks/m")
		g := acquire(t, m, 0)
		h.run(20 * clock.Second)
		require.True(t, tracer.done, "the first create was lost")
		require.Equal(t, 1, *resets, "the second create's reply was lost")
		children := h.children("/locks/m")
		require.Len(t, children, 1, "the second create made the node")
		if !bug {
			assert.True(t, g.Held, "the next search finds the node: %v", g.Err)
			continue
		}
		assert.False(t, g.Held)
		assert.ErrorIs(t, g.Err, ErrNullPath)
		assert.False(t, m.Acquiring())
		assert.True(t, a.s.State().IsConnected(), "a's session lives on: %v", a.s.State())
		b := h.app("b", Bugs{})
		mb, err := NewMutex(b.s, "/locks/m", []byte("b"))
		require.NoError(t, err)
		h.run(time2s)
		gb := acquire(t, mb, 0)
		h.run(20 * clock.Second)
		assert.False(t, gb.Held, "b waits behind a's orphan")
	}
}

// requestResetter is a Tracer that resets the application's connections when it is about to send
// a request of a kind in times, as often as times says for that kind.
type requestResetter struct {
	h     *harness
	app   *testApp
	times map[proto.OpCode]int
}

func (c *requestResetter) Request(_ int64, r Request) func(Reply) {
	if c.times[r.Kind] > 0 {
		c.times[r.Kind]--
		for _, conn := range c.h.nw.Conns(c.app.node) {
			if peer, _ := c.h.nw.Peer(c.app.node, conn); peer != c.h.res.Node() {
				c.h.nw.Reset(conn)
			}
		}
	}
	return func(Reply) {}
}

func (c *requestResetter) WatchEvent(int64, client.Event) {}

// The protected-mode search runs on its create's retry loop (ThreadLocalRetryLoop, CURATOR-559):
// with a policy of one retry, a lost create and then a lost sync of the search use it up, and the
// create fails. A search with retries of its own would sync again and the create would succeed.
func TestProtectedSearchSharesTheCreatesRetries(t *testing.T) {
	h := newHarness(t, 45, 3, true)
	h.ensure("/locks", "/locks/m")
	tracer := &requestResetter{h: h, times: map[proto.OpCode]int{proto.OpCreate: 1, proto.OpSync: 1}}
	a := h.appWith("a", Config{Retry: RetryPolicy{BaseSleep: clock.Second, MaxRetries: 1, MaxSleep: clock.Second}, Tracer: tracer})
	tracer.app = a
	m, err := NewMutex(a.s, "/locks/m", []byte("a"))
	require.NoError(t, err)
	h.run(time2s)
	g := acquire(t, m, 0)
	h.run(20 * clock.Second)
	require.Zero(t, tracer.times[proto.OpCreate]+tracer.times[proto.OpSync], "the create and the sync were lost")
	assert.False(t, g.Held)
	var ce *CodeError
	require.ErrorAs(t, g.Err, &ce, "the create failed: %v", g.Err)
	assert.Equal(t, "create", ce.Op)
	assert.Equal(t, proto.ConnectionLoss, ce.Code)
	assert.Empty(t, h.children("/locks/m"), "no node was made")
}
