package client

import (
	"strconv"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// This file is ClientCnxn.SendThread.run as a state machine. Java's thread blocks in a few places;
// each is a phase here, left by a timer or a network event:
//
//   - phaseSelect: a socket exists (connecting, handshaking or connected) and the thread waits in
//     selector.select(to) for I/O or for the time at which it must send a ping or give up;
//   - phaseCleanup: ClientCnxnSocketNIO.cleanup closed the socket and sleeps 100 ms before the
//     pending and queued requests are failed;
//   - phaseHostSleep: StaticHostProvider.next sleeps a second after a full cycle of servers;
//   - phaseConnectDelay: startConnect sleeps a random time below a second before reconnecting;
//   - phaseExited: the thread has left its loop.

type phase uint8

const (
	phaseSelect phase = iota
	phaseCleanup
	phaseHostSleep
	phaseConnectDelay
	phaseExited
)

// Timer tags.
const (
	tagSelect  uint64 = iota + 1 // selector.select(to) returns on its timeout
	tagConfirm                   // re-check a timeout once the events already due have run
	tagSleep                     // a sleep phase ends
	tagDrain                     // deliver callbacks queued by an API call
)

// Durations and limits of ClientCnxn and ClientCnxnSocketNIO.
const (
	cleanupSleep          = 100 * clock.Millisecond // Thread.sleep(100) in ClientCnxnSocketNIO.cleanup
	connectDelayMaxMillis = 1000                    // ThreadLocalRandom.nextLong(1000) in startConnect
	maxSendPingIntervalMs = 10000                   // MAX_SEND_PING_INTERVAL
	pingSlackMs           = 1000                    // "1000 (1 second) is to prevent race condition missing to send the second ping"
	lateTimerSlack        = clock.Millisecond       // a select timeout this late was held up by a pause
	tcpConnectGiveUp      = 127 * clock.Second      // Linux gives up a SYN after 6 retries; the client's own timeout acts first
	setWatchesMaxLength   = 128 * 1024              // SET_WATCHES_MAX_LENGTH, in UTF-16 units of path
	protocolVersion       = 0                       // ConnectRequest.protocolVersion
	connectionLostPrefix  = "connection lost: "
	haveNotHeardReason    = "Client session timed out, have not heard from server in "
)

// driver is the Client as the simulator sees it: the handler of its connections and its timers. A
// separate type keeps these entry points out of the Client's API.
type driver Client

// TimerName implements sim.TimerNamer.
func (d *driver) TimerName(tag uint64) string {
	c := (*Client)(d)
	switch tag {
	case tagSelect:
		return c.name + " select timeout"
	case tagConfirm:
		return c.name + " timeout check"
	case tagSleep:
		return c.name + " sleep done"
	case tagDrain:
		return c.name + " deliver callbacks"
	default:
		return c.name + " timer " + strconv.FormatUint(tag, 10)
	}
}

// OnTimer implements sim.TimerHandler.
func (d *driver) OnTimer(tag uint64) {
	c := (*Client)(d)
	c.enter()
	switch tag {
	case tagSelect:
		c.selectTimer = 0
		if c.phase == phaseSelect {
			if c.w.Elapsed(c.node) > c.selectTarget.Add(lateTimerSlack) {
				// The process was paused (a long GC): like Java, read what arrived meanwhile before
				// deciding anything from the clock.
				c.scheduleConfirm()
			} else {
				c.loopTop(false)
			}
		}
	case tagConfirm:
		c.confirmTimer = 0
		if c.phase == phaseSelect {
			c.loopTop(true)
		}
	case tagSleep:
		c.sleepTimer = 0
		c.sleepDone()
	case tagDrain:
		c.drainTimer = 0
	}
	c.leave()
}

// sleep enters a phase that a timer ends, as a Thread.sleep in the SendThread.
func (c *Client) sleep(p phase, d clock.Duration) {
	c.phase = p
	c.w.CancelTimer(c.sleepTimer) // There is never another sleep pending; this keeps it so.
	c.sleepTimer = c.w.SetTimer(c.node, d, (*driver)(c), tagSleep)
}

func (c *Client) sleepDone() {
	switch c.phase {
	case phaseCleanup:
		c.finishCleanup()
	case phaseHostSleep:
		c.startConnect()
	case phaseConnectDelay:
		c.connect()
	}
}

// startSendThread is the start of SendThread.run.
func (c *Client) startSendThread() {
	now := c.nowMillis()
	c.lastSend, c.lastHeard = now, now
	c.loopTop(false)
}

// loopTop is the top of SendThread.run's loop: leave it if the client is dead, connect if there is
// no socket (unless closing), otherwise one iteration of the select loop.
func (c *Client) loopTop(confirmed bool) {
	switch {
	case !c.state.IsAlive():
		c.exitLoop()
	case c.conn != 0:
		c.selectStep(confirmed)
	case c.closing:
		c.exitLoop()
	default:
		server, sleep := c.hosts.next()
		c.server = server
		if sleep {
			if c.goZookeeper() {
				// A full cycle without a connection: flushUnsentRequests(ErrNoServer).
				c.failUnsent()
			}
			c.sleep(phaseHostSleep, hostSpinDelay)
			return
		}
		c.startConnect()
	}
}

// startConnect is SendThread.startConnect: a random pause before every connection attempt but those
// made before the first TCP connection ever succeeded.
func (c *Client) startConnect() {
	if !c.isFirstConnect && !c.goZookeeper() {
		c.sleep(phaseConnectDelay, clock.Duration(c.w.Choose(connectDelayMaxMillis))*clock.Millisecond)
		return
	}
	c.connect()
}

// connect opens the socket: changeZkState(CONNECTING), then clientCnxnSocket.connect.
func (c *Client) connect() {
	c.phase = phaseSelect
	if !c.state.IsAlive() {
		c.ioFailure("Connection has already been closed and reconnection is not allowed")
		return
	}
	c.setState(StateConnecting)
	c.note("connecting to " + c.w.Name(c.server))
	conn, err := c.nw.Dial(c.node, c.server, c.port, tcpConnectGiveUp, (*driver)(c))
	if err != nil {
		c.ioFailure(err.Error())
		return
	}
	c.conn, c.tcpConnected, c.connectSent, c.initialized = conn, false, false, false
	now := c.nowMillis()
	c.lastSend, c.lastHeard = now, now
	c.selectStep(false)
}

// selectStep is one iteration of the select loop: give up if nothing was heard for too long, send a
// ping if due, write what can be written, and wait until the next decision is due.
func (c *Client) selectStep(confirmed bool) {
	now := c.nowMillis()
	to := c.idleBudget(now)
	if to <= 0 {
		if !confirmed {
			c.scheduleConfirm()
			return
		}
		c.ioFailure(haveNotHeardReason + strconv.FormatInt(now-c.lastHeard, 10) + "ms for session id " + hex(c.sessionID))
		return
	}
	if c.state.IsConnected() {
		if ping, _ := c.pingSchedule(now); ping {
			c.sendPing()
			c.lastSend = now
		}
	}
	if err := c.flush(); err != nil {
		c.ioFailure(err.Error())
		return
	}
	if _, next := c.pingSchedule(now); c.state.IsConnected() && next < to {
		to = next
	}
	c.armSelect(max(to, 1))
}

// idleBudget is how long the client may still go without hearing from the server: readTimeout once
// a session is established, connectTimeout before.
//
// go-zookeeper instead gives the dial a second and the handshake ten read timeouts. It keeps its
// read timeout (recvTimeout) as a time.Duration, so that ten of them are 20/3 of the session
// timeout without Java's truncation to whole milliseconds first: a 1 ms session timeout leaves
// Java a read timeout of 0 but go-zookeeper a handshake of 6.7 ms.
func (c *Client) idleBudget(now int64) int64 {
	idleRecv := now - c.lastHeard
	switch {
	case c.state.IsConnected():
		return c.readTimeout - idleRecv
	case c.goZookeeper() && !c.tcpConnected:
		return goZookeeperDialTimeoutMs - idleRecv
	case c.goZookeeper():
		return 20*int64(c.sessionTimeout)/3 - idleRecv
	}
	return c.connectTimeout - idleRecv
}

// pingSchedule applies Java's rule: a ping is due when readTimeout/2 (less a second once a second has
// passed) has gone by without sending, or when more than ten seconds have. Otherwise next is the wait
// until the first condition holds; the second only acts when the loop wakes for another reason.
func (c *Client) pingSchedule(now int64) (due bool, next int64) {
	idleSend := now - c.lastSend
	slack := int64(0)
	if idleSend > pingSlackMs {
		slack = pingSlackMs
	}
	timeToNextPing := c.readTimeout/2 - idleSend - slack
	if timeToNextPing <= 0 || idleSend > maxSendPingIntervalMs {
		return true, 0
	}
	return false, timeToNextPing
}

// armSelect sets the select timeout to fire after toMillis. It re-arms only when the deadline moved,
// and it never leaves an earlier deadline armed: a spurious wake-up would be a loop iteration Java
// does not make, and the ten-second ping rule depends on when the loop wakes.
func (c *Client) armSelect(toMillis int64) {
	d := clock.Duration(toMillis) * clock.Millisecond
	target := c.w.Elapsed(c.node).Add(d)
	if c.selectTimer != 0 && c.selectTarget == target {
		return
	}
	c.w.CancelTimer(c.selectTimer)
	c.selectTimer = c.w.SetTimer(c.node, d, (*driver)(c), tagSelect)
	c.selectTarget = target
}

// scheduleConfirm re-runs the loop after every event already due at this instant, which after a
// pause includes the messages that arrived during it.
func (c *Client) scheduleConfirm() {
	if c.confirmTimer == 0 {
		c.confirmTimer = c.w.SetTimer(c.node, 0, (*driver)(c), tagConfirm)
	}
}

func (c *Client) stopSelectTimers() {
	c.w.CancelTimer(c.selectTimer)
	c.w.CancelTimer(c.confirmTimer)
	c.selectTimer, c.confirmTimer = 0, 0
}

// ioFailure is the catch block of SendThread.run: any I/O or protocol error ends the connection. A
// closing client leaves the loop; any other reconnects after cleanup.
func (c *Client) ioFailure(reason string) {
	if c.phase == phaseCleanup || c.phase == phaseExited {
		return
	}
	c.note(connectionLostPrefix + reason)
	if c.closing {
		c.exitLoop()
		return
	}
	c.beginCleanup(false)
}

// exitLoop leaves SendThread.run's loop; the final cleanup follows.
func (c *Client) exitLoop() { c.beginCleanup(true) }

// beginCleanup is the first half of SendThread.cleanup: the socket is closed at once, then the thread
// sleeps 100 ms inside ClientCnxnSocketNIO.cleanup before it fails the requests. Requests issued
// during that sleep are failed with the others.
func (c *Client) beginCleanup(exit bool) {
	if c.conn != 0 {
		c.nw.Close(c.node, c.conn)
	}
	c.conn, c.tcpConnected, c.connectSent, c.initialized = 0, false, false, false
	c.stopSelectTimers()
	c.cleanupExits = exit
	pause := cleanupSleep
	if c.goZookeeper() {
		pause = 0 // go-zookeeper fails its requests and reconnects at once.
	}
	c.sleep(phaseCleanup, pause)
}

// finishCleanup fails the pending requests, then the queued ones, each with the code conLossPacket
// gives for the current state; then either notifies the application and reconnects
// (cleanAndNotifyState) or ends the thread.
func (c *Client) finishCleanup() {
	for _, p := range c.pending.takeAll() {
		c.conLossPacket(p)
	}
	// Auth packets get no callback in Java; ours are told after the pending requests.
	for _, p := range c.takeAuthSent() {
		c.conLossPacket(p)
	}
	c.authResends = 0
	if c.goZookeeper() && !c.cleanupExits && c.state.IsAlive() {
		// go-zookeeper fails only the requests it wrote; the others wait in its request channel.
		c.dropPriming()
	} else {
		for _, p := range c.outgoing.takeAll() {
			c.conLossPacket(p)
		}
	}
	if c.state.IsAlive() {
		c.queueState(proto.StateDisconnected)
	}
	if c.cleanupExits {
		c.endSendThread()
		return
	}
	now := c.nowMillis()
	c.lastSend, c.lastHeard = now, now
	c.loopTop(false)
}

func (c *Client) takeAuthSent() []*packet {
	sent := c.authSent
	c.authSent = nil
	return sent
}

// endSendThread is the end of SendThread.run, and of close() if the application is waiting in it.
func (c *Client) endSendThread() {
	c.phase = phaseExited
	c.queueState(proto.StateClosed)
	c.note("send thread exited in state " + c.state.String())
	if !c.disconnecting {
		return
	}
	// ClientCnxn.disconnect: after joining the SendThread, the event of death; then close() returns.
	c.queueDeath()
	result, waiters := c.closeResult, c.closeWaiters
	c.closeWaiters = nil
	for _, cb := range waiters {
		c.queueCallback(func() { cb(result) })
	}
}

// conLossPacket is ClientCnxn.conLossPacket: a request that will never get its reply fails with
// AUTHFAILED, SESSIONEXPIRED or CONNECTIONLOSS according to the state.
func (c *Client) conLossPacket(p *packet) {
	code := proto.ConnectionLoss
	switch {
	case c.goZookeeper():
		// go-zookeeper reports ErrConnectionClosed or ErrClosing, also after Close; this client
		// ends at expiry (see GoZookeeper), after which requests fail as Java's do.
		if c.expired {
			code = proto.SessionExpired
		}
	case c.state == StateAuthFailed:
		code = proto.AuthFailed
	case c.state == StateClosed:
		code = proto.SessionExpired
	}
	if p.authDone != nil {
		done := p.authDone
		c.queueCallback(func() { done(Result{Err: code}) })
		return
	}
	if !p.hasReply {
		return
	}
	p.err = code
	c.finishPacket(p)
}

// Connected implements net.Handler: finishConnect succeeded, so the session handshake starts.
func (d *driver) Connected(conn net.ConnID) {
	c := (*Client)(d)
	c.enter()
	if conn == c.conn && c.phase == phaseSelect && !c.tcpConnected {
		c.tcpConnected = true
		now := c.nowMillis()
		c.lastSend, c.lastHeard = now, now
		c.primeConnection()
		c.loopTop(false)
	}
	c.leave()
}

// Received implements net.Handler: one packet from the server.
func (d *driver) Received(conn net.ConnID, payload []byte) {
	c := (*Client)(d)
	c.enter()
	if conn == c.conn && c.phase == phaseSelect {
		if err := c.readPacket(payload); err != nil {
			c.ioFailure(err.Error())
		} else {
			c.lastHeard = c.nowMillis()
			c.loopTop(false)
		}
	}
	c.leave()
}

// Closed implements net.Handler: the server closed the connection, it was reset, or the dial failed.
func (d *driver) Closed(conn net.ConnID, err error) {
	c := (*Client)(d)
	c.enter()
	if conn == c.conn && c.phase == phaseSelect {
		c.conn = 0 // The network has closed this end already.
		c.ioFailure(err.Error())
	}
	c.leave()
}
