package client

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// answerNoNodeFor makes the server answer NONODE for the given paths and OK otherwise.
func answerNoNodeFor(s *fakeServer, missing ...string) {
	s.onRequest = func(fc *fakeConn, h proto.RequestHeader, body proto.Record) {
		code := proto.OK
		if p, ok := requestPath(body); ok {
			for _, m := range missing {
				if p == m {
					code = proto.NoNode
				}
			}
		}
		fc.answer(h, body, code)
	}
}

func requestPath(body proto.Record) (string, bool) {
	switch r := body.(type) {
	case *proto.ExistsRequest:
		return r.Path, true
	case *proto.GetDataRequest:
		return r.Path, true
	case *proto.GetChildren2Request:
		return r.Path, true
	case *proto.AddWatchRequest:
		return r.Path, true
	}
	return "", false
}

func TestWatchesRegisterOnSuccessAndFireOnce(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	answerNoNodeFor(bed.servers[0], "/missing", "/gone")
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	data, exist, child, failed := log.watcher("data"), log.watcher("exist"), log.watcher("child"), log.watcher("failed")
	require.NoError(t, c.GetData("/a", data, nil))
	require.NoError(t, c.Exists("/missing", exist, nil))
	require.NoError(t, c.Exists("/a", exist, nil))
	require.NoError(t, c.GetChildren("/c", child, nil))
	require.NoError(t, c.GetData("/gone", failed, nil))
	bed.run(10 * ms)
	assert.Equal(t, watchTable{"/a": {data, exist}}, c.watches.data, "exists on an existing node sets a data watch")
	assert.Equal(t, watchTable{"/missing": {exist}}, c.watches.exist, "exists on NONODE sets an exist watch")
	assert.Equal(t, watchTable{"/c": {child}}, c.watches.child)
	for _, r := range bed.servers[0].last().nonPing() {
		p, _ := requestPath(r.body)
		assert.Equal(t, "watch=true", watchFlag(r.body), p)
	}

	fc := bed.servers[0].last()
	fc.notify(proto.EventNodeDataChanged, "/a")
	fc.notify(proto.EventNodeDataChanged, "/a") // one-shot: nobody is left to hear it
	fc.notify(proto.EventNodeCreated, "/missing")
	fc.notify(proto.EventNodeChildrenChanged, "/c")
	fc.notify(proto.EventNodeDeleted, "/gone")
	bed.run(10 * ms)
	assert.Equal(t, []string{
		"default: None SyncConnected ",
		"data: NodeDataChanged SyncConnected /a",
		"exist: NodeDataChanged SyncConnected /a",
		"exist: NodeCreated SyncConnected /missing",
		"child: NodeChildrenChanged SyncConnected /c",
	}, log.entries)
	assert.True(t, c.watches.empty())
}

func watchFlag(body proto.Record) string {
	switch r := body.(type) {
	case *proto.ExistsRequest:
		return fmt.Sprintf("watch=%v", r.Watch)
	case *proto.GetDataRequest:
		return fmt.Sprintf("watch=%v", r.Watch)
	case *proto.GetChildren2Request:
		return fmt.Sprintf("watch=%v", r.Watch)
	}
	return "?"
}

func TestWatchEventIsSeenBeforeTheReplyAfterIt(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	w := log.watcher("w")
	require.NoError(t, c.GetData("/a", w, nil))
	bed.run(10 * ms)
	s.onRequest = func(fc *fakeConn, h proto.RequestHeader, body proto.Record) {
		fc.notify(proto.EventNodeDataChanged, "/a")
		fc.answer(h, body, proto.OK)
	}
	require.NoError(t, c.SetData("/a", []byte("new"), -1, func(r StatResult) { log.add("setData: " + r.Err.String()) }))
	bed.run(10 * ms)
	assert.Equal(t, []string{"default: None SyncConnected ", "w: NodeDataChanged SyncConnected /a", "setData: OK"}, log.entries)
}

func TestStateChangesReachEveryWatcherOnce(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	w1, w2 := log.watcher("w1"), log.watcher("w2")
	require.NoError(t, c.GetData("/a", w1, nil))
	require.NoError(t, c.GetChildren("/a", w1, nil))
	require.NoError(t, c.GetData("/b", w2, nil))
	require.NoError(t, c.AddWatch("/r", w2, proto.AddWatchPersistentRecursive, nil))
	require.NoError(t, c.Exists("/e", c.DefaultWatcher(), nil))
	bed.run(10 * ms)
	bed.servers[0].last().close()
	bed.run(200 * ms)
	assert.Equal(t, []string{"default: None SyncConnected ", "default: None Disconnected ", "w1: None Disconnected ", "w2: None Disconnected "},
		log.entries)
	assert.Len(t, c.watches.data, 3, "watches survive a disconnection")
}

func TestPersistentAndRecursiveWatchesStay(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	answerNoNodeFor(bed.servers[0], "/p")
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	rec, per := log.watcher("recursive"), log.watcher("persistent")
	require.NoError(t, c.AddWatch("/r", rec, proto.AddWatchPersistentRecursive, log.result("addWatch r")))
	require.NoError(t, c.AddWatch("/p", per, proto.AddWatchPersistent, log.result("addWatch p")))
	bed.run(10 * ms)
	fc := bed.servers[0].last()
	assert.Equal(t, []proto.OpCode{proto.OpAddWatch, proto.OpAddWatch}, fc.ops())
	fc.notify(proto.EventNodeCreated, "/r/x/y")
	fc.notify(proto.EventNodeDataChanged, "/r")
	fc.notify(proto.EventNodeCreated, "/p")
	fc.notify(proto.EventNodeCreated, "/p/child") // a persistent watch is not recursive
	fc.notify(proto.EventNodeDeleted, "/p")
	bed.run(10 * ms)
	assert.Equal(t, []string{
		"default: None SyncConnected ",
		"addWatch r: OK",
		"addWatch p: NONODE", // registered all the same, as AddWatchRegistration does
		"recursive: NodeCreated SyncConnected /r/x/y",
		"recursive: NodeDataChanged SyncConnected /r",
		"persistent: NodeCreated SyncConnected /p",
		"persistent: NodeDeleted SyncConnected /p",
	}, log.entries)
}

func TestWatchesAreReRegisteredAfterReconnect(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	answerNoNodeFor(s, "/e")
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	w := log.watcher("w")
	require.NoError(t, c.GetData("/d2", w, nil))
	require.NoError(t, c.GetData("/d1", w, nil))
	require.NoError(t, c.Exists("/e", w, nil))
	require.NoError(t, c.GetChildren("/c", w, nil))
	require.NoError(t, c.Create("/z", nil, proto.OpenACLUnsafe, proto.Persistent, nil))
	bed.run(10 * ms)
	lastZxid := c.LastZxid()
	require.NotZero(t, lastZxid)
	s.last().close()
	bed.run(150 * ms)                    // past the cleanup, which fails what is queued
	require.NoError(t, c.Sync("/", nil)) // queued behind the re-registration
	bed.run(2 * clock.Second)
	require.Len(t, s.conns, 2)
	got := s.last().nonPing()
	require.Len(t, got, 2)
	assert.Equal(t, proto.OpSetWatches, got[0].header.Type)
	assert.Equal(t, int32(6), got[0].header.Xid, "Java overwrites SET_WATCHES_XID with the next xid when it writes the packet")
	assert.Equal(t, &proto.SetWatches{RelativeZxid: lastZxid, DataWatches: []string{"/d1", "/d2"},
		ExistWatches: []string{"/e"}, ChildWatches: []string{"/c"}}, got[0].body)
	assert.Equal(t, proto.OpSync, got[1].header.Type)

	// With a persistent watch the re-registration is a SetWatches2.
	require.NoError(t, c.AddWatch("/p", w, proto.AddWatchPersistent, nil))
	bed.run(10 * ms)
	s.last().close()
	bed.run(3 * clock.Second)
	require.Len(t, s.conns, 3)
	got = s.last().nonPing()
	require.Len(t, got, 1)
	assert.Equal(t, proto.OpSetWatches2, got[0].header.Type)
	assert.Equal(t, &proto.SetWatches2{RelativeZxid: c.LastZxid(), DataWatches: []string{"/d1", "/d2"},
		ExistWatches: []string{"/e"}, ChildWatches: []string{"/c"}, PersistentWatches: []string{"/p"},
		PersistentRecursiveWatches: []string{}}, got[0].body)
}

func TestLargeWatchSetsAreSplitAsJavaSplitsThem(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	w := log.watcher("w")
	for i := range 300 {
		// 1000 characters each: a batch closes after 132 of them (132 000 >= 128 KiB).
		require.NoError(t, c.GetData(fmt.Sprintf("/%03d%s", i, strings.Repeat("x", 996)), w, nil))
	}
	bed.run(10 * ms)
	s.last().close()
	bed.run(2 * clock.Second)
	var sizes []int
	var firstPaths []string
	for _, r := range s.last().nonPing() {
		sw := r.body.(*proto.SetWatches)
		sizes = append(sizes, len(sw.DataWatches))
		firstPaths = append(firstPaths, sw.DataWatches[0][:4])
	}
	assert.Equal(t, []int{36, 132, 132}, sizes, "batches go out in reverse order, as addFirst leaves them")
	assert.Equal(t, []string{"/264", "/132", "/000"}, firstPaths)
}

func TestRemoveWatches(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	w1, w2 := log.watcher("w1"), log.watcher("w2")
	require.NoError(t, c.GetData("/a", w1, nil))
	require.NoError(t, c.GetData("/a", w2, nil))
	require.NoError(t, c.GetChildren("/a", w2, nil))
	bed.run(10 * ms)
	require.NoError(t, c.RemoveWatches("/a", w1, proto.WatcherData, false, log.result("remove w1")))
	require.NoError(t, c.RemoveWatches("/a", w1, proto.WatcherData, false, log.result("remove w1 again")))
	bed.run(10 * ms)
	assert.Equal(t, []string{"default: None SyncConnected ", "w1: DataWatchRemoved SyncConnected /a", "remove w1: OK",
		"remove w1 again: NOWATCHER"}, log.entries)
	assert.Equal(t, []proto.OpCode{proto.OpGetData, proto.OpGetData, proto.OpGetChildren2, proto.OpCheckWatches, proto.OpCheckWatches},
		s.last().ops())

	// A local removal survives a lost connection: the watcher hears it with state Disconnected,
	// and the request reports OK. The removal events set the EventThread's session state to
	// Disconnected, so Java then drops the Disconnected state change itself as a repeat.
	s.onRequest = func(*fakeConn, proto.RequestHeader, proto.Record) {}
	require.NoError(t, c.RemoveAllWatches("/a", proto.WatcherAny, true, log.result("remove all")))
	bed.run(10 * ms)
	s.last().close()
	bed.run(200 * ms)
	assert.Equal(t, []string{
		"w2: DataWatchRemoved Disconnected /a",
		"w2: ChildWatchRemoved Disconnected /a",
		"remove all: OK",
	}, log.entries[4:])
	assert.True(t, c.watches.empty())
}

func TestDisabledAutoWatchResetClearsWatchesOnDisconnect(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	log := &eventLog{w: bed.w}
	c, err := New(bed.w, bed.nw, bed.clientNode, Config{Servers: bed.serverNodes(), SessionTimeout: 4 * clock.Second,
		DisableAutoWatchReset: true}, log.watcher("default"))
	require.NoError(t, err)
	bed.run(10 * ms)
	w := log.watcher("w")
	require.NoError(t, c.GetData("/a", w, nil))
	require.NoError(t, c.AddWatch("/p", w, proto.AddWatchPersistent, nil))
	bed.run(10 * ms)
	s.last().close()
	bed.run(3 * clock.Second)
	assert.Equal(t, []string{"default: None SyncConnected ", "default: None Disconnected ", "w: None Disconnected ",
		"default: None SyncConnected ", "w: None SyncConnected "}, log.entries)
	assert.Empty(t, c.watches.data, "one-shot watches are dropped on Disconnected")
	assert.Len(t, c.watches.persistent, 1, "persistent ones stay")
	require.Len(t, s.conns, 2)
	assert.Empty(t, s.last().nonPing(), "no SetWatches")
}

func TestUnknownNotificationDropsTheConnection(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	log := &eventLog{w: bed.w}
	bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	fc := bed.servers[0].last()
	fc.notify(proto.EventDataWatchRemoved, "/a") // materialize refuses it with a RuntimeException
	bed.run(5 * ms)
	assert.True(t, fc.closed)
}
