package lockmodel

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
)

func newRWLocks(t *testing.T, h *harness, bugs Bugs, names ...string) []*ReadWriteLock {
	t.Helper()
	var locks []*ReadWriteLock
	for _, n := range names {
		a := h.app(n, bugs)
		l, err := NewReadWriteLock(a.s, "/locks/rw", nil)
		require.NoError(t, err)
		locks = append(locks, l)
	}
	h.run(time2s)
	return locks
}

func TestReadersShareAndWritersWaitForEveryone(t *testing.T) {
	h := newHarness(t, 21, 3, true)
	h.ensure("/locks", "/locks/rw")
	l := newRWLocks(t, h, Bugs{}, "r1", "r2", "w", "r3")
	g1 := acquire(t, l[0].ReadLock(), 0)
	g2 := acquire(t, l[1].ReadLock(), 0)
	h.run(time2s)
	require.True(t, g1.Held && g2.Held, "readers share the lock")
	assert.Contains(t, g1.Node, ReadLockName)
	gw := acquire(t, l[2].WriteLock(), 0)
	h.run(time2s)
	assert.False(t, gw.Held, "the writer waits for the readers")
	g3 := acquire(t, l[3].ReadLock(), 0)
	h.run(time2s)
	assert.False(t, g3.Held, "a reader after a waiting writer waits too")
	require.NoError(t, l[0].ReadLock().Release(func(error) {}))
	h.run(time2s)
	assert.False(t, gw.Held, "one reader still holds")
	require.NoError(t, l[1].ReadLock().Release(func(error) {}))
	h.run(time2s)
	require.True(t, gw.Held, "the last reader's release lets the writer in")
	assert.Contains(t, gw.Node, WriteLockName)
	assert.False(t, g3.Held)
	require.NoError(t, l[2].WriteLock().Release(func(error) {}))
	h.run(time2s)
	assert.True(t, g3.Held)
	for _, e := range h.eventsOf(EventWatching, "r3") {
		assert.True(t, strings.Contains(e.Path, WriteLockName), "a reader watches a write node: %s", e.Path)
	}
}

func TestWriterMayDowngradeToRead(t *testing.T) {
	h := newHarness(t, 22, 1, true)
	h.ensure("/locks", "/locks/rw")
	l := newRWLocks(t, h, Bugs{}, "w", "r")
	gw := acquire(t, l[0].WriteLock(), 0)
	h.run(time2s)
	require.True(t, gw.Held)
	gr := acquire(t, l[0].ReadLock(), 0)
	other := acquire(t, l[1].ReadLock(), 0)
	h.run(time2s)
	require.True(t, gr.Held, "the writer takes the read lock at once")
	assert.False(t, other.Held, "others still wait for the writer")
	grants := h.eventsOf(EventGranted, "w")
	require.Len(t, grants, 2)
	assert.True(t, grants[1].ViaWriteLock)
	require.NoError(t, l[0].WriteLock().Release(func(error) {}))
	h.run(time2s)
	assert.True(t, other.Held, "after the downgrade, readers share with the downgraded writer")
	assert.True(t, l[0].ReadLock().Held())
}

func TestWriterSkipsReadersBug(t *testing.T) {
	for _, bug := range []bool{false, true} {
		h := newHarness(t, 23, 1, true)
		h.ensure("/locks", "/locks/rw")
		bugs := Bugs{}
		if bug {
			bugs = bugs.With(BugWriterSkipsReaders)
		}
		l := newRWLocks(t, h, bugs, "r", "w1", "w2")
		gr := acquire(t, l[0].ReadLock(), 0)
		h.run(time2s)
		require.True(t, gr.Held)
		g1 := acquire(t, l[1].WriteLock(), 0)
		h.run(time2s)
		assert.Equal(t, bug, g1.Held, "bug=%v: does the writer enter while the reader holds?", bug)
		g2 := acquire(t, l[2].WriteLock(), 0)
		h.run(clock.Second)
		assert.False(t, g2.Held, "bug=%v: writers still exclude each other", bug)
	}
}

// TestDowngradedReadNodeTakesTheWriteNodesSequence: CURATOR-621 (Curator 5.5.0). The read node of
// a downgrade is created with the write node's sequence number (ReadLock.getSortingSequence,
// StandardLockInternalsDriver.createsTheLock with EPHEMERAL), so that a writer already waiting
// does not take the write lock while the downgraded holder still reads.
func TestDowngradedReadNodeTakesTheWriteNodesSequence(t *testing.T) {
	for _, bug := range []bool{false, true} {
		downgradeWithWriterWaiting(t, bug)
	}
}

// downgradeWithWriterWaiting: with the bug (Curator before 5.5.0) the waiting writer gets in
// while the downgraded holder still reads.
func downgradeWithWriterWaiting(t *testing.T, bug bool) {
	h := newHarness(t, 23, 1, true)
	h.ensure("/locks", "/locks/rw")
	bugs := Bugs{}
	if bug {
		bugs = bugs.With(BugDowngradeNewNode)
	}
	l := newRWLocks(t, h, bugs, "w", "w2")
	gw := acquire(t, l[0].WriteLock(), 0)
	h.run(time2s)
	require.True(t, gw.Held)
	waiting := acquire(t, l[1].WriteLock(), 0)
	h.run(time2s)
	require.False(t, waiting.Held)
	gr := acquire(t, l[0].ReadLock(), 0)
	h.run(time2s)
	require.True(t, gr.Held, "the writer takes the read lock at once")
	writeSeq, ok := Sequence(gw.Node)
	require.True(t, ok)
	readSeq, ok := Sequence(gr.Node)
	require.True(t, ok, gr.Node)
	assert.Contains(t, gr.Node, ReadLockName)
	require.NoError(t, l[0].WriteLock().Release(func(error) {}))
	h.run(time2s)
	if bug {
		assert.Greater(t, readSeq, writeSeq, "a new node, behind the waiting writer")
		assert.True(t, waiting.Held, "the waiting writer gets in while the downgraded holder reads: the bug")
		return
	}
	assert.Equal(t, writeSeq, readSeq, "the read node carries the write node's sequence")
	assert.False(t, waiting.Held, "the waiting writer must wait for the downgraded reader")
	require.NoError(t, l[0].ReadLock().Release(func(error) {}))
	h.run(time2s)
	assert.True(t, waiting.Held, "and gets the lock once it reads no more")
}
