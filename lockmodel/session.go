package lockmodel

import (
	"errors"
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// ConnectionState is Curator's ConnectionState, as its ConnectionStateManager derives it from the
// ZooKeeper client's state events.
type ConnectionState uint8

// The connection states.
const (
	// StateLatent: the session has not connected yet.
	StateLatent ConnectionState = iota
	// StateConnected: the first connection (SyncConnected).
	StateConnected
	// StateSuspended: the connection was lost (Disconnected); the session may live on. A holder
	// cannot be sure it still holds its lock and must stop using the resource.
	StateSuspended
	// StateReconnected: connected again after a suspension, with the same session.
	StateReconnected
	// StateLost: the session expired (Expired) or the client was closed: every ephemeral node it
	// owned is gone, and with them its locks.
	StateLost
)

var connectionStateNames = [...]string{"LATENT", "CONNECTED", "SUSPENDED", "RECONNECTED", "LOST"}

func (s ConnectionState) String() string {
	if int(s) < len(connectionStateNames) {
		return connectionStateNames[s]
	}
	return fmt.Sprintf("ConnectionState(%d)", uint8(s))
}

// IsConnected reports whether the state is CONNECTED or RECONNECTED (ConnectionState.isConnected).
func (s ConnectionState) IsConnected() bool { return s == StateConnected || s == StateReconnected }

// Config configures a Session.
type Config struct {
	// Name identifies the application in events, such as "c3".
	Name string
	// Retry is the retry policy of every operation; the zero value means DefaultRetryPolicy.
	Retry RetryPolicy
	// ConnectionTimeout is how long an operation waits for a connection before it is tried anyway
	// (CuratorZookeeperClient's connectionTimeoutMs, default 15 s).
	ConnectionTimeout clock.Duration
	// Bugs re-introduces recipe bugs.
	Bugs Bugs
	// SelfTests switches on recipe self-tests: deliberate faults that show a checker firing.
	SelfTests SelfTests
	// Observer, if set, hears every recipe event.
	Observer Observer
	// Tracer, if set, hears every request and watch event.
	Tracer Tracer
}

// DefaultConnectionTimeout is Curator's default connection timeout.
const DefaultConnectionTimeout = 15 * clock.Second

// Bounds on what a Session keeps, which only a recipe bug could exceed.
const (
	maxRegistrations  = 1 << 14
	maxWaiting        = 1 << 12
	maxListeners      = 1 << 10
	maxBackgroundRuns = 64 // rounds of a guaranteed delete's background retries
)

// Session is what Curator's CuratorFramework is to its recipes, for one ZooKeeper session: it
// tracks the connection state, runs operations with the retry policy, and dispatches watch events.
// It uses one watcher for every recipe watch, so that the client registers a path once per table
// (as the client-visible checkers expect of an application), and passes each event to the recipes
// that asked for it.
//
// The ZooKeeper client's default watcher belongs to the application, which must pass it every state
// event (Type proto.EventNone) through ConnectionEvent.
type Session struct {
	w    *sim.World
	c    *client.Client
	node sim.NodeID
	inc  uint32
	cfg  Config

	state     ConnectionState
	listeners []listener
	nextID    int
	watches   []registration
	dispatch  *dispatcher
	waiting   []*connectWaiter
}

type listener struct {
	id int
	fn func(ConnectionState)
}

// NewSession wraps a client. The client's current state decides the initial connection state.
func NewSession(w *sim.World, c *client.Client, cfg Config) (*Session, error) {
	if w == nil || c == nil {
		return nil, errors.New("lockmodel: a session needs a world and a client")
	}
	if cfg.Retry == (RetryPolicy{}) {
		cfg.Retry = DefaultRetryPolicy
	}
	if err := cfg.Retry.validate(); err != nil {
		return nil, err
	}
	if cfg.ConnectionTimeout == 0 {
		cfg.ConnectionTimeout = DefaultConnectionTimeout
	}
	if cfg.ConnectionTimeout < 0 {
		return nil, fmt.Errorf("lockmodel: negative connection timeout %v", cfg.ConnectionTimeout)
	}
	if cfg.Name == "" {
		cfg.Name = w.Name(c.Node())
	}
	s := &Session{w: w, c: c, node: c.Node(), inc: w.Incarnation(c.Node()), cfg: cfg}
	s.dispatch = &dispatcher{s: s}
	switch st := c.State(); {
	case !st.IsAlive():
		s.state = StateLost
	case st.IsConnected() && c.SessionID() != 0:
		s.state = StateConnected
	}
	return s, nil
}

// Client returns the ZooKeeper client.
func (s *Session) Client() *client.Client { return s.c }

// Name returns the application's name.
func (s *Session) Name() string { return s.cfg.Name }

// State returns the connection state.
func (s *Session) State() ConnectionState { return s.state }

// SessionID returns the ZooKeeper session id (0 before the first connection).
func (s *Session) SessionID() int64 { return s.c.SessionID() }

// Bugs returns the recipe bugs switched on.
func (s *Session) Bugs() Bugs { return s.cfg.Bugs }

// alive reports whether the process that runs the session still runs the incarnation that made it.
func (s *Session) alive() bool { return s.w.IsUp(s.node) && s.w.Incarnation(s.node) == s.inc }

// ConnectionEvent takes a state event of the client's default watcher (other events are ignored)
// and moves the connection state as Curator's ConnectionStateManager does, telling the listeners.
func (s *Session) ConnectionEvent(e client.Event) {
	if e.Type != proto.EventNone || s.state == StateLost {
		return
	}
	next := s.state
	switch e.State {
	case proto.StateSyncConnected, proto.StateConnectedReadOnly:
		if s.state.IsConnected() {
			return // A session made on a connected client hears of that connection again.
		}
		next = StateConnected
		if s.state != StateLatent {
			next = StateReconnected
		}
	case proto.StateDisconnected:
		if s.state != StateLatent {
			next = StateSuspended
		}
	case proto.StateExpired, proto.StateClosed, proto.StateAuthFailed:
		next = StateLost
	}
	if next == s.state {
		return
	}
	s.state = next
	s.w.Note(s.node, "lock", "%s session 0x%x %s", s.cfg.Name, s.c.SessionID(), next)
	if next.IsConnected() || next == StateLost {
		s.releaseWaiting()
	}
	for _, l := range append([]listener(nil), s.listeners...) {
		l.fn(next)
	}
}

// addListener registers fn for connection state changes and returns its id.
func (s *Session) addListener(fn func(ConnectionState)) int {
	if len(s.listeners) >= maxListeners {
		panic(fmt.Sprintf("lockmodel: %s has %d connection listeners: a recipe leaks them", s.cfg.Name, len(s.listeners)))
	}
	s.nextID++
	s.listeners = append(s.listeners, listener{id: s.nextID, fn: fn})
	return s.nextID
}

func (s *Session) removeListener(id int) {
	for i, l := range s.listeners {
		if l.id == id {
			s.listeners = append(s.listeners[:i], s.listeners[i+1:]...)
			return
		}
	}
}

// emit notes a recipe event in the trace and reports it to the observer. The note is written
// whether or not the trace is rendered, so that the trace's hash does not depend on rendering.
func (s *Session) emit(e Event) {
	e.Time, e.Client = s.w.Now(), s.cfg.Name
	if e.Session == 0 {
		e.Session = s.c.SessionID()
	}
	s.w.Note(s.node, "lock", "%s", e.String())
	if s.cfg.Observer != nil {
		s.cfg.Observer.LockEvent(e)
	}
}

// later runs fn from a timer of the session's process after d, unless the process crashed.
func (s *Session) later(d clock.Duration, fn func()) {
	if !s.alive() {
		return
	}
	inc := s.inc
	s.w.AfterFunc(s.node, d, func() {
		if s.w.Incarnation(s.node) == inc {
			fn()
		}
	})
}

// connectWaiter is an operation waiting for a connection (blockUntilConnectedOrTimedOut).
type connectWaiter struct {
	run   func()
	timer sim.TimerID
	done  bool
}

// whenConnected runs fn once the session is connected, or once ConnectionTimeout has passed, as
// Curator's RetryLoop blocks before an operation's first attempt
// (CuratorZookeeperClient.internalBlockUntilConnectedOrTimedOut); a lost session runs it at once
// (the operation then fails with the client's SESSIONEXPIRED).
func (s *Session) whenConnected(fn func()) { s.whenConnectedWithin(s.cfg.ConnectionTimeout, fn) }

// whenConnectedWithin runs fn once the session is connected or lost, or once d has passed; a
// session that is connected or lost, or a d that has passed already, runs it at once.
func (s *Session) whenConnectedWithin(d clock.Duration, fn func()) {
	if s.state.IsConnected() || s.state == StateLost || d <= 0 {
		fn()
		return
	}
	if !s.alive() {
		return
	}
	if len(s.waiting) >= maxWaiting {
		panic(fmt.Sprintf("lockmodel: %s has %d operations waiting for a connection: a recipe leaks them", s.cfg.Name, len(s.waiting)))
	}
	cw := &connectWaiter{run: fn}
	inc := s.inc
	cw.timer = s.w.AfterFunc(s.node, d, func() {
		if s.w.Incarnation(s.node) == inc && !cw.done {
			cw.done = true
			s.removeWaiter(cw)
			cw.run()
		}
	})
	s.waiting = append(s.waiting, cw)
}

func (s *Session) removeWaiter(cw *connectWaiter) {
	for i, x := range s.waiting {
		if x == cw {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			return
		}
	}
}

// releaseWaiting runs every waiting operation, in the order they began to wait.
func (s *Session) releaseWaiting() {
	waiting := s.waiting
	s.waiting = nil
	for _, cw := range waiting {
		if cw.done {
			continue
		}
		cw.done = true
		s.w.CancelTimer(cw.timer)
		cw.run()
	}
}
