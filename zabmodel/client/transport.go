package client

import (
	"errors"
	"fmt"
	"math"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// This file is the wire side of ClientCnxn: ClientCnxnSocketNIO.doIO, readConnectResult,
// SendThread.readResponse and primeConnection, and queuePacket / finishPacket.

// errProtocol marks the protocol errors that make the Java client drop the connection.
var errProtocol = errors.New("protocol error")

// readPacket handles one packet from the server, as doIO does once a whole packet is in.
func (c *Client) readPacket(payload []byte) error {
	if err := proto.CheckPacketLength(len(payload)); err != nil {
		return fmt.Errorf("Packet len %d is out of range!: %w", len(payload), err)
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
	if resp.TimeoutMilliseconds <= 0 {
		c.setState(StateClosed)
		c.queueState(proto.StateExpired)
		c.queueDeath()
		return fmt.Errorf("Unable to reconnect to ZooKeeper service, session %s has expired", hex(c.sessionID))
	}
	// The flag is absent when the server answers an old client, and then Java reads false.
	readOnly := resp.ReadOnly && !resp.OmitReadOnly
	c.readTimeout = int64(resp.TimeoutMilliseconds) * 2 / 3
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
	return nil
}

// readResponse is SendThread.readResponse.
func (c *Client) readResponse(payload []byte) error {
	d := proto.NewDecoder(payload)
	var h proto.ReplyHeader
	h.Decode(d)
	if err := d.Err(); err != nil {
		return fmt.Errorf("%w: reply header: %w", errProtocol, err)
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
	p.err, p.zxid = h.Err, h.Zxid
	if h.Zxid > 0 {
		c.lastZxid = h.Zxid
	}
	var bodyErr error
	if h.Err == proto.OK {
		if resp := proto.NewResponse(p.op()); resp != nil {
			resp.Decode(d)
			p.response = resp
			if err := d.Err(); err != nil {
				// Java deserializes inside try/finally: the packet still finishes, with the header's
				// code and whatever was read, and then the connection drops.
				bodyErr = fmt.Errorf("%w: reply to %v: %w", errProtocol, p.op(), err)
			}
		}
	}
	c.finishPacket(p)
	return bodyErr
}

// readAuthReply handles a reply with AUTHPACKET_XID. AUTHFAILED kills the client: state AUTH_FAILED,
// the AuthFailed event, the event of death; the loop then exits and fails everything with
// AUTHFAILED. Java ignores any other code.
func (c *Client) readAuthReply(h proto.ReplyHeader) {
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
	if p.authDone != nil {
		done, result := p.authDone, Result{Err: h.Err, Zxid: h.Zxid}
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
	if !knownKeeperState(we.State) || !knownEventType(we.Type) {
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
}

// writable is the NIO write interest: once TCP is up the ConnectRequest may go, then nothing more
// until the ConnectResponse has arrived.
func (c *Client) writable() bool {
	return c.conn != 0 && c.tcpConnected && (c.initialized || !c.connectSent)
}

// flush writes the outgoing queue as far as the socket allows, the loop of doIO's write half.
func (c *Client) flush() error {
	for c.outgoing.len() > 0 && c.writable() {
		p := c.outgoing.front()
		c.lastSend = c.nowMillis()
		if p.numbered() {
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
		switch {
		case !p.hasHeader:
			c.connectSent = true
		case p.op() == proto.OpAuth:
			c.authSent = append(c.authSent, p)
		case p.numbered():
			c.pending.push(p)
		}
	}
	return nil
}

// nextXid is ClientCnxn.getXid: from 1 up, skipping from MAX_VALUE back to 1.
func (c *Client) nextXid() int32 {
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
	if !c.state.IsAlive() || c.closing {
		c.conLossPacket(p)
		return nil
	}
	if c.outgoing.len() >= c.maxQueued {
		return fmt.Errorf("%w: %d queued", ErrQueueFull, c.outgoing.len())
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
