package lockmodel

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// containerHistory returns the committed container creates and deletes, and the creates of nodes
// under base, in commit order: "createContainer /locks/m", "deleteContainer /locks/m",
// "create /locks/m/...".
func (h *harness) containerHistory(base string) []string {
	var out []string
	for _, txn := range h.commits {
		switch body := txn.Txn.(type) {
		case *proto.CreateContainerTxn:
			out = append(out, "createContainer "+body.Path)
		case *proto.DeleteTxn:
			if txn.Header.Type == proto.OpDeleteContainer {
				out = append(out, "deleteContainer "+body.Path)
			}
		case *proto.CreateTxn:
			if strings.HasPrefix(body.Path, base+"/") {
				out = append(out, "create "+base+"/...")
			}
		}
	}
	return out
}

// requestLog records the outcome of an application's requests: "create /locks/m/...: NONODE".
type requestLog struct {
	base    string
	entries []string
}

func (l *requestLog) Request(_ int64, r Request) func(Reply) {
	path := r.Path
	if strings.HasPrefix(path, l.base+"/") {
		path = l.base + "/..."
	}
	return func(rep Reply) {
		l.entries = append(l.entries, r.Kind.String()+" "+path+": "+rep.Err.String())
	}
}

func (l *requestLog) WatchEvent(int64, client.Event) {}

// reapBetweenMkdirsAndCreate holds every message to and from the application for 3 s as soon as the
// createContainer of parent that its mkdirs sent commits, so that its lock node's create reaches
// the server only after the container manager deleted the new container: an ensemble made by
// containerConfig deletes a container that never had a child after 1 s.
func reapBetweenMkdirsAndCreate(h *harness, a *testApp, parent string) *int {
	clogs := new(int)
	h.onCommit = func(txn *proto.TxnEntry) {
		c, ok := txn.Txn.(*proto.CreateContainerTxn)
		if !ok || *clogs > 0 || c.Path != parent || txn.Header.ClientID != a.s.SessionID() {
			return
		}
		*clogs++
		h.nw.ClogNode(a.node, 3*clock.Second)
	}
	return clogs
}

// containerConfig is an ensemble whose container manager checks every 250 ms and also deletes a
// container that never had a child once it is 1 s old (znode.container.maxNeverUsedIntervalMs).
func containerConfig() zabmodel.Config {
	return zabmodel.Config{Voters: 3, ContainerCheckInterval: 250 * clock.Millisecond, ContainerMaxNeverUsed: clock.Second}
}

// TestMutexParentIsAContainerDeletedBetweenAcquisitions: the fair lock makes its parents as
// containers; the server deletes them only once they are empty, and the next acquisition makes
// them again and gets the lock.
func TestMutexParentIsAContainerDeletedBetweenAcquisitions(t *testing.T) {
	h := newHarnessConfig(t, 41, zabmodel.Config{Voters: 3, ContainerCheckInterval: clock.Second}, true)
	_, m := newMutexes(t, h, Bugs{}, "a", "b")
	ga := acquire(t, m[0], 0)
	h.run(time2s)
	require.True(t, ga.Held, "seed %d: %v", h.seed, ga.Err)
	gb := acquire(t, m[1], 0)
	h.run(3 * clock.Second)
	require.False(t, gb.Held)
	assert.Equal(t, []string{"createContainer /locks", "createContainer /locks/m", "create /locks/m/...", "create /locks/m/..."},
		h.containerHistory("/locks/m"), "the parents are containers, kept while they have children")

	require.NoError(t, m[0].Release(func(error) {}))
	h.run(time2s)
	require.True(t, gb.Held, "seed %d: %v", h.seed, gb.Err)
	require.NoError(t, m[1].Release(func(error) {}))
	h.run(5 * clock.Second)
	history := h.containerHistory("/locks/m")
	assert.Equal(t, []string{"deleteContainer /locks/m", "deleteContainer /locks"}, history[len(history)-2:],
		"the empty containers are deleted, the child first")
	assert.NotContains(t, h.children("/"), "locks")

	again := acquire(t, m[0], 0)
	h.run(time2s)
	require.True(t, again.Held, "seed %d: the next acquisition makes the parents again: %v", h.seed, again.Err)
	assert.Greater(t, again.Token, gb.Token)
	assert.Equal(t, []string{"createContainer /locks", "createContainer /locks/m", "create /locks/m/..."},
		h.containerHistory("/locks/m")[len(history):])
	assert.Empty(t, h.eventsOf(EventNotGranted, ""))
}

// TestMutexStartsOverWhenItsNewParentIsDeletedBeforeTheCreate: the container that mkdirs made is
// deleted before the lock node's create reaches the server. The create's NONODE goes to
// LockInternals.attemptLock, which starts over after the retry policy's sleep and gets the lock.
func TestMutexStartsOverWhenItsNewParentIsDeletedBeforeTheCreate(t *testing.T) {
	h := newHarnessConfig(t, 42, containerConfig(), true)
	apps, m := newMutexes(t, h, Bugs{}, "a")
	requests := &requestLog{base: "/locks/m"}
	apps[0].s.cfg.Tracer = requests
	clogs := reapBetweenMkdirsAndCreate(h, apps[0], "/locks/m")
	g := acquire(t, m[0], 0)
	h.run(10 * clock.Second)
	require.Equal(t, 1, *clogs)
	require.True(t, g.Held, "seed %d: %v", h.seed, g.Err)
	assert.Equal(t, []string{
		"createContainer /locks", "createContainer /locks/m", "deleteContainer /locks/m", "deleteContainer /locks",
		"createContainer /locks", "createContainer /locks/m", "create /locks/m/...",
	}, h.containerHistory("/locks/m"))
	assert.Equal(t, []string{
		"create /locks/m/...: NONODE",
		"exists /locks/m/...: NONODE", "exists /locks/m: NONODE", "exists /locks: NONODE",
		"create /locks: OK", "create /locks/m: OK",
		"create /locks/m/...: NONODE", // the container is gone: attemptLock starts over
		"create /locks/m/...: NONODE",
		"exists /locks/m/...: NONODE", "exists /locks/m: NONODE", "exists /locks: NONODE",
		"create /locks: OK", "create /locks/m: OK",
		"create /locks/m/...: OK",
		"getChildren /locks/m: OK",
	}, requests.entries)
	assert.Len(t, h.children("/locks/m"), 1)
}

// TestLeaderLatchQueuesItsCreateAgainWhenItsNewParentIsDeleted: the latch's background create makes
// the parent again and queues itself again, protected-mode search first, without the retry policy.
func TestLeaderLatchQueuesItsCreateAgainWhenItsNewParentIsDeleted(t *testing.T) {
	h := newHarnessConfig(t, 43, containerConfig(), true)
	apps, l := newLatches(t, h, Bugs{}, "a")
	h.run(time2s)
	requests := &requestLog{base: "/election"}
	apps[0].s.cfg.Tracer = requests
	clogs := reapBetweenMkdirsAndCreate(h, apps[0], "/election")
	require.NoError(t, l[0].Start())
	h.run(10 * clock.Second)
	require.Equal(t, 1, *clogs)
	require.True(t, l[0].HasLeadership(), "seed %d", h.seed)
	assert.Equal(t, []string{
		"createContainer /election", "deleteContainer /election", "createContainer /election", "create /election/...",
	}, h.containerHistory("/election"))
	assert.Equal(t, []string{
		"create /election/...: NONODE",
		"exists /election/...: NONODE", "exists /election: NONODE", "create /election: OK",
		// The queued create searches first (the container is gone by now, so it finds nothing),
		// then finds no parent again: mkdirs, and the create is queued once more.
		"sync /election: OK", "getChildren /election: NONODE",
		"create /election/...: NONODE",
		"exists /election/...: NONODE", "exists /election: NONODE", "create /election: OK",
		"sync /election: OK", "getChildren /election: OK",
		"create /election/...: OK",
		"getChildren /election: OK",
		// First: the owner check before leading (LeaderLatch.checkLeadership, CURATOR-696).
		"getData /election/...: OK",
	}, requests.entries)
}

// TestExclusiveLockStartsOverWhenItsNewParentIsDeleted: the same race for the one-node lock.
func TestExclusiveLockStartsOverWhenItsNewParentIsDeleted(t *testing.T) {
	h := newHarnessConfig(t, 44, containerConfig(), true)
	a := h.app("a", Bugs{})
	l, err := NewExclusiveLock(a.s, "/locks/x", []byte("a"))
	require.NoError(t, err)
	h.run(time2s)
	clogs := reapBetweenMkdirsAndCreate(h, a, "/locks")
	g := acquire(t, l, 0)
	h.run(10 * clock.Second)
	require.Equal(t, 1, *clogs)
	require.True(t, g.Held, "seed %d: %v", h.seed, g.Err)
	assert.Equal(t, []string{"createContainer /locks", "deleteContainer /locks", "createContainer /locks"},
		h.containerHistory("/locks/x"))
	assert.Contains(t, h.children("/"), "locks")
	assert.Equal(t, []string{"x"}, h.children("/locks"))
}
