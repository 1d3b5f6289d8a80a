package zabmodel

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/datatree"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// ownerLocal is ServerCnxn.me: the session owner of every request that arrives on this server's own
// client connections (a learner handler owns the requests it forwards). It is a value, compared
// by value, not a pointer to a package variable compared by identity: a world the model checker
// copies (package modelcheck) copies every pointer it holds, and a copied pointer to a package
// variable would no longer be that variable.
var ownerLocal = localOwner{"ServerCnxn.me"}

// localOwner is the type of ownerLocal; owners of other types are pointers to connections and
// learner handlers, so no other owner equals it.
type localOwner struct{ name string }

// clientListener is NIOServerCnxnFactory: it accepts client connections for the whole life of the
// process, whether or not a ZooKeeperServer is serving, and keeps the open ones.
type clientListener struct {
	p     *peer
	conns []*clientConn
}

func newClientListener(p *peer) *clientListener { return &clientListener{p: p} }

func (l *clientListener) listen() {
	if err := l.p.h.listen(ClientPort, l); err != nil {
		panic("zabmodel: " + err.Error()) // The port is the process's own: a bug.
	}
}

// Accept implements net.Listener.
func (l *clientListener) Accept(c net.ConnID, from sim.NodeID) net.Handler {
	conn := &clientConn{l: l, id: c, remote: from, address: l.p.h.clientAddress(from)}
	conn.auth.Add(proto.ID{Scheme: "ip", ID: conn.address})
	l.conns = append(l.conns, conn)
	return conn
}

// closeAll is QuorumPeer.closeAllConnections.
func (l *clientListener) closeAll() {
	for _, c := range slices.Clone(l.conns) {
		c.close("server leaving its role")
	}
}

// closeSession closes the connections that hold a session (ServerCnxnFactory.closeSession). It
// reports whether there was one.
func (l *clientListener) closeSession(id int64, reason string) bool {
	found := false
	for _, c := range slices.Clone(l.conns) {
		if c.sessionID == id && c.state != connClosed {
			c.close(reason)
			found = true
		}
	}
	return found
}

func (l *clientListener) remove(c *clientConn) {
	l.conns = slices.DeleteFunc(l.conns, func(x *clientConn) bool { return x == c })
}

type connState uint8

const (
	connNew          connState = iota // waiting for the ConnectRequest
	connEstablishing                  // session being created or revalidated: receive disabled
	connEstablished
	connClosed
)

// clientConn is one client connection (NIOServerCnxn). It is also the datatree.Watcher through which
// the tree delivers notifications to the client.
type clientConn struct {
	l                *clientListener
	id               net.ConnID
	remote           sim.NodeID
	address          string
	state            connState
	sessionID        int64
	sessionTimeoutMs int32
	auth             datatree.AuthInfo
	oldClient        bool
	replyHeader      proto.ReplyHeader // sendReply's, see there

	// held keeps the packets that arrived while receiving was disabled (disableRecv), in order.
	held [][]byte
}

func (c *clientConn) p() *peer { return c.l.p }

// Connected implements net.Handler; servers never dial clients.
func (c *clientConn) Connected(net.ConnID) {}

// Closed implements net.Handler: the client went away or the connection broke.
func (c *clientConn) Closed(_ net.ConnID, err error) { c.closed() }

// Received implements net.Handler: one packet from the client.
func (c *clientConn) Received(_ net.ConnID, payload []byte) {
	p := c.p()
	if c.state == connClosed {
		return
	}
	if err := proto.CheckPacketLength(len(payload)); err != nil {
		c.close(fmt.Sprintf("len error: %v", err))
		return
	}
	if c.state == connEstablishing {
		c.held = append(c.held, payload)
		return
	}
	zk := p.zk
	if zk == nil || !zk.running || !p.serving {
		c.close("ZooKeeperServer not running")
		return
	}
	if c.state == connNew {
		c.processConnectRequest(zk, payload)
		return
	}
	c.processPacket(zk, payload)
}

// enableRecv resumes reading after the session was set up, with the packets that waited.
func (c *clientConn) enableRecv() {
	if c.state != connEstablishing {
		return
	}
	c.state = connEstablished
	held := c.held
	c.held = nil
	for _, b := range held {
		c.Received(c.id, b)
	}
}

// processConnectRequest is ZooKeeperServer.processConnectRequest.
func (c *clientConn) processConnectRequest(zk *zkServer, payload []byte) {
	var req proto.ConnectRequest
	if err := proto.Unmarshal(payload, &req); err != nil {
		c.close(fmt.Sprintf("bad connect request: %v", err))
		return
	}
	c.oldClient = req.OmitReadOnly
	p := c.p()
	if last := p.db.lastProcessedZxid(); req.LastZxidSeen > last {
		c.close(fmt.Sprintf("refusing session request: client has seen zxid %s, our last zxid is %s", FormatZxid(req.LastZxidSeen), FormatZxid(last)))
		return
	}
	timeout := req.TimeoutMilliseconds
	minimum, maximum := int32(p.cfg.MinSessionTimeout/clock.Millisecond), int32(p.cfg.MaxSessionTimeout/clock.Millisecond)
	timeout = max(min(timeout, maximum), minimum)
	c.sessionTimeoutMs = timeout
	c.state = connEstablishing
	if req.SessionID == 0 {
		c.sessionID = zk.createSession(c, timeout)
		return
	}
	c.l.closeSession(req.SessionID, "client reconnected elsewhere")
	c.sessionID = req.SessionID
	zk.reopenSession(c, req.SessionID, req.Password, timeout)
}

// processPacket is ZooKeeperServer.processPacket for an established connection.
func (c *clientConn) processPacket(zk *zkServer, payload []byte) {
	var h proto.RequestHeader
	offset, err := c.p().mem.decodeRequestHeader(payload, &h)
	if err != nil {
		c.close(fmt.Sprintf("bad request header: %v", err))
		return
	}
	body := payload[offset:]
	if h.Type == proto.OpAuth {
		c.processAuth(h, body)
		return
	}
	r := c.p().mem.requests.New()
	*r = request{
		sessionID: c.sessionID, cxid: h.Xid, op: h.Type, body: body, auth: c.auth.IDs(), conn: c, owner: ownerLocal,
	}
	zk.submit(r)
}

// processAuth handles an AuthPacket: the credentials join the connection's auth info, or the client
// is told AUTHFAILED and the connection closed.
func (c *clientConn) processAuth(h proto.RequestHeader, body []byte) {
	var auth proto.AuthPacket
	code := proto.AuthFailed
	if err := proto.Unmarshal(body, &auth); err == nil {
		if id, err := datatree.Authenticate(auth.Scheme, auth.Auth, c.address); err == nil {
			c.auth.Add(id)
			code = proto.OK
		}
	}
	c.sendReply(proto.ReplyHeader{Xid: h.Xid, Zxid: 0, Err: code}, nil)
	if code != proto.OK {
		c.close("authentication failed")
	}
}

// sendReply sends a reply header and an optional record.
func (c *clientConn) sendReply(h proto.ReplyHeader, body proto.Record) {
	if c.state == connClosed {
		return
	}
	// The header goes through the connection's field rather than a pointer to h, which would move
	// every reply's header to the heap; sendRecords encodes it at once and keeps nothing.
	c.replyHeader = h
	if body == nil {
		c.p().sendRecords(c.id, &c.replyHeader)
		return
	}
	c.p().sendRecords(c.id, &c.replyHeader, body)
}

// Process implements datatree.Watcher: a notification, sent at once (NIOServerCnxn.process).
func (c *clientConn) Process(e proto.WatcherEvent, _ int64) {
	if c.p().cfg.SelfTests.Has(SelfTestDropWatch) {
		return
	}
	c.sendReply(proto.ReplyHeader{Xid: proto.NotificationXid, Zxid: -1, Err: proto.OK}, &e)
}

// WatchAuth implements datatree.ReadCheckedWatcher: a notification reaches the connection only if its
// identities may read the changed node, as the reference server (with the CVE-2024-23944 fix) checks.
func (c *clientConn) WatchAuth() []proto.ID { return c.auth.IDs() }

// IsStale implements datatree.StaleWatcher: a closed connection takes no new watches.
func (c *clientConn) IsStale() bool { return c.state == connClosed }

// finishSessionInit is ZooKeeperServer.finishSessionInit.
func (c *clientConn) finishSessionInit(valid bool) {
	if c.state == connClosed {
		return
	}
	p := c.p()
	resp := proto.ConnectResponse{ProtocolVersion: 0, Password: make([]byte, 16), OmitReadOnly: c.oldClient}
	if valid {
		resp.TimeoutMilliseconds, resp.SessionID, resp.Password = c.sessionTimeoutMs, c.sessionID, generatePasswd(c.sessionID)
	}
	p.sendRecords(c.id, &resp)
	if !valid {
		p.note("session", "invalid session %#x for client %s, probably expired", c.sessionID, p.h.nodeName(c.remote))
		c.close("session invalid")
		return
	}
	p.note("session", "established session %#x with timeout %dms for %s", c.sessionID, c.sessionTimeoutMs, p.h.nodeName(c.remote))
	c.enableRecv()
}

// close closes the connection from the server's side.
func (c *clientConn) close(reason string) {
	if c.state == connClosed {
		return
	}
	p := c.p()
	p.note("cnxn", "closing connection of session %#x: %s", c.sessionID, reason)
	p.h.close(c.id)
	c.closed()
}

// closed forgets the connection and its watches.
func (c *clientConn) closed() {
	if c.state == connClosed {
		return
	}
	c.state = connClosed
	c.held = nil
	p := c.p()
	if p.db.tree != nil {
		p.db.tree.removeWatcher(c)
	}
	c.l.remove(c)
}

// superSecret is ZooKeeperServer.superSecret, the seed of session passwords.
const superSecret int64 = 0xB3415C00

// generatePasswd is ZooKeeperServer.generatePasswd: 16 bytes of java.util.Random seeded with the
// session id.
func generatePasswd(id int64) []byte {
	r := newJavaRandom(id ^ superSecret)
	b := make([]byte, 16)
	r.nextBytes(b)
	return b
}

// javaRandom is java.util.Random's linear congruential generator, enough of it to derive session
// passwords exactly as a Java server does.
type javaRandom struct{ seed int64 }

const (
	javaRandomMultiplier = 0x5DEECE66D
	javaRandomMask       = (1 << 48) - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaRandomMultiplier) & javaRandomMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaRandomMultiplier + 0xB) & javaRandomMask
	return int32(r.seed >> (48 - bits))
}

func (r *javaRandom) nextBytes(b []byte) {
	for i := 0; i < len(b); {
		rnd := r.next(32)
		for n := min(len(b)-i, 4); n > 0; n-- {
			b[i] = byte(rnd)
			rnd >>= 8
			i++
		}
	}
}

// connOf returns the open connection that holds a session, or nil.
func (l *clientListener) connOf(id int64) *clientConn {
	for _, c := range l.conns {
		if c.sessionID == id && c.state != connClosed {
			return c
		}
	}
	return nil
}
