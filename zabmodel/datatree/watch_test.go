package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

func event(typ proto.EventType, path string) proto.WatcherEvent {
	return proto.WatcherEvent{Type: typ, State: proto.StateSyncConnected, Path: path}
}

func TestWatchesFireOnceAsDataTreeTriggersThem(t *testing.T) {
	tree := New(Config{})
	data, child, exist := &recorder{}, &recorder{}, &recorder{}
	_, err := tree.Exists("/a", exist)
	require.Equal(t, proto.NoNode, err, "exists leaves its watch on a missing node")
	tree.Apply(createEntry(1, 1, "/a", "", false, 1))
	assert.Equal(t, []proto.WatcherEvent{event(proto.EventNodeCreated, "/a")}, exist.take())
	assert.Equal(t, []int64(nil), exist.zxids)

	_, _, err = tree.GetData("/a", nil, data)
	require.NoError(t, err)
	_, _, err = tree.GetChildren("/a", nil, child)
	require.NoError(t, err)
	_, _, err = tree.GetChildren("/", nil, child)
	require.NoError(t, err)
	tree.Apply(setDataEntry(2, "/a", "x", 1))
	assert.Equal(t, []proto.WatcherEvent{event(proto.EventNodeDataChanged, "/a")}, data.events)
	assert.Equal(t, []int64{NotificationZxid}, data.zxids, "3.8.0 sends notifications with zxid -1")
	data.take()
	tree.Apply(setDataEntry(3, "/a", "y", 2))
	assert.Empty(t, data.events, "one-shot")

	tree.Apply(createEntry(4, 1, "/a/b", "", false, 1))
	assert.Equal(t, []proto.WatcherEvent{event(proto.EventNodeChildrenChanged, "/a")}, child.take())
	_, _, err = tree.GetChildren("/a", nil, child)
	require.NoError(t, err)
	tree.Apply(deleteEntry(5, 1, "/a/b"))
	tree.Apply(deleteEntry(6, 1, "/a"))
	// The delete of /a/b fired /a's child watch; /a's own delete then hits
	// the watch on / only.
	assert.Equal(t, []proto.WatcherEvent{event(proto.EventNodeChildrenChanged, "/a"), event(proto.EventNodeChildrenChanged, "/")}, child.take())
	assert.Zero(t, tree.WatchCount())
}

func TestDeleteNotifiesAWatcherOnceWithNodeDeleted(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 1, "/a", "", false, 1))
	both, childOnly := &recorder{}, &recorder{}
	_, _, _ = tree.GetData("/a", nil, both)
	_, _, _ = tree.GetChildren("/a", nil, both)
	_, _, _ = tree.GetChildren("/a", nil, childOnly)
	tree.Apply(deleteEntry(2, 1, "/a"))
	assert.Equal(t, []proto.WatcherEvent{event(proto.EventNodeDeleted, "/a")}, both.events, "the child watch is consumed, its event suppressed")
	assert.Equal(t, []proto.WatcherEvent{event(proto.EventNodeDeleted, "/a")}, childOnly.events, "a child watch on the deleted node gets NodeDeleted")
	assert.Zero(t, tree.WatchCount())
}

func TestNotificationOrderIsRegistrationOrder(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 1, "/a", "", false, 1))
	var order []string
	first, second := &orderWatcher{"first", &order}, &orderWatcher{"second", &order}
	_, _, _ = tree.GetData("/a", nil, second)
	_, _, _ = tree.GetData("/a", nil, first)
	_, _, _ = tree.GetData("/a", nil, second)
	tree.Apply(setDataEntry(2, "/a", "x", 1))
	assert.Equal(t, []string{"second", "first"}, order)
}

type orderWatcher struct {
	name  string
	order *[]string
}

func (w *orderWatcher) Process(proto.WatcherEvent, int64) { *w.order = append(*w.order, w.name) }

func TestPersistentAndRecursiveWatches(t *testing.T) {
	tree := New(Config{})
	persistent, recursive := &recorder{}, &recorder{}
	require.NoError(t, tree.AddWatch("/p", proto.AddWatchPersistent, persistent))
	require.NoError(t, tree.AddWatch("/p", proto.AddWatchPersistentRecursive, recursive))
	tree.Apply(createEntry(1, 1, "/p", "", false, 1))
	tree.Apply(createEntry(2, 1, "/p/c", "", false, 1))
	tree.Apply(setDataEntry(3, "/p/c", "x", 1))
	tree.Apply(setDataEntry(4, "/p", "x", 1))
	tree.Apply(deleteEntry(5, 1, "/p/c"))
	assert.Equal(t, []proto.WatcherEvent{
		event(proto.EventNodeCreated, "/p"), event(proto.EventNodeChildrenChanged, "/p"),
		event(proto.EventNodeDataChanged, "/p"), event(proto.EventNodeChildrenChanged, "/p"),
	}, persistent.take(), "a persistent watch sees its own path, children changes included, and stays")
	assert.Equal(t, []proto.WatcherEvent{
		event(proto.EventNodeCreated, "/p"), event(proto.EventNodeCreated, "/p/c"),
		event(proto.EventNodeDataChanged, "/p/c"), event(proto.EventNodeDataChanged, "/p"),
		event(proto.EventNodeDeleted, "/p/c"),
	}, recursive.take(), "a recursive watch sees the subtree and never NodeChildrenChanged")
	assert.Equal(t, proto.MarshallingError, tree.AddWatch("/p", proto.AddWatchMode(7), persistent))

	// A one-shot watch by the same watcher on the same path replaces the
	// persistent one.
	_, _, _ = tree.GetData("/p", nil, persistent)
	tree.Apply(setDataEntry(6, "/p", "y", 2))
	tree.Apply(setDataEntry(7, "/p", "z", 3))
	assert.Equal(t, []proto.WatcherEvent{event(proto.EventNodeDataChanged, "/p")}, persistent.take())
}

func TestRemoveAndCheckWatches(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 1, "/a", "", false, 1))
	mine, other := &recorder{}, &recorder{}
	_, _, _ = tree.GetData("/a", nil, mine)
	assert.NoError(t, tree.CheckWatches("/a", proto.WatcherData, mine))
	assert.Equal(t, proto.NoWatcher, tree.CheckWatches("/a", proto.WatcherChildren, mine))
	assert.NoError(t, tree.CheckWatches("/a", proto.WatcherData, other),
		"3.8.0's containsWatcher answers for any watcher on the path")
	assert.Equal(t, proto.MarshallingError, tree.CheckWatches("a", proto.WatcherData, mine), "PathParentIterator throws on a path without '/'")
	assert.Equal(t, proto.MarshallingError, tree.CheckWatches("/a", proto.WatcherType(9), mine))
	assert.Equal(t, proto.NoWatcher, tree.RemoveWatches("/a", proto.WatcherData, other))
	assert.Equal(t, proto.NoWatcher, tree.RemoveWatches("/a", proto.WatcherChildren, mine))
	assert.NoError(t, tree.RemoveWatches("/a", proto.WatcherAny, mine))
	assert.Equal(t, proto.NoWatcher, tree.CheckWatches("/a", proto.WatcherAny, mine))
	tree.Apply(setDataEntry(2, "/a", "x", 1))
	assert.Empty(t, mine.events, "removed watches send nothing")

	_, _, _ = tree.GetData("/a", nil, mine)
	_, _, _ = tree.GetChildren("/a", nil, mine)
	require.NoError(t, tree.AddWatch("/", proto.AddWatchPersistentRecursive, mine))
	tree.RemoveWatcher(mine)
	assert.Zero(t, tree.WatchCount())
	assert.Zero(t, tree.dataWatches.recursive, "the recursive count follows removals")
	tree.Apply(deleteEntry(3, 1, "/a"))
	assert.Empty(t, mine.events)
}

type staleWatcher struct{ recorder }

func (*staleWatcher) IsStale() bool { return true }

func TestStaleWatchersAreIgnored(t *testing.T) {
	tree := New(Config{})
	w := &staleWatcher{}
	_, _ = tree.Exists("/a", w)
	assert.Zero(t, tree.WatchCount())
}

func TestSetWatchesFiresForChangesAfterTheClientsZxid(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 1, "/old", "", false, 1))
	tree.Apply(createEntry(2, 1, "/changed", "", false, 2))
	tree.Apply(setDataEntry(5, "/changed", "x", 1))
	tree.Apply(createEntry(6, 1, "/old/kid", "", false, 1))
	w := &recorder{}
	tree.SetWatches(4, []string{"/old", "/changed", "/gone"}, []string{"/old", "/future"},
		[]string{"/old", "/changed", "/gone"}, []string{"/p"}, []string{"/r"}, w)
	assert.Equal(t, []proto.WatcherEvent{
		event(proto.EventNodeDataChanged, "/changed"), event(proto.EventNodeDeleted, "/gone"),
		event(proto.EventNodeCreated, "/old"),
		event(proto.EventNodeChildrenChanged, "/old"), event(proto.EventNodeDeleted, "/gone"),
	}, w.take(), "exist watches fire for any existing node, whatever its czxid")
	// Registered: data /old, exist /future, child /changed, /p and /r twice.
	assert.Equal(t, 7, tree.WatchCount())
	tree.Apply(createEntry(7, 1, "/future", "", false, 3))
	tree.Apply(setDataEntry(8, "/old", "y", 1))
	assert.Equal(t, []proto.WatcherEvent{event(proto.EventNodeCreated, "/future"), event(proto.EventNodeDataChanged, "/old")}, w.take())
}

func TestNonComparableWatcherPanicsWithContext(t *testing.T) {
	tree := New(Config{})
	assert.PanicsWithValue(t, "datatree: watcher of type datatree.sliceWatcher is not comparable; pass a pointer", func() {
		_, _ = tree.Exists("/a", sliceWatcher{})
	})
}

type sliceWatcher []int

func (sliceWatcher) Process(proto.WatcherEvent, int64) {}

// identified is a watcher with identities, like a client connection.
type identified struct {
	recorder
	auth []proto.ID
}

func (w *identified) WatchAuth() []proto.ID { return w.auth }

// TestEventsReachOnlyWatchersThatMayReadTheNode follows the CVE-2024-23944
// fix: a node's own events are checked against its ACL, a child change
// against the parent's, and a watcher without READ hears nothing (while its
// one-shot watch is still consumed). Watches are placed while the nodes are
// open, or with exists, which checks no ACL; the ACLs change afterwards.
func TestEventsReachOnlyWatchersThatMayReadTheNode(t *testing.T) {
	tree := New(Config{})
	alice := proto.ID{Scheme: SchemeDigest, ID: DigestID("alice:secret")}
	aliceOnly := []proto.ACL{{Perms: proto.PermAll, ID: alice}}
	zxid := int64(0)
	apply := func(e *proto.TxnEntry) { tree.Apply(e) }
	next := func() int64 { zxid++; return zxid }
	create := func(path string, acl []proto.ACL) {
		e := createEntry(next(), 1, path, "", false, -1)
		e.Txn.(*proto.CreateTxn).ACL = acl
		apply(e)
	}
	setACL := func(path string, acl []proto.ACL, version int32) {
		apply(&proto.TxnEntry{Header: header(proto.OpSetACL, 1, next()), Txn: &proto.SetACLTxn{Path: path, ACL: acl, Version: version}})
	}
	create("/p", proto.OpenACLUnsafe)

	owner := &identified{auth: []proto.ID{{Scheme: "ip", ID: "127.0.0.1"}, alice}}
	stranger := &identified{auth: []proto.ID{{Scheme: "ip", ID: "127.0.0.1"}}}
	super := &identified{auth: []proto.ID{{Scheme: SchemeSuper, ID: "admin"}}}
	plain := &recorder{} // no identities: not checked, as a non-connection watcher in Java
	everyone := []Watcher{owner, stranger, super, plain}
	for _, w := range everyone {
		_, _, err := tree.GetChildren("/p", owner.auth, w)
		require.NoError(t, err)
		_, err = tree.Exists("/p/x", w)
		require.Equal(t, proto.NoNode, err)
	}
	setACL("/p", aliceOnly, 1)

	// NodeChildrenChanged is checked against the parent's ACL, NodeCreated
	// against the new node's (open here).
	create("/p/x", proto.OpenACLUnsafe)
	created := event(proto.EventNodeCreated, "/p/x")
	children := event(proto.EventNodeChildrenChanged, "/p")
	for _, w := range []*recorder{&owner.recorder, &super.recorder, plain} {
		assert.Equal(t, []proto.WatcherEvent{created, children}, w.take())
	}
	assert.Equal(t, []proto.WatcherEvent{created}, stranger.take(), "no READ on the parent /p")

	// NodeDataChanged is checked against the node's ACL.
	for _, w := range everyone {
		_, err := tree.Exists("/p/x", w)
		require.NoError(t, err)
	}
	setACL("/p/x", aliceOnly, 1)
	apply(setDataEntry(next(), "/p/x", "v", 1))
	for _, w := range []*recorder{&owner.recorder, &super.recorder, plain} {
		assert.Equal(t, []proto.WatcherEvent{event(proto.EventNodeDataChanged, "/p/x")}, w.take())
	}
	assert.Empty(t, stranger.take(), "no READ on /p/x")

	// The stranger's one-shot watch was consumed by the event it did not
	// get; a new one hears nothing of the delete either, which is checked
	// against the deleted node's ACL.
	apply(setDataEntry(next(), "/p/x", "w", 2))
	for _, w := range everyone {
		_, err := tree.Exists("/p/x", w)
		require.NoError(t, err)
	}
	apply(deleteEntry(next(), 1, "/p/x"))
	assert.Equal(t, []proto.WatcherEvent{event(proto.EventNodeDeleted, "/p/x")}, owner.take())
	assert.Empty(t, stranger.take(), "NodeDeleted is checked against the deleted node's ACL")
	assert.Zero(t, tree.WatchCount())
}
