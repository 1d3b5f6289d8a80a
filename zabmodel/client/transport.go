package client

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// This file is the wire side of ClientCnxn: ClientCnxnSocketNIO.doIO, readConnectResult,
// SendThread.readResponse and primeConnection, and queuePacket / finishPacket.

// minExtraBufferBytes is the least zookeeper.jute.maxbuffer.extrasize BinaryInputArchive uses.
const minExtraBufferBytes = 1024

// errProtocol marks the protocol errors that make the Java client drop the connection.
var errProtocol = errors.New("protocol error")

// readPacket handles one packet from the server, as doIO does once a whole packet is in.
func (c *Client) readPacket(payload []byte) error {
	if n := len(payload); c.maxPacket > 0 && n > c.maxPacket {
		if c.goZookeeper() {
			return fmt.Errorf("received packet from server with length %d, which exceeds max buffer size %d: %w", n, c.maxPacket, proto.ErrPacketLength)
		}
		return fmt.Errorf("Packet len %d is out of range!: %w (jute.maxbuffer=%d)", n, proto.ErrPacketLength, c.maxPacket)
	}
	if !c.initialized {
		if err := c.readConnectResult(payload); err != nil {
			return err
		}
		c.initialized = true
		return nil
	}
	return c.readResponse(payload)
}

// readConnectResult is ClientCnxnSocket.readConnectResult and SendThread.onConnected.
func (c *Client) readConnectResult(payload []byte) error {
	var resp proto.ConnectResponse
	d := proto.NewDecoder(payload)
	resp.Decode(d) // Like Java, ignore anything after the record and its flag.
	if err := d.Err(); err != nil {
		return fmt.Errorf("%w: connect response: %w", errProtocol, err)
	}
	c.negotiatedTimeout = resp.TimeoutMilliseconds
	expired, err := c.handshakeExpired(&resp)
	if err != nil {
		return err
	}
	if expired {
		c.expired = true
		c.setState(StateClosed)
		c.queueState(proto.StateExpired)
		c.queueDeath()
		return fmt.Errorf("Unable to reconnect to ZooKeeper service, session %s has expired", hex(c.sessionID))
	}
	// The flag is absent when the server answers an old client, and then Java reads false.
	// go-zookeeper never reads it.
	readOnly := resp.ReadOnly && !resp.OmitReadOnly && !c.goZookeeper()
	c.readTimeout = int64(resp.TimeoutMilliseconds) * 2 / 3
	if c.goZookeeper() {
		// go-zookeeper's setTimeouts keeps the negotiated timeout as its sessionTimeoutMs, which
		// its next ConnectRequest asks for; Java keeps asking for what the application gave.
		c.sessionTimeout = resp.TimeoutMilliseconds
	}
	c.connectTimeout = int64(resp.TimeoutMilliseconds) / int64(c.hosts.size())
	c.hosts.onConnected()
	c.sessionID = resp.SessionID
	c.password = resp.Password
	eventState := proto.StateSyncConnected
	if readOnly {
		c.setState(StateConnectedReadOnly)
		eventState = proto.StateConnectedReadOnly
	} else {
		c.setState(StateConnected)
	}
	c.seenRwServerBefore = c.seenRwServerBefore || !readOnly
	c.note("session " + hex(c.sessionID) + " established with " + c.w.Name(c.server) +
		", negotiated timeout " + fmt.Sprint(resp.TimeoutMilliseconds) + "ms")
	c.queueState(eventState)
	if c.goZookeeper() {
		c.goZookeeperResetWatches()
	}
	return nil
}

// handshakeExpired tells whether the server refused to renew the session: Java looks at the
// timeout, go-zookeeper at the session id. A go-zookeeper session granted with a timeout of 0 is a
// protocol error here; go-zookeeper itself would panic making its ping ticker.
func (c *Client) handshakeExpired(resp *proto.ConnectResponse) (bool, error) {
	if !c.goZookeeper() {
		return resp.TimeoutMilliseconds <= 0, nil
	}
	if resp.SessionID == 0 {
		return true, nil
	}
	if resp.TimeoutMilliseconds <= 0 {
		return false, fmt.Errorf("%w: session %s granted with timeout %d", errProtocol, hex(resp.SessionID), resp.TimeoutMilliseconds)
	}
	return false, nil
}

// readResponse is SendThread.readResponse.
func (c *Client) readResponse(payload []byte) error {
	// The client's decoder serves every reply. Decoded records copy what they keep, and nothing
	// reads a reply while another is being read (replies arrive one per network event); should one
	// ever be, it gets a decoder of its own.
	d := &c.decoder
	if c.decoding {
		d = new(proto.Decoder)
	}
	wasDecoding := c.decoding
	c.decoding = true
	d.Reset(payload)
	err := c.readResponseWith(d)
	d.Reset(nil) // Hold no reference to the payload.
	c.decoding = wasDecoding
	return err
}

// readResponseWith is readResponse with d over the payload.
func (c *Client) readResponseWith(d *proto.Decoder) error {
	d.SetFieldLimit(c.fieldLimit())
	var h proto.ReplyHeader
	h.Decode(d)
	if err := d.Err(); err != nil {
		return fmt.Errorf("%w: reply header: %w", errProtocol, err)
	}
	if c.goZookeeper() {
		return c.readResponseGoZookeeper(h, d)
	}
	switch h.Xid {
	case proto.PingXid:
		return nil
	case proto.AuthXid:
		c.readAuthReply(h)
		return nil
	case proto.NotificationXid:
		return c.readNotification(d)
	}
	if c.pending.len() == 0 {
		return fmt.Errorf("%w: Nothing in the queue, but got %d", errProtocol, h.Xid)
	}
	p := c.pending.pop()
	if p.header.Xid != h.Xid {
		p.err = proto.ConnectionLoss
		c.finishPacket(p)
		return fmt.Errorf("%w: Xid out of order. Got Xid %d with err %d expected Xid %d for a packet with details: %v",
			errProtocol, h.Xid, h.Err, p.header.Xid, p)
	}
	if h.Zxid > 0 {
		c.lastZxid = h.Zxid
	}
	bodyErr := readBody(p, h, d)
	c.finishPacket(p)
	return bodyErr
}

// fieldLimit is the longest buffer or string a reply may hold: BinaryInputArchive's maxBuffer plus
// extraMaxBuffer for Java, none for go-zookeeper.
func (c *Client) fieldLimit() int {
	if c.goZookeeper() {
		return math.MaxInt32
	}
	return c.maxPacket + max(c.maxPacket, minExtraBufferBytes)
}

// readBody records the reply in its packet and decodes the body of an OK reply.
func readBody(p *packet, h proto.ReplyHeader, d *proto.Decoder) error {
	p.err, p.zxid, p.replied = h.Err, h.Zxid, true
	if h.Err != proto.OK {
		return nil
	}
	resp := proto.NewResponse(p.op())
	if resp == nil {
		return nil
	}
	resp.Decode(d)
	p.response = resp
	if err := d.Err(); err != nil {
		// Java deserializes inside try/finally: the packet still finishes, with the header's code
		// and whatever was read, and then the connection drops.
		return fmt.Errorf("%w: reply to %v: %w", errProtocol, p.op(), err)
	}
	return nil
}

// readResponseGoZookeeper is go-zookeeper's recvLoop after the header: replies are matched by xid,
// and what matches nothing is ignored.
func (c *Client) readResponseGoZookeeper(h proto.ReplyHeader, d *proto.Decoder) error {
	switch {
	case h.Xid == proto.NotificationXid:
		return c.readNotification(d)
	case h.Xid == proto.PingXid:
		return nil
	case h.Xid < 0:
		c.note("ignored a reply with xid " + strconv.Itoa(int(h.Xid)) + " (Xid < 0 but not ping or watcher event)")
		return nil
	}
	if h.Zxid > 0 {
		c.lastZxid = h.Zxid
	}
	p := c.pending.removeXid(h.Xid)
	if p == nil {
		c.note("ignored a reply for unknown request with xid " + strconv.Itoa(int(h.Xid)))
		return nil
	}
	bodyErr := readBody(p, h, d)
	if p.op() == proto.OpAuth {
		if err := c.goZookeeperAuthReply(p); err != nil {
			return err
		}
		return bodyErr
	}
	c.finishPacket(p)
	return bodyErr
}

// readAuthReply handles a reply with AUTHPACKET_XID. AUTHFAILED kills the client: state AUTH_FAILED,
// the AuthFailed event, the event of death; the loop then exits and fails everything with
// AUTHFAILED. Java ignores any other code.
func (c *Client) readAuthReply(h proto.ReplyHeader) {
	// Only Java's auth packets come here: go-zookeeper's are matched by xid.
	if h.Err == proto.AuthFailed {
		c.setState(StateAuthFailed)
		c.queueState(proto.StateAuthFailed)
		c.queueDeath()
	}
	if len(c.authSent) == 0 {
		return
	}
	p := c.authSent[0]
	c.authSent = c.authSent[1:]
	p.err, p.zxid, p.replied = h.Err, h.Zxid, true
	if p.authDone != nil {
		done, result := p.authDone, resultOf(p)
		c.queueCallback(func() { done(result) })
	}
}

// readNotification handles a WatcherEvent. A state or type Java's enums do not know, or a type the
// watch manager refuses, is a RuntimeException in the SendThread: the connection drops.
func (c *Client) readNotification(d *proto.Decoder) error {
	var we proto.WatcherEvent
	we.Decode(d)
	if err := d.Err(); err != nil {
		return fmt.Errorf("%w: notification: %w", errProtocol, err)
	}
	if !c.goZookeeper() && (!knownKeeperState(we.State) || !knownEventType(we.Type)) {
		return fmt.Errorf("%w: notification with state %d and type %d", errProtocol, we.State, we.Type)
	}
	if !c.queueEvent(Event{Type: we.Type, State: we.State, Path: we.Path}, nil) {
		return fmt.Errorf("%w: Unhandled watch event type %v with state %v on path %s", errProtocol, we.Type, we.State, we.Path)
	}
	return nil
}

func knownKeeperState(s proto.KeeperState) bool {
	switch s {
	case proto.StateUnknown, proto.StateDisconnected, proto.StateNoSyncConnected, proto.StateSyncConnected,
		proto.StateAuthFailed, proto.StateConnectedReadOnly, proto.StateSaslAuthenticated, proto.StateExpired, proto.StateClosed:
		return true
	}
	return false
}

func knownEventType(t proto.EventType) bool {
	return t == proto.EventNone || (t >= proto.EventNodeCreated && t <= proto.EventPersistentWatchRemoved)
}

// finishPacket is ClientCnxn.finishPacket: watch bookkeeping in the SendThread, then the callback
// through the EventThread.
func (c *Client) finishPacket(p *packet) {
	if p.watch != nil {
		p.watch.register(&c.watches, p.err)
	}
	if p.unwatch != nil {
		groups, code := c.watches.unregister(p.unwatch, p.err)
		state := proto.StateSyncConnected
		if p.err == proto.SessionExpired || p.err == proto.ConnectionLoss {
			state = proto.StateDisconnected
		}
		for _, g := range groups {
			c.queueEvent(Event{Type: g.typ, State: state, Path: p.unwatch.path}, g.watchers)
			code = proto.OK // A removal that happened hides the error, even a lost connection.
		}
		p.err = code
	}
	if p.onFinish != nil {
		p.onFinish(p)
	}
	if p.deliver != nil {
		c.queueCallback(func() { p.deliver(p) })
	}
	if p.sink != nil {
		c.events.push(eventItem{kind: itemPacket, packet: p})
	}
}

// writable is the NIO write interest: once TCP is up the ConnectRequest may go, then nothing more
// until the ConnectResponse has arrived.
func (c *Client) writable() bool {
	return c.conn != 0 && c.tcpConnected && (c.initialized || !c.connectSent)
}

// flush writes the outgoing queue as far as the socket allows, the loop of doIO's write half.
func (c *Client) flush() error {
	for c.outgoing.len() > 0 && c.writable() {
		if c.authResends > 0 {
			// go-zookeeper's resendZkAuth waits for each re-sent credential's reply before it
			// writes anything more.
			break
		}
		p := c.outgoing.front()
		c.lastSend = c.nowMillis()
		if p.numbered() && !p.xidTaken {
			p.header.Xid = c.nextXid()
		}
		c.encoder.Reset()
		if p.hasHeader {
			p.header.Encode(&c.encoder)
		}
		if p.request != nil {
			p.request.Encode(&c.encoder)
		}
		if err := c.nw.Send(c.node, c.conn, c.encoder.Bytes()); err != nil {
			return err // The packet stays queued; the cleanup fails it.
		}
		c.outgoing.pop()
		p.written, p.session = true, c.sessionID
		if p.resentAuth {
			c.authResends++
		}
		switch {
		case !p.hasHeader:
			c.connectSent = true
		case p.op() == proto.OpAuth && !p.numberedAuth:
			c.authSent = append(c.authSent, p)
		case p.numbered():
			c.pending.push(p)
		}
	}
	return nil
}

// nextXid is ClientCnxn.getXid: from 1 up, skipping from MAX_VALUE back to 1. go-zookeeper's is
// an unsigned counter masked to 31 bits, which comes back through 0.
func (c *Client) nextXid() int32 {
	if c.goZookeeper() {
		c.goXid++
		return int32(c.goXid & math.MaxInt32)
	}
	if c.xid == math.MaxInt32 {
		c.xid = 1
	}
	x := c.xid
	c.xid++
	return x
}

// sendPing queues a ping as queuePacket would, which drops it while closing. The caller is the
// select loop itself, which writes it next; there is no selector to wake.
func (c *Client) sendPing() {
	if c.state.IsAlive() && !c.closing {
		c.outgoing.push(&packet{header: proto.RequestHeader{Xid: proto.PingXid, Type: proto.OpPing}, hasHeader: true})
	}
}

// queuePacket is ClientCnxn.queuePacket: fail at once if the client is dead or closing, otherwise
// queue, and write at once if the connection allows.
func (c *Client) queuePacket(p *packet) error {
	if c.goZookeeper() && p.numbered() {
		// go-zookeeper takes the xid when it queues the request (queueRequest), not when it writes it.
		c.takeXid(p)
	}
	if !c.state.IsAlive() || c.closing {
		c.conLossPacket(p)
		return nil
	}
	if c.outgoing.len() >= c.maxQueued {
		return fmt.Errorf("%w: %d queued", ErrQueueFull, c.outgoing.len())
	}
	if c.goZookeeper() {
		if err := c.checkSendBuffer(p); err != nil {
			return err
		}
	}
	if p.hasHeader && p.op() == proto.OpCloseSession {
		c.closing = true
	}
	c.outgoing.push(p)
	if c.phase == phaseSelect && c.writable() {
		// packetAdded wakes the selector; the loop writes the packet.
		c.loopTop(false)
	}
	return nil
}

// primeConnection is SendThread.primeConnection, run when TCP connects: the ConnectRequest, then the
// credentials, then the watches to re-register, all ahead of the requests already queued. Java puts
// each at the front with addFirst, so credentials and SetWatches batches end up in reverse order.
func (c *Client) primeConnection() {
	c.isFirstConnect = false
	if c.goZookeeper() {
		c.primeGoZookeeper()
		return
	}
	sessionID := int64(0)
	if c.seenRwServerBefore {
		sessionID = c.sessionID
	}
	connect := &packet{request: &proto.ConnectRequest{
		ProtocolVersion: protocolVersion, LastZxidSeen: c.lastZxid,
		TimeoutMilliseconds: c.sessionTimeout, SessionID: sessionID, Password: c.password,
	}}
	front := []*packet{connect}
	for i := len(c.auth) - 1; i >= 0; i-- {
		front = append(front, c.authPacket(c.auth[i], nil))
	}
	if !c.watches.disableAutoWatchReset {
		batches := c.setWatchesBatches()
		for i := len(batches) - 1; i >= 0; i-- {
			front = append(front, batches[i])
		}
	}
	c.outgoing.pushFront(front)
	c.note("connected to " + c.w.Name(c.server) + ", session request sent")
}

// primeGoZookeeper is go-zookeeper's start of a connection: the ConnectRequest (without the readOnly
// flag, always with the session id), then the credentials that succeeded, in the order they were
// added. The watches are re-registered once the handshake succeeds (goZookeeperResetWatches).
func (c *Client) primeGoZookeeper() {
	connect := &packet{priming: true, request: &proto.ConnectRequest{
		ProtocolVersion: protocolVersion, LastZxidSeen: c.lastZxid, TimeoutMilliseconds: c.sessionTimeout,
		SessionID: c.sessionID, Password: c.password, OmitReadOnly: true,
	}}
	front := []*packet{connect}
	for _, a := range c.auth {
		front = append(front, goZookeeperAuthPacket(a, nil, true))
	}
	c.outgoing.pushFront(front)
	c.note("connected to " + c.w.Name(c.server) + ", session request sent")
}

func (c *Client) authPacket(a authData, done func(Result)) *packet {
	return &packet{
		header:    proto.RequestHeader{Xid: proto.AuthXid, Type: proto.OpAuth},
		hasHeader: true,
		request:   &proto.AuthPacket{Type: 0, Scheme: a.scheme, Auth: a.data},
		authDone:  done,
	}
}

// setWatchesBatches splits the registered watches as primeConnection does: batches of at least
// SET_WATCHES_MAX_LENGTH UTF-16 units of path (the last path may overshoot), taking data, exist,
// child, persistent and recursive watches in that order, as SetWatches unless the batch holds a
// persistent or recursive watch, then as SetWatches2.
func (c *Client) setWatchesBatches() []*packet {
	if c.watches.empty() {
		return nil
	}
	lists := c.watches.watchLists()
	var batches []*packet
	for k := 0; k < len(lists); {
		var batch [5][]string
		length, taken := 0, 0
		for length < setWatchesMaxLength && k < len(lists) {
			if len(lists[k]) == 0 {
				k++
				continue
			}
			path := lists[k][0]
			lists[k] = lists[k][1:]
			batch[k] = append(batch[k], path)
			length += utf16Length(path)
			taken++
		}
		if taken == 0 {
			break
		}
		batches = append(batches, c.setWatchesPacket(batch))
	}
	return batches
}

func (c *Client) setWatchesPacket(b [5][]string) *packet {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	p := &packet{header: proto.RequestHeader{Xid: proto.SetWatchesXid}, hasHeader: true, hasReply: true}
	if len(b[watchPersistent]) == 0 && len(b[watchRecursive]) == 0 {
		p.header.Type = proto.OpSetWatches
		p.request = &proto.SetWatches{RelativeZxid: c.lastZxid, DataWatches: nonNil(b[watchData]),
			ExistWatches: nonNil(b[watchExist]), ChildWatches: nonNil(b[watchChild])}
		return p
	}
	p.header.Type = proto.OpSetWatches2
	p.request = &proto.SetWatches2{RelativeZxid: c.lastZxid, DataWatches: nonNil(b[watchData]),
		ExistWatches: nonNil(b[watchExist]), ChildWatches: nonNil(b[watchChild]),
		PersistentWatches: nonNil(b[watchPersistent]), PersistentRecursiveWatches: nonNil(b[watchRecursive])}
	return p
}

// utf16Length is Java's String.length().
func utf16Length(s string) int {
	n := 0
	for _, r := range s {
		// An invalid byte decodes to U+FFFD, one unit, as Java's decoder would make it.
		n++
		if r > 0xffff {
			n++
		}
	}
	return n
}
