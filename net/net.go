package net

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/internal/slab"
	"github.com/zabsim/zabsim/sim"
)

// Port distinguishes a node's services, as TCP ports do (ZooKeeper: client, quorum and election).
type Port uint16

// ConnID identifies one connection within a network. IDs are issued in increasing order from 1.
type ConnID uint64

// Errors delivered to Handler.Closed, and returned by Send.
var (
	// ErrRefused: the dialed node is down or has no listener on the port (the SYN met an RST).
	ErrRefused = errors.New("net: connection refused")
	// ErrDialTimeout: the handshake did not complete before the dial timeout (a partition or clog).
	ErrDialTimeout = errors.New("net: dial timed out")
	// ErrEOF: the peer closed the connection, or its process crashed and the kernel closed it.
	ErrEOF = errors.New("net: connection closed by peer")
	// ErrReset: the connection was reset (a reset fault, or data sent to an end that is gone).
	ErrReset = errors.New("net: connection reset")
	// ErrTimedOut: the connection stalled behind a partition for longer than TCP retransmits.
	ErrTimedOut = errors.New("net: connection timed out")
	// ErrClosed: Send on a connection whose local end is already closed.
	ErrClosed = errors.New("net: use of closed connection")
)

// Handler receives the events of one end of a connection. Every callback runs inside the
// simulator's event loop, attributed to the node that owns the end.
type Handler interface {
	// Connected tells the dialer that the handshake completed.
	Connected(c ConnID)
	// Received delivers one message. The receiver owns payload: the network copied it on send.
	Received(c ConnID, payload []byte)
	// Closed tells the end that the connection is over: err says why (ErrEOF, ErrReset, ErrRefused,
	// ErrDialTimeout, ErrTimedOut). No callback follows Closed for this end.
	Closed(c ConnID, err error)
}

// Listener accepts connections dialed to a node's port. Accept returns the handler for the new end,
// or nil to refuse (the dialer then sees ErrRefused).
type Listener interface {
	Accept(c ConnID, from sim.NodeID) Handler
}

// Config sets up a network. The zero value is a LAN: 100 µs to 1 ms per message.
type Config struct {
	// LatencyMin and LatencyMax bound each message's one-way latency, drawn uniformly from the
	// world's Chooser in steps of LatencyStep (default 10 µs, which keeps the choice small).
	LatencyMin, LatencyMax, LatencyStep clock.Duration
	// StallBreakAfter is how long a direction may stall behind a partition before the sender's TCP
	// gives up and the sending end sees ErrTimedOut. Default 15 minutes, about Linux's
	// tcp_retries2; ZooKeeper's own timeouts normally act long before.
	StallBreakAfter clock.Duration
	// MaxQueuedPerDirection bounds the messages queued in one direction; past it the run fails with
	// a queue budget outcome, the sign of a sender that never stops.
	MaxQueuedPerDirection int
}

// Config defaults.
const (
	DefaultLatencyMin      = 100 * clock.Microsecond
	DefaultLatencyMax      = clock.Millisecond
	DefaultLatencyStep     = 10 * clock.Microsecond
	DefaultStallBreakAfter = 15 * clock.Minute
	DefaultMaxQueued       = 100_000
)

func (c *Config) applyDefaults() error {
	if c.LatencyMin < 0 || c.LatencyMax < 0 || c.LatencyStep < 0 || c.StallBreakAfter < 0 || c.MaxQueuedPerDirection < 0 {
		return fmt.Errorf("net: negative setting in %+v", *c)
	}
	if c.LatencyMin == 0 && c.LatencyMax == 0 {
		c.LatencyMin, c.LatencyMax = DefaultLatencyMin, DefaultLatencyMax
	}
	if c.LatencyMax < c.LatencyMin {
		return fmt.Errorf("net: latency max %v below min %v", c.LatencyMax, c.LatencyMin)
	}
	if c.LatencyStep == 0 {
		c.LatencyStep = DefaultLatencyStep
	}
	if c.StallBreakAfter == 0 {
		c.StallBreakAfter = DefaultStallBreakAfter
	}
	if c.MaxQueuedPerDirection == 0 {
		c.MaxQueuedPerDirection = DefaultMaxQueued
	}
	return nil
}

// DatagramFaults are faults outside ZAB's fault model: TCP never loses, duplicates or reorders
// bytes inside a live connection. They exist to show what a protocol would do without TCP's
// guarantees, and any run that enables them says so in its outcome.
type DatagramFaults struct {
	// DropPermille, DuplicatePermille and ReorderPermille are per-message probabilities in 1/1000.
	DropPermille, DuplicatePermille, ReorderPermille int
}

type msgKind uint8

const (
	msgData msgKind = iota
	msgSyn
	msgSynAck
	msgFin
	msgRst
)

type message struct {
	payload []byte
	ready   clock.Time
	sent    clock.Time // when Send queued it, for a Delivery observer
	kind    msgKind
	err     error // for msgRst: the error the receiving end will see
}

// direction is one half of a connection: a FIFO queue of messages from one end to the other. At most
// one delivery event per direction is pending, for its head message, which is what makes FIFO order
// hold by construction whatever latencies are drawn.
type direction struct {
	net       *Network
	conn      *conn
	from, to  int // end indexes: 0 is the dialer, 1 the acceptor
	queue     []message
	head      int
	lastReady clock.Time
	scheduled bool
	stalled   bool
	stallSeq  uint64 // identifies a stall episode, for the TCP give-up check
	rstSent   bool
}

type endState uint8

const (
	endConnecting endState = iota // the dialer before the handshake; the acceptor never is
	endOpen
	endClosed
)

type end struct {
	node    sim.NodeID
	handler Handler
	state   endState
}

type conn struct {
	id    ConnID
	port  Port
	ends  [2]end
	dirs  [2]direction // dirs[0] carries dialer->acceptor, dirs[1] acceptor->dialer
	dead  bool
	dialT uint64 // generation of the dial-timeout event, 0 once it no longer matters
}

type listenKey struct {
	node sim.NodeID
	port Port
}

// Network is the simulated network of one world.
type Network struct {
	w   *sim.World
	cfg Config

	nextConn ConnID
	// conns[id] is the connection with that ID until it is retired, then nil. IDs are dense, so a
	// slice serves where a map would cost a hash on every send.
	conns     []*conn
	order     []*conn // live connections in ID order, for deterministic iteration
	deadCount int
	listeners map[listenKey]Listener

	// blocked[from*size+to] is true while messages from 'from' to 'to' cannot pass (a partition).
	blocked []bool
	size    int
	// clogNode and clogPair hold messages until a virtual time (clock.Never: until unclogged).
	clogNode []clock.Time
	// swizzles counts UnclogAll calls: a swizzle still stepping when one comes stops there.
	swizzles   uint64
	clogPair   map[[2]sim.NodeID]clock.Time
	faultCount int // partitions and clogs in force; zero lets the hot path skip every check

	stalled  []*direction
	stallSeq uint64

	dialGen    uint64
	datagram   DatagramFaults
	describers map[Port]func([]byte) string
	// onDeliver, if set, watches every data delivery (see ObserveDeliveries).
	onDeliver func(Delivery)

	// copies holds the network's copies of sent payloads. Each copy is its own bytes, capped at
	// its length, so that the sender and every receiver still share no memory (see package slab).
	copies slab.Bytes
}

// New attaches a network to w and registers it for crash notifications.
func New(w *sim.World, cfg Config) (*Network, error) {
	if err := cfg.applyDefaults(); err != nil {
		return nil, err
	}
	n := &Network{
		w:          w,
		cfg:        cfg,
		conns:      []*conn{nil}, // ID 0 is never issued.
		listeners:  make(map[listenKey]Listener),
		clogPair:   make(map[[2]sim.NodeID]clock.Time),
		describers: make(map[Port]func([]byte) string),
	}
	w.OnCrashObserver(crashObserver{n})
	return n, nil
}

// World returns the world the network belongs to.
func (n *Network) World() *sim.World { return n.w }

// Describe registers a renderer for messages on port, used only when the trace is rendered.
func (n *Network) Describe(port Port, fn func(payload []byte) string) { n.describers[port] = fn }

// Describes reports whether a renderer is registered for port, so that several parties sharing a
// port (the clients of one service) register one only once.
func (n *Network) Describes(port Port) bool {
	_, ok := n.describers[port]
	return ok
}

// Listen makes node accept connections on port until it crashes or calls Unlisten.
func (n *Network) Listen(node sim.NodeID, port Port, l Listener) error {
	if !n.w.IsUp(node) {
		return fmt.Errorf("net: %s cannot listen while crashed", n.w.Name(node))
	}
	key := listenKey{node, port}
	if _, ok := n.listeners[key]; ok {
		return fmt.Errorf("net: %s already listens on port %d", n.w.Name(node), port)
	}
	n.listeners[key] = l
	return nil
}

// Unlisten stops accepting on port. Established connections are not affected.
func (n *Network) Unlisten(node sim.NodeID, port Port) { delete(n.listeners, listenKey{node, port}) }

// Dial opens a connection from node to peer's port. The handshake completes after a round trip
// (Handler.Connected), or fails with ErrRefused or, if it cannot complete within timeout (a
// partition or a clog), ErrDialTimeout. Data sent before Connected waits behind the handshake.
func (n *Network) Dial(from, to sim.NodeID, port Port, timeout clock.Duration, h Handler) (ConnID, error) {
	if !n.w.IsUp(from) {
		return 0, fmt.Errorf("net: %s cannot dial while crashed", n.w.Name(from))
	}
	if to < 0 || int(to) >= n.w.NumNodes() {
		return 0, fmt.Errorf("net: dial to unknown node %d", to)
	}
	if h == nil {
		return 0, errors.New("net: dial with a nil handler")
	}
	if timeout <= 0 {
		return 0, fmt.Errorf("net: dial timeout %v must be positive", timeout)
	}
	n.nextConn++
	c := &conn{id: n.nextConn, port: port}
	c.ends[0] = end{node: from, handler: h, state: endConnecting}
	c.ends[1] = end{node: to, state: endConnecting}
	for i := range c.dirs {
		c.dirs[i] = direction{net: n, conn: c, from: i, to: 1 - i}
	}
	n.conns = append(n.conns, c)
	if c.id != ConnID(len(n.conns)-1) {
		panic(fmt.Sprintf("net: connection %d stored at index %d", c.id, len(n.conns)-1))
	}
	n.order = append(n.order, c)
	n.ensure(int(max(from, to)) + 1)
	if n.w.Tracing() {
		n.w.TraceEvent(from, sim.KindDial, uint64(c.id), uint64(port), nil, fmt.Sprintf("conn=%d %s->%s:%d", c.id, n.w.Name(from), n.w.Name(to), port))
	} else {
		n.w.TraceEvent(from, sim.KindDial, uint64(c.id), uint64(port), nil, "")
	}
	n.enqueue(&c.dirs[0], message{kind: msgSyn})
	n.dialGen++
	c.dialT = n.dialGen
	n.w.Post(sim.NoNode, n.w.Now().Add(timeout), dialTimeout{c: c, gen: c.dialT}, 0)
	return c.id, nil
}

// dialTimeout fails a dial whose handshake has not completed by its deadline.
type dialTimeout struct {
	c   *conn
	gen uint64
}

func (d dialTimeout) Fire(uint64) {
	c := d.c
	if c.dialT != d.gen || c.ends[0].state != endConnecting {
		return
	}
	c.dialT = 0
	c.dirs[0].net.closeEnd(c, 0, ErrDialTimeout, true)
}

// Send queues payload on c from node's end. The payload is copied, so the caller may reuse it.
func (n *Network) Send(node sim.NodeID, c ConnID, payload []byte) error {
	cn, side, err := n.endOf(node, c)
	if err != nil {
		return err
	}
	d := &cn.dirs[side]
	if n.datagram != (DatagramFaults{}) {
		return n.sendDatagram(d, payload)
	}
	n.enqueue(d, message{kind: msgData, payload: n.copies.Copy(payload)})
	return nil
}

// Close closes node's end of c. The peer sees ErrEOF after every message already sent; messages the
// peer sends afterwards are discarded and answered with a reset. Closing twice does nothing.
func (n *Network) Close(node sim.NodeID, c ConnID) {
	cn, side, err := n.endOf(node, c)
	if err != nil {
		return
	}
	n.closeEnd(cn, side, nil, false)
}

// Reset breaks c at once, as a middlebox or a fault would: queued data in both directions is lost
// and each end that is still open sees ErrReset after a one-way latency.
func (n *Network) Reset(c ConnID) {
	cn := n.lookup(c)
	if cn == nil || cn.dead {
		return
	}
	n.w.TraceEvent(sim.NoNode, sim.KindReset, uint64(c), 0, nil, n.detail(func() string { return fmt.Sprintf("conn=%d", c) }))
	for i := range cn.dirs {
		d := &cn.dirs[i]
		d.dropQueued()
		if cn.ends[d.to].state != endClosed {
			n.enqueue(d, message{kind: msgRst, err: ErrReset})
		}
	}
	cn.dialT = 0
}

// Conns returns the IDs of node's live connection ends, in ID order.
func (n *Network) Conns(node sim.NodeID) []ConnID {
	var out []ConnID
	for _, c := range n.order {
		if c.dead {
			continue
		}
		for i := range c.ends {
			if c.ends[i].node == node && c.ends[i].state != endClosed {
				out = append(out, c.id)
				break
			}
		}
	}
	return out
}

// Peer returns the node at the other end of c from node's point of view.
func (n *Network) Peer(node sim.NodeID, c ConnID) (sim.NodeID, bool) {
	cn, side, err := n.endOf(node, c)
	if err != nil {
		return sim.NoNode, false
	}
	return cn.ends[1-side].node, true
}

// lookup returns the connection with ID c, or nil if there is none (never issued, or retired).
func (n *Network) lookup(c ConnID) *conn {
	if c >= ConnID(len(n.conns)) {
		return nil
	}
	return n.conns[c]
}

func (n *Network) endOf(node sim.NodeID, c ConnID) (*conn, int, error) {
	cn := n.lookup(c)
	if cn == nil || cn.dead {
		return nil, 0, ErrClosed
	}
	for side := range cn.ends {
		if cn.ends[side].node == node && cn.ends[side].state != endClosed {
			return cn, side, nil
		}
	}
	return nil, 0, ErrClosed
}

// closeEnd closes one end. If notify, its handler hears err; a FIN follows the data already queued
// towards the peer unless the end never got past the handshake.
func (n *Network) closeEnd(c *conn, side int, err error, notify bool) {
	e := &c.ends[side]
	if e.state == endClosed {
		return
	}
	wasConnecting := e.state == endConnecting
	e.state = endClosed
	n.w.TraceEvent(e.node, sim.KindClose, uint64(c.id), 0, nil, n.detail(func() string {
		return fmt.Sprintf("conn=%d %v", c.id, errOrLocal(err))
	}))
	if notify && e.handler != nil {
		e.handler.Closed(c.id, err)
	}
	c.dirs[1-side].dropQueued() // Nothing more will be read on this end.
	if !(side == 0 && wasConnecting && c.ends[1].state == endConnecting) {
		n.enqueue(&c.dirs[side], message{kind: msgFin})
	} else {
		c.dirs[side].dropQueued()
	}
	n.maybeRetire(c)
}

func errOrLocal(err error) any {
	if err == nil {
		return "closed locally"
	}
	return err
}

// maybeRetire forgets a connection once both ends are closed and nothing is in flight.
func (n *Network) maybeRetire(c *conn) {
	if c.dead || c.ends[0].state != endClosed || c.ends[1].state != endClosed {
		return
	}
	for i := range c.dirs {
		if c.dirs[i].pending() > 0 || c.dirs[i].scheduled {
			return
		}
	}
	c.dead = true
	n.conns[c.id] = nil
	n.deadCount++
	if n.deadCount > 64 && n.deadCount > len(n.order)/2 {
		n.order = slices.DeleteFunc(n.order, func(c *conn) bool { return c.dead })
		n.deadCount = 0
	}
}

// nodeCrashed breaks every connection of a crashed node. The kernel of a crashed process closes its
// sockets: data already sent still reaches the peer, followed by a FIN; data in flight towards the
// crashed process is lost. Its listeners vanish with it.
// crashObserver tells the network of crashes; a value rather than the method value n.nodeCrashed,
// so that the world holds no closure and can be copied (package modelcheck).
type crashObserver struct{ n *Network }

func (o crashObserver) NodeCrashed(node sim.NodeID) { o.n.nodeCrashed(node) }

func (n *Network) nodeCrashed(node sim.NodeID) {
	for key := range n.listeners { // determinism:ok only deletes; order cannot matter
		if key.node == node {
			delete(n.listeners, key)
		}
	}
	for _, c := range slices.Clone(n.order) {
		if c.dead {
			continue
		}
		for side := range c.ends {
			if c.ends[side].node == node && c.ends[side].state != endClosed {
				n.closeEnd(c, side, nil, false)
			}
		}
	}
}

// --- Message flow ---------------------------------------------------------------------------------

func (d *direction) pending() int { return len(d.queue) - d.head }

func (d *direction) dropQueued() {
	for i := d.head; i < len(d.queue); i++ {
		d.queue[i] = message{}
	}
	d.queue = d.queue[:0]
	d.head = 0
}

func (n *Network) latency() clock.Duration {
	return n.w.Between(n.cfg.LatencyMin, n.cfg.LatencyMax, n.cfg.LatencyStep)
}

// enqueue appends m to d and schedules delivery of the head if none is pending. The ready time is
// never earlier than the previous message's, so latencies never reorder a direction.
func (n *Network) enqueue(d *direction, m message) {
	if d.pending() >= n.cfg.MaxQueuedPerDirection {
		n.w.Fail(fmt.Errorf("net: %d messages queued on conn %d from %s, over the limit of %d",
			d.pending(), d.conn.id, n.w.Name(d.conn.ends[d.from].node), n.cfg.MaxQueuedPerDirection))
		return
	}
	m.sent = n.w.Now()
	m.ready = max(m.sent.Add(n.latency()), d.lastReady)
	d.lastReady = m.ready
	if d.head > 0 && d.head == len(d.queue) {
		d.queue = d.queue[:0]
		d.head = 0
	}
	d.queue = append(d.queue, m)
	if !d.scheduled && !d.stalled {
		d.schedule(m.ready)
	}
}

func (d *direction) schedule(at clock.Time) {
	d.scheduled = true
	d.net.w.Post(d.conn.ends[d.to].node, at, d, 0)
}

// Fire delivers the head message of the direction (it implements sim.Target).
func (d *direction) Fire(uint64) {
	n := d.net
	d.scheduled = false
	if d.pending() == 0 {
		n.maybeRetire(d.conn)
		return
	}
	c := d.conn
	if n.faultCount > 0 && n.headBlocked(d) {
		n.stall(d)
		return
	}
	m := d.queue[d.head]
	if now := n.w.Now(); m.ready > now {
		// The queue changed under a pending event (a reset dropped it, or a stall ended); the head
		// keeps its own delivery time.
		d.schedule(m.ready)
		return
	}
	d.queue[d.head] = message{}
	d.head++
	n.deliver(d, m)
	if d.pending() > 0 && !d.scheduled && !d.stalled {
		d.schedule(max(d.queue[d.head].ready, n.w.Now()))
	} else {
		n.maybeRetire(c)
	}
}

func (n *Network) deliver(d *direction, m message) {
	c := d.conn
	dst := &c.ends[d.to]
	switch m.kind {
	case msgData:
		if dst.state == endClosed {
			n.answerWithReset(d)
			return
		}
		if n.w.Tracing() {
			n.w.TraceEvent(dst.node, sim.KindDeliver, uint64(c.id), uint64(len(m.payload)), m.payload, n.describe(d, m.payload))
		} else {
			n.w.TraceEvent(dst.node, sim.KindDeliver, uint64(c.id), uint64(len(m.payload)), m.payload, "")
		}
		if n.onDeliver != nil {
			n.observeDelivery(d, m)
		}
		dst.handler.Received(c.id, m.payload)
	case msgSyn:
		n.acceptSyn(c)
	case msgSynAck:
		if dst.state != endConnecting {
			n.answerWithReset(d) // The dialer gave up (timeout or close) before the handshake completed.
			return
		}
		dst.state = endOpen
		c.dialT = 0
		n.w.TraceEvent(dst.node, sim.KindConnected, uint64(c.id), 0, nil, n.detail(func() string {
			return fmt.Sprintf("conn=%d %s->%s:%d", c.id, n.w.Name(dst.node), n.w.Name(c.ends[1].node), c.port)
		}))
		dst.handler.Connected(c.id)
	case msgFin:
		if dst.state != endClosed {
			n.closeEnd(c, d.to, ErrEOF, true)
		}
	case msgRst:
		if dst.state != endClosed {
			err := m.err
			if dst.state == endConnecting && err == ErrReset {
				err = ErrRefused
			}
			c.dirs[d.from].dropQueued()
			dst.state = endClosed
			c.dialT = 0
			n.w.TraceEvent(dst.node, sim.KindClose, uint64(c.id), 1, nil, n.detail(func() string { return fmt.Sprintf("conn=%d %v", c.id, err) }))
			if dst.handler != nil {
				dst.handler.Closed(c.id, err)
			}
			n.maybeRetire(c)
		}
	}
}

// acceptSyn completes the accepting half of a handshake, or refuses it. The SYN-ACK is queued before
// the listener runs, so that anything the new handler sends from inside Accept follows it.
func (n *Network) acceptSyn(c *conn) {
	acceptor := &c.ends[1]
	back := &c.dirs[1]
	l, ok := n.listeners[listenKey{acceptor.node, c.port}]
	if ok && n.w.IsUp(acceptor.node) {
		acceptor.state = endOpen
		n.enqueue(back, message{kind: msgSynAck})
		if h := l.Accept(c.id, c.ends[0].node); h != nil {
			acceptor.handler = h
			n.w.TraceEvent(acceptor.node, sim.KindAccept, uint64(c.id), uint64(c.port), nil, n.detail(func() string {
				return fmt.Sprintf("conn=%d %s<-%s:%d", c.id, n.w.Name(acceptor.node), n.w.Name(c.ends[0].node), c.port)
			}))
			return
		}
		back.dropQueued()
	}
	acceptor.state = endClosed
	c.dirs[0].rstSent = true // This RST answers everything the dialer queued behind its SYN.
	n.enqueue(back, message{kind: msgRst, err: ErrRefused})
}

// answerWithReset sends one RST back when data reaches an end that is gone, as a TCP stack does.
func (n *Network) answerWithReset(d *direction) {
	if d.rstSent {
		return
	}
	d.rstSent = true
	back := &d.conn.dirs[d.to]
	if d.conn.ends[d.from].state != endClosed {
		n.enqueue(back, message{kind: msgRst, err: ErrReset})
	}
}

// Delivery is one data message as a Delivery observer sees it: who sent it when, and who received
// it when, with the port's describer's label (e.g. "PROPOSAL zxid=0x2:0x5").
type Delivery struct {
	Conn      ConnID
	From, To  sim.NodeID
	Sent      clock.Time
	Delivered clock.Time
	Size      int
	Label     string
}

// ObserveDeliveries calls fn for every data message delivered, as it is delivered. It only
// watches: it draws no choice, schedules no event and writes no trace record, so that a run
// observed is the run unobserved. A space-time diagram of a run is drawn from it.
func (n *Network) ObserveDeliveries(fn func(Delivery)) { n.onDeliver = fn }

func (n *Network) observeDelivery(d *direction, m message) {
	c := d.conn
	label := ""
	if fn := n.describers[c.port]; fn != nil {
		label = fn(m.payload)
	}
	n.onDeliver(Delivery{Conn: c.id, From: c.ends[d.from].node, To: c.ends[d.to].node, Sent: m.sent,
		Delivered: n.w.Now(), Size: len(m.payload), Label: label})
}

func (n *Network) detail(fn func() string) string {
	if !n.w.Tracing() {
		return ""
	}
	return fn()
}

func (n *Network) describe(d *direction, payload []byte) string {
	c := d.conn
	s := fmt.Sprintf("conn=%d %s->%s %dB", c.id, n.w.Name(c.ends[d.from].node), n.w.Name(c.ends[d.to].node), len(payload))
	if fn := n.describers[c.port]; fn != nil {
		s += " " + fn(payload)
	}
	return s
}
