package realzk

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zabsim/zabsim/scenarios/conform"
)

// Bounds on waits and buffers of a session. Exceeding one is a harness
// failure, reported as an error of Run.
const (
	// connectWait bounds establishing or re-establishing a session.
	connectWait = 10 * time.Second
	// closeWait bounds go-zookeeper's shutdown after Close.
	closeWait = 10 * time.Second
	// maxPendingEvents bounds the events a session may receive within one
	// op.
	maxPendingEvents = 10_000
	// maxLogLines bounds the client log kept for error messages.
	maxLogLines = 50
	// barrierAttempts bounds barrier retries across reconnects.
	barrierAttempts = 5
)

// errGateClosed is what the dialer answers once the session is over, so
// that go-zookeeper cannot open a fresh session under the old name.
var errGateClosed = errors.New("realzk: session is over, no more connections")

// gateState says what the next dial does.
type gateState int

const (
	gateOpen     gateState = iota // dial normally
	gateHeld                      // block until released (the client is "paused")
	gateLastDial                  // dial once more, then close
	gateClosed                    // refuse
)

// gate is a session's dialer and host provider. Expire uses it to sever the
// session's TCP connection and keep the client away from the server until
// the server has expired the session, the way a long client pause would.
type gate struct {
	addr string

	mu      sync.Mutex
	state   gateState
	changed chan struct{} // closed and replaced when state changes
	current net.Conn
}

func newGate(addr string) *gate {
	return &gate{addr: addr, changed: make(chan struct{})}
}

func (g *gate) setState(state gateState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.state = state
	close(g.changed)
	g.changed = make(chan struct{})
}

// dial is the zk.Dialer. It blocks while the gate is held, which parks
// go-zookeeper's connection loop without the one-second sleeps of its
// retry path.
func (g *gate) dial(network, _ string, timeout time.Duration) (net.Conn, error) {
	for {
		g.mu.Lock()
		state, changed := g.state, g.changed
		g.mu.Unlock()
		switch state {
		case gateHeld:
			<-changed
			continue
		case gateClosed:
			return nil, errGateClosed
		}
		conn, err := net.DialTimeout(network, g.addr, timeout)
		g.mu.Lock()
		defer g.mu.Unlock()
		if err == nil {
			g.current = conn
		}
		if g.state == gateLastDial {
			g.state = gateClosed
		}
		return conn, err
	}
}

// sever holds the gate and closes the current connection: the client sees
// its connection drop and cannot get a new one.
func (g *gate) sever() {
	g.setState(gateHeld)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.current != nil {
		g.current.Close()
	}
}

// closed reports whether the gate refuses all dials.
func (g *gate) closed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state == gateClosed
}

// Init, Len, Next and Connected make the gate go-zookeeper's HostProvider.
// With one server, its DNSHostProvider reports every reconnect as a retry
// of the whole list and sleeps a second first; this one reports a retry
// only once the gate is closed, where the sleep is where go-zookeeper
// notices Close.
func (g *gate) Init([]string) error { return nil }
func (g *gate) Len() int            { return 1 }
func (g *gate) Connected()          {}
func (g *gate) Next() (string, bool) {
	return g.addr, g.closed()
}

// watchKind is a kind of watch as go-zookeeper registers it.
type watchKind int

const (
	watchData watchKind = iota
	watchExist
	watchChild
)

type watchKey struct {
	path string
	kind watchKind
}

// session is one named client session: a go-zookeeper connection and what
// its event callback recorded.
type session struct {
	name      string
	conn      *zk.Conn
	id        int64
	timeoutMs int
	gate      *gate
	// done is closed when go-zookeeper's event channel closes, which it
	// does as the last act of its connection loop.
	done chan struct{}

	mu sync.Mutex
	// events are the node events received and not yet reported.
	events   []conform.Event
	overflow bool
	// state is the last session state go-zookeeper reported; changed is
	// closed and replaced on every report.
	state   zk.State
	changed chan struct{}
	// sawExpired records StateExpired, which lasts only an instant.
	sawExpired bool
	// ending is set once close or expire started; disconnects after that
	// are planned.
	ending bool
	// unplannedDisconnects counts connection losses nobody asked for.
	unplannedDisconnects int
	// watches mirrors go-zookeeper's table of registered watches (see
	// recordWatch and forgetWatches).
	watches map[watchKey]bool
	logs    []string
}

// onEvent is go-zookeeper's event callback. go-zookeeper calls it
// synchronously: for watch notifications from its receive loop, in the
// order the server sent them and before it handles the next packet (so
// before it delivers any later response); for state changes from its
// connection loop. It must not block.
func (s *session) onEvent(event zk.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch event.Type {
	case zk.EventNodeCreated, zk.EventNodeDeleted, zk.EventNodeDataChanged, zk.EventNodeChildrenChanged:
		if len(s.events) >= maxPendingEvents {
			s.overflow = true
			return
		}
		s.events = append(s.events, conform.Event{Type: eventType(event.Type), Path: event.Path})
	case zk.EventSession:
		if event.State == zk.StateDisconnected && s.state != zk.StateDisconnected && !s.ending {
			s.unplannedDisconnects++
		}
		if event.State == zk.StateExpired {
			s.sawExpired = true
		}
		s.state = event.State
		close(s.changed)
		s.changed = make(chan struct{})
	}
	// EventNotWatching reports go-zookeeper invalidating its own watch
	// table on expiry or close; it is not a server notification.
}

func eventType(t zk.EventType) conform.EventType {
	switch t {
	case zk.EventNodeCreated:
		return conform.EventNodeCreated
	case zk.EventNodeDeleted:
		return conform.EventNodeDeleted
	case zk.EventNodeDataChanged:
		return conform.EventNodeDataChanged
	}
	return conform.EventNodeChildrenChanged
}

// Printf is the zk.Logger: the last lines go into error messages.
func (s *session) Printf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.logs) == maxLogLines {
		s.logs = s.logs[1:]
	}
	s.logs = append(s.logs, time.Now().Format("15:04:05.000 ")+line)
}

func (s *session) clientLog() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.logs, "\n")
}

// openSession connects and waits until the server has created the session.
func openSession(ctx context.Context, addr, name string, timeoutMs int) (*session, error) {
	s := &session{
		name:      name,
		timeoutMs: timeoutMs,
		gate:      newGate(addr),
		done:      make(chan struct{}),
		changed:   make(chan struct{}),
		state:     zk.StateUnknown,
		watches:   map[watchKey]bool{},
	}
	conn, events, err := zk.Connect([]string{addr}, time.Duration(timeoutMs)*time.Millisecond,
		zk.WithDialer(s.gate.dial), zk.WithHostProvider(s.gate),
		zk.WithEventCallback(s.onEvent), zk.WithLogger(s), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("connect session %s: %w", name, err)
	}
	s.conn = conn
	// The callback sees every event; the channel only tells when the
	// connection loop has ended. Sends to it never block, so draining it is
	// not needed for progress.
	go func() {
		for range events {
		}
		close(s.done)
	}()
	if err := s.waitFor(ctx, connectWait, func() bool { return s.state == zk.StateHasSession }); err != nil {
		s.shutdown()
		return nil, fmt.Errorf("open session %s: %w; client log:\n%s", name, err, s.clientLog())
	}
	s.id = conn.SessionID()
	return s, nil
}

// waitFor waits until condition, evaluated under s.mu, holds.
func (s *session) waitFor(ctx context.Context, limit time.Duration, condition func() bool) error {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		s.mu.Lock()
		ok, changed := condition(), s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-timer.C:
			return fmt.Errorf("timed out after %v (state %v)", limit, s.currentState())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *session) currentState() zk.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// barrier makes one round trip on the session. The server answers a
// session's requests in order on one connection and sends a watch
// notification as part of applying the transaction that fires it, so once
// a request sent after op N returns, the notifications op N caused have
// been delivered to the callback.
func (s *session) barrier(ctx context.Context) error {
	var err error
	for attempt := 0; attempt < barrierAttempts; attempt++ {
		_, _, err = s.conn.Exists("/")
		if err == nil {
			return nil
		}
		if !isConnectionLoss(err) {
			break
		}
		// The connection dropped (addauth with an unknown scheme and
		// oversized requests make the server close it); wait for the
		// client to re-establish the session and try again.
		if waitErr := s.waitFor(ctx, connectWait, func() bool { return s.state == zk.StateHasSession }); waitErr != nil {
			return fmt.Errorf("barrier on session %s: reconnect: %w; client log:\n%s", s.name, waitErr, s.clientLog())
		}
	}
	return fmt.Errorf("barrier on session %s: %w; client log:\n%s", s.name, err, s.clientLog())
}

// takeEvents returns and clears the pending events, and drops the watches
// they fired from the mirror.
func (s *session) takeEvents() ([]conform.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.overflow {
		return nil, fmt.Errorf("session %s received more than %d events in one op", s.name, maxPendingEvents)
	}
	events := s.events
	s.events = nil
	for _, event := range events {
		s.forgetWatches(event)
	}
	return events, nil
}

// recordWatch mirrors go-zookeeper registering a watch after a successful
// getW, childrenW or existsW (existsW also on NONODE).
func (s *session) recordWatch(path string, kind watchKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches[watchKey{path, kind}] = true
}

// forgetWatches mirrors go-zookeeper's notifyWatches: which watch kinds an
// event of each type consumes.
func (s *session) forgetWatches(event conform.Event) {
	var kinds []watchKind
	switch event.Type {
	case conform.EventNodeCreated:
		kinds = []watchKind{watchExist}
	case conform.EventNodeDataChanged:
		kinds = []watchKind{watchExist, watchData}
	case conform.EventNodeChildrenChanged:
		kinds = []watchKind{watchChild}
	case conform.EventNodeDeleted:
		kinds = []watchKind{watchExist, watchData, watchChild}
	}
	for _, kind := range kinds {
		delete(s.watches, watchKey{event.Path, kind})
	}
}

// connectionState returns the unplanned disconnect count and whether the
// client holds watches.
func (s *session) connectionState() (disconnects int, holdsWatches bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unplannedDisconnects, len(s.watches) > 0
}

// markEnding declares that disconnects from now on are planned.
func (s *session) markEnding() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ending = true
}

// shutdown closes the client for good and waits for its loop to end.
// go-zookeeper's Close sends closeSession if connected and returns once the
// reply arrives or after one second.
func (s *session) shutdown() error {
	s.markEnding()
	s.gate.setState(gateClosed)
	s.conn.Close()
	select {
	case <-s.done:
		return nil
	case <-time.After(closeWait):
		return fmt.Errorf("session %s: client did not shut down within %v; client log:\n%s", s.name, closeWait, s.clientLog())
	}
}
