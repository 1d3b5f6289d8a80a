package client

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

const ms = clock.Millisecond

func TestConnectNegotiatesSession(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	s.negotiate = func(int32) int32 { return 6000 }
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	assert.Equal(t, StateConnecting, c.State())
	bed.run(10 * ms)

	fc := s.last()
	require.NotNil(t, fc.connect)
	assert.Equal(t, proto.ConnectRequest{
		ProtocolVersion: 0, LastZxidSeen: 0, TimeoutMilliseconds: 4000, SessionID: 0,
		Password: make([]byte, 16), ReadOnly: false, OmitReadOnly: false,
	}, *fc.connect, "a new session: zeros, 16-byte zero password, and the readOnly flag present")
	assert.Equal(t, StateConnected, c.State())
	assert.Equal(t, int64(0x101), c.SessionID())
	assert.Equal(t, bytes.Repeat([]byte{0x01}, 16), c.Password())
	assert.Equal(t, 6*clock.Second, c.NegotiatedTimeout())
	assert.Equal(t, int64(4000), c.readTimeout, "readTimeout is two thirds of the negotiated timeout")
	assert.Equal(t, int64(6000), c.connectTimeout, "connectTimeout is the negotiated timeout over one server")
	assert.Equal(t, []string{"default: None SyncConnected "}, log.entries)
}

func TestConfigIsValidated(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	cases := map[string]Config{
		"no servers":     {SessionTimeout: clock.Second},
		"zero timeout":   {Servers: bed.serverNodes()},
		"sub-ms timeout": {Servers: bed.serverNodes(), SessionTimeout: 1500 * clock.Microsecond},
		"unknown server": {Servers: []sim.NodeID{42}, SessionTimeout: clock.Second},
	}
	for name, cfg := range cases {
		_, err := New(bed.w, bed.nw, bed.clientNode, cfg, nil)
		assert.ErrorIs(t, err, ErrInvalidArgument, name)
	}
	_, err := New(bed.w, bed.nw, bed.clientNode, Config{Servers: bed.serverNodes(), SessionTimeout: clock.Second},
		badWatcher{names: []string{"x"}})
	assert.ErrorIs(t, err, ErrInvalidArgument, "a watcher that cannot be compared")
}

// badWatcher is not comparable, so it cannot be a member of a watcher set.
type badWatcher struct{ names []string }

func (badWatcher) Process(Event) {}

func TestResumingASessionSendsItsIDAndPassword(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	password := bytes.Repeat([]byte{7}, 16)
	_, err := New(bed.w, bed.nw, bed.clientNode, Config{Servers: bed.serverNodes(), SessionTimeout: 4 * clock.Second,
		SessionID: 0x77, Password: password}, nil)
	require.NoError(t, err)
	bed.run(10 * ms)
	req := bed.servers[0].last().connect
	require.NotNil(t, req)
	assert.Equal(t, int64(0x77), req.SessionID)
	assert.Equal(t, password, req.Password)
}

func TestRepliesAreMatchedFIFOAndXidsIncrease(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	// Issued before the session exists: they wait behind the handshake.
	require.NoError(t, c.Create("/a", []byte("x"), proto.OpenACLUnsafe, proto.Persistent, func(r CreateResult) {
		log.add(fmt.Sprintf("create %s %s czxid=%#x zxid=%#x", r.Err.String(), r.Path, r.Stat.Czxid, r.Zxid))
	}))
	require.NoError(t, c.GetData("/a", nil, func(r DataResult) { log.add(fmt.Sprintf("get %s %s", r.Err.String(), r.Data)) }))
	bed.run(10 * ms)
	require.NoError(t, c.Delete("/a", -1, log.result("delete")))
	require.NoError(t, c.Sync("/", log.result("sync")))
	bed.run(10 * ms)

	fc := bed.servers[0].last()
	var xids []int32
	for _, r := range fc.nonPing() {
		xids = append(xids, r.header.Xid)
	}
	assert.Equal(t, []proto.OpCode{proto.OpCreate2, proto.OpGetData, proto.OpDelete, proto.OpSync}, fc.ops())
	assert.Equal(t, []int32{1, 2, 3, 4}, xids, "xids are taken in order from 1 when packets are written")
	assert.Equal(t, []string{
		"default: None SyncConnected ",
		"create OK /a czxid=0x100000001 zxid=0x100000001",
		"get OK /a",
		"delete: OK",
		"sync: OK",
	}, log.entries)
	assert.Equal(t, int64(0x100000002), c.LastZxid(), "the last reply header's zxid")
}

func TestRepliesOutOfOrderDropTheConnection(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	var held []proto.RequestHeader
	s.onRequest = func(fc *fakeConn, h proto.RequestHeader, _ proto.Record) {
		held = append(held, h)
		if len(held) == 2 {
			// Answer the second request first.
			fc.reply(proto.ReplyHeader{Xid: held[1].Xid, Zxid: 0x100000001}, nil)
		}
	}
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	require.NoError(t, c.Delete("/a", -1, log.result("first")))
	require.NoError(t, c.Delete("/b", -1, log.result("second")))
	bed.run(3 * ms)
	// The head of the pending queue fails at once, the rest after the cleanup.
	assert.Equal(t, []string{"default: None SyncConnected ", "first: CONNECTIONLOSS"}, log.entries)
	assert.True(t, s.last().closed, "the client closed the connection")
	assert.Equal(t, StateConnected, c.State(), "Java keeps CONNECTED until it starts the next connection")
	bed.run(100 * ms)
	assert.Equal(t, []string{"default: None SyncConnected ", "first: CONNECTIONLOSS", "second: CONNECTIONLOSS",
		"default: None Disconnected "}, log.entries, "requests fail before the Disconnected event")
	assert.Equal(t, int64(0), c.LastZxid(), "a mismatched reply's zxid is not taken")
}

func TestUnexpectedReplyDropsTheConnection(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	bed.servers[0].last().reply(proto.ReplyHeader{Xid: 9, Zxid: 5}, nil)
	bed.run(2 * ms)
	assert.True(t, bed.servers[0].last().closed, "Nothing in the queue, but got 9")
	bed.run(200 * ms)
	assert.Equal(t, []string{"default: None SyncConnected ", "default: None Disconnected "}, log.entries)
	// With one server the host provider sleeps a second before trying it again, and until the next
	// connection attempt starts Java still says CONNECTED.
	assert.Equal(t, StateConnected, c.State())
	bed.run(2 * clock.Second)
	assert.Len(t, bed.servers[0].conns, 2)
	assert.Equal(t, []string{"default: None SyncConnected ", "default: None Disconnected ", "default: None SyncConnected "}, log.entries)
}

func TestOversizedReplyDropsTheConnection(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	s.onRequest = func(fc *fakeConn, h proto.RequestHeader, _ proto.Record) {
		fc.reply(proto.ReplyHeader{Xid: h.Xid}, &proto.GetDataResponse{Data: make([]byte, proto.MaxBufferBytes)})
	}
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	require.NoError(t, c.GetData("/big", nil, func(r DataResult) { log.add("get: " + r.Err.String()) }))
	bed.run(200 * ms)
	assert.Equal(t, []string{"default: None SyncConnected ", "get: CONNECTIONLOSS", "default: None Disconnected "}, log.entries)
}

func TestConnectionLossFailsPendingAndQueuedRequests(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	s.onRequest = func(*fakeConn, proto.RequestHeader, proto.Record) {} // never answers
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	require.NoError(t, c.SetData("/a", []byte("1"), -1, func(r StatResult) { log.add("pending: " + r.Err.String()) }))
	bed.run(5 * ms)
	s.last().close()
	bed.run(2 * ms) // The client sees the FIN and starts its cleanup.
	require.NoError(t, c.SetData("/a", []byte("2"), -1, func(r StatResult) { log.add("during cleanup: " + r.Err.String()) }))
	bed.run(100 * ms)
	assert.Equal(t, []string{"default: None SyncConnected ", "pending: CONNECTIONLOSS", "during cleanup: CONNECTIONLOSS",
		"default: None Disconnected "}, log.entries)

	// After the cleanup a request waits for the next connection, behind the handshake.
	s.onRequest = nil
	require.NoError(t, c.SetData("/a", []byte("3"), -1, func(r StatResult) { log.add("after cleanup: " + r.Err.String()) }))
	bed.run(2 * clock.Second)
	assert.Equal(t, []string{"default: None SyncConnected ", "pending: CONNECTIONLOSS", "during cleanup: CONNECTIONLOSS",
		"default: None Disconnected ", "default: None SyncConnected ", "after cleanup: OK"}, log.entries)
	require.Len(t, s.conns, 2)
	assert.Equal(t, []proto.OpCode{proto.OpSetData}, s.conns[1].ops())
}

func TestReconnectGoesToTheNextServerWithLastZxid(t *testing.T) {
	bed := newTestbed(t, 3, 3)
	log := &eventLog{w: bed.w}
	c := bed.newClient(6*clock.Second, log)
	order := c.hosts.servers
	bed.run(10 * ms)
	first := bed.server(order[0])
	require.Len(t, first.conns, 1, "the first server of the shuffled list")
	assert.Equal(t, int64(2000), c.connectTimeout, "6000 ms over three servers")
	require.NoError(t, c.Create("/x", nil, proto.OpenACLUnsafe, proto.Ephemeral, nil))
	bed.run(10 * ms)
	require.Equal(t, int64(0x100000001), c.LastZxid())

	closedAt := bed.w.Now()
	first.last().close()
	bed.run(1200 * ms)
	second := bed.server(order[1])
	require.Len(t, second.conns, 1, "the next server of the shuffled list")
	req := second.last().connect
	require.NotNil(t, req)
	assert.Equal(t, int64(0x100000001), req.LastZxidSeen)
	assert.Equal(t, c.SessionID(), req.SessionID)
	assert.Equal(t, bytes.Repeat([]byte{0x01}, 16), req.Password)
	assert.Equal(t, int32(6000), req.TimeoutMilliseconds, "the requested timeout, not the negotiated one")

	// The reconnection waited for the 100 ms cleanup and a random delay below a second.
	dialed := connectTimes(t, bed)
	require.Len(t, dialed, 2)
	delay := dialed[1].Sub(closedAt)
	assert.GreaterOrEqual(t, delay, 100*ms)
	assert.Less(t, delay, 1102*ms)
}

// connectTimes returns when the client dialed each connection, in order: one latency before the
// server accepted it.
func connectTimes(t *testing.T, bed *testbed) []clock.Time {
	t.Helper()
	var at []clock.Time
	for _, s := range bed.servers {
		for _, fc := range s.conns {
			at = append(at, fc.acceptedAt.Add(-ms))
		}
	}
	slices.Sort(at)
	return at
}

func TestSessionExpiryOnReconnectKillsTheClient(t *testing.T) {
	bed := newTestbed(t, 1, 2)
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	order := c.hosts.servers
	bed.run(10 * ms)
	first, second := bed.server(order[0]), bed.server(order[1])
	second.onConnect = func(fc *fakeConn, _ *proto.ConnectRequest) { fc.expireSession() }
	require.NoError(t, c.GetData("/a", log.watcher("data"), func(r DataResult) { log.add("get: " + r.Err.String()) }))
	bed.run(10 * ms)
	first.last().close()
	bed.run(150 * ms)
	// Issued after the cleanup: it waits in the queue and fails with SESSIONEXPIRED.
	require.NoError(t, c.Exists("/b", nil, func(r StatResult) { log.add("exists: " + r.Err.String()) }))
	bed.run(3 * clock.Second)

	assert.Equal(t, StateClosed, c.State())
	assert.Equal(t, []string{
		"default: None SyncConnected ",
		"get: OK",
		"default: None Disconnected ",
		"data: None Disconnected ",
		"default: None Expired ",
		"data: None Expired ",
		"exists: SESSIONEXPIRED",
	}, log.entries, "no Closed event: the event thread died with the Expired event")
	assert.Len(t, first.conns, 1)
	assert.Len(t, second.conns, 1, "no reconnection after expiry")

	require.NoError(t, c.Delete("/a", -1, log.result("late")))
	bed.run(ms)
	assert.Equal(t, "late: SESSIONEXPIRED", log.entries[len(log.entries)-1])
	var closed Result
	require.NoError(t, c.Close(func(r Result) { closed = r; log.add("closed") }))
	bed.run(ms)
	assert.Equal(t, "closed", log.entries[len(log.entries)-1], "close of a dead client returns at once")
	assert.Equal(t, proto.OK, closed.Err)
}

func TestInvalidArgumentsAreRefusedLocally(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	never := func(Result) { t.Error("callback of a refused request") }
	checks := []struct {
		err  error
		want error
	}{
		{c.Delete("a", -1, never), proto.ErrPathNotAbsolute},
		{c.Delete("/a/", -1, never), proto.ErrPathTrailingSlash},
		{c.Sync("/a//b", never), proto.ErrPathEmptySegment},
		{c.Delete("/a/..", -1, never), proto.ErrPathRelative},
		{c.Create("/q/", nil, proto.OpenACLUnsafe, proto.Persistent, nil), proto.ErrPathTrailingSlash},
		{c.Create("/q/", nil, proto.OpenACLUnsafe, proto.CreateMode(9), nil), ErrInvalidArgument},
		{c.Create("/t", nil, proto.OpenACLUnsafe, proto.PersistentWithTTL, nil), ErrInvalidArgument},
		{c.CreateTTL("/t", nil, proto.OpenACLUnsafe, proto.Persistent, 100, nil), ErrInvalidArgument},
		{c.AddWatch("/a", nil, proto.AddWatchPersistent, never), ErrInvalidArgument},
		{c.RemoveAllWatches("/a", proto.WatcherType(7), false, never), ErrInvalidArgument},
		{c.Multi([]Op{GetDataOp("/a"), DeleteOp("/a", -1)}, nil), ErrInvalidArgument},
		{c.Multi([]Op{{}}, nil), ErrInvalidArgument},
	}
	for i, check := range checks {
		assert.ErrorIs(t, check.err, check.want, "case %d", i)
		var code proto.Code
		assert.False(t, errors.As(check.err, &code), "case %d: a local error carries no server code", i)
	}
	assert.NoError(t, c.Create("/q/", nil, proto.OpenACLUnsafe, proto.PersistentSequential, nil), "a sequential create may end in /")

	err := c.Multi([]Op{CheckOp("/a", 1), SetDataOp("a", nil, -1)}, nil)
	var invalid *InvalidOpsError
	require.ErrorAs(t, err, &invalid)
	assert.ErrorIs(t, err, ErrInvalidPath)
	assert.Equal(t, []OpResult{{Type: proto.OpError, Err: proto.RuntimeInconsistency}, {Type: proto.OpError, Err: proto.BadArguments}},
		invalid.Results, "Java's per-op results for a refused multi")
	bed.run(10 * ms)
	assert.Equal(t, []proto.OpCode{proto.OpCreate2}, bed.servers[0].last().ops(), "only the valid request was sent")
}

func TestCloseSendsCloseSessionAndEndsTheClient(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	s.onRequest = func(fc *fakeConn, h proto.RequestHeader, body proto.Record) {
		fc.answer(h, body, proto.OK)
		if h.Type == proto.OpCloseSession {
			fc.close()
		}
	}
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	require.NoError(t, c.Close(log.result("close")))
	require.NoError(t, c.Close(log.result("second close")))
	require.NoError(t, c.Sync("/", log.result("sync after close")))
	bed.run(3 * clock.Second)
	assert.Equal(t, []string{
		"default: None SyncConnected ",
		"sync after close: CONNECTIONLOSS", // issued while closing: failed at once
		"default: None Closed ",
		"close: OK",
		"second close: OK",
	}, log.entries)
	assert.Equal(t, StateClosed, c.State())
	assert.Equal(t, []proto.OpCode{proto.OpCloseSession}, s.last().ops())
	assert.Len(t, s.conns, 1, "no reconnection")
	require.NoError(t, c.Sync("/", log.result("sync when closed")))
	bed.run(ms)
	assert.Equal(t, "sync when closed: SESSIONEXPIRED", log.entries[len(log.entries)-1])
}

func TestCloseWhileDisconnectedFailsWithConnectionLoss(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	bed.servers[0].last().close()
	bed.run(2 * ms)
	require.NoError(t, c.Close(log.result("close")))
	bed.run(clock.Second)
	assert.Equal(t, []string{"default: None SyncConnected ", "default: None Closed ", "close: CONNECTIONLOSS"}, log.entries)
	assert.Len(t, bed.servers[0].conns, 1)
}

func TestCrashEndsTheClient(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	require.NoError(t, c.GetData("/a", nil, func(DataResult) { log.add("callback after crash") }))
	bed.w.Crash(bed.clientNode)
	bed.run(10 * clock.Second)
	assert.Equal(t, []string{"default: None SyncConnected "}, log.entries, "a crashed process runs no callback")
	assert.True(t, bed.servers[0].last().closed, "the server sees the connection close")
	assert.ErrorIs(t, c.Sync("/", nil), ErrCrashed)
	bed.w.Restart(bed.clientNode)
	assert.ErrorIs(t, c.Sync("/", nil), ErrCrashed, "a restarted process is a new process")
	assert.Len(t, bed.servers[0].conns, 1, "a restart makes no client by itself")
}

func TestReadOnlyServerAnswer(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	bed.servers[0].onConnect = func(fc *fakeConn, req *proto.ConnectRequest) {
		fc.send(&proto.ConnectResponse{TimeoutMilliseconds: 4000, SessionID: 9, Password: make([]byte, 16), ReadOnly: true})
	}
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	assert.Equal(t, StateConnectedReadOnly, c.State())
	assert.True(t, c.State().IsConnected())
	assert.Equal(t, []string{"default: None ConnectedReadOnly "}, log.entries)
	assert.False(t, c.seenRwServerBefore, "a read-only server's session id is not trusted on the next connection")
}

func TestNewRefusesACrashedNode(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	bed.w.Crash(bed.clientNode)
	_, err := New(bed.w, bed.nw, bed.clientNode, Config{Servers: bed.serverNodes(), SessionTimeout: clock.Second}, nil)
	assert.ErrorIs(t, err, ErrInvalidArgument)
}
