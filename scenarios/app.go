package scenarios

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// sessionTimeout is what the applications ask for unless the script says otherwise
// (Script.SessionTimeout); the servers clamp it to [2, 20] ticks.
const sessionTimeout = 6 * clock.Second

// The session timeouts a script may ask for: what the servers grant with their 2 s tick.
const (
	MinSessionTimeout = 2 * 2 * clock.Second
	MaxSessionTimeout = 20 * 2 * clock.Second
)

// appSessionTimeout is the timeout this run's applications ask for.
func (r *runner) appSessionTimeout() clock.Duration {
	if r.script.SessionTimeout > 0 {
		return r.script.SessionTimeout
	}
	return sessionTimeout
}

// thinkTimeMax bounds the pause between two operations of an application.
const thinkTimeMax = 200 * clock.Millisecond

// app is one simulated application: a process with a ZooKeeper client, issuing a workload's
// operations one at a time and recording what it issued and saw. When its session expires it opens
// a new one, as a well-written application does; when its process crashes it starts over when the
// process is revived.
type app struct {
	r     *runner
	name  string
	index int // 1-based: workloads give roles by index
	node  sim.NodeID
	gen   workload

	c        *client.Client
	session  int64
	sessions int // sessions opened, for unique values
	busy     bool
	current  checkers.OpRef // the operation in flight while busy
	stopped  bool           // the liveness phase asked it to stop issuing
	issued   int
	versions map[string]int32
	queue    []string // the queue workload's consumer: children still to try, lowest first
	inc      uint32
	begun    bool // the process has started its application once (begin or Restart)

	barrierDone bool  // the liveness phase's sync came back OK
	barrierZxid int64 // at that zxid

	killer *killer // the process that forces this application's session to expire, once one has
}

func newApp(r *runner, index int, gen workload) *app {
	a := &app{r: r, name: fmt.Sprintf("c%d", index), index: index, gen: gen, versions: map[string]int32{}}
	a.node = r.w.AddNode(a.name, a)
	return a
}

// Crash implements sim.Process: the application's memory is gone; the session lives on in the
// servers until it expires.
func (a *app) Crash() {
	if d, ok := a.gen.(driver); ok {
		d.crashed(a) // Hook for recipe workloads (workload_lock.go): their requests die too.
	}
	if a.busy {
		// The process died with a request in flight: it may or may not have taken effect.
		_ = a.r.rec.Fail(a.current, a.r.w.Now(), proto.ConnectionLoss, checkers.OutcomeUnknown)
	}
	a.c, a.busy = nil, false
	a.r.rec.Stopped(a.name)
}

// Restart implements sim.Process.
func (a *app) Restart() { a.start() }

// begin starts the application for the first time, once the run's setup is done. A process
// killed before then (a kill action during a long setup) is left down, and revive starts it
// (Restart); one revived before then has started already. Starting a client on a crashed node
// is an error, and was the panic of seed 2550 with --datagram-faults, whose setup outlasted a
// kill c1.
func (a *app) begin() {
	if a.begun || !a.r.w.IsUp(a.node) {
		return
	}
	a.start()
}

func (a *app) start() {
	a.begun = true
	a.inc = a.r.w.Incarnation(a.node)
	a.connect()
}

// connect opens a new session.
func (a *app) connect() {
	a.sessions++
	c, err := client.New(a.r.w, a.r.nw, a.node, client.Config{
		Servers: a.r.ens.Nodes(), SessionTimeout: a.r.appSessionTimeout(), Name: fmt.Sprintf("%s.%d", a.name, a.sessions),
	}, client.WatcherFunc(a.event))
	if err != nil {
		panic(fmt.Sprintf("scenarios: client of %s: %v", a.name, err)) // Options were validated.
	}
	a.c, a.session, a.busy = c, 0, false
	a.r.w.AfterFunc(a.node, a.think(), a.tick)
}

// paced is implemented by workloads whose applications think longer between operations: those
// judged as one linearizability partition, where porcupine's search grows with the history.
type paced interface {
	thinkTimeMax() clock.Duration
}

func (a *app) think() clock.Duration {
	limit, least := thinkTimeMax, clock.Millisecond
	if p, ok := a.gen.(paced); ok {
		limit = p.thinkTimeMax()
		least = limit / 10
	}
	// At least a millisecond: an application that retried at the same instant could spin forever
	// while the world waits for anything to take time.
	return a.r.w.Between(least, limit, clock.Millisecond)
}

func (a *app) uniqueValue() []byte {
	a.issued++
	// The bytes of fmt.Sprintf("%s.%d.%d", ...), built in one allocation sized for the longest.
	b := make([]byte, 0, len(a.name)+2+2*20)
	b = append(b, a.name...)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(a.sessions), 10)
	b = append(b, '.')
	return strconv.AppendInt(b, int64(a.issued), 10)
}

// knownVersion is the version the application last saw for path, or a guess.
func (a *app) knownVersion(path string, w *sim.World) int32 {
	if v, ok := a.versions[path]; ok {
		return v
	}
	return int32(w.Choose(3))
}

// event is the default watcher: watch events and state changes, recorded in arrival order.
func (a *app) event(e client.Event) {
	now := a.r.w.Now()
	if a.c != nil && a.c.SessionID() != 0 && a.c.SessionID() != a.session {
		a.session = a.c.SessionID()
		a.r.sessionStarted(a, a.session, a.c.NegotiatedTimeout())
	}
	if e.Type == proto.EventNone {
		a.r.rec.State(a.name, a.session, now, e.State)
		if c := a.r.opts.Coverage; c != nil {
			c.clientState(a.session, e.State, now)
		}
		if d, ok := a.gen.(driver); ok {
			d.connectionEvent(a, e) // Hook: the lock recipes follow the connection state.
		}
		if e.State == proto.StateExpired && !a.stopped {
			a.r.w.AfterFunc(a.node, a.think(), a.connect)
		}
		return
	}
	a.r.rec.Event(a.name, a.session, now, e.Type, e.Path, -1)
}

// tick issues the next operation if the application is idle and connected enough to try.
func (a *app) tick() {
	if a.c == nil || a.busy || a.stopped || !a.c.State().IsAlive() {
		return
	}
	if a.c.SessionID() == 0 {
		// Not connected yet: an application waits for its session before it works.
		a.r.w.AfterFunc(a.node, a.think(), a.tick)
		return
	}
	if d, ok := a.gen.(driver); ok {
		d.drive(a) // Hook: a recipe workload drives the client itself (workload_lock.go).
		return
	}
	spec := a.gen.next(a.r.w, a)
	a.issue(spec)
}

// issue sends one operation and records it.
func (a *app) issue(spec opSpec) {
	op := checkers.Operation{
		Session: a.c.SessionID(), Kind: spec.kind, Path: spec.path, Data: spec.data, Version: spec.version,
		Mode: spec.mode, Watch: spec.watch, Multi: spec.multi,
	}
	if spec.kind == proto.OpSync {
		op.SyncLeaderZxid = a.r.syncFloor(a)
	}
	ref := a.r.rec.Call(a.name, a.r.w.Now(), op)
	if c := a.r.opts.Coverage; c != nil {
		c.clientRequest(op.Session, op.Kind, a.r.w.Now(), a.r.serverSid(a.c.Server()))
		c.sessionClient(op.Session, a.name)
	}
	a.busy, a.current = true, ref
	done := func(res result) { a.done(spec, ref, res) }
	if err := a.send(spec, done); err != nil {
		a.busy = false
		code := proto.BadArguments
		if errors.Is(err, client.ErrCrashed) {
			code = proto.ConnectionLoss
		}
		_ = a.r.rec.Fail(ref, a.r.w.Now(), code, checkers.OutcomeNotApplied)
		a.r.w.AfterFunc(a.node, a.think(), a.tick)
	}
}

// done records a result and schedules the next operation.
func (a *app) done(spec opSpec, ref checkers.OpRef, res result) {
	if a.r.w.Incarnation(a.node) != a.inc {
		return
	}
	a.busy = false
	now := a.r.w.Now()
	_ = a.r.rec.Written(ref, res.session, res.xid)
	if res.zxid == 0 && (res.err == proto.ConnectionLoss || res.err == proto.SessionExpired || res.err == proto.AuthFailed) {
		// The client gave up without a reply: the operation may or may not have happened, unless
		// it was never written to a connection.
		outcome := checkers.OutcomeUnknown
		if res.xid == 0 {
			outcome = checkers.OutcomeNotApplied
		}
		_ = a.r.rec.Fail(ref, now, res.err, outcome)
	} else {
		reply := checkers.Reply{Err: res.err, Zxid: res.zxid, CreatedPath: res.path, Data: res.data, Stat: res.stat, Children: res.children}
		for _, sub := range res.multi {
			sr := checkers.SubResult{Err: sub.Err, Path: sub.Path}
			if sub.Type == proto.OpSetData || sub.Type == proto.OpCreate2 {
				stat := sub.Stat
				sr.Stat = &stat
			}
			reply.MultiResults = append(reply.MultiResults, sr)
		}
		_ = a.r.rec.Reply(ref, now, reply)
		if spec.barrier {
			a.barrierDone, a.barrierZxid = res.err == proto.OK, res.zxid
		} else {
			a.gen.observe(a, spec, res)
		}
	}
	a.r.opsCompleted++
	a.r.w.AfterFunc(a.node, a.think(), a.tick)
}

// serverSid is the sid of the server on node, 0 when node is no server (for coverage only).
func (r *runner) serverSid(node sim.NodeID) int64 {
	for _, s := range r.ens.Servers() {
		if s.Node() == node {
			return s.Sid()
		}
	}
	return 0
}
