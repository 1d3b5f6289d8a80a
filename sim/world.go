package sim

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/zabsim/zabsim/clock"
)

// NodeID identifies a simulated process within one world. IDs are dense, starting at 0, in order of
// registration.
type NodeID int32

// NoNode marks world-level events (fault schedules, scenario steps) that belong to no process.
const NoNode NodeID = -1

// Process is what the world needs from a simulated process: hooks for crash and restart. Crash must
// discard every piece of volatile state (memory, timers are already gone, connections are already
// broken) and keep only what the process had made durable; Restart rebuilds the process from that
// durable state, as a freshly started JVM would.
type Process interface {
	Crash()
	Restart()
}

// Target receives low-level events posted with Post. The network uses it to deliver messages without
// allocating a closure per message.
type Target interface {
	Fire(arg uint64)
}

// TimerHandler receives a node's timers. The tag is whatever the node passed to SetTimer.
type TimerHandler interface {
	OnTimer(tag uint64)
}

// TimerNamer may be implemented by a TimerHandler to name its timers in rendered traces.
type TimerNamer interface {
	TimerName(tag uint64) string
}

// TimerID identifies a pending timer. The zero TimerID is never issued, so it can mean "no timer".
type TimerID uint64

// funcTarget adapts a plain function. A func value is pointer-shaped, so converting it to an
// interface does not allocate; only the closure itself might.
type funcTarget func()

func (f funcTarget) Fire(uint64)    { f() }
func (f funcTarget) OnTimer(uint64) { f() }

// Budget bounds a run. Every field has a finite default: a run can end early with a budget outcome but
// it can never hang.
type Budget struct {
	// MaxEvents is the most events the run may dispatch. Default 50 million.
	MaxEvents int64
	// MaxTime is the latest virtual time an event may run at. Default one virtual hour.
	MaxTime clock.Duration
	// MaxQueue is the most events that may be pending at once (network messages in flight count,
	// as each connection direction posts its head message). Default one million.
	MaxQueue int
}

// Budget defaults.
const (
	DefaultMaxEvents = 50_000_000
	DefaultMaxTime   = clock.Hour
	DefaultMaxQueue  = 1_000_000
)

// Config sets up a world.
type Config struct {
	// Seed decides the run. It seeds the default Chooser and is reported with every failure.
	Seed uint64
	// Chooser, if set, replaces the seeded PCG: a Replay, a Bytes stream, or a Recorder.
	Chooser Chooser
	// Budget bounds the run; zero fields take defaults.
	Budget Budget
	// Trace says where the trace goes; the zero value keeps only the hash.
	Trace TraceConfig
}

type nodeState struct {
	name        string
	process     Process
	up          bool
	paused      bool
	incarnation uint32
	clock       clock.Local
	deferred    []event
}

type timerSlot struct {
	handler     TimerHandler
	tag         uint64
	node        NodeID
	gen         uint32
	incarnation uint32
	live        bool
}

// World is one simulated run: virtual time, an event queue, the nodes, their timers, and the trace.
// It is single-threaded by design: one goroutine owns a world, and nothing inside a world may start
// another. Parallelism comes from running many worlds (seeds) at once.
type World struct {
	seed    uint64
	chooser Chooser
	budget  Budget
	trace   *Trace

	now    clock.Time
	seq    uint64
	serial uint64
	queue  eventQueue
	events int64

	nodes      []nodeState
	timers     []timerSlot
	freeTimers []uint32

	crashObservers []CrashObserver
	current        NodeID

	ended   bool
	outcome Outcome
	outside []string

	// Schedule mode (schedule.go): the pending events as a plain list for a driver to pick from,
	// and each node's history hash.
	schedule      bool
	sched         []event
	history       []uint64
	globalHistory uint64
}

// New builds a world from cfg. It fails on a budget that makes no sense.
func New(cfg Config) (*World, error) {
	b := cfg.Budget
	if b.MaxEvents < 0 || b.MaxTime < 0 || b.MaxQueue < 0 {
		return nil, fmt.Errorf("sim: negative budget %+v", b)
	}
	if b.MaxEvents == 0 {
		b.MaxEvents = DefaultMaxEvents
	}
	if b.MaxTime == 0 {
		b.MaxTime = DefaultMaxTime
	}
	if b.MaxQueue == 0 {
		b.MaxQueue = DefaultMaxQueue
	}
	if cfg.Trace.Tail < 0 {
		return nil, fmt.Errorf("sim: negative trace tail %d", cfg.Trace.Tail)
	}
	chooser := cfg.Chooser
	if chooser == nil {
		chooser = NewPCG(cfg.Seed)
	}
	return &World{
		seed:    cfg.Seed,
		chooser: chooser,
		budget:  b,
		trace:   newTrace(cfg.Trace),
		current: NoNode,
		queue:   takeSpareQueue(),
	}, nil
}

// Release hands the world's event queue arrays to the next world built, so that a sweep of many
// runs does not grow a queue from nothing for each. Call it once the run is over and judged: the
// events still queued are dropped, and the world must not run again. Releasing is optional.
func (w *World) Release() { w.queue.giveBack() }

// Seed returns the run's seed.
func (w *World) Seed() uint64 { return w.seed }

// Now returns global virtual time. Simulated processes should read their own Clock instead.
func (w *World) Now() clock.Time { return w.now }

// Events returns how many events have been dispatched.
func (w *World) Events() int64 { return w.events }

// Pending returns how many events are queued.
func (w *World) Pending() int { return w.queue.len() + len(w.sched) }

// Trace returns the run's trace recorder.
func (w *World) Trace() *Trace { return w.trace }

// Current returns the node whose event is being dispatched, or NoNode.
func (w *World) Current() NodeID { return w.current }

// --- Nodes ----------------------------------------------------------------------------------------

// AddNode registers a process under a unique name and returns its ID. The node starts up. A nil
// process is allowed for nodes whose crash and restart need no hooks.
func (w *World) AddNode(name string, p Process) NodeID {
	for i := range w.nodes {
		if w.nodes[i].name == name {
			panic(fmt.Sprintf("sim: node name %q registered twice", name))
		}
	}
	w.nodes = append(w.nodes, nodeState{name: name, process: p, up: true})
	return NodeID(len(w.nodes) - 1)
}

// SetProcess sets or replaces a node's hooks, for processes that need their ID before they exist.
func (w *World) SetProcess(id NodeID, p Process) { w.node(id).process = p }

// NumNodes returns how many nodes are registered.
func (w *World) NumNodes() int { return len(w.nodes) }

// Name returns a node's name; NoNode is "-".
func (w *World) Name(id NodeID) string {
	if id == NoNode {
		return "-"
	}
	return w.node(id).name
}

// Lookup finds a node by name.
func (w *World) Lookup(name string) (NodeID, bool) {
	for i := range w.nodes {
		if w.nodes[i].name == name {
			return NodeID(i), true
		}
	}
	return NoNode, false
}

// IsUp reports whether a node is running (not crashed). A paused node is up.
func (w *World) IsUp(id NodeID) bool { return w.node(id).up }

// IsPaused reports whether a node is paused.
func (w *World) IsPaused(id NodeID) bool { return w.node(id).paused }

// Incarnation counts a node's crashes: events scheduled in an earlier incarnation never reach it.
func (w *World) Incarnation(id NodeID) uint32 { return w.node(id).incarnation }

// Clock returns a node's local clock, through which clock-skew faults are injected.
func (w *World) Clock(id NodeID) *clock.Local { return &w.node(id).clock }

// Elapsed returns a node's monotonic clock reading (what System.nanoTime would say).
func (w *World) Elapsed(id NodeID) clock.Time { return w.node(id).clock.Elapsed(w.now) }

// WallMillis returns a node's wall clock in milliseconds (what System.currentTimeMillis would say).
func (w *World) WallMillis(id NodeID) int64 { return w.node(id).clock.WallMillis(w.now) }

// CrashObserver is told of crashes (OnCrashObserver).
type CrashObserver interface {
	NodeCrashed(NodeID)
}

// crashFunc adapts a function to CrashObserver.
type crashFunc func(NodeID)

func (f crashFunc) NodeCrashed(id NodeID) { f(id) }

// OnCrash registers an observer told of every crash after the node is marked down and before the
// node's own Crash hook runs.
func (w *World) OnCrash(fn func(NodeID)) { w.OnCrashObserver(crashFunc(fn)) }

// OnCrashObserver is OnCrash for an observer that is a value with a method rather than a
// function, which a world that must be copied (package modelcheck's deep copies) can hold: the
// network breaks the node's connections this way.
func (w *World) OnCrashObserver(o CrashObserver) { w.crashObservers = append(w.crashObservers, o) }

// Crash stops a node: it is marked down, its pending timers and deferred events die with its
// incarnation, observers are told, and its Crash hook drops its volatile state. Crashing a crashed
// node does nothing.
func (w *World) Crash(id NodeID) {
	n := w.node(id)
	if !n.up {
		return
	}
	n.up = false
	n.paused = false
	n.deferred = nil
	n.incarnation++
	w.traceKernel(id, KindCrash, uint64(n.incarnation), 0, "")
	for _, o := range w.crashObservers {
		o.NodeCrashed(id)
	}
	if n.process != nil {
		w.withNode(id, n.process.Crash)
	}
}

// Restart starts a crashed node again from its durable state. Restarting a running node does nothing.
func (w *World) Restart(id NodeID) {
	n := w.node(id)
	if n.up {
		return
	}
	n.up = true
	w.traceKernel(id, KindRestart, uint64(n.incarnation), 0, "")
	if n.process != nil {
		w.withNode(id, n.process.Restart)
	}
}

// Pause stops a node without crashing it, as a long garbage-collection pause or SIGSTOP would: its
// timers and incoming messages wait until Resume, then run in their original order. Its clock keeps
// running, so a resumed node sees that time has jumped.
func (w *World) Pause(id NodeID) {
	n := w.node(id)
	if !n.up || n.paused {
		return
	}
	n.paused = true
	w.traceKernel(id, KindPause, 0, 0, "")
}

// Resume lets a paused node run again. Its deferred events are queued now, in the order in which
// they would have run.
func (w *World) Resume(id NodeID) {
	n := w.node(id)
	if !n.paused {
		return
	}
	n.paused = false
	w.traceKernel(id, KindResume, uint64(len(n.deferred)), 0, "")
	deferred := n.deferred
	n.deferred = nil
	for _, ev := range deferred {
		ev.at = w.now
		w.push(ev)
	}
}

func (w *World) node(id NodeID) *nodeState {
	if id < 0 || int(id) >= len(w.nodes) {
		panic(fmt.Sprintf("sim: unknown node %d", id))
	}
	return &w.nodes[id]
}

// --- Scheduling -----------------------------------------------------------------------------------

func (w *World) push(e event) {
	w.seq++
	e.seq = w.seq
	if w.schedule {
		w.sched = append(w.sched, e)
		return
	}
	w.queue.push(e)
	if w.queue.len() > w.budget.MaxQueue && !w.ended {
		w.end(Outcome{Kind: QueueBudget, Err: fmt.Errorf("sim: %d events pending, over the budget of %d", w.queue.len(), w.budget.MaxQueue)})
	}
}

// Post schedules t.Fire(arg) at time at, on behalf of node (which may be NoNode). If the node is
// paused then, the event waits for Resume; Post does not check incarnations, so the poster (the
// network) must itself ignore events for state that a crash destroyed.
func (w *World) Post(node NodeID, at clock.Time, t Target, arg uint64) {
	if at < w.now {
		at = w.now
	}
	w.push(event{at: at, node: node, target: t, arg: arg, kind: evTarget})
}

// At runs fn at global time t as a world-level event (fault schedules, scenario steps).
func (w *World) At(t clock.Time, fn func()) { w.Post(NoNode, t, funcTarget(fn), 0) }

// After runs fn after global duration d as a world-level event.
func (w *World) After(d clock.Duration, fn func()) { w.At(w.now.Add(d), fn) }

// SetTimer arms a timer for node that calls h.OnTimer(tag) after d of the node's own monotonic clock
// (so a drifting clock fires early or late). The timer dies if the node crashes first. Setting a
// timer for a crashed node is a bug in the caller and panics.
func (w *World) SetTimer(node NodeID, d clock.Duration, h TimerHandler, tag uint64) TimerID {
	n := w.node(node)
	if !n.up {
		panic(fmt.Sprintf("sim: SetTimer for crashed node %s", n.name))
	}
	var slot uint32
	if k := len(w.freeTimers); k > 0 {
		slot = w.freeTimers[k-1]
		w.freeTimers = w.freeTimers[:k-1]
	} else {
		w.timers = append(w.timers, timerSlot{})
		slot = uint32(len(w.timers) - 1)
	}
	s := &w.timers[slot]
	s.gen++
	if s.gen == 0 {
		s.gen = 1 // Generation 0 would make TimerID 0 possible, which means "no timer".
	}
	s.handler, s.tag, s.node, s.incarnation, s.live = h, tag, node, n.incarnation, true
	at := w.now.Add(n.clock.GlobalDelay(d))
	w.push(event{at: at, node: node, arg: uint64(slot), guard: s.gen, kind: evTimer})
	return TimerID(uint64(slot)<<32 | uint64(s.gen))
}

// AfterFunc arms a timer for node that calls fn; see SetTimer.
func (w *World) AfterFunc(node NodeID, d clock.Duration, fn func()) TimerID {
	return w.SetTimer(node, d, funcTarget(fn), 0)
}

// CancelTimer disarms a timer. It reports whether the timer was still pending; cancelling a fired,
// cancelled or zero timer is harmless.
//
// The timer's event stays queued until its time and is skipped then. That skip is part of a run:
// it moves the clock (which shows when it is the last event of a run), it is deferred with its
// node while the node is paused (and counted in the resume's trace record), and it counts towards
// the queue budget, so taking cancelled timers out of the queue would change runs. The queue is
// built to carry them cheaply instead.
func (w *World) CancelTimer(id TimerID) bool {
	slot, gen := uint32(uint64(id)>>32), uint32(id)
	if id == 0 || int(slot) >= len(w.timers) {
		return false
	}
	s := &w.timers[slot]
	if !s.live || s.gen != gen {
		return false
	}
	w.releaseTimer(slot)
	return true
}

func (w *World) releaseTimer(slot uint32) {
	s := &w.timers[slot]
	s.live = false
	s.handler = nil
	w.freeTimers = append(w.freeTimers, slot)
}

// --- Choices --------------------------------------------------------------------------------------

// Choose returns an integer in [0, n) from the run's Chooser.
// Serial returns a number that no earlier call in this world returned (1, 2, 3, ...). Simulated
// code uses it where the real system counts on randomness for uniqueness, such as a random UUID:
// values drawn from the Chooser alone may repeat when the choice stream is degenerate (a fuzzer's
// run of zeros), which 122 random bits make impossible in practice.
func (w *World) Serial() uint64 {
	w.serial++
	return w.serial
}

func (w *World) Choose(n int) int { return w.chooser.Choose(n) }

// Chance returns true with probability num/den.
func (w *World) Chance(num, den int) bool {
	if num <= 0 {
		return false
	}
	if num >= den {
		return true
	}
	return w.chooser.Choose(den) < num
}

// Between returns a duration in [lo, hi] in steps of step (which bounds how many answers the choice
// has, for replay and exhaustive exploration).
func (w *World) Between(lo, hi, step clock.Duration) clock.Duration {
	if hi <= lo {
		return lo
	}
	if step <= 0 {
		step = 1
	}
	return lo + clock.Duration(w.chooser.Choose(int((hi-lo)/step)+1))*step
}

// Shuffle permutes n items with Fisher-Yates through the Chooser.
func (w *World) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, w.chooser.Choose(i+1))
	}
}

// --- Running --------------------------------------------------------------------------------------

// Run dispatches events until none remain, a budget runs out, or the run fails.
func (w *World) Run() Outcome {
	w.RunUntil(clock.Never)
	if !w.ended {
		w.end(Outcome{Kind: Quiescent})
	}
	return w.Outcome()
}

// RunFor runs for d of global time; see RunUntil.
func (w *World) RunFor(d clock.Duration) bool { return w.RunUntil(w.now.Add(d)) }

// RunUntil dispatches every event at or before deadline, then advances the clock to the deadline. It
// returns false once the run has ended (budget, panic or failure); the Outcome says how.
func (w *World) RunUntil(deadline clock.Time) bool {
	return w.runLoop(deadline, -1)
}

// Step dispatches at most one event, whatever its time. It returns false when nothing was dispatched
// (the queue is empty or the run has ended).
func (w *World) Step() bool {
	before := w.events
	w.runLoop(clock.Never, 1)
	return w.events > before
}

// runLoop is the heart of the simulator. Recovering here, once per call rather than per event, keeps
// the hot path free of deferred calls while still turning any panic in simulated code into an
// outcome of this run instead of a crash of the process.
func (w *World) runLoop(deadline clock.Time, limit int64) (alive bool) {
	if w.ended {
		return false
	}
	if w.schedule {
		return true // The driver dispatches events one by one (FireEnabled); time stays put.
	}
	defer func() {
		if r := recover(); r != nil {
			w.end(Outcome{Kind: Panic, Err: &PanicError{
				Value: r, Stack: string(debug.Stack()), Seed: w.seed, Time: w.now, Node: w.Name(w.current),
			}})
			alive = false
		}
		w.current = NoNode
	}()
	maxTime := clock.Time(0).Add(w.budget.MaxTime)
	for w.queue.len() > 0 && limit != 0 {
		nextAt := w.queue.peekTime()
		if nextAt > deadline {
			break
		}
		if nextAt > maxTime {
			w.now = maxTime
			w.end(Outcome{Kind: TimeBudget, Err: fmt.Errorf("sim: virtual time budget of %v exhausted", w.budget.MaxTime)})
			return false
		}
		if w.events >= w.budget.MaxEvents {
			w.end(Outcome{Kind: EventBudget, Err: fmt.Errorf("sim: event budget of %d exhausted", w.budget.MaxEvents)})
			return false
		}
		ev := w.queue.pop()
		w.now = ev.at
		if w.dispatch(&ev) {
			w.events++
			limit--
		}
		if w.ended {
			return false
		}
	}
	if deadline != clock.Never && w.now < deadline {
		if deadline > maxTime {
			w.now = maxTime
			w.end(Outcome{Kind: TimeBudget, Err: fmt.Errorf("sim: virtual time budget of %v exhausted", w.budget.MaxTime)})
			return false
		}
		w.now = deadline
	}
	return true
}

// dispatch runs one event and reports whether it counted (stale timers and deferrals do not).
func (w *World) dispatch(ev *event) bool {
	if ev.node != NoNode {
		n := &w.nodes[ev.node]
		if n.paused {
			n.deferred = append(n.deferred, *ev)
			return false
		}
	}
	switch ev.kind {
	case evTimer:
		s := &w.timers[ev.arg]
		if !s.live || s.gen != ev.guard {
			return false
		}
		handler, tag, node, inc := s.handler, s.tag, s.node, s.incarnation
		w.releaseTimer(uint32(ev.arg))
		n := &w.nodes[node]
		if !n.up || n.incarnation != inc {
			return false
		}
		w.current = node
		w.traceTimer(node, handler, tag)
		handler.OnTimer(tag)
	case evTarget:
		w.current = ev.node
		ev.target.Fire(ev.arg)
	}
	w.current = NoNode
	return true
}

// withNode runs fn attributed to node, for hooks called outside the event loop.
func (w *World) withNode(id NodeID, fn func()) {
	prev := w.current
	w.current = id
	fn()
	w.current = prev
}

// --- Outcomes -------------------------------------------------------------------------------------

// Fail ends the run as a failure, for checkers that find a violation. The first failure wins.
func (w *World) Fail(err error) {
	if err == nil {
		err = errors.New("sim: Fail called with a nil error")
	}
	w.end(Outcome{Kind: Failure, Err: err})
}

// Finish ends the run as completed: the scenario ran its course.
func (w *World) Finish() { w.end(Outcome{Kind: Completed}) }

// Ended reports whether the run is over.
func (w *World) Ended() bool { return w.ended }

// Outcome returns how the run ended, or an outcome of kind Running while it goes on.
func (w *World) Outcome() Outcome {
	o := w.outcome
	if !w.ended {
		o = Outcome{Kind: Running}
	}
	o.Seed, o.Time, o.Events = w.seed, w.now, w.events
	o.TraceHash, o.TraceRecords = w.trace.hash, w.trace.records
	o.OutsideFaultModel = slices.Clone(w.outside)
	return o
}

// NoteOutsideFaultModel records that the run used a fault outside ZAB's fault model (for instance
// reordering inside a TCP connection). Such runs report it in their outcome, so that a violation they
// find is never mistaken for a bug in a correct implementation.
func (w *World) NoteOutsideFaultModel(what string) {
	if !slices.Contains(w.outside, what) {
		w.outside = append(w.outside, what)
		slices.Sort(w.outside)
		w.Note(NoNode, "fault", "outside the fault model: %s", what)
	}
}

func (w *World) end(o Outcome) {
	if w.ended {
		return
	}
	w.ended = true
	w.outcome = o
	w.traceKernel(NoNode, KindEnd, uint64(o.Kind), 0, o.Kind.String())
}
