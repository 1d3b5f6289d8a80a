package client

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// DefaultPort is the client port of a ZooKeeper server in the usual zoo.cfg.
const DefaultPort net.Port = 2181

// Local errors: the request is refused before anything is sent, as the Java client refuses it by
// throwing from the API call. None of them is a proto.Code, so a checker can tell "never sent" from
// every answer a server can give.
var (
	// ErrInvalidPath: PathUtils.validatePath refused the path (IllegalArgumentException in Java). The
	// error also wraps the *proto.PathError with the broken rule.
	ErrInvalidPath = errors.New("client: invalid path")
	// ErrInvalidArgument: another argument Java refuses before sending (a create mode or TTL that
	// EphemeralType.validateTTL rejects, a nil watcher where one is required, a multi mixing reads and
	// writes, an unknown watcher type).
	ErrInvalidArgument = errors.New("client: invalid argument")
	// ErrCrashed: the client's process has crashed since the client was made; its memory is gone,
	// and a restarted process must make a new client.
	ErrCrashed = errors.New("client: the client's process crashed")
	// ErrQueueFull: MaxQueuedRequests requests are already waiting to be sent. Java's queue is
	// unbounded; ours has a limit so that a runaway workload ends the run instead of eating memory.
	ErrQueueFull = errors.New("client: too many requests waiting to be sent")
	// ErrRequestTooLarge: with Emulate GoZookeeper, the request does not fit go-zookeeper's fixed
	// send buffer (ErrShortBuffer there). The Java client has no such limit.
	ErrRequestTooLarge = errors.New("client: request larger than go-zookeeper's send buffer")
)

// Config describes a client, as the arguments of `new ZooKeeper(connectString, sessionTimeout,
// watcher[, sessionId, sessionPasswd])` do.
type Config struct {
	// Servers is the connect string: the server nodes, in the order given. The client shuffles them
	// once, as StaticHostProvider does. Duplicates are allowed, as in Java.
	Servers []sim.NodeID
	// Port is the servers' client port; zero means DefaultPort.
	Port net.Port
	// SessionTimeout is the requested session timeout, a positive whole number of milliseconds.
	SessionTimeout clock.Duration
	// Name identifies the client in trace notes; empty means the node's name.
	Name string
	// SessionID and Password resume an existing session, as the Java constructor that takes them
	// does (which also sets seenRwServerBefore). Zero means a new session. A nil Password means the
	// 16 zero bytes Java sends for a new session.
	SessionID int64
	Password  []byte
	// DisableAutoWatchReset is ZKClientConfig's zookeeper.disableAutoWatchReset: watches are not
	// re-registered after a reconnect, and a Disconnected or Expired event clears the one-shot ones.
	DisableAutoWatchReset bool
	// MaxQueuedRequests bounds the requests waiting to be sent; zero means DefaultMaxQueuedRequests.
	MaxQueuedRequests int
	// MaxPacketBytes is the client's jute.maxbuffer (the ZKClientConfig property "jute.maxbuffer"):
	// a reply packet longer than this, after its length prefix, drops the connection, as
	// ClientCnxnSocket.readLength refuses it. Zero means proto.MaxBufferBytes. It is taken to be set
	// as the system property, which ZKClientConfig reads by default and which also sets the longest
	// field BinaryInputArchive decodes: MaxPacketBytes plus the default extra size, MaxPacketBytes
	// again (at least 1024). With Emulate GoZookeeper it is go-zookeeper's WithMaxBufferSize
	// instead, and zero means no limit, which is go-zookeeper's default.
	MaxPacketBytes int
	// Emulate chooses the client library whose client-side behaviour the client reproduces: Java
	// (the zero value) or GoZookeeper. See Library.
	Emulate Library
	// FirstXid is the xid of the first request; zero means 1, where every client library starts.
	// It is for harness tools that resume another client's session, such as a forced-expiry
	// killer: a learner's CommitProcessor matches a commit to its oldest pending write by session
	// and cxid alone, so two connections of one session whose xids collide answer each other's
	// writes. Real applications never share a session, and start at 1.
	FirstXid int32
}

// DefaultMaxQueuedRequests is the default bound on requests waiting to be sent.
const DefaultMaxQueuedRequests = 1 << 20

// State is the client's connection state, ZooKeeper.States in Java.
type State int32

// The states of ZooKeeper.States, in their Java order. StateAssociating and StateNotConnected exist in
// Java's enum but the 3.8.0 client never enters them after start.
const (
	StateConnecting State = iota
	StateAssociating
	StateConnected
	StateConnectedReadOnly
	StateClosed
	StateAuthFailed
	StateNotConnected
)

var stateNames = [...]string{"CONNECTING", "ASSOCIATING", "CONNECTED", "CONNECTEDREADONLY", "CLOSED", "AUTH_FAILED", "NOT_CONNECTED"}

// String returns the Java enum name, such as CONNECTED.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// IsAlive reports whether the client may still connect: every state but CLOSED and AUTH_FAILED.
func (s State) IsAlive() bool { return s != StateClosed && s != StateAuthFailed }

// IsConnected reports whether a session is established with a server (read-only or not).
func (s State) IsConnected() bool { return s == StateConnected || s == StateConnectedReadOnly }

// Client is one simulated ZooKeeper client: ClientCnxn with its SendThread and EventThread, and the
// ZooKeeper handle on top. Its methods may be called from any event of the world (or between runs),
// on the goroutine that owns the world. The client runs its protocol from network and timer events
// of its node, and delivers callbacks and watch events from those events too, never from inside the
// call that issued a request.
type Client struct {
	w           *sim.World
	nw          *net.Network
	node        sim.NodeID
	incarnation uint32
	name        string
	port        net.Port
	maxQueued   int
	emulate     Library
	// maxPacket is the longest reply packet accepted; 0 means no limit (go-zookeeper's default).
	maxPacket int
	// decoder reads replies (readResponse), so that a reply costs no decoder of its own;
	// decoding marks it in use.
	decoder  proto.Decoder
	decoding bool

	hosts   hostProvider
	watches watchManager
	events  eventThread

	// Session, as ClientCnxn keeps it across connections.
	state              State
	closing            bool
	disconnecting      bool // close() has called disconnect(): the application waits for the SendThread
	sessionTimeout     int32
	negotiatedTimeout  int32
	readTimeout        int64 // milliseconds
	connectTimeout     int64 // milliseconds
	sessionID          int64
	password           []byte
	lastZxid           int64
	seenRwServerBefore bool
	isFirstConnect     bool
	xid                int32
	goXid              uint32 // go-zookeeper's xid counter, which wraps through 0 (see nextXid)
	expired            bool   // the server said the session expired
	auth               []authData
	closeWaiters       []func(Result)
	closeResult        Result

	outgoing packetQueue
	pending  packetQueue
	authSent []*packet // Java: auth packets written on this connection, oldest first (see AddAuth)
	// authResends counts the credentials go-zookeeper re-sent on this connection that await their
	// reply; it writes nothing else meanwhile (resendZkAuth).
	authResends int

	// The socket: one connection attempt at a time, as ClientCnxnSocketNIO has one sockKey.
	server       sim.NodeID
	conn         net.ConnID
	tcpConnected bool
	connectSent  bool
	initialized  bool
	lastHeard    int64 // milliseconds of the node's monotonic clock
	lastSend     int64

	// The SendThread's own progress: which wait it is in, and its timers.
	phase        phase
	cleanupExits bool
	selectTimer  sim.TimerID
	selectTarget clock.Time
	confirmTimer sim.TimerID
	sleepTimer   sim.TimerID
	drainTimer   sim.TimerID
	depth        int // nesting of entries into the client; the outermost handler delivers as it leaves
	encoder      proto.Encoder
}

type authData struct {
	scheme string
	data   []byte
}

// New starts a client on node, as `new ZooKeeper(...)` does: it validates the configuration, shuffles
// the servers and dials the first one at once. watcher is the default watcher; it receives every
// connection state change and the events of watches registered with it. It may be nil.
func New(w *sim.World, nw *net.Network, node sim.NodeID, cfg Config, watcher Watcher) (*Client, error) {
	if err := validateConfig(w, nw, node, &cfg); err != nil {
		return nil, err
	}
	if err := checkWatcher(watcher, false); err != nil {
		return nil, err
	}
	timeout := int32(cfg.SessionTimeout / clock.Millisecond)
	c := &Client{
		w: w, nw: nw, node: node, incarnation: w.Incarnation(node),
		name: cfg.Name, port: cfg.Port, maxQueued: cfg.MaxQueuedRequests,
		emulate: cfg.Emulate, maxPacket: cfg.MaxPacketBytes,
		hosts: newHostProvider(w, cfg.Servers),
		watches: watchManager{defaultWatcher: watcher, disableAutoWatchReset: cfg.DisableAutoWatchReset,
			goZookeeper: cfg.Emulate == GoZookeeper},
		events:             eventThread{sessionState: proto.StateDisconnected},
		state:              StateConnecting,
		sessionTimeout:     timeout,
		readTimeout:        int64(timeout) * 2 / 3,
		connectTimeout:     int64(timeout) / int64(len(cfg.Servers)),
		sessionID:          cfg.SessionID,
		password:           slices.Clone(cfg.Password),
		seenRwServerBefore: cfg.SessionID != 0,
		isFirstConnect:     true,
		xid:                max(cfg.FirstXid, 1),
		goXid:              uint32(max(cfg.FirstXid, 1) - 1),
		server:             sim.NoNode,
	}
	if c.password == nil {
		c.password = make([]byte, 16)
	}
	if !nw.Describes(c.port) {
		// Another client, or a test, may have registered a renderer for the port already.
		nw.Describe(c.port, DescribePacket)
	}
	c.note("start session=" + hex(c.sessionID) + " timeout=" + strconv.Itoa(int(timeout)) + "ms")
	c.enter()
	c.startSendThread()
	c.leave()
	return c, nil
}

func validateConfig(w *sim.World, nw *net.Network, node sim.NodeID, cfg *Config) error {
	switch {
	case w == nil || nw == nil:
		return fmt.Errorf("%w: a client needs a world and a network", ErrInvalidArgument)
	case node < 0 || int(node) >= w.NumNodes():
		return fmt.Errorf("%w: unknown node %d", ErrInvalidArgument, node)
	case !w.IsUp(node):
		return fmt.Errorf("%w: node %s is crashed", ErrInvalidArgument, w.Name(node))
	case len(cfg.Servers) == 0:
		return fmt.Errorf("%w: A HostProvider may not be empty!", ErrInvalidArgument)
	case cfg.SessionTimeout < clock.Millisecond || cfg.SessionTimeout%clock.Millisecond != 0 ||
		cfg.SessionTimeout/clock.Millisecond > math.MaxInt32:
		return fmt.Errorf("%w: session timeout %v is not a positive whole number of milliseconds", ErrInvalidArgument, cfg.SessionTimeout)
	case cfg.MaxQueuedRequests < 0:
		return fmt.Errorf("%w: negative MaxQueuedRequests %d", ErrInvalidArgument, cfg.MaxQueuedRequests)
	case cfg.MaxPacketBytes < 0:
		return fmt.Errorf("%w: negative MaxPacketBytes %d", ErrInvalidArgument, cfg.MaxPacketBytes)
	case cfg.FirstXid < 0:
		return fmt.Errorf("%w: negative FirstXid %d", ErrInvalidArgument, cfg.FirstXid)
	case cfg.Emulate != Java && cfg.Emulate != GoZookeeper:
		return fmt.Errorf("%w: unknown client library %d", ErrInvalidArgument, cfg.Emulate)
	case cfg.Emulate == GoZookeeper && cfg.DisableAutoWatchReset:
		return fmt.Errorf("%w: go-zookeeper has no zookeeper.disableAutoWatchReset", ErrInvalidArgument)
	}
	for _, s := range cfg.Servers {
		if s < 0 || int(s) >= w.NumNodes() {
			return fmt.Errorf("%w: unknown server node %d", ErrInvalidArgument, s)
		}
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultPort
	}
	if cfg.Name == "" {
		cfg.Name = w.Name(node)
	}
	if cfg.MaxQueuedRequests == 0 {
		cfg.MaxQueuedRequests = DefaultMaxQueuedRequests
	}
	if cfg.MaxPacketBytes == 0 && cfg.Emulate == Java {
		cfg.MaxPacketBytes = proto.MaxBufferBytes
	}
	return nil
}

// checkWatcher refuses watchers that cannot be compared: the watch tables are sets keyed by watcher
// identity, as Java's HashSet<Watcher> is, and Go panics when comparing, say, two func values.
func checkWatcher(w Watcher, required bool) error {
	if w == nil {
		if required {
			return fmt.Errorf("%w: Invalid Watcher, shouldn't be null!", ErrInvalidArgument)
		}
		return nil
	}
	if !reflect.ValueOf(w).Comparable() {
		return fmt.Errorf("%w: watcher of type %T is not comparable; use a pointer or WatcherFunc", ErrInvalidArgument, w)
	}
	return nil
}

// State returns the connection state, ZooKeeper.getState().
func (c *Client) State() State { return c.state }

// SessionID returns the session id, 0 before the first session is established.
func (c *Client) SessionID() int64 { return c.sessionID }

// Password returns a copy of the session password, which together with SessionID lets a restarted
// process resume the session.
func (c *Client) Password() []byte { return slices.Clone(c.password) }

// NegotiatedTimeout returns the session timeout the server granted, 0 before the first session.
func (c *Client) NegotiatedTimeout() clock.Duration {
	return clock.Duration(c.negotiatedTimeout) * clock.Millisecond
}

// LastZxid returns the highest zxid seen in a reply header, which the client sends as lastZxidSeen
// when it reconnects.
func (c *Client) LastZxid() int64 { return c.lastZxid }

// Node returns the node the client runs on.
func (c *Client) Node() sim.NodeID { return c.node }

// Server returns the node of the server the client is connected or connecting to (the last one it
// tried), 0 before its first attempt. It reads the client's state only, for a harness's coverage.
func (c *Client) Server() sim.NodeID { return c.server }

// DefaultWatcher returns the watcher given to New. Passing it where a Watcher is expected is the
// equivalent of Java's watch=true.
func (c *Client) DefaultWatcher() Watcher { return c.watches.defaultWatcher }

// crashed reports whether the client's process has crashed since the client was made. Its timers and
// connections died with it; the object only remains because the application may still hold it.
func (c *Client) crashed() bool {
	return !c.w.IsUp(c.node) || c.w.Incarnation(c.node) != c.incarnation
}

// enter and leave bracket every entry into the client from the simulator (network and timer events)
// and every API call. The outermost leave delivers what the EventThread has queued: inside a
// network or timer event at once, after the client's state is consistent again; after an API call
// made from outside such an event through a timer of its own, so that a callback never runs before
// the call that caused it has returned, as with Java's separate EventThread.
func (c *Client) enter() { c.depth++ }

func (c *Client) leave() {
	if c.depth <= 0 {
		panic(fmt.Sprintf("client %s: leave without enter", c.name))
	}
	if c.depth == 1 {
		c.drain()
	}
	c.depth--
}

// leaveAPI ends an API call: callbacks it queued wait for a timer of their own.
func (c *Client) leaveAPI() {
	c.depth--
	if c.depth == 0 && c.events.pending() && c.drainTimer == 0 {
		c.drainTimer = c.w.SetTimer(c.node, 0, (*driver)(c), tagDrain)
	}
}

// note records a state change of the client in the trace. Notes are rare (connections, state
// changes), so building their text always is cheap, and it keeps the trace hash independent of
// whether the trace is rendered.
func (c *Client) note(detail string) {
	c.w.Note(c.node, "client", "%s", c.name+" "+detail)
}

func (c *Client) setState(s State) {
	if c.state == s {
		return
	}
	c.state = s
	c.note("state " + s.String())
}

func hex(v int64) string { return "0x" + strconv.FormatUint(uint64(v), 16) }

// nowMillis is Time.currentElapsedTime(): the node's monotonic clock in whole milliseconds.
func (c *Client) nowMillis() int64 { return int64(c.w.Elapsed(c.node)) / int64(clock.Millisecond) }
