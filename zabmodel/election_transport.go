package zabmodel

import (
	"encoding/binary"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
)

// cnxManager is the election transport, modelled on QuorumCnxManager in 3.8.0:
//
//   - one connection per pair of servers, and only one initiated by the higher sid survives: a lower
//     sid that connects sends its identity and hangs up (QuorumCnxManager.startConnection), and the
//     higher sid, on hearing it, drops any connection it had to that server and connects back
//     (handleConnection);
//   - one send slot per peer (SEND_CAPACITY = 1, toSend's addToSendQueue): a newer notification
//     replaces an unsent one;
//   - the last message sent to a peer is sent again when a new connection to it starts with nothing
//     queued (SendWorker.run's lastMessageSent), because the old connection may have swallowed it;
//   - notifications to this server itself are delivered locally (toSend's addToRecvQueue);
//   - haveDelivered and connectAll serve the election's timeout.
//
// Connections are dialed with the 5 s cnxTO timeout. Nothing here retries on its own: a lost
// connection is re-established when the election next sends, as in the real server.
//
// The transport is a core (see ready.go): cnxCore is its state and step its step function, whose
// inputs are the election's sends and connectAll and the sockets' events, and whose effects are
// dials, writes, closes, deliveries to the election and loopback deliveries; cnxManager is its
// driver, which owns the host. A dial's connection id is the world's answer: the driver reports it
// at once with cnxDialed, before the dial's ready goes on (nothing else in a ready depends on it).
//
// Ordering contract: a connection's identity (the initial message) is written before anything
// else on it; a replaced connection is closed before its successor's first write; a new sender
// writes the last message sent before the queued one, and only if nothing newer is queued.
type cnxManager struct {
	host    host
	peers   map[int64]sim.NodeID // every server of the ensemble that takes part in elections, by sid
	deliver notificationSink
	core    cnxCore
}

// cnxCore is the state of QuorumCnxManager.
type cnxCore struct {
	sid int64

	senders  map[int64]net.ConnID // established connections, one per peer (senderWorkerMap)
	inbound  map[net.ConnID]int64 // accepted connections whose initial message is still awaited
	dialing  map[int64]net.ConnID // connections being initiated (inprogressConnections)
	queues   map[int64][]byte     // the one-message send queue per peer; present means known peer
	lastSent map[int64][]byte
	conns    map[net.ConnID]int64 // every live connection and its peer (0 while unknown)

	readies readyPool
}

// cnxInputKind names what a step of the transport's core is about.
type cnxInputKind uint8

const (
	// cnxToSend is QuorumCnxManager.toSend of payload to sid.
	cnxToSend cnxInputKind = iota + 1
	// cnxConnectAll is QuorumCnxManager.connectAll.
	cnxConnectAll
	// cnxDialed reports the connection id (conn) of the dial to sid the last ready asked for.
	cnxDialed
	// cnxAccept is a connection accepted by the listener (conn).
	cnxAccept
	// cnxConnected is a connection this server initiated coming up (conn).
	cnxConnected
	// cnxReceived is a message (payload) read on conn.
	cnxReceived
	// cnxClosed is conn closed.
	cnxClosed
)

// cnxView is what the transport's core reads of the rest of the server: whether the ensemble's
// configuration has a server (QuorumPeer.getView).
type cnxView interface {
	knowsPeer(sid int64) bool
}

// knowsPeer makes the driver the core's cnxView.
func (m *cnxManager) knowsPeer(sid int64) bool {
	_, ok := m.peers[sid]
	return ok
}

// cnxInput is one input of the transport's core.
type cnxInput struct {
	kind    cnxInputKind
	sid     int64
	conn    net.ConnID
	payload []byte
}

// Election transport constants from QuorumCnxManager.
const (
	electionProtocolVersion int64 = -65536 // PROTOCOL_VERSION_V1: no multi-address support
	electionConnectTimeout        = 5 * clock.Second
)

// notificationSink takes the notifications the transport receives (the election's recvQueue): the
// peer, an interface rather than a function so that the world holds no closure and can be copied
// (package modelcheck).
type notificationSink interface {
	onNotification(from int64, payload []byte)
}

// notificationFunc adapts a function, for tests.
type notificationFunc func(from int64, payload []byte)

func (f notificationFunc) onNotification(from int64, payload []byte) { f(from, payload) }

func newCnxManager(h host, sid int64, peers map[int64]sim.NodeID, deliver notificationSink) *cnxManager {
	return &cnxManager{host: h, peers: peers, deliver: deliver, core: newCnxCore(sid)}
}

func newCnxCore(sid int64) cnxCore {
	return cnxCore{sid: sid,
		senders: map[int64]net.ConnID{}, inbound: map[net.ConnID]int64{}, dialing: map[int64]net.ConnID{},
		queues: map[int64][]byte{}, lastSent: map[int64][]byte{}, conns: map[net.ConnID]int64{},
	}
}

// listen starts accepting election connections; called when the server process starts.
func (m *cnxManager) listen() error {
	return m.host.listen(ElectionPort, m)
}

// toSend queues a notification for sid, or delivers it locally if sid is this server.
func (m *cnxManager) toSend(sid int64, payload []byte) {
	m.run(cnxInput{kind: cnxToSend, sid: sid, payload: payload})
}

// haveDelivered reports whether some peer's send slot is empty.
func (m *cnxManager) haveDelivered() bool { return m.core.haveDelivered() }

// connectAll connects to every peer that a notification was ever queued for.
func (m *cnxManager) connectAll() { m.run(cnxInput{kind: cnxConnectAll}) }

// run steps the core with in and applies what it returns.
func (m *cnxManager) run(in cnxInput) {
	out := m.core.step(in, m)
	for i := range out.effects {
		e := &out.effects[i]
		switch e.kind {
		case effectElectionDial:
			sid := e.zxid
			if c := m.host.dial(m.peers[sid], ElectionPort, electionConnectTimeout, m); c != 0 {
				m.run(cnxInput{kind: cnxDialed, sid: sid, conn: c})
			} // Otherwise the process is dead: nothing more leaves it.
		case effectElectionWrite:
			m.host.send(net.ConnID(e.zxid), e.packet)
		case effectElectionClose:
			m.host.close(net.ConnID(e.zxid))
		case effectElectionDeliver:
			m.deliver.onNotification(e.zxid, e.packet)
		case effectElectionLoopback:
			// It is delivered as its own event at the same instant, after whatever is being
			// processed now, as the Java receive queue would hand it to the election loop after
			// the current notification.
			m.host.setTimer(0, &loopbackTimer{m: m, payload: e.packet})
		default:
			panic("zabmodel: the election transport's core asked for " + e.kind.String())
		}
	}
	m.core.readies.put(out)
}

// Accept implements net.Listener: the initiator's identity arrives as the first message.
func (m *cnxManager) Accept(c net.ConnID, from sim.NodeID) net.Handler {
	m.run(cnxInput{kind: cnxAccept, conn: c})
	return m
}

// Connected implements net.Handler for connections this server initiated (startConnection).
func (m *cnxManager) Connected(c net.ConnID) { m.run(cnxInput{kind: cnxConnected, conn: c}) }

// Received implements net.Handler.
func (m *cnxManager) Received(c net.ConnID, payload []byte) {
	m.run(cnxInput{kind: cnxReceived, conn: c, payload: payload})
}

// Closed implements net.Handler.
func (m *cnxManager) Closed(c net.ConnID, err error) { m.run(cnxInput{kind: cnxClosed, conn: c}) }

// step takes one input and returns what must happen; the ready is the driver's until it gives it
// back to readies.
func (c *cnxCore) step(in cnxInput, view cnxView) *ready {
	out := c.readies.get()
	switch in.kind {
	case cnxToSend:
		c.toSend(out, in.sid, in.payload, view)
	case cnxConnectAll:
		for _, sid := range sortedKeys(c.queues) {
			c.connectOne(out, sid)
		}
	case cnxDialed:
		c.dialing[in.sid] = in.conn
		c.conns[in.conn] = in.sid
	case cnxAccept:
		c.inbound[in.conn] = 0
		c.conns[in.conn] = 0
	case cnxConnected:
		c.connected(out, in.conn)
	case cnxReceived:
		if _, waiting := c.inbound[in.conn]; waiting {
			c.handleConnection(out, in.conn, in.payload, view)
			break
		}
		sid, ok := c.conns[in.conn]
		if !ok || c.senders[sid] != in.conn {
			break // A connection that was already replaced: its RecvWorker has finished.
		}
		out.add(effect{kind: effectElectionDeliver, zxid: sid, packet: in.payload})
	case cnxClosed:
		c.forget(in.conn)
	}
	return out
}

func (c *cnxCore) toSend(out *ready, sid int64, payload []byte, view cnxView) {
	if sid == c.sid {
		// Loopback: QuorumCnxManager puts it straight on the receive queue.
		out.add(effect{kind: effectElectionLoopback, packet: payload})
		return
	}
	if !view.knowsPeer(sid) {
		return // "Invalid server id": not part of the ensemble.
	}
	c.queues[sid] = payload
	c.connectOne(out, sid)
	c.flush(out, sid)
}

// haveDelivered reports whether some peer's send slot is empty.
func (c *cnxCore) haveDelivered() bool {
	for _, sid := range sortedKeys(c.queues) {
		if c.queues[sid] == nil {
			return true
		}
	}
	return false
}

func (c *cnxCore) connectOne(out *ready, sid int64) {
	if _, ok := c.senders[sid]; ok {
		return
	}
	if _, ok := c.dialing[sid]; ok {
		return
	}
	out.add(effect{kind: effectElectionDial, zxid: sid})
}

// flush sends the queued notification for sid if a connection is up.
func (c *cnxCore) flush(out *ready, sid int64) {
	conn, ok := c.senders[sid]
	if !ok {
		return
	}
	if b := c.queues[sid]; b != nil {
		c.queues[sid] = nil
		c.lastSent[sid] = b
		out.add(effect{kind: effectElectionWrite, zxid: int64(conn), packet: b})
	}
}

// startSender makes conn the connection to sid (a new SendWorker): any previous one is finished,
// and the last message is sent again if nothing newer is queued.
func (c *cnxCore) startSender(out *ready, sid int64, conn net.ConnID) {
	if old, ok := c.senders[sid]; ok && old != conn {
		c.finish(out, old)
	}
	c.senders[sid] = conn
	if _, ok := c.queues[sid]; !ok {
		c.queues[sid] = nil
	}
	if c.queues[sid] == nil {
		if b := c.lastSent[sid]; b != nil {
			out.add(effect{kind: effectElectionWrite, zxid: int64(conn), packet: b})
		}
	}
	c.flush(out, sid)
}

// finish closes conn and forgets it (SendWorker.finish).
func (c *cnxCore) finish(out *ready, conn net.ConnID) {
	out.add(effect{kind: effectElectionClose, zxid: int64(conn)})
	c.forget(conn)
}

func (c *cnxCore) forget(conn net.ConnID) {
	sid := c.conns[conn]
	delete(c.conns, conn)
	delete(c.inbound, conn)
	if c.senders[sid] == conn {
		delete(c.senders, sid)
	}
	if c.dialing[sid] == conn {
		delete(c.dialing, sid)
	}
}

func initialMessage(sid int64) []byte {
	b := make([]byte, 16)
	version := electionProtocolVersion
	binary.BigEndian.PutUint64(b, uint64(version))
	binary.BigEndian.PutUint64(b[8:], uint64(sid))
	return b
}

// connected is startConnection once the socket is up: the identity, then the challenge.
func (c *cnxCore) connected(out *ready, conn net.ConnID) {
	sid := c.conns[conn]
	delete(c.dialing, sid)
	out.add(effect{kind: effectElectionWrite, zxid: int64(conn), packet: initialMessage(c.sid)})
	if sid > c.sid {
		// Lost the challenge: the peer will connect back.
		c.finish(out, conn)
		return
	}
	c.startSender(out, sid, conn)
}

// handleConnection reads the initiator's identity and keeps the connection only if the initiator
// has the higher sid.
func (c *cnxCore) handleConnection(out *ready, conn net.ConnID, payload []byte, view cnxView) {
	delete(c.inbound, conn)
	if len(payload) < 16 {
		c.finish(out, conn)
		return
	}
	sid := int64(binary.BigEndian.Uint64(payload))
	if sid < 0 {
		sid = int64(binary.BigEndian.Uint64(payload[8:]))
	}
	if !view.knowsPeer(sid) || sid == c.sid {
		c.finish(out, conn)
		return
	}
	c.conns[conn] = sid
	if sid < c.sid {
		// Won the challenge: drop this connection and any old one, and connect back.
		if old, ok := c.senders[sid]; ok {
			c.finish(out, old)
		}
		c.finish(out, conn)
		c.connectOne(out, sid)
		return
	}
	c.startSender(out, sid, conn)
}
