package lock

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// reapedQueue is a fair lock whose parent is a container: a (session 1) holds the first node of
// the first container, releases, the container manager deletes the empty parent (a transaction of
// no session), and b (session 2) makes the parent again and holds its node, which the server
// numbers from 0 again. It returns the history and both grants' zxids.
func reapedQueue() (*History, int64, int64) {
	var b logBuilder
	b.add(1, proto.OpCreateContainer, &proto.CreateContainerTxn{Path: fair}, at(1))
	ta := b.create(1, nodePath("5"), true, at(1))
	b.delete(1, nodePath("5"), at(2))
	b.add(0, proto.OpDeleteContainer, &proto.DeleteTxn{Path: fair}, at(3))
	b.add(2, proto.OpCreateContainer, &proto.CreateContainerTxn{Path: fair}, at(4))
	tb := b.create(2, nodePath("0"), true, at(4))
	h := &History{Locks: []Lock{{Path: fair, Kind: KindFair}}, Committed: b.log}
	h.Grants = []Grant{
		{Lock: fair, Client: "a", Session: 1, Node: nodePath("5"), Token: ta, Mode: ModeExclusive, Zxid: ta, Time: at(1)},
		{Lock: fair, Client: "b", Session: 2, Node: nodePath("0"), Token: tb, Mode: ModeExclusive, Zxid: tb, Time: at(4)},
	}
	return h, ta, tb
}

// TestFairnessOrdersAQueueByItsParentsIncarnation: the later node has the lower sequence number,
// yet it is later in the queue: its parent is a newer container.
func TestFairnessOrdersAQueueByItsParentsIncarnation(t *testing.T) {
	h, _, _ := reapedQueue()
	for _, checker := range []string{CheckerFairness, CheckerMutualExclusion, CheckerHerd, CheckerOrphans} {
		res := result(t, h, checker)
		assert.Equal(t, checkers.Pass, res.Status, "%s: %s", checker, res.String())
	}
	// Within one incarnation the order is still the sequence: a node 0 of the first container
	// granted after node 5 jumped the queue.
	var b logBuilder
	b.add(1, proto.OpCreateContainer, &proto.CreateContainerTxn{Path: fair}, at(1))
	t0 := b.create(1, nodePath("0"), true, at(1))
	t5 := b.create(2, nodePath("5"), true, at(1))
	h = &History{Locks: []Lock{{Path: fair, Kind: KindFair}}, Committed: b.log}
	h.Grants = []Grant{
		{Lock: fair, Client: "b", Session: 2, Node: nodePath("5"), Token: t5, Mode: ModeExclusive, Zxid: t5, Time: at(1)},
		{Lock: fair, Client: "a", Session: 1, Node: nodePath("0"), Token: t0, Mode: ModeExclusive, Zxid: t5 + 1, Time: at(2)},
	}
	res := result(t, h, CheckerFairness)
	require.Equal(t, checkers.Violation, res.Status)
	assert.Equal(t, []string{"b", "a"}, res.Findings[0].Clients)
}

// TestDeletedParentFiresTheWatchesOnIt: the container manager's delete of the parent is a change
// like a client's: it fires a child watch left on the parent.
func TestDeletedParentFiresTheWatchesOnIt(t *testing.T) {
	h, _, _ := reapedQueue()
	tree := newLockTree(h.Locks, h.Committed)
	c, fired := tree.trigger(fair, true, 3, 1)
	require.True(t, fired)
	assert.Equal(t, "the delete of "+fair, c.what)
	c, fired = tree.trigger(fair, false, 4, 1)
	require.True(t, fired)
	assert.Equal(t, "the create of "+fair, c.what, "an exists watch on the missing parent fires when it is made again")
	assert.Equal(t, nodePath("0"), tree.lowestAlive(fair).path)
}
