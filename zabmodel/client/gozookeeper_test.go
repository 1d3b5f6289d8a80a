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

// The tests of this file check each behaviour in which Emulate GoZookeeper differs from Java, and
// most check the Java behaviour beside it, so that a difference that vanished is noticed.

// newGoZookeeper starts a go-zookeeper client and runs until its session is established.
func (b *testbed) newGoZookeeper(log *eventLog) *Client {
	helper(b.tb)
	c := b.newClientWith(Config{Emulate: GoZookeeper}, log)
	b.run(10 * ms)
	require.Equal(b.tb, StateConnected, c.State())
	return c
}

// issueOddCalls makes the calls that Java refuses before sending and go-zookeeper sends as they
// are, and returns their errors in order.
func issueOddCalls(c *Client) []error {
	return []error{
		c.Delete("bad", -1, nil),
		c.Exists("/a/", nil, nil),
		c.GetData("/./x", nil, nil),
		c.GetChildren("/a//b", nil, nil),
		c.SetData("/zookeeper\u0001", nil, -1, nil),
		c.GetACL("", nil),
		c.SetACL("/a/../b", nil, -1, nil),
		c.Sync("relative", nil),
		c.Create("/seq/", nil, proto.OpenACLUnsafe, proto.Persistent, nil),
		c.CreateTTL("/ttl", nil, proto.OpenACLUnsafe, proto.PersistentWithTTL, 0, nil),
		c.CreateTTL("/ttl-huge", nil, proto.OpenACLUnsafe, proto.PersistentWithTTL, 1<<41, nil),
		c.Multi([]Op{CreateOp("bad", nil, proto.OpenACLUnsafe, proto.PersistentWithTTL), DeleteOp("/x/", 0)}, nil),
	}
}

func TestGoZookeeperValidatesNothingButTheCreateMode(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	java := bed.newClient(4*clock.Second, &eventLog{w: bed.w})
	bed.run(10 * ms)
	for i, err := range issueOddCalls(java) {
		assert.Error(t, err, "Java refuses call %d", i)
	}
	require.Empty(t, bed.servers[0].last().nonPing())

	other := newTestbed(t, 1, 1)
	other.servers[0].onRequest = func(*fakeConn, proto.RequestHeader, proto.Record) {} // holds every request
	c := other.newGoZookeeper(&eventLog{w: other.w})
	for i, err := range issueOddCalls(c) {
		assert.NoError(t, err, "go-zookeeper sends call %d", i)
	}
	other.run(10 * ms)
	got := other.servers[0].last().nonPing()
	require.Len(t, got, 12)
	assert.Equal(t, &proto.DeleteRequest{Path: "bad", Version: -1}, got[0].body)
	assert.Equal(t, &proto.CreateTTLRequest{Path: "/ttl", ACL: proto.OpenACLUnsafe, Flags: proto.PersistentWithTTL, TTL: 0}, got[9].body)
	assert.Equal(t, int64(1<<41), got[10].body.(*proto.CreateTTLRequest).TTL)

	err := c.Create("/a", nil, proto.OpenACLUnsafe, proto.CreateMode(7), nil)
	assert.ErrorIs(t, err, ErrInvalidArgument, "parseCreateMode refuses an unknown flag, as CreateMode.fromFlag does")
	assert.ErrorIs(t, c.Multi([]Op{GetDataOp("/a")}, nil), ErrInvalidArgument, "no multiRead in go-zookeeper")
	assert.ErrorIs(t, c.AddWatch("/a", c.DefaultWatcher(), proto.AddWatchPersistent, nil), ErrInvalidArgument)
	assert.ErrorIs(t, c.RemoveWatches("/a", c.DefaultWatcher(), proto.WatcherAny, false, nil), ErrInvalidArgument)
	assert.ErrorIs(t, c.RemoveAllWatches("/a", proto.WatcherAny, true, nil), ErrInvalidArgument)
}

func TestGoZookeeperCreatesWithCreateAndDropsTheStat(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	stat := proto.Stat{Czxid: 0x100000002, Version: 0}
	bed.servers[0].onRequest = func(fc *fakeConn, h proto.RequestHeader, body proto.Record) {
		var resp proto.Record = &proto.Create2Response{Path: "/made", Stat: stat}
		if h.Type == proto.OpCreate {
			resp = &proto.CreateResponse{Path: "/made"}
		}
		fc.reply(proto.ReplyHeader{Xid: h.Xid, Zxid: 0x100000002}, resp)
	}
	c := bed.newGoZookeeper(&eventLog{w: bed.w})
	var got []CreateResult
	record := func(r CreateResult) { got = append(got, r) }
	require.NoError(t, c.Create("/p", []byte("d"), nil, proto.EphemeralSequential, record))
	require.NoError(t, c.Create("/box", nil, proto.OpenACLUnsafe, proto.Container, record))
	require.NoError(t, c.CreateTTL("/t", nil, proto.OpenACLUnsafe, proto.PersistentSequentialWithTTL, 500, record))
	bed.run(10 * ms)
	sent := bed.servers[0].last().nonPing()
	require.Len(t, sent, 3)
	assert.Equal(t, proto.OpCreate, sent[0].header.Type, "create, not create2")
	assert.Equal(t, &proto.CreateRequest{Path: "/p", Data: []byte("d"), ACL: []proto.ACL{}, Flags: proto.EphemeralSequential},
		sent[0].body, "a nil ACL goes as an empty vector")
	assert.Equal(t, proto.OpCreateContainer, sent[1].header.Type)
	assert.Equal(t, proto.OpCreateTTL, sent[2].header.Type)
	require.Len(t, got, 3)
	for i, r := range got {
		assert.Equal(t, CreateResult{Zxid: 0x100000002, Xid: int32(i + 1), Session: 0x101, Path: "/made"}, r,
			"go-zookeeper decodes the path only")
	}
}

// answerMulti answers every multi with the results of the given function of its op count.
func answerMulti(s *fakeServer, results func(ops int) (proto.Code, []proto.MultiResult)) {
	s.onRequest = func(fc *fakeConn, h proto.RequestHeader, body proto.Record) {
		code, res := results(len(body.(*proto.MultiRequest).Ops))
		if code != proto.OK {
			fc.reply(proto.ReplyHeader{Xid: h.Xid, Zxid: 3, Err: code}, nil)
			return
		}
		fc.reply(proto.ReplyHeader{Xid: h.Xid, Zxid: 3}, &proto.MultiResponse{Results: res})
	}
}

func TestGoZookeeperMultiSendsEverythingAsCreateAndDecodesLikeGoZookeeper(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	stat := proto.Stat{Version: 4}
	answerMulti(bed.servers[0], func(ops int) (proto.Code, []proto.MultiResult) {
		switch ops {
		case 0:
			return proto.OK, []proto.MultiResult{}
		case 1:
			return proto.MarshallingError, nil
		case 2:
			return proto.OK, []proto.MultiResult{{Type: proto.OpCreate, Response: &proto.CreateResponse{Path: "/c"}},
				{Type: proto.OpSetData, Response: &proto.SetDataResponse{Stat: stat}}}
		default:
			// A server answering a create op with create2 stops go-zookeeper's decoding.
			return proto.OK, []proto.MultiResult{{Type: proto.OpCheck}, {Type: proto.OpError, Err: proto.NoNode},
				{Type: proto.OpCreate2, Response: &proto.Create2Response{Path: "/d"}}, {Type: proto.OpDelete}}
		}
	})
	c := bed.newGoZookeeper(&eventLog{w: bed.w})
	var got []MultiResult
	record := func(r MultiResult) { got = append(got, r) }
	require.NoError(t, c.Multi(nil, record))
	require.NoError(t, c.Multi([]Op{CheckOp("/a", 1)}, record))
	require.NoError(t, c.Multi([]Op{CreateTTLOp("/c", nil, nil, proto.PersistentWithTTL, 10), SetDataOp("/a", nil, -1)}, record))
	require.NoError(t, c.Multi([]Op{CheckOp("/a", 1), DeleteOp("/b", -1), CreateOp("/d", nil, nil, proto.Container),
		DeleteOp("/e", -1)}, record))
	bed.run(10 * ms)
	sent := bed.servers[0].last().nonPing()
	require.Len(t, sent, 4, "an empty multi is sent")
	assert.Equal(t, proto.OpMulti, sent[0].header.Type)
	assert.Empty(t, sent[0].body.(*proto.MultiRequest).Ops)
	assert.Equal(t, proto.MultiOp{Type: proto.OpCreate, Request: &proto.CreateRequest{Path: "/c", ACL: []proto.ACL{},
		Flags: proto.PersistentWithTTL}}, sent[2].body.(*proto.MultiRequest).Ops[0], "a TTL create goes as create, without its TTL")
	assert.Equal(t, proto.OpCreate, sent[3].body.(*proto.MultiRequest).Ops[2].Type, "a container too")
	require.Len(t, got, 4)
	assert.Equal(t, MultiResult{Zxid: 3, Xid: 1, Session: 0x101, Results: []OpResult{}}, got[0])
	assert.Equal(t, MultiResult{Err: proto.MarshallingError, Zxid: 3, Xid: 2, Session: 0x101, Results: []OpResult{}}, got[1],
		"a header error: go-zookeeper decodes nothing, and returns an empty list")
	assert.Equal(t, []OpResult{{Type: proto.OpCreate, Path: "/c"}, {Type: proto.OpSetData, Stat: stat}}, got[2].Results)
	assert.Equal(t, MultiResult{Err: proto.APIError, Zxid: 3, Xid: 4, Session: 0x101, Results: []OpResult{
		{Type: proto.OpCheck}, {Type: proto.OpError, Err: proto.NoNode}}}, got[3])

	bed.servers[0].last().close()
	require.NoError(t, c.Multi([]Op{CheckOp("/a", 1)}, record))
	bed.run(200 * ms)
	require.Len(t, got, 5)
	assert.Equal(t, proto.ConnectionLoss, got[4].Err)
	assert.Nil(t, got[4].Results, "no reply, no list")
}

func TestGoZookeeperMatchesRepliesByXid(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	var held []proto.RequestHeader
	bed.servers[0].onRequest = func(fc *fakeConn, h proto.RequestHeader, _ proto.Record) { held = append(held, h) }
	log := &eventLog{w: bed.w}
	c := bed.newGoZookeeper(log)
	require.NoError(t, c.Sync("/a", log.result("first")))
	require.NoError(t, c.Sync("/b", log.result("second")))
	bed.run(10 * ms)
	require.Len(t, held, 2)
	fc := bed.servers[0].last()
	fc.reply(proto.ReplyHeader{Xid: 77, Zxid: 9}, nil)                                      // unknown: ignored
	fc.reply(proto.ReplyHeader{Xid: proto.AuthXid, Zxid: 9}, nil)                           // an unexpected negative xid: ignored
	fc.reply(proto.ReplyHeader{Xid: held[1].Xid, Zxid: 9}, &proto.SyncResponse{Path: "/b"}) // out of order: accepted
	fc.reply(proto.ReplyHeader{Xid: held[0].Xid, Zxid: 10}, &proto.SyncResponse{Path: "/a"})
	bed.run(10 * ms)
	assert.False(t, fc.closed, "go-zookeeper keeps the connection")
	assert.Equal(t, []string{"default: None SyncConnected ", "second: OK", "first: OK"}, log.entries)
	assert.Equal(t, int64(10), c.LastZxid())
	assert.Contains(t, bed.trace.String(), "unknown request with xid 77")
}

func TestGoZookeeperTakesXidsWhenQueueing(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	log := &eventLog{w: bed.w}
	c := bed.newClientWith(Config{Emulate: GoZookeeper}, log)
	var got []Result
	record := func(r Result) { got = append(got, r) }
	// Issued before the session exists: queued with xid 1, written after the handshake.
	require.NoError(t, c.Sync("/a", record))
	bed.run(10 * ms)
	c.goXid = 0x7ffffffe
	for range 3 {
		require.NoError(t, c.Sync("/a", record))
	}
	bed.run(10 * ms)
	var xids []int32
	for _, r := range got {
		xids = append(xids, r.Xid)
	}
	assert.Equal(t, []int32{1, 0x7fffffff, 0, 1}, xids, "the counter is masked to 31 bits, so it passes through 0")
}

func TestGoZookeeperRefusesRequestsBeyondItsSendBuffer(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	c := bed.newGoZookeeper(&eventLog{w: bed.w})
	// Length prefix, header (8), path ("/a", 6), data length (4), version (4).
	fits := goZookeeperBufferBytes - 4 - 8 - 6 - 4 - 4
	require.NoError(t, c.SetData("/a", make([]byte, fits), -1, nil))
	assert.ErrorIs(t, c.SetData("/a", make([]byte, fits+1), -1, nil), ErrRequestTooLarge)
	// A create of the same data has an ACL vector (4 bytes when empty) and flags (4) instead of the
	// version (4).
	require.NoError(t, c.Create("/b", make([]byte, fits-4), nil, proto.Persistent, nil))
	assert.ErrorIs(t, c.Create("/b", make([]byte, fits-3), nil, proto.Persistent, nil), ErrRequestTooLarge)
	bed.run(10 * ms)
	assert.Len(t, bed.servers[0].last().nonPing(), 2)

	java := newTestbed(t, 1, 1)
	j := java.newClient(4*clock.Second, &eventLog{w: java.w})
	assert.NoError(t, j.SetData("/a", make([]byte, fits+1), -1, nil), "Java does not check what it sends")
}

// authScheme makes the server refuse credentials of scheme "bad" as the real server does (AUTHFAILED,
// then it closes the connection) and, if hold is set, keep the others unanswered until released.
type authScheme struct {
	hold    bool
	waiting []func()
}

func (a *authScheme) install(s *fakeServer) {
	s.onAuth = func(fc *fakeConn, h proto.RequestHeader, body *proto.AuthPacket) {
		if body.Scheme == "bad" {
			fc.reply(proto.ReplyHeader{Xid: h.Xid, Err: proto.AuthFailed}, nil)
			fc.close()
			return
		}
		answer := func() { fc.reply(proto.ReplyHeader{Xid: h.Xid}, nil) }
		if a.hold {
			a.waiting = append(a.waiting, answer)
			return
		}
		answer()
	}
}

// authOrder lists what a connection received after its handshake: credentials by their data,
// other requests by their op.
func authOrder(fc *fakeConn) []string {
	var order []string
	for _, r := range fc.nonPing() {
		if body, ok := r.body.(*proto.AuthPacket); ok {
			order = append(order, "auth "+string(body.Auth))
			continue
		}
		order = append(order, r.header.Type.String())
	}
	return order
}

func TestGoZookeeperAuthFailureIsNotTerminal(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	(&authScheme{}).install(s)
	log := &eventLog{w: bed.w}
	c := bed.newGoZookeeper(log)
	require.NoError(t, c.AddAuth("digest", []byte("alice:pw"), log.result("alice")))
	require.NoError(t, c.AddAuth("digest", []byte("bob:pw"), log.result("bob")))
	require.NoError(t, c.AddAuth("bad", []byte("x"), log.result("bad")))
	bed.run(10 * ms)
	first := s.conns[0].nonPing()
	require.Len(t, first, 3)
	assert.Equal(t, proto.RequestHeader{Xid: 1, Type: proto.OpAuth}, first[0].header, "an ordinary request with an xid")
	assert.Equal(t, int32(3), first[2].header.Xid)
	assert.Equal(t, []string{"default: None SyncConnected ", "alice: OK", "bob: OK", "bad: AUTHFAILED"}, log.entries[:4])
	assert.NotEqual(t, StateAuthFailed, c.State(), "go-zookeeper knows no AUTH_FAILED state")

	bed.run(2 * clock.Second)
	require.Len(t, s.conns, 2, "the client reconnects after the server closed the connection")
	assert.Equal(t, int64(0x101), s.conns[1].connect.SessionID, "with the same session")
	require.NoError(t, c.Sync("/", log.result("sync")))
	bed.run(10 * ms)
	assert.Equal(t, []string{"auth alice:pw", "auth bob:pw", "sync"}, authOrder(s.conns[1]),
		"only the credentials that succeeded, in the order they were added")
	assert.Equal(t, "sync: OK", log.entries[len(log.entries)-1])
	assert.NotContains(t, log.entries, "default: None AuthFailed ")
}

func TestGoZookeeperResendsCredentialsOneAtATimeBeforeAnythingElse(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	auth := &authScheme{}
	auth.install(s)
	log := &eventLog{w: bed.w}
	c := bed.newGoZookeeper(log)
	require.NoError(t, c.AddAuth("digest", []byte("alice:pw"), nil))
	require.NoError(t, c.AddAuth("digest", []byte("bob:pw"), nil))
	bed.run(10 * ms)
	auth.hold = true
	require.NoError(t, c.AddAuth("digest", []byte("lost:pw"), log.result("lost")))
	bed.run(10 * ms)
	s.last().close()
	bed.run(150 * ms)
	assert.Equal(t, "lost: CONNECTIONLOSS", log.entries[len(log.entries)-2], "its reply was lost with the connection")
	require.NoError(t, c.Exists("/a", nil, nil)) // waits for the next connection
	bed.run(2 * clock.Second)
	require.Len(t, s.conns, 2)
	assert.Equal(t, []string{"auth alice:pw"}, authOrder(s.last()), "nothing more before the reply to the first")
	auth.waiting[1]()
	bed.run(10 * ms)
	assert.Equal(t, []string{"auth alice:pw", "auth bob:pw"}, authOrder(s.last()))
	auth.waiting[2]()
	bed.run(10 * ms)
	assert.Equal(t, []string{"auth alice:pw", "auth bob:pw", "exists"}, authOrder(s.last()),
		"the credential whose reply was lost is forgotten")
}

func TestJavaResendsCredentialsInReverseAllAtOnce(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	auth := &authScheme{}
	auth.install(s)
	c := bed.newClient(4*clock.Second, &eventLog{w: bed.w})
	bed.run(10 * ms)
	auth.hold = true
	require.NoError(t, c.AddAuth("digest", []byte("alice:pw"), nil))
	require.NoError(t, c.AddAuth("digest", []byte("bob:pw"), nil))
	bed.run(10 * ms)
	s.last().close()
	bed.run(150 * ms)
	require.NoError(t, c.Exists("/a", nil, nil))
	bed.run(2 * clock.Second)
	assert.Equal(t, []string{"auth bob:pw", "auth alice:pw", "exists"}, authOrder(s.last()),
		"Java remembers credentials when they are added, and pipelines them")
}

func TestGoZookeeperHasNoReplyLimitByDefault(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		max   int // the longest reply accepted, 0 for no limit
	}{{"default", 0, 0}, {"WithMaxBufferSize", 1000, 1000}} {
		t.Run(tc.name, func(t *testing.T) {
			bed := newTestbed(t, 1, 1)
			huge := 3 << 20 // beyond jute.maxbuffer and beyond Java's longest field
			replyWithData(bed.servers[0], map[string]int{"/huge": huge, "/fits": tc.max - replyPacketBytes(0),
				"/over": tc.max - replyPacketBytes(0) + 1})
			c := bed.newClientWith(Config{Emulate: GoZookeeper, MaxPacketBytes: tc.limit}, &eventLog{w: bed.w})
			bed.run(10 * ms)
			var got []DataResult
			record := func(r DataResult) { got = append(got, r) }
			paths := []string{"/huge"}
			if tc.max > 0 {
				paths = []string{"/fits", "/over"}
			}
			for _, path := range paths {
				require.NoError(t, c.GetData(path, nil, record))
				bed.run(200 * ms)
			}
			require.Len(t, got, len(paths))
			assert.Equal(t, proto.OK, got[0].Err)
			if tc.max == 0 {
				assert.Len(t, got[0].Data, huge)
				return
			}
			assert.Equal(t, proto.ConnectionLoss, got[1].Err)
			assert.Contains(t, bed.trace.String(), "exceeds max buffer size 1000")
		})
	}
}

func TestGoZookeeperDeliversEveryNotificationToTheDefaultWatcher(t *testing.T) {
	for _, library := range []Library{Java, GoZookeeper} {
		t.Run(library.String(), func(t *testing.T) {
			bed := newTestbed(t, 1, 1)
			answerNoNodeFor(bed.servers[0], "/missing")
			log := &eventLog{w: bed.w}
			c := bed.newClientWith(Config{Emulate: library}, log)
			bed.run(10 * ms)
			data, exist := log.watcher("data"), log.watcher("exist")
			require.NoError(t, c.GetData("/a", data, nil))
			require.NoError(t, c.Exists("/missing", exist, nil))
			bed.run(10 * ms)
			fc := bed.servers[0].last()
			fc.notify(proto.EventNodeCreated, "/a")         // a data watch only: not for go-zookeeper's channels
			fc.notify(proto.EventNodeDataChanged, "/other") // nobody watches it
			fc.notify(proto.EventNodeCreated, "/missing")
			bed.run(10 * ms)
			fc.close()
			bed.run(200 * ms)
			if library == Java {
				assert.Equal(t, []string{"default: None SyncConnected ", "data: NodeCreated SyncConnected /a",
					"exist: NodeCreated SyncConnected /missing", "default: None Disconnected "}, log.entries)
				assert.Empty(t, c.watches.data)
				return
			}
			assert.Equal(t, []string{"default: None SyncConnected ", "default: NodeCreated SyncConnected /a",
				"default: NodeDataChanged SyncConnected /other", "default: NodeCreated SyncConnected /missing",
				"exist: NodeCreated SyncConnected /missing", "default: None Disconnected "}, log.entries,
				"the event callback hears everything, the channels only what consumes their watch, state changes nobody but the callback")
			assert.Equal(t, watchTable{"/a": {data}}, c.watches.data, "NodeCreated consumes only exist watches")
		})
	}
}

func TestGoZookeeperConsumesWatchesAsNotifyWatchesDoes(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	answerNoNodeFor(bed.servers[0], "/new")
	log := &eventLog{w: bed.w}
	c := bed.newGoZookeeper(log)
	w := log.watcher("w")
	for _, path := range []string{"/a", "/b", "/c"} {
		require.NoError(t, c.GetData(path, w, nil))
		require.NoError(t, c.Exists(path, w, nil))
		require.NoError(t, c.GetChildren(path, w, nil))
	}
	require.NoError(t, c.Exists("/new", w, nil))
	bed.run(10 * ms)
	fc := bed.servers[0].last()
	fc.notify(proto.EventNodeDataChanged, "/a")
	fc.notify(proto.EventNodeChildrenChanged, "/b")
	fc.notify(proto.EventNodeDeleted, "/c")
	fc.notify(proto.EventNodeCreated, "/new")
	fc.notify(proto.EventType(42), "/a") // an unknown type: delivered, and the connection stays
	bed.run(10 * ms)
	assert.False(t, fc.closed)
	assert.Equal(t, watchTable{"/b": {w}}, c.watches.data, "NodeDataChanged took /a's data watch (exists on a node sets one)")
	assert.Equal(t, watchTable{"/a": {w}}, c.watches.child, "NodeChildrenChanged took /b's, NodeDeleted /c's")
	assert.Empty(t, c.watches.exist)
	assert.Len(t, log.matching("w: "), 4, "the watcher hears each event that consumed one of its watches once")
	assert.Contains(t, log.entries, "default: EventType(42) SyncConnected /a")
}

func TestGoZookeeperReconnects(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	log := &eventLog{w: bed.w}
	c := bed.newGoZookeeper(log)
	assert.Equal(t, proto.ConnectRequest{TimeoutMilliseconds: 4000, Password: make([]byte, 16), OmitReadOnly: true},
		*s.conns[0].connect, "no readOnly flag")
	require.NoError(t, c.GetData("/d", log.watcher("w"), nil))
	require.NoError(t, c.GetChildren("/c", log.watcher("w"), nil))
	bed.run(10 * ms)
	s.onRequest = func(*fakeConn, proto.RequestHeader, proto.Record) {} // holds every request
	s.last().close()
	bed.run(150 * ms)
	require.NoError(t, c.Sync("/queued", nil))
	bed.run(2 * clock.Second)
	require.Len(t, s.conns, 2)
	assert.Equal(t, int64(0x101), s.conns[1].connect.SessionID)
	got := s.conns[1].nonPing()
	require.Len(t, got, 2)
	assert.Equal(t, proto.OpSync, got[0].header.Type, "setWatches is queued behind what was waiting")
	assert.Equal(t, proto.RequestHeader{Xid: 4, Type: proto.OpSetWatches}, got[1].header)
	assert.Equal(t, &proto.SetWatches{RelativeZxid: c.LastZxid(), DataWatches: []string{"/d"}, ExistWatches: []string{},
		ChildWatches: []string{"/c"}}, got[1].body)
}

func TestGoZookeeperSplitsWatchResetsByItsOwnMeasure(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	log := &eventLog{w: bed.w}
	c := bed.newGoZookeeper(log)
	// Each watch counts 4 + 1000 bytes: 130 fit in 128 kB with the batch's 28, the 131st does not.
	w := log.watcher("w")
	for i := range 131 {
		require.NoError(t, c.GetData("/"+strings.Repeat("p", 995)+fmt.Sprintf("%04d", i), w, nil))
	}
	bed.run(10 * ms)
	s.last().close()
	bed.run(2 * clock.Second)
	var batches []*proto.SetWatches
	for _, r := range s.last().nonPing() {
		batches = append(batches, r.body.(*proto.SetWatches))
	}
	require.Len(t, batches, 2)
	assert.Len(t, batches[0].DataWatches, 130)
	assert.Len(t, batches[1].DataWatches, 1)
}

func TestGoZookeeperKeepsUnsentRequestsUntilAFullCycle(t *testing.T) {
	for _, tc := range []struct {
		library Library
		servers int
		want    string
	}{
		{Java, 3, "unsent: CONNECTIONLOSS"},        // Java's cleanup fails the queued requests too
		{GoZookeeper, 3, "unsent: OK"},             // the request waits for the third server
		{GoZookeeper, 2, "unsent: CONNECTIONLOSS"}, // the first server again: a full cycle
		{GoZookeeper, 1, "unsent: CONNECTIONLOSS"}, // with one server, each reconnection is a full cycle
	} {
		t.Run(fmt.Sprintf("%v/%d", tc.library, tc.servers), func(t *testing.T) {
			bed := newTestbed(t, 1, tc.servers)
			log := &eventLog{w: bed.w}
			c := bed.newClientWith(Config{Emulate: tc.library}, log)
			bed.run(10 * ms)
			// The next handshake goes unanswered, so that a request issued meanwhile waits unsent.
			var held *fakeConn
			for _, s := range bed.servers {
				s.onConnect = func(fc *fakeConn, req *proto.ConnectRequest) {
					if held == nil {
						held = fc
						return
					}
					fc.acceptSession(req)
				}
			}
			bed.server(c.server).last().close()
			for i := 0; held == nil; i++ {
				require.Less(t, i, 300, "no reconnection within 3 s")
				bed.run(10 * ms)
			}
			require.NoError(t, c.Sync("/a", log.result("unsent")))
			bed.run(ms)
			held.close()
			bed.run(3 * clock.Second)
			assert.Contains(t, log.entries, tc.want)
			assert.Equal(t, StateConnected, c.State())
		})
	}
}

func TestGoZookeeperExpiryIsASessionIDOfZero(t *testing.T) {
	cases := []struct {
		name     string
		response proto.ConnectResponse
		java     State // the state each library ends in after the handshake
		goZk     State
	}{
		{"session 0 with a timeout", proto.ConnectResponse{TimeoutMilliseconds: 4000, Password: make([]byte, 16)},
			StateConnected, StateClosed},
		{"timeout 0 with a session", proto.ConnectResponse{SessionID: 0x55, Password: make([]byte, 16)},
			StateClosed, StateConnecting},
	}
	for _, tc := range cases {
		for _, library := range []Library{Java, GoZookeeper} {
			t.Run(tc.name+"/"+library.String(), func(t *testing.T) {
				bed := newTestbed(t, 1, 1)
				bed.servers[0].onConnect = func(fc *fakeConn, _ *proto.ConnectRequest) { fc.send(&tc.response) }
				c := bed.newClientWith(Config{Emulate: library}, &eventLog{w: bed.w})
				bed.run(5 * ms)
				want := tc.java
				if library == GoZookeeper {
					want = tc.goZk
				}
				assert.Equal(t, want, c.State())
			})
		}
	}
}

func TestGoZookeeperRequestsAfterCloseLoseTheirConnection(t *testing.T) {
	for _, library := range []Library{Java, GoZookeeper} {
		t.Run(library.String(), func(t *testing.T) {
			bed := newTestbed(t, 1, 1)
			log := &eventLog{w: bed.w}
			c := bed.newClientWith(Config{Emulate: library}, log)
			bed.run(10 * ms)
			require.NoError(t, c.Close(nil))
			bed.run(500 * ms)
			require.Equal(t, StateClosed, c.State())
			require.NoError(t, c.Sync("/", log.result("after")))
			bed.run(ms)
			want := "after: SESSIONEXPIRED"
			if library == GoZookeeper {
				want = "after: CONNECTIONLOSS"
			}
			assert.Equal(t, want, log.entries[len(log.entries)-1])
		})
	}
}

func TestGoZookeeperReconnectsWithoutJavasPauses(t *testing.T) {
	for _, tc := range []struct {
		library Library
		servers int
		min     clock.Duration // bounds on the time from the server's close to the next accept
		max     clock.Duration
	}{
		{Java, 3, 102 * ms, 1102 * ms},   // 100 ms cleanup, a random delay below a second, two latencies
		{GoZookeeper, 3, 2 * ms, 2 * ms}, // at once to the next server
		{GoZookeeper, 1, 1002 * ms, 1002 * ms},
	} {
		t.Run(fmt.Sprintf("%v/%d", tc.library, tc.servers), func(t *testing.T) {
			bed := newTestbed(t, 1, tc.servers)
			c := bed.newClientWith(Config{Emulate: tc.library}, &eventLog{w: bed.w})
			bed.run(10 * ms)
			closedAt := bed.w.Now()
			bed.server(c.server).last().close()
			bed.run(3 * clock.Second)
			var next *fakeConn
			for _, s := range bed.servers {
				for _, fc := range s.conns {
					if fc.acceptedAt > closedAt {
						next = fc
					}
				}
			}
			require.NotNil(t, next)
			took := next.acceptedAt.Sub(closedAt)
			assert.GreaterOrEqual(t, took, tc.min)
			assert.LessOrEqual(t, took, tc.max)
		})
	}
}

func TestGoZookeeperWaitsLongerForAHandshake(t *testing.T) {
	for _, tc := range []struct {
		library Library
		reason  string
	}{
		{Java, "have not heard from server in 4000ms"},         // the session timeout over one server
		{GoZookeeper, "have not heard from server in 26666ms"}, // ten read timeouts of 2666.67 ms
	} {
		t.Run(tc.library.String(), func(t *testing.T) {
			bed := newTestbed(t, 1, 1)
			bed.servers[0].onConnect = func(*fakeConn, *proto.ConnectRequest) {} // never answers
			bed.newClientWith(Config{Emulate: tc.library}, &eventLog{w: bed.w})
			bed.run(30 * clock.Second)
			assert.Contains(t, bed.trace.String(), tc.reason)
		})
	}
	bed := newTestbed(t, 1, 1)
	bed.nw.Isolate(bed.clientNode) // the dial never completes
	bed.newClientWith(Config{Emulate: GoZookeeper}, &eventLog{w: bed.w})
	bed.run(1500 * ms)
	assert.Contains(t, bed.trace.String(), "have not heard from server in 1000ms", "go-zookeeper dials for a second")
}

// go-zookeeper keeps the negotiated timeout as the one it asks for on its next connection (its
// setTimeouts), and times its handshake in nanoseconds: a 1 ms request still leaves a handshake of
// ten 0.67 ms read timeouts. Java asks again for what the application gave.
func TestGoZookeeperAsksAgainForTheNegotiatedTimeout(t *testing.T) {
	for _, tc := range []struct {
		library   Library
		requested clock.Duration
		again     int32
	}{
		{Java, 4 * clock.Second, 4000},
		{GoZookeeper, 4 * clock.Second, 6000},
		{GoZookeeper, 1 * ms, 6000},
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.library, tc.requested), func(t *testing.T) {
			bed := newTestbed(t, 1, 1)
			s := bed.servers[0]
			s.negotiate = func(int32) int32 { return 6000 }
			c := bed.newClientWith(Config{Emulate: tc.library, SessionTimeout: tc.requested}, &eventLog{w: bed.w})
			bed.run(50 * ms)
			require.Equal(t, StateConnected, c.State(), bed.trace.String())
			assert.Equal(t, int32(tc.requested/ms), s.last().connect.TimeoutMilliseconds, "the first request")

			s.last().close()
			bed.run(2 * clock.Second)
			require.Len(t, s.conns, 2, "reconnected: %s", bed.trace.String())
			assert.Equal(t, tc.again, s.last().connect.TimeoutMilliseconds)
		})
	}
}
