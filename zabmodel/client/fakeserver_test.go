package client

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// testingT is what the test scaffolding needs from *testing.T and *rapid.T.
type testingT interface {
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	FailNow()
}

// helper marks the caller as a test helper when the test runner supports it.
func helper(tb testingT) {
	if h, ok := tb.(interface{ Helper() }); ok {
		h.Helper()
	}
}

// fakeServer is a scripted ZooKeeper server for the client's tests: it accepts connections on the
// client port, decodes every packet with proto, records it, and answers as its script says. By
// default it opens a session for every handshake, answers pings, and answers every request with OK
// and an empty body of the right record type; tests replace onConnect and onRequest to misbehave,
// hold replies, expire sessions or close connections.
type fakeServer struct {
	tb    testingT
	bed   *testbed
	node  sim.NodeID
	conns []*fakeConn
	// negotiate maps the requested timeout to the negotiated one; nil keeps it.
	negotiate func(requested int32) int32
	// onConnect, if set, handles a ConnectRequest instead of the default.
	onConnect func(fc *fakeConn, req *proto.ConnectRequest)
	// onRequest, if set, handles every request but pings (and auth packets unless onAuth is nil).
	onRequest func(fc *fakeConn, h proto.RequestHeader, body proto.Record)
	// onAuth, if set, handles auth packets; by default they are answered OK.
	onAuth func(fc *fakeConn, h proto.RequestHeader, body *proto.AuthPacket)
	// silentPings makes the server ignore pings.
	silentPings bool
}

// fakeConn is one accepted connection of a fakeServer.
type fakeConn struct {
	s          *fakeServer
	id         net.ConnID
	from       sim.NodeID
	acceptedAt clock.Time
	connect    *proto.ConnectRequest
	requests   []received // every packet after the handshake, pings included
	closed     bool
	closeErr   error
}

type received struct {
	at     clock.Time
	header proto.RequestHeader
	body   proto.Record
}

// testbed is one world with a network, some fake servers and a client node.
type testbed struct {
	tb          testingT
	w           *sim.World
	nw          *net.Network
	servers     []*fakeServer
	clientNode  sim.NodeID
	trace       *bytes.Buffer
	nextSession int64
	zxid        int64
}

// newTestbed builds a world with servers fake servers and one client node. Every message takes
// exactly one millisecond, so that tests can state times exactly, and the trace is rendered so that
// tests can read the client's notes.
func newTestbed(tb testingT, seed uint64, servers int) *testbed {
	helper(tb)
	trace := &bytes.Buffer{}
	return buildTestbed(tb, seed, servers, net.Config{LatencyMin: clock.Millisecond, LatencyMax: clock.Millisecond},
		sim.TraceConfig{Text: trace}, trace)
}

func buildTestbed(tb testingT, seed uint64, servers int, netCfg net.Config, traceCfg sim.TraceConfig, text *bytes.Buffer) *testbed {
	helper(tb)
	w, err := sim.New(sim.Config{Seed: seed, Trace: traceCfg})
	require.NoError(tb, err)
	nw, err := net.New(w, netCfg)
	require.NoError(tb, err)
	bed := &testbed{tb: tb, w: w, nw: nw, trace: text, nextSession: 0x100, zxid: 0x100000000}
	for i := range servers {
		s := &fakeServer{tb: tb, bed: bed}
		s.node = w.AddNode(fmt.Sprintf("s%d", i+1), nil)
		require.NoError(tb, nw.Listen(s.node, DefaultPort, s))
		bed.servers = append(bed.servers, s)
	}
	bed.clientNode = w.AddNode("c1", nil)
	return bed
}

func (b *testbed) serverNodes() []sim.NodeID {
	var ids []sim.NodeID
	for _, s := range b.servers {
		ids = append(ids, s.node)
	}
	return ids
}

// newClient starts a client on the client node with the given timeout and a recording watcher.
func (b *testbed) newClient(timeout clock.Duration, log *eventLog) *Client {
	helper(b.tb)
	c, err := New(b.w, b.nw, b.clientNode, Config{Servers: b.serverNodes(), SessionTimeout: timeout}, log.watcher("default"))
	require.NoError(b.tb, err)
	return c
}

// server returns the fake server on node id.
func (b *testbed) server(id sim.NodeID) *fakeServer {
	for _, s := range b.servers {
		if s.node == id {
			return s
		}
	}
	b.tb.Fatalf("no fake server on node %d", id)
	return nil
}

// run advances the world by d and fails the test if the run ended.
func (b *testbed) run(d clock.Duration) {
	helper(b.tb)
	if !b.w.RunFor(d) {
		b.tb.Fatalf("run ended: %v\ntrace:\n%s", b.w.Outcome(), b.trace)
	}
}

// Accept implements net.Listener.
func (s *fakeServer) Accept(c net.ConnID, from sim.NodeID) net.Handler {
	fc := &fakeConn{s: s, id: c, from: from, acceptedAt: s.bed.w.Now()}
	s.conns = append(s.conns, fc)
	return fc
}

// last returns the server's most recent connection.
func (s *fakeServer) last() *fakeConn {
	helper(s.tb)
	require.NotEmpty(s.tb, s.conns, "server %s has no connection", s.bed.w.Name(s.node))
	return s.conns[len(s.conns)-1]
}

func (fc *fakeConn) Connected(net.ConnID) {}

func (fc *fakeConn) Closed(_ net.ConnID, err error) { fc.closed, fc.closeErr = true, err }

func (fc *fakeConn) Received(_ net.ConnID, payload []byte) {
	s := fc.s
	if fc.connect == nil {
		var req proto.ConnectRequest
		require.NoError(s.tb, proto.Unmarshal(payload, &req), "connect request")
		fc.connect = &req
		if s.onConnect != nil {
			s.onConnect(fc, &req)
		} else {
			fc.acceptSession(&req)
		}
		return
	}
	h, body, err := proto.DecodeRequest(payload)
	require.NoError(s.tb, err, "request")
	fc.requests = append(fc.requests, received{at: s.bed.w.Now(), header: h, body: body})
	switch {
	case h.Type == proto.OpPing:
		if !s.silentPings {
			fc.reply(proto.ReplyHeader{Xid: proto.PingXid, Zxid: s.bed.zxid}, nil)
		}
	case h.Type == proto.OpAuth && s.onAuth != nil:
		s.onAuth(fc, h, body.(*proto.AuthPacket))
	case h.Type == proto.OpAuth:
		// The server echoes the request's xid: AUTHPACKET_XID from Java, an ordinary one from
		// go-zookeeper.
		fc.reply(proto.ReplyHeader{Xid: h.Xid}, nil)
	case s.onRequest != nil:
		s.onRequest(fc, h, body)
	default:
		fc.answer(h, body, proto.OK)
	}
}

// acceptSession opens a new session or resumes the one asked for.
func (fc *fakeConn) acceptSession(req *proto.ConnectRequest) {
	b := fc.s.bed
	resp := &proto.ConnectResponse{TimeoutMilliseconds: req.TimeoutMilliseconds, SessionID: req.SessionID, Password: req.Password}
	if fc.s.negotiate != nil {
		resp.TimeoutMilliseconds = fc.s.negotiate(req.TimeoutMilliseconds)
	}
	if req.SessionID == 0 {
		b.nextSession++
		resp.SessionID = b.nextSession
		resp.Password = bytes.Repeat([]byte{byte(b.nextSession)}, 16)
	}
	resp.OmitReadOnly = req.OmitReadOnly
	fc.send(resp)
}

// expireSession answers a handshake as a server does for a session it will not renew, and closes.
func (fc *fakeConn) expireSession() {
	fc.send(&proto.ConnectResponse{Password: make([]byte, 16)})
	fc.close()
}

// answer replies to a request with code err and, for OK, a default body of the right type.
func (fc *fakeConn) answer(h proto.RequestHeader, body proto.Record, err proto.Code) {
	b := fc.s.bed
	if h.Type.IsWrite() {
		b.zxid++
	}
	var resp proto.Record
	if err == proto.OK {
		resp = proto.NewResponse(h.Type)
		switch r := resp.(type) {
		case *proto.Create2Response:
			r.Path = body.(*proto.CreateRequest).Path
			r.Stat.Czxid = b.zxid
		case *proto.GetDataResponse:
			r.Data = []byte(body.(*proto.GetDataRequest).Path)
		}
	}
	fc.reply(proto.ReplyHeader{Xid: h.Xid, Zxid: b.zxid, Err: err}, resp)
}

func (fc *fakeConn) reply(h proto.ReplyHeader, body proto.Record) {
	if body == nil {
		fc.send(&h)
		return
	}
	fc.send(&h, body)
}

// notify sends a watch notification.
func (fc *fakeConn) notify(typ proto.EventType, path string) {
	fc.send(&proto.ReplyHeader{Xid: proto.NotificationXid, Zxid: -1},
		&proto.WatcherEvent{Type: typ, State: proto.StateSyncConnected, Path: path})
}

func (fc *fakeConn) send(records ...proto.Record) {
	s := fc.s
	if fc.closed {
		return
	}
	require.NoError(s.tb, s.bed.nw.Send(s.node, fc.id, proto.Marshal(records...)))
}

func (fc *fakeConn) close() {
	fc.s.bed.nw.Close(fc.s.node, fc.id)
	fc.closed = true
}

// ops returns the types of the requests received, pings left out.
func (fc *fakeConn) ops() []proto.OpCode {
	var ops []proto.OpCode
	for _, r := range fc.requests {
		if r.header.Type != proto.OpPing {
			ops = append(ops, r.header.Type)
		}
	}
	return ops
}

// nonPing returns the requests received, pings left out.
func (fc *fakeConn) nonPing() []received {
	return slices.DeleteFunc(slices.Clone(fc.requests), func(r received) bool { return r.header.Type == proto.OpPing })
}

// pings returns the times at which pings arrived.
func (fc *fakeConn) pings() []clock.Time {
	var at []clock.Time
	for _, r := range fc.requests {
		if r.header.Type == proto.OpPing {
			at = append(at, r.at)
		}
	}
	return at
}

// eventLog records watch events and callbacks in the order the application sees them.
type eventLog struct {
	w       *sim.World
	entries []string
	times   []clock.Time
}

func (l *eventLog) add(s string) {
	l.entries = append(l.entries, s)
	l.times = append(l.times, l.w.Now())
}

// watcher returns a distinct watcher that logs "name: Type State path".
func (l *eventLog) watcher(name string) Watcher {
	return WatcherFunc(func(e Event) {
		l.add(fmt.Sprintf("%s: %v %v %s", name, e.Type, e.State, e.Path))
	})
}

func (l *eventLog) result(name string) func(Result) {
	return func(r Result) { l.add(name + ": " + r.Err.String()) }
}

// matching returns the entries that start with prefix.
func (l *eventLog) matching(prefix string) []string {
	var out []string
	for _, e := range l.entries {
		if strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// indexOf returns the position of the first entry equal to s, or -1.
func (l *eventLog) indexOf(s string) int { return slices.Index(l.entries, s) }
