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
//     sid that connects sends its identity and hangs up, and the higher sid, on hearing it, drops any
//     connection it had to that server and connects back;
//   - one send slot per peer (SEND_CAPACITY = 1): a newer notification replaces an unsent one;
//   - the last message sent to a peer is sent again when a new connection to it starts with nothing
//     queued, because the old connection may have swallowed it;
//   - notifications to this server itself are delivered locally, at once;
//   - haveDelivered and connectAll serve the election's timeout.
//
// Connections are dialed with the 5 s cnxTO timeout. Nothing here retries on its own: a lost
// connection is re-established when the election next sends, as in the real server.
type cnxManager struct {
	host    host
	sid     int64
	peers   map[int64]sim.NodeID // every server of the ensemble that takes part in elections, by sid
	deliver notificationSink

	senders  map[int64]net.ConnID // established connections, one per peer (senderWorkerMap)
	inbound  map[net.ConnID]int64 // accepted connections whose initial message is still awaited
	dialing  map[int64]net.ConnID // connections being initiated (inprogressConnections)
	queues   map[int64][]byte     // the one-message send queue per peer; present means known peer
	lastSent map[int64][]byte
	conns    map[net.ConnID]int64 // every live connection and its peer (0 while unknown)
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
	return &cnxManager{
		host: h, sid: sid, peers: peers, deliver: deliver,
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
	if sid == m.sid {
		// Loopback: QuorumCnxManager puts it straight on the receive queue. It is delivered as its own
		// event at the same instant, after whatever is being processed now, as the Java receive queue
		// would hand it to the election loop after the current notification.
		m.host.setTimer(0, &loopbackTimer{m: m, payload: payload})
		return
	}
	if _, known := m.peers[sid]; !known {
		return // "Invalid server id": not part of the ensemble.
	}
	m.queues[sid] = payload
	m.connectOne(sid)
	m.flush(sid)
}

// haveDelivered reports whether some peer's send slot is empty.
func (m *cnxManager) haveDelivered() bool {
	for _, sid := range sortedKeys(m.queues) {
		if m.queues[sid] == nil {
			return true
		}
	}
	return false
}

// connectAll connects to every peer that a notification was ever queued for.
func (m *cnxManager) connectAll() {
	for _, sid := range sortedKeys(m.queues) {
		m.connectOne(sid)
	}
}

func (m *cnxManager) connectOne(sid int64) {
	if _, ok := m.senders[sid]; ok {
		return
	}
	if _, ok := m.dialing[sid]; ok {
		return
	}
	c := m.host.dial(m.peers[sid], ElectionPort, electionConnectTimeout, m)
	if c == 0 {
		return // The process is dead: nothing more leaves it.
	}
	m.dialing[sid] = c
	m.conns[c] = sid
}

// flush sends the queued notification for sid if a connection is up.
func (m *cnxManager) flush(sid int64) {
	c, ok := m.senders[sid]
	if !ok {
		return
	}
	if b := m.queues[sid]; b != nil {
		m.queues[sid] = nil
		m.lastSent[sid] = b
		m.host.send(c, b)
	}
}

// startSender makes c the connection to sid (a new SendWorker): any previous one is finished, and the
// last message is sent again if nothing newer is queued.
func (m *cnxManager) startSender(sid int64, c net.ConnID) {
	if old, ok := m.senders[sid]; ok && old != c {
		m.finish(old)
	}
	m.senders[sid] = c
	if _, ok := m.queues[sid]; !ok {
		m.queues[sid] = nil
	}
	if m.queues[sid] == nil {
		if b := m.lastSent[sid]; b != nil {
			m.host.send(c, b)
		}
	}
	m.flush(sid)
}

func (m *cnxManager) finish(c net.ConnID) {
	m.host.close(c)
	m.forget(c)
}

func (m *cnxManager) forget(c net.ConnID) {
	sid := m.conns[c]
	delete(m.conns, c)
	delete(m.inbound, c)
	if m.senders[sid] == c {
		delete(m.senders, sid)
	}
	if m.dialing[sid] == c {
		delete(m.dialing, sid)
	}
}

func initialMessage(sid int64) []byte {
	b := make([]byte, 16)
	version := electionProtocolVersion
	binary.BigEndian.PutUint64(b, uint64(version))
	binary.BigEndian.PutUint64(b[8:], uint64(sid))
	return b
}

// Accept implements net.Listener: the initiator's identity arrives as the first message.
func (m *cnxManager) Accept(c net.ConnID, from sim.NodeID) net.Handler {
	m.inbound[c] = 0
	m.conns[c] = 0
	return m
}

// Connected implements net.Handler for connections this server initiated (startConnection).
func (m *cnxManager) Connected(c net.ConnID) {
	sid := m.conns[c]
	delete(m.dialing, sid)
	m.host.send(c, initialMessage(m.sid))
	if sid > m.sid {
		// Lost the challenge: the peer will connect back.
		m.finish(c)
		return
	}
	m.startSender(sid, c)
}

// Received implements net.Handler.
func (m *cnxManager) Received(c net.ConnID, payload []byte) {
	if _, waiting := m.inbound[c]; waiting {
		m.handleConnection(c, payload)
		return
	}
	sid, ok := m.conns[c]
	if !ok || m.senders[sid] != c {
		return // A connection that was already replaced: its RecvWorker has finished.
	}
	m.deliver.onNotification(sid, payload)
}

// handleConnection reads the initiator's identity and keeps the connection only if the initiator
// has the higher sid.
func (m *cnxManager) handleConnection(c net.ConnID, payload []byte) {
	delete(m.inbound, c)
	if len(payload) < 16 {
		m.finish(c)
		return
	}
	sid := int64(binary.BigEndian.Uint64(payload))
	if sid < 0 {
		sid = int64(binary.BigEndian.Uint64(payload[8:]))
	}
	if _, known := m.peers[sid]; !known || sid == m.sid {
		m.finish(c)
		return
	}
	m.conns[c] = sid
	if sid < m.sid {
		// Won the challenge: drop this connection and any old one, and connect back.
		if old, ok := m.senders[sid]; ok {
			m.finish(old)
		}
		m.finish(c)
		m.connectOne(sid)
		return
	}
	m.startSender(sid, c)
}

// Closed implements net.Handler.
func (m *cnxManager) Closed(c net.ConnID, err error) { m.forget(c) }
