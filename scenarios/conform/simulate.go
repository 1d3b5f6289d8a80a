package conform

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// SimOptions configures a run of a sequence against zabsim's simulated server.
type SimOptions struct {
	// Seed decides the run (latencies, the clients' choices); results do not depend on it for a
	// correct server, which the tests check.
	Seed uint64
	// TickTimeMs is the server's tick, default 100 as in the real-server runner, so that session
	// timeouts negotiate alike.
	TickTimeMs int
	// ExtendedTypes enables TTL nodes, as the real runner's option of the same name.
	ExtendedTypes bool
	// Trace receives the simulator's trace, if set.
	Trace sim.TraceConfig
}

// ErrSimulation is wrapped by every error Simulate returns for a run that could not complete (a
// session never connected, a reply never came): a bug in zabsim, not a difference in results.
var ErrSimulation = errors.New("conform: simulated run failed")

// simOpWait bounds the virtual time one operation (with its barriers) may take.
const simOpWait = 2 * clock.Minute

// clientAddress is what the real server sees for its clients in the real runner: loopback.
const clientAddress = "127.0.0.1"

// Simulate runs ops in order against a standalone simulated ZooKeeper server, with the same
// semantics as the real-server runner (internal/realzk): sessions open on first use, every op is
// followed by a barrier on every live session so that the watch events it caused have arrived,
// "close" and "expire" wait until the server has applied the session's closeSession, and paths that
// go-zookeeper refuses locally are answered INVALIDPATH without reaching the server. The results
// are raw (absolute zxids); Normalize them before comparing with another run.
func Simulate(opts SimOptions, ops []Op) ([]Result, error) {
	if err := Validate(ops); err != nil {
		return nil, err
	}
	r, err := newSimRunner(opts)
	if err != nil {
		return nil, err
	}
	results := make([]Result, 0, len(ops))
	for i, op := range ops {
		result, err := r.step(i, op)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrSimulation, op.where(i), err)
		}
		results = append(results, result)
	}
	return results, nil
}

type simRunner struct {
	w        *sim.World
	nw       *net.Network
	e        *zabmodel.Ensemble
	server   *zabmodel.Server
	sessions map[string]*simSession
	names    map[int64]string
	opened   int
}

type simSession struct {
	name   string
	node   sim.NodeID
	c      *client.Client
	events []Event
}

func newSimRunner(opts SimOptions) (*simRunner, error) {
	if opts.TickTimeMs == 0 {
		opts.TickTimeMs = 100
	}
	w, err := sim.New(sim.Config{Seed: opts.Seed, Trace: opts.Trace})
	if err != nil {
		return nil, err
	}
	nw, err := net.New(w, net.Config{})
	if err != nil {
		return nil, err
	}
	e, err := zabmodel.NewEnsemble(w, nw, zabmodel.Config{
		Voters: 1, TickTime: clock.Duration(opts.TickTimeMs) * clock.Millisecond, ExtendedTypes: opts.ExtendedTypes,
	})
	if err != nil {
		return nil, err
	}
	e.SetClientAddress(func(sim.NodeID) string { return clientAddress })
	e.Start()
	r := &simRunner{w: w, nw: nw, e: e, server: e.Server(1), sessions: map[string]*simSession{}, names: map[int64]string{}}
	if err := r.await("server start", func() bool { return r.server.State().Serving }); err != nil {
		return nil, err
	}
	return r, nil
}

// await runs the world until cond holds, within simOpWait of virtual time.
func (r *simRunner) await(what string, cond func() bool) error {
	deadline := r.w.Now().Add(simOpWait)
	for !cond() {
		if r.w.Ended() {
			return fmt.Errorf("%s: the simulation ended: %v", what, r.w.Outcome())
		}
		if r.w.Now() > deadline || !r.w.Step() {
			return fmt.Errorf("%s: not done after %v of virtual time", what, simOpWait)
		}
	}
	return nil
}

// step runs one op, then the barriers, and collects the events.
func (r *simRunner) step(index int, op Op) (Result, error) {
	s, err := r.session(op)
	if err != nil {
		return Result{}, err
	}
	involved := r.liveSessions()
	result := Result{I: index, Session: op.Session, Op: op.Kind}
	if err := r.execute(s, op, &result); err != nil {
		return Result{}, err
	}
	for _, other := range r.liveSessions() {
		if err := r.barrier(other); err != nil {
			return Result{}, err
		}
	}
	for _, other := range involved {
		if len(other.events) > 0 {
			if result.Events == nil {
				result.Events = map[string][]Event{}
			}
			result.Events[other.name] = other.events
			other.events = nil
		}
	}
	return result, nil
}

// session returns the op's session, opening it on first use.
func (r *simRunner) session(op Op) (*simSession, error) {
	if s, ok := r.sessions[op.Session]; ok {
		return s, nil
	}
	timeoutMs := op.TimeoutMs
	if timeoutMs == 0 {
		timeoutMs = DefaultSessionTimeoutMs
	}
	r.opened++
	s := &simSession{name: op.Session, node: r.w.AddNode(fmt.Sprintf("client%d-%s", r.opened, op.Session), nil)}
	watcher := client.WatcherFunc(s.record)
	c, err := client.New(r.w, r.nw, s.node, client.Config{
		Servers: r.e.Nodes(), SessionTimeout: clock.Duration(timeoutMs) * clock.Millisecond, Name: op.Session,
		// The real-server runner drives ZooKeeper through go-zookeeper: emulating that library's
		// client-side behaviour keeps the comparison about the servers.
		Emulate: client.GoZookeeper,
	}, watcher)
	if err != nil {
		return nil, err
	}
	s.c = c
	if err := r.await("session "+op.Session+" connects", func() bool { return c.State() == client.StateConnected }); err != nil {
		return nil, err
	}
	r.sessions[op.Session] = s
	r.names[c.SessionID()] = op.Session
	return s, nil
}

// record keeps a session's node events, in arrival order.
func (s *simSession) record(e client.Event) {
	var t EventType
	switch e.Type {
	case proto.EventNodeCreated:
		t = EventNodeCreated
	case proto.EventNodeDeleted:
		t = EventNodeDeleted
	case proto.EventNodeDataChanged:
		t = EventNodeDataChanged
	case proto.EventNodeChildrenChanged:
		t = EventNodeChildrenChanged
	default:
		return
	}
	s.events = append(s.events, Event{Type: t, Path: e.Path})
}

func (r *simRunner) liveSessions() []*simSession {
	out := make([]*simSession, 0, len(r.sessions))
	for _, name := range sortedNames(r.sessions) {
		out = append(out, r.sessions[name])
	}
	return out
}

func sortedNames(m map[string]*simSession) []string {
	names := make([]string, 0, len(m))
	for name := range m { // determinism:ok the names are sorted before use
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// barrier is an exists("/") that must get an answer; a lost connection is waited out and retried.
func (r *simRunner) barrier(s *simSession) error {
	for attempt := 0; attempt < 5; attempt++ {
		var got *client.StatResult
		if err := s.c.Exists("/", nil, func(res client.StatResult) { got = &res }); err != nil {
			return fmt.Errorf("barrier on session %s: %v", s.name, err)
		}
		if err := r.await("barrier on session "+s.name, func() bool { return got != nil }); err != nil {
			return err
		}
		if got.Err == proto.OK {
			return nil
		}
		if got.Err != proto.ConnectionLoss {
			return fmt.Errorf("barrier on session %s: %v", s.name, got.Err)
		}
		if err := r.await("session "+s.name+" reconnects", func() bool { return s.c.State() == client.StateConnected }); err != nil {
			return err
		}
	}
	return fmt.Errorf("barrier on session %s: connection lost five times", s.name)
}
