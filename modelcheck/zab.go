package modelcheck

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zabsim/zabsim/checkers/zab"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/internal/deepcopy"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
)

// ZABConfig bounds an exploration of the ZooKeeper ensemble itself (package zabmodel: election,
// discovery, synchronization, broadcast, storage) with one client (package zabmodel/client).
type ZABConfig struct {
	// Servers is the number of voters: 1 to 5 (an even count has ZooKeeper's quorum of more than
	// half, see internal/quorum).
	Servers int
	// Writes is how many creates the client issues; each is an action of its own, so that its
	// moment is explored too.
	Writes int
	// Crashes bounds the crashes of a path: at any step, or armed at a server's next effect
	// boundary (between two persistence steps or around a quorum packet's send).
	Crashes int
	// Restarts bounds the restarts of a path.
	Restarts int
	// EarlyTimeouts bounds how often a path fires a timer early: while a message or hand-off is
	// due, or before the earliest pending timer.
	EarlyTimeouts int
	// Timers bounds how many timers a path fires in all (each moves the clock on); 0 means no
	// bound. Without it a path that never settles (a write never answered) never ends.
	Timers int
	// Bugs re-introduces bug-zoo switches in every server.
	Bugs zabmodel.Bugs
	// Warmup starts the exploration from the state a canonical schedule reaches once a leader is
	// established, every server serves and the client is connected: the first due event each
	// step, else the earliest timer. Without it the search starts at the servers' boot.
	Warmup bool
	// ZxidCounter, if positive, starts every new leader's zxid counter there
	// (zabmodel.Config.InitialZxidCounter), to reach the counter's overflow (ZK-1277) in a few
	// writes.
	ZxidCounter int64
	// NoCommute switches off the one reduction of this model: without it, a state's fingerprint
	// is its path, so two orders of deliveries to different nodes are two states. It exists to
	// show that the reduction changes the counts and not the verdicts.
	NoCommute bool
	// Coarse switches to the coarse granularity (see ZABModel): due events run in their
	// canonical order after every step, and the explored choices are only timers, writes and
	// faults. It is not the full interleaving space.
	Coarse bool
	// BoundarySkips lets an armed crash pass over up to this many of the server's effect
	// boundaries before it strikes: crash-at-boundary zkN +K crashes at the (K+1)-th. Without it
	// an armed crash reaches only the first boundary after the arming, which under Coarse is
	// often not the one a bug needs.
	BoundarySkips int
	// Reads bounds the client's reads: each is exists(/k0) with a watch, an action of its own, so
	// that the watch and session rules have something to judge (the first write's create fires
	// the watch when the read came first).
	Reads int
	// SelfTests breaks the servers on purpose (zabmodel.SelfTests), to see the client-visible
	// judges fire; none breaks a ZAB invariant.
	SelfTests zabmodel.SelfTests
	// HideTimers is a self-test of the checker, not a ZooKeeper behaviour: the driver never
	// offers a timer and never says that it withheld one, as if the servers had no timeouts. An
	// ensemble that loses its leader then never elects another, and the deadlock judge must say
	// so.
	HideTimers bool
	// MinTimers keeps a path from settling before it fired at least this many timers, so that
	// time passes after the writes are answered (pings, session renewals and expiries) and the
	// rules that need time are judged: the session checker's wrongful-expiry, which the
	// no-session-renewal self-test breaks. At most Timers when that is bounded.
	MinTimers int
	// Lockers adds lock applications (zab_lock.go), 0 to 3: each runs Curator's InterProcessMutex
	// on one fair lock and writes to a protected resource while it holds it, one cycle each,
	// started by the environment's action "lock lN"; the lock checkers judge every state.
	Lockers int
	// RecipeBugs re-introduces recipe bug switches (lockmodel.Bugs) in every locker.
	RecipeBugs lockmodel.Bugs
	// LockStartBy, if positive, lets a locker start its cycle only while fewer than this many
	// timers have fired on the path. A cycle takes a dozen timers (each transaction waits for
	// its fsyncs), and the moment of each start among them multiplies the states; 1 starts
	// every cycle before the first timer, in every order, all in flight together, the
	// contention the herd and fairness rules are about.
	LockStartBy int
	// NoReuse switches off the savings of re-execution and judging (see ZABModel): every state
	// is then built by running its whole path in a new world, the warm-up decided event by
	// event, and every state's client history is judged from scratch (not skipped when an
	// equal history passed before). They change the cost of a state, never a count or a
	// verdict; the switch exists to show that.
	NoReuse bool
	// NoCopy switches off copies of worlds (copy.go): a state's successors after the first, and
	// every build after the first, are then re-executed instead of copied. Like NoReuse it
	// changes the cost of a state, never a count or a verdict.
	NoCopy bool
}

// maxZABServers bounds the voters of a ZAB exploration: past five the state space of even the
// smallest bounds is out of reach.
const maxZABServers = 5

// maxWarmupSteps bounds the canonical warm-up; an ensemble that has not settled by then is
// reported as an error.
const maxWarmupSteps = 100_000

// Validate rejects bounds that make no sense.
func (c ZABConfig) Validate() error {
	switch {
	case c.Servers < 1 || c.Servers > maxZABServers:
		return fmt.Errorf("%w: servers %d: must be 1 to %d", errBadOptions, c.Servers, maxZABServers)
	case c.Writes < 0 || c.Writes > 100:
		return fmt.Errorf("%w: writes %d: must be 0 to 100", errBadOptions, c.Writes)
	case c.Reads < 0 || c.Reads > 100:
		return fmt.Errorf("%w: reads %d: must be 0 to 100", errBadOptions, c.Reads)
	case c.Crashes < 0 || c.Restarts < 0 || c.EarlyTimeouts < 0 || c.Timers < 0 || c.ZxidCounter < 0 || c.ZxidCounter > 0xffffffff:
		return fmt.Errorf("%w: negative bound in %+v", errBadOptions, c)
	case c.BoundarySkips < 0 || c.BoundarySkips > 255:
		return fmt.Errorf("%w: boundary skips %d: must be 0 to 255", errBadOptions, c.BoundarySkips)
	case c.Restarts > c.Crashes:
		return fmt.Errorf("%w: %d restarts need at least as many crashes (%d)", errBadOptions, c.Restarts, c.Crashes)
	case c.Lockers < 0 || c.Lockers > maxLockers:
		return fmt.Errorf("%w: lockers %d: must be 0 to %d", errBadOptions, c.Lockers, maxLockers)
	case c.LockStartBy < 0:
		return fmt.Errorf("%w: lock-start-by %d: must not be negative", errBadOptions, c.LockStartBy)
	case !c.RecipeBugs.Empty() && c.Lockers == 0:
		return fmt.Errorf("%w: recipe bugs %s act on lockers: give at least one", errBadOptions, c.RecipeBugs)
	case c.MinTimers < 0 || c.MinTimers > 10_000:
		return fmt.Errorf("%w: min-timers %d: must be 0 to 10000", errBadOptions, c.MinTimers)
	case c.Timers > 0 && c.MinTimers > c.Timers:
		return fmt.Errorf("%w: min-timers %d exceeds the timers bound %d: no path could settle", errBadOptions, c.MinTimers, c.Timers)
	}
	return nil
}

// ZABModel explores a zabmodel ensemble through the simulator's schedule mode (sim.World
// EnableScheduleMode). Each step is one enabled event of the world or one action of the bounded
// environment:
//
//   - a due event: the head message of any connection (FIFO within the connection), a loopback or
//     a thread hand-off a server posted for itself, a connection's handshake or close;
//   - once nothing is due, the earliest pending timer, which moves the clock to its deadline; any
//     timer earlier than that (while something is due, or before the earliest) only within
//     EarlyTimeouts (the asynchronous model lets a timer expire at any moment, but firing them
//     all in every order would make even one election unbounded), and every timer only within
//     Timers, the bound that makes a path that never settles finite;
//   - the client's next write, a crash of a server now or at its next effect boundary, a restart.
//
// Random draws are fixed: the world's Chooser answers 0 to every question, so each latency is the
// network's minimum (zero in this mode), each fsync and jitter its least value, a crashed disk
// loses its whole unsynced tail, and the client's choice of server is fixed. The servers, the client
// and the storage run exactly the code of the random sweep.
//
// A state is the path from the initial state: to step it, the search continues in the state's
// live world, in a copy of it, or in a world built again by re-executing the path (copy.go). Its
// fingerprint is made of every node's history hash (sim.World.HistoryHash), the
// world-level history, the clock and the bounds used: sound, because a node's state is a function
// of its history, and canonical up to the order of deliveries to different nodes, which commute.
// It is not canonical across histories that reach equal states by different inputs (a ping
// exchanged or not), so the state graph is a tree modulo commuting steps, and only a depth bound
// or settlement ends a path. A path settles, and ends, when every write has been answered and no
// event is due.
//
// Judges at every state: every invariant of checkers/zab, fed by the servers' events, and a run
// that panics or fails (ZK-4394's null dereference is a panic). At a settled state: the servers
// that applied the same last zxid hold trees with the same digest. A state where nothing is
// enabled, no bound cut anything and a write is unanswered is a deadlock.
type ZABModel struct {
	cfg ZABConfig

	// summaries makes every state keep its one-line summary (zabState.Summary). A search never
	// reads it (a counterexample is replayed by ReplayPath, which renders the world itself), and
	// rendering it cost about 2% of a search's CPU, so only the tests that compare states by their
	// summaries ask for it.
	summaries bool

	// warm is the warm-up's choice prefix: the sequence numbers of the events the canonical
	// warm-up fired, recorded by the first build and fired as they are by every later one.
	warmMu sync.Mutex
	warm   []uint64
	// warmReplays counts the builds that fired the recorded prefix, for the tests.
	warmReplays atomic.Int64
	// inPlace counts the steps taken in a live world instead of a re-executed one, for the
	// tests and the benchmark.
	inPlace atomic.Int64

	// passed holds the keys of the client histories (clientHistory.judge) that passed the
	// client-visible checkers: a state whose history is one of them, in any world, passes
	// without running them again. Many states share their history: a crash armed, a timer
	// that changes nothing the client sees. At most maxPassed keys are kept.
	passedMu sync.Mutex
	passed   map[Fingerprint]struct{}
	// judgeRuns and judgeSkips count the client judgements run and spared, for the tests.
	judgeRuns, judgeSkips atomic.Int64

	// Copies (copy.go): base is a copy of the world after the warm-up, never stepped; copiers
	// pools the copiers; copyOff is set, with its reason, when a world of this configuration
	// cannot be copied; copies and fromCopy count the copies made and the steps taken in one.
	baseMu        sync.Mutex
	base          *deepcopy.Frozen[zabWorld]
	copiersMu     sync.Mutex
	copiers       []*deepcopy.Copier
	copyOff       atomic.Bool
	copyOffOnce   sync.Once
	copyOffReason string
	copies        atomic.Int64
	fromCopy      atomic.Int64
}

// maxPassed bounds ZABModel.passed: about 40 MB of keys.
const maxPassed = 1 << 20

// historyPassed reports whether a history with this key passed before (never under NoReuse,
// which switches off every saving).
func (m *ZABModel) historyPassed(key Fingerprint) bool {
	if m.cfg.NoReuse {
		m.judgeRuns.Add(1)
		return false
	}
	m.passedMu.Lock()
	_, ok := m.passed[key]
	m.passedMu.Unlock()
	if ok {
		m.judgeSkips.Add(1)
	} else {
		m.judgeRuns.Add(1)
	}
	return ok
}

func (m *ZABModel) historyPasses(key Fingerprint) {
	if m.cfg.NoReuse {
		return
	}
	m.passedMu.Lock()
	if m.passed == nil {
		m.passed = map[Fingerprint]struct{}{}
	}
	if len(m.passed) < maxPassed {
		m.passed[key] = struct{}{}
	}
	m.passedMu.Unlock()
}

// NewZAB validates cfg and returns the model.
func NewZAB(cfg ZABConfig) (*ZABModel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &ZABModel{cfg: cfg}, nil
}

// Name implements Model.
func (m *ZABModel) Name() string { return "zab" }

// Action kinds of the ZAB model.
const (
	zabFire uint32 = iota + 1
	zabWrite
	zabCrash
	zabCrashAt
	zabRestart
	zabRead
	zabLock
)

func zabAction(kind uint32, arg int) Action { return Action(kind<<24 | uint32(arg)) }

func (a Action) zabKind() uint32 { return uint32(a) >> 24 }
func (a Action) zabArg() int     { return int(uint32(a) & 0xffffff) }

// zeroChooser answers every question with 0: the least latency, the least jitter, one fixed
// server for the client, a disk that keeps nothing unsynced.
type zeroChooser struct{}

func (zeroChooser) Choose(int) int { return 0 }

// zabWorld is one built world with the environment's bookkeeping.
type zabWorld struct {
	m       *ZABModel
	w       *sim.World
	nw      *net.Network
	ens     *zabmodel.Ensemble
	client  *client.Client
	clientN sim.NodeID
	nodes   []sim.NodeID // the servers' nodes, by sid-1

	writesIssued, writesDone         int
	readsIssued, readsDone           int
	history                          *clientHistory
	lock                             *lockDriver // nil without Lockers
	warmedUp                         bool        // the warm-up is over (HideTimers hides timers only after it)
	crashes, restarts, early, timers int
	armed                            []int // boundaries until an armed crash strikes, plus one; 0: not armed
	violation                        *Violation
	enabled                          []sim.EnabledEvent
	earliest                         int
	trace                            io.Writer
}

// build returns the world of the initial state: a copy of the first one built, when copies are
// on and no trace is wanted (a trace is written as the world runs, so a traced world is built).
func (m *ZABModel) build(trace io.Writer) (*zabWorld, error) {
	if trace != nil || !m.copying() {
		return m.buildNew(trace)
	}
	m.baseMu.Lock()
	base := m.base
	if base == nil {
		defer m.baseMu.Unlock()
		zw, err := m.buildNew(nil)
		if err != nil {
			return nil, err
		}
		// A refusal leaves base nil and switches copies off: the configuration falls back to
		// re-execution.
		_, base, err := m.copyWorldFrozen(zw)
		if err != nil {
			if m.copyOff.Load() {
				return zw, nil
			}
			return nil, err
		}
		m.base = base
		return zw, nil
	}
	m.baseMu.Unlock()
	m.fromCopy.Add(1)
	return m.copyFrozen(base), nil
}

func (m *ZABModel) buildNew(trace io.Writer) (*zabWorld, error) {
	cfg := sim.Config{Seed: 1, Chooser: zeroChooser{}}
	if trace != nil {
		cfg.Trace = sim.TraceConfig{Text: trace}
	}
	w, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := w.EnableScheduleMode(); err != nil {
		return nil, err
	}
	nw, err := net.New(w, net.Config{LatencyMin: 0, LatencyMax: 1, LatencyStep: 1})
	if err != nil {
		return nil, err
	}
	zw := &zabWorld{m: m, w: w, nw: nw, armed: make([]int, m.cfg.Servers), trace: trace}
	var voters []int64
	for i := range m.cfg.Servers {
		voters = append(voters, int64(i+1))
	}
	zw.history = newClientHistory(zw)
	checker, err := zab.New(zab.Config{Voters: voters, InitialZxidCounter: m.cfg.ZxidCounter, Listener: zabListener{zw}})
	if err != nil {
		return nil, err
	}
	observer := zabObserver{zw: zw, checker: checker}
	ens, err := zabmodel.NewEnsemble(w, nw, zabmodel.Config{Voters: m.cfg.Servers, Bugs: m.cfg.Bugs, SelfTests: m.cfg.SelfTests, Observer: observer, InitialZxidCounter: m.cfg.ZxidCounter})
	if err != nil {
		return nil, err
	}
	ens.SetBoundaryDecider(zabBoundaries{zw})
	zw.ens = ens
	zw.nodes = ens.Nodes()
	ens.Start()
	zw.clientN = w.AddNode("c1", nil)
	zw.client, err = client.New(w, nw, zw.clientN, client.Config{Servers: ens.Nodes(), SessionTimeout: 6 * clock.Second}, clientWatcher{zw.history})
	if err != nil {
		return nil, err
	}
	if m.cfg.Lockers > 0 {
		if zw.lock, err = newLockDriver(zw); err != nil {
			return nil, err
		}
	}
	zw.refresh()
	if m.cfg.Warmup {
		if err := zw.warmupCached(); err != nil {
			return nil, err
		}
	}
	zw.warmedUp = true
	zw.refresh()
	if err := zw.settle(); err != nil {
		return nil, err
	}
	zw.history.observeHealth()
	return zw, nil
}

// The world's hooks into the driver are values with methods, not closures, so that a world can be
// copied (copy.go): zabListener takes the ZAB checker's reports, zabObserver the servers' events,
// zabBoundaries decides armed crashes at effect boundaries.
type zabListener struct{ zw *zabWorld }

func (l zabListener) Violated(v zab.Violation) {
	if l.zw.violation == nil {
		l.zw.violation = &Violation{Invariant: string(v.Invariant), Explanation: v.String()}
	}
}

func (l zabListener) Committed(zxid int64, hash uint64) { l.zw.history.committed(zxid, hash) }

type zabObserver struct {
	zw      *zabWorld
	checker *zab.Checker
}

func (o zabObserver) Observe(e zabmodel.Event) {
	o.zw.history.observe(e)
	o.checker.Observe(e)
}

type zabBoundaries struct{ zw *zabWorld }

func (b zabBoundaries) CrashAt(sid int64, point string, conn net.ConnID) bool {
	zw := b.zw
	i := int(sid - 1)
	if i < 0 || i >= len(zw.armed) || zw.armed[i] == 0 {
		return false
	}
	zw.armed[i]--
	if zw.armed[i] > 0 {
		zw.w.NoteHistory(sim.NoNode, "skipped "+strconv.Itoa(i))
		return false
	}
	zw.w.Note(zw.nodes[i], "fault", "crash at %s", point)
	return true
}

// warmupCached runs the warm-up, or fires the choice prefix an earlier build of the same model
// recorded. The world is deterministic: the same calls in the same order give the same events
// with the same sequence numbers, so firing the recorded ones reaches the same state without
// listing the enabled events, judging and testing readiness after each (about a fifth of a
// state's cost). Dead timers the skipped listings would have dropped stay in the pending list
// until the next listing; they are never enabled, so no index of a later "fire N" changes.
func (zw *zabWorld) warmupCached() error {
	m := zw.m
	if m.cfg.NoReuse || zw.trace != nil {
		_, err := zw.warmup()
		return err
	}
	m.warmMu.Lock()
	prefix := m.warm
	m.warmMu.Unlock()
	if prefix == nil {
		fired, err := zw.warmup()
		if err != nil {
			return err
		}
		m.warmMu.Lock()
		if m.warm == nil {
			m.warm = fired
		}
		m.warmMu.Unlock()
		return nil
	}
	m.warmReplays.Add(1)
	for i, seq := range prefix {
		if _, err := zw.w.FireEnabled(seq); err != nil {
			return fmt.Errorf("modelcheck: warm-up prefix step %d: %w", i+1, err)
		}
	}
	zw.refresh()
	return nil
}

// warmup runs the canonical schedule until the ensemble serves and the client is connected, and
// returns the sequence numbers of the events it fired.
func (zw *zabWorld) warmup() ([]uint64, error) {
	fired := []uint64{}
	for range maxWarmupSteps {
		if zw.ready() {
			return fired, nil
		}
		pick := -1
		for i := range zw.enabled {
			if zw.due(i) {
				pick = i
				break
			}
		}
		if pick < 0 {
			pick = zw.earliest
		}
		if pick < 0 {
			return nil, errors.New("modelcheck: the warm-up ran out of events before the ensemble served")
		}
		seq := zw.enabled[pick].Seq
		if _, err := zw.w.FireEnabled(seq); err != nil {
			return nil, err
		}
		fired = append(fired, seq)
		zw.refresh()
		if v := zw.check(); v != nil {
			return nil, fmt.Errorf("modelcheck: the warm-up itself violates %s: %s", v.Invariant, v.Explanation)
		}
	}
	return nil, fmt.Errorf("modelcheck: the ensemble did not serve within %d warm-up steps", maxWarmupSteps)
}

// ready reports whether a leader is established, every server serves, the client is connected
// and nothing is due.
func (zw *zabWorld) ready() bool {
	if _, _, ok := zw.ens.Leader(); !ok || !zw.client.State().IsConnected() {
		return false
	}
	if zw.lock != nil && !zw.lock.connected() {
		return false
	}
	for _, s := range zw.ens.Servers() {
		if !s.State().Serving {
			return false
		}
	}
	for i := range zw.enabled {
		if zw.due(i) {
			return false
		}
	}
	return true
}

// refresh lists the enabled events and finds the earliest pending timer.
func (zw *zabWorld) refresh() {
	zw.enabled = zw.w.Enabled(zw.enabled[:0])
	if zw.m.cfg.HideTimers && zw.warmedUp {
		kept := zw.enabled[:0]
		for _, ev := range zw.enabled {
			if !ev.Timer {
				kept = append(kept, ev)
			}
		}
		zw.enabled = kept
	}
	zw.earliest = -1
	now := zw.w.Now()
	for i, ev := range zw.enabled {
		if ev.At <= now {
			continue
		}
		if zw.earliest < 0 || ev.At < zw.enabled[zw.earliest].At {
			zw.earliest = i
		}
	}
}

func (zw *zabWorld) due(i int) bool { return zw.enabled[i].At <= zw.w.Now() }

func (zw *zabWorld) anyDue() bool {
	for i := range zw.enabled {
		if zw.due(i) {
			return true
		}
	}
	return false
}

// maxSettleSteps bounds the due events one coarse step runs; more means the ensemble exchanges
// messages for ever without a timer, which is reported as an error of the model.
const maxSettleSteps = 100_000

// settle runs, under Coarse, every due event in the canonical order (the first enabled) until
// nothing is due or a judge failed, and lists the enabled events again; without Coarse it does
// nothing. It asks the world for the first due event (sim.World.FirstDue) instead of listing
// every pending event after each one: the same pick, at a fraction of the cost.
func (zw *zabWorld) settle() error {
	if !zw.m.cfg.Coarse {
		return nil
	}
	hideTimers := zw.m.cfg.HideTimers && zw.warmedUp
	fired := false
	defer func() {
		if fired {
			zw.refresh()
		}
	}()
	for range maxSettleSteps {
		if zw.check() != nil || zw.w.Ended() {
			return nil
		}
		ev, ok := zw.w.FirstDue(hideTimers)
		if !ok {
			return nil
		}
		if zw.trace != nil {
			fmt.Fprintf(zw.trace, "  due: %s %s\n", zw.w.Name(ev.Node), zw.eventName(ev))
		}
		fired = true
		if _, err := zw.w.FireEnabled(ev.Seq); err != nil {
			return err
		}
	}
	return fmt.Errorf("modelcheck: %d due events in a row without a timer", maxSettleSteps)
}

func (zw *zabWorld) settled() bool {
	if zw.writesIssued < zw.m.cfg.Writes || zw.writesDone < zw.m.cfg.Writes {
		return false
	}
	if zw.timers < zw.m.cfg.MinTimers {
		return false
	}
	if zw.lock != nil && !zw.lock.finished(zw.lockWindowOpen()) {
		return false
	}
	if zw.readsIssued < zw.m.cfg.Reads || zw.readsDone < zw.m.cfg.Reads {
		return false
	}
	for i := range zw.enabled {
		if zw.due(i) {
			return false
		}
	}
	if !zw.m.cfg.Coarse {
		return true
	}
	// Under Coarse a path goes on after the writes are answered while a fault is left to take,
	// and then until the ensemble serves again: the bugs that lose a committed write show only
	// after a crash, a restart and a new election.
	if zw.crashes < zw.m.cfg.Crashes {
		return false
	}
	for _, node := range zw.nodes {
		if !zw.w.IsUp(node) && zw.restarts < zw.m.cfg.Restarts {
			return false
		}
	}
	return zw.serving()
}

// serving reports whether a leader is established and every live server serves.
func (zw *zabWorld) serving() bool {
	if _, _, ok := zw.ens.Leader(); !ok {
		return false
	}
	for _, s := range zw.ens.Servers() {
		if st := s.State(); st.Up && !st.Serving {
			return false
		}
	}
	return true
}

func (zw *zabWorld) actions(buf []Action) ([]Action, bool) {
	if zw.violation != nil || zw.w.Ended() || zw.settled() {
		return buf, false
	}
	cut := false
	anyDue := false
	for i := range zw.enabled {
		anyDue = anyDue || zw.due(i)
	}
	for i := range zw.enabled {
		switch {
		case zw.due(i):
			buf = append(buf, zabAction(zabFire, i))
		case zw.m.cfg.Timers > 0 && zw.timers >= zw.m.cfg.Timers:
			cut = true
		case i == zw.earliest && !anyDue:
			buf = append(buf, zabAction(zabFire, i))
		case zw.early < zw.m.cfg.EarlyTimeouts:
			buf = append(buf, zabAction(zabFire, i))
		}
	}
	if zw.writesIssued < zw.m.cfg.Writes {
		buf = append(buf, zabAction(zabWrite, 0))
	}
	if zw.readsIssued < zw.m.cfg.Reads {
		buf = append(buf, zabAction(zabRead, 0))
	}
	if zw.lock != nil && zw.lockWindowOpen() {
		for i, l := range zw.lock.lockers {
			if !l.issued {
				buf = append(buf, zabAction(zabLock, i))
			}
		}
	}
	for i, node := range zw.nodes {
		up := zw.w.IsUp(node)
		if up && zw.crashes < zw.m.cfg.Crashes {
			buf = append(buf, zabAction(zabCrash, i))
			if zw.armed[i] == 0 {
				for skip := range zw.m.cfg.BoundarySkips + 1 {
					buf = append(buf, zabAction(zabCrashAt, i|skip<<8))
				}
			}
		}
		if !up && zw.restarts < zw.m.cfg.Restarts {
			buf = append(buf, zabAction(zabRestart, i))
		}
	}
	return buf, cut
}

// lockWindowOpen reports whether a locker may still start its cycle (ZABConfig.LockStartBy).
func (zw *zabWorld) lockWindowOpen() bool {
	return zw.m.cfg.LockStartBy == 0 || zw.timers < zw.m.cfg.LockStartBy
}

func (zw *zabWorld) step(a Action) error {
	arg := a.zabArg()
	switch a.zabKind() {
	case zabFire:
		if arg >= len(zw.enabled) {
			return fmt.Errorf("modelcheck: fire %d: only %d events are enabled", arg, len(zw.enabled))
		}
		if !zw.due(arg) {
			zw.timers++
			if arg != zw.earliest || zw.anyDue() {
				zw.early++
			}
		}
		if _, err := zw.w.FireEnabled(zw.enabled[arg].Seq); err != nil {
			return err
		}
	case zabWrite:
		k := zw.writesIssued
		zw.writesIssued++
		zw.w.NoteHistory(zw.clientN, "write "+strconv.Itoa(k))
		zw.w.Note(zw.clientN, "op", "create /k%d", k)
		if err := zw.history.create(k); err != nil {
			return fmt.Errorf("modelcheck: write %d: %w", k, err)
		}
	case zabRead:
		k := zw.readsIssued
		zw.readsIssued++
		zw.w.NoteHistory(zw.clientN, "read "+strconv.Itoa(k))
		zw.w.Note(zw.clientN, "op", "exists %s watch", watchedPath)
		if err := zw.history.read(); err != nil {
			return fmt.Errorf("modelcheck: read %d: %w", k, err)
		}
	case zabLock:
		if zw.lock == nil || arg >= len(zw.lock.lockers) {
			return fmt.Errorf("modelcheck: lock l%d: no such locker", arg+1)
		}
		if err := zw.lock.start(arg); err != nil {
			return fmt.Errorf("modelcheck: lock l%d: %w", arg+1, err)
		}
	case zabCrash:
		zw.crashes++
		zw.w.Crash(zw.nodes[arg])
	case zabCrashAt:
		zw.crashes++
		zw.armed[arg&0xff] = arg>>8 + 1
		zw.w.NoteHistory(sim.NoNode, "armed "+strconv.Itoa(arg))
	case zabRestart:
		zw.restarts++
		zw.w.Restart(zw.nodes[arg])
	default:
		return fmt.Errorf("modelcheck: unknown action %#x", uint32(a))
	}
	zw.refresh()
	if err := zw.settle(); err != nil {
		return err
	}
	zw.history.observeHealth()
	return nil
}

func (zw *zabWorld) check() *Violation {
	if zw.violation != nil {
		return zw.violation
	}
	if o := zw.w.Outcome(); o.Kind == sim.Panic || o.Kind == sim.Failure {
		return &Violation{Invariant: o.Kind.String(), Explanation: fmt.Sprint(o.Err)}
	}
	return nil
}

// judge is the judgement of every state: check, then the client-visible checkers on the history
// so far (zab_client.go). The warm-up and the coarse model's due events between two states are
// judged by check alone: a client-visible violation there is still in the history of the state
// they lead to.
func (zw *zabWorld) judge() *Violation {
	if v := zw.check(); v != nil {
		return v
	}
	if v := zw.history.judge(false); v != nil {
		return v
	}
	if zw.lock != nil {
		return zw.lock.judge(zw.history.rec.Finish(zw.w.Now(), nil).Committed)
	}
	return nil
}

// checkSettled: no server exited on its own, servers that applied the same last zxid hold the
// same tree, and, when the client is connected to a serving server, the watch-missed rule.
func (zw *zabWorld) checkSettled() *Violation {
	if !zw.settled() {
		return nil
	}
	if zw.clientServes() {
		if v := zw.history.judge(true); v != nil {
			return v
		}
	}
	digests := map[int64]zabmodel.State{}
	for _, s := range zw.ens.Servers() {
		st := s.State()
		if !st.Up && s.Exit() != "" {
			// The sweep's convergence check: a server that stopped on its own (a refused start,
			// ZK-1653 and epoch-refusal) never comes back.
			return &Violation{Invariant: "ServerExited", Explanation: fmt.Sprintf("zk%d exited on its own: %s", st.Sid, s.Exit())}
		}
		if !st.Up {
			continue
		}
		if other, ok := digests[st.LastProcessedZxid]; ok && other.Digest != st.Digest {
			return &Violation{Invariant: "DigestMismatch", Explanation: fmt.Sprintf("zk%d and zk%d applied up to %s with different tree digests %#x and %#x",
				other.Sid, st.Sid, zabmodel.FormatZxid(st.LastProcessedZxid), other.Digest, st.Digest)}
		}
		digests[st.LastProcessedZxid] = st
	}
	return nil
}

func (zw *zabWorld) fingerprint() Fingerprint {
	var buf [256]byte
	b := buf[:0]
	b = binary.AppendVarint(b, int64(zw.w.Now()))
	for n := range zw.w.NumNodes() {
		node := sim.NodeID(n)
		up := uint64(0)
		if zw.w.IsUp(node) {
			up = 1
		}
		b = binary.AppendUvarint(b, up)
		b = binary.LittleEndian.AppendUint64(b, zw.w.HistoryHash(node))
	}
	b = binary.LittleEndian.AppendUint64(b, zw.w.HistoryHash(sim.NoNode))
	for _, v := range []int{zw.writesIssued, zw.writesDone, zw.readsIssued, zw.readsDone, zw.crashes, zw.restarts, zw.early, zw.timers} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	for _, armed := range zw.armed {
		b = binary.AppendUvarint(b, uint64(armed))
	}
	if zw.lock != nil {
		b = binary.AppendUvarint(b, uint64(zw.lock.issued))
		b = binary.AppendUvarint(b, uint64(zw.lock.done))
	}
	return hashBytes(b)
}

func (zw *zabWorld) summary() string {
	var parts []string
	for _, s := range zw.ens.Servers() {
		st := s.State()
		if !st.Up {
			parts = append(parts, fmt.Sprintf("zk%d down", st.Sid))
			continue
		}
		parts = append(parts, fmt.Sprintf("zk%d %s e%d/%d last=%s", st.Sid, st.Role, st.AcceptedEpoch, st.CurrentEpoch, zabmodel.FormatZxid(st.LastProcessedZxid)))
	}
	parts = append(parts, fmt.Sprintf("writes %d/%d", zw.writesDone, zw.writesIssued))
	if zw.m.cfg.Reads > 0 {
		parts = append(parts, fmt.Sprintf("reads %d/%d", zw.readsDone, zw.readsIssued))
	}
	if zw.lock != nil {
		parts = append(parts, fmt.Sprintf("lock cycles %d/%d", zw.lock.done, zw.lock.issued))
	}
	return strings.Join(parts, ", ")
}

// describe renders action a in this world, before it is taken.
func (zw *zabWorld) describe(a Action) (string, string) {
	arg := a.zabArg()
	switch a.zabKind() {
	case zabFire:
		line := fmt.Sprintf("fire %d", arg)
		if arg >= len(zw.enabled) {
			return line, ""
		}
		ev := zw.enabled[arg]
		detail := zw.w.Name(ev.Node) + " " + zw.eventName(ev)
		if !zw.due(arg) {
			if arg == zw.earliest && !zw.anyDue() {
				detail += fmt.Sprintf(", clock to %s", strings.TrimSpace(ev.At.String()))
			} else {
				detail += ", early"
			}
		}
		return line, detail
	case zabWrite:
		return "write", fmt.Sprintf("c1 creates /k%d", zw.writesIssued)
	case zabRead:
		return "read", fmt.Sprintf("c1 asks exists %s with a watch", watchedPath)
	case zabLock:
		return fmt.Sprintf("lock l%d", arg+1), fmt.Sprintf("l%d acquires %s, writes to the resource under it, releases", arg+1, lockPath)
	case zabCrash:
		return fmt.Sprintf("crash zk%d", arg+1), ""
	case zabCrashAt:
		if skip := arg >> 8; skip > 0 {
			return fmt.Sprintf("crash-at-boundary zk%d +%d", arg&0xff+1, skip), fmt.Sprintf("crashes at its effect boundary %d from now", skip+1)
		}
		return fmt.Sprintf("crash-at-boundary zk%d", arg&0xff+1), "crashes at its next effect boundary"
	case zabRestart:
		return fmt.Sprintf("restart zk%d", arg+1), ""
	}
	return fmt.Sprintf("unknown %#x", uint32(a)), ""
}

// eventName renders an enabled event's key: a delivery names its connection's ends and port.
func (zw *zabWorld) eventName(ev sim.EnabledEvent) string {
	key := zw.w.EventKey(ev.Seq)
	if rest, ok := strings.CutPrefix(key, "target "); ok {
		if key, err := strconv.ParseUint(rest, 10, 64); err == nil {
			from, to, port := sim.NodeID(key>>40), sim.NodeID(key>>20&0xfffff), key&0xfffff
			return fmt.Sprintf("receives from %s->%s:%d", zw.w.Name(from), zw.w.Name(to), port)
		}
	}
	return key
}

// zabState is a path from the initial state, with what its world showed when it was built.
type zabState struct {
	m         *ZABModel
	path      []Action
	fp        Fingerprint
	actions   []Action
	cut       bool
	violation *Violation
	terminal  *Violation
	summary   string
	lines     []string   // Describe's line and detail per action, two entries each
	keys      []SleepKey // ActionKey's key per action; Owner 0 means not keyed
	// world is the live world the state was built in, until a step takes it over (see Step).
	world atomic.Pointer[zabWorld]
	// cs keeps a copy of the world for the steps after the first (copy.go).
	cs copyState
}

func (m *ZABModel) stateOf(path []Action, zw *zabWorld) *zabState {
	s := &zabState{m: m, path: path, fp: zw.fingerprint(), violation: zw.judge()}
	if m.summaries {
		s.summary = zw.summary()
	}
	s.cs.remaining = -1
	if m.cfg.NoCommute {
		b := make([]byte, 0, 4*len(path))
		for _, a := range path {
			b = binary.LittleEndian.AppendUint32(b, uint32(a))
		}
		s.fp = hashBytes(b)
	}
	s.actions, s.cut = zw.actions(nil)
	if s.violation == nil && len(s.actions) == 0 {
		s.terminal = zw.checkTerminal(s.cut)
	}
	for _, a := range s.actions {
		line, detail := zw.describe(a)
		s.lines = append(s.lines, line, detail)
	}
	s.keys = zw.sleepKeys(s.actions)
	if !m.cfg.NoReuse && len(s.actions) > 0 {
		s.world.Store(zw)
	}
	return s
}

// Init implements Model.
func (m *ZABModel) Init() (State, error) {
	zw, err := m.build(nil)
	if err != nil {
		return nil, err
	}
	return m.stateOf(nil, zw), nil
}

// replay builds a world and takes path in it.
func (m *ZABModel) replay(path []Action, trace io.Writer) (*zabWorld, error) {
	zw, err := m.build(trace)
	if err != nil {
		return nil, err
	}
	for i, a := range path {
		if trace != nil {
			line, detail := zw.describe(a)
			fmt.Fprintf(trace, "step %d: %s (%s)\n", i+1, line, detail)
		}
		if err := zw.step(a); err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return zw, nil
}

// Step implements State. The first step taken from a state that still holds its live world
// continues in that world (the world is deterministic, so that is the world a re-execution of the
// path would build) and takes it over; a later step continues in a copy of it (worldForStep), or,
// without copies, re-executes the path in a new world. A breadth-first search releases the worlds
// of the states it queues (release), since a level's worth of live worlds would not fit in
// memory.
func (s *zabState) Step(a Action) (State, error) {
	path := make([]Action, len(s.path)+1)
	copy(path, s.path)
	path[len(s.path)] = a
	zw, err := s.worldForStep()
	if err != nil {
		return nil, err
	}
	if zw != nil {
		if err := zw.step(a); err != nil {
			return nil, fmt.Errorf("step %d: %w", len(path), err)
		}
		return s.m.stateOf(path, zw), nil
	}
	zw, err = s.m.replay(path, nil)
	if err != nil {
		return nil, err
	}
	return s.m.stateOf(path, zw), nil
}

// PlanSteps implements stepPlanner.
func (s *zabState) PlanSteps(n int) {
	s.cs.mu.Lock()
	s.cs.remaining = n
	s.cs.mu.Unlock()
}

// worldForStep returns a world at this state for the next step to take, or nil when the step
// must re-execute its path: the live world (keeping a copy first when more steps are planned),
// else a copy of that copy (the last planned step takes the copy itself). A state without
// either (a breadth-first search released it) that will take several steps re-executes its own
// path once and then proceeds as with a live world.
func (s *zabState) worldForStep() (*zabWorld, error) {
	s.cs.mu.Lock()
	defer s.cs.mu.Unlock()
	r := s.cs.remaining
	if r > 0 {
		s.cs.remaining--
	}
	more := r > 1 || (r < 0 && len(s.actions) > 1)
	zw := s.world.Swap(nil)
	if zw != nil {
		s.m.inPlace.Add(1)
	} else if snap := s.cs.snap; snap != nil {
		s.m.fromCopy.Add(1)
		if r == 1 {
			s.cs.snap, s.cs.frozen = nil, nil
			return snap, nil
		}
		if s.cs.frozen == nil {
			f, err := s.m.freeze(snap)
			if err != nil {
				return nil, err
			}
			s.cs.frozen = f
		}
		return s.m.copyFrozen(s.cs.frozen), nil
	} else if more && s.m.copying() {
		var err error
		if zw, err = s.m.replay(s.path, nil); err != nil {
			return nil, err
		}
	}
	if zw != nil && more && s.m.copying() {
		// With two steps planned the second takes the kept copy as it is, so its layout is
		// wanted only with more (or when the search did not say).
		var snap *zabWorld
		var frozen *deepcopy.Frozen[zabWorld]
		var err error
		if r == 2 {
			snap, err = s.m.copyWorld(zw)
		} else {
			snap, frozen, err = s.m.copyWorldFrozen(zw)
		}
		if err != nil && !s.m.copyOff.Load() {
			return nil, err
		}
		s.cs.snap, s.cs.frozen = snap, frozen
	}
	return zw, nil
}

// sleepKeys names each action for the search's sleep sets (ActionKeyer): a due event of a node,
// not a timer, is keyed by its node and its canonical event key. Two such events of different
// nodes commute: each runs only its node's code, which changes only its node's state and
// appends to the connections from it (a delivery takes only the head of its connection, and
// the network drops queued messages only towards the node that closes or receives a reset), at
// the same time (a due event does not move the clock), and the fingerprint folds each node's
// events into that node's own history. Not keyed, so never put to sleep: timers (they move the
// clock and spend the Timers bound), world-level events, the environment's actions, events of a
// state where a crash is armed (a boundary skip is noted in the world-level history, whose
// order would then differ), two events with one key (one name must mean one transition), and
// everything under NoCommute, whose fingerprint is the path.
func (zw *zabWorld) sleepKeys(actions []Action) []SleepKey {
	keys := make([]SleepKey, len(actions))
	if zw.m.cfg.NoCommute {
		return keys
	}
	for _, armed := range zw.armed {
		if armed != 0 {
			return keys
		}
	}
	for i, a := range actions {
		if a.zabKind() != zabFire {
			continue
		}
		ev := zw.enabled[a.zabArg()]
		if !zw.due(a.zabArg()) || ev.Timer || ev.Node == sim.NoNode {
			continue
		}
		h := hashBytes([]byte(zw.w.EventKey(ev.Seq)))
		keys[i] = SleepKey{Owner: uint32(ev.Node) + 1, Key: h[0]}
	}
	shared := make([]bool, len(keys))
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[i].Owner != 0 && keys[i] == keys[j] {
				shared[i], shared[j] = true, true
			}
		}
	}
	for i, dup := range shared {
		if dup {
			keys[i] = SleepKey{}
		}
	}
	return keys
}

// ActionKey implements ActionKeyer (see sleepKeys).
func (s *zabState) ActionKey(a Action) (SleepKey, bool) {
	for i, b := range s.actions {
		if b == a {
			return s.keys[i], s.keys[i].Owner != 0
		}
	}
	return SleepKey{}, false
}

// release drops the state's live world: the search will not step it soon.
func (s *zabState) release() {
	s.world.Store(nil)
	s.cs.mu.Lock()
	s.cs.snap, s.cs.frozen = nil, nil
	s.cs.mu.Unlock()
}

// Fingerprint implements State.
func (s *zabState) Fingerprint() Fingerprint { return s.fp }

// Actions implements State.
func (s *zabState) Actions(buf []Action) ([]Action, bool) { return append(buf, s.actions...), s.cut }

// Check implements State.
func (s *zabState) Check() *Violation { return s.violation }

// CheckTerminal implements State.
func (s *zabState) CheckTerminal(bool) *Violation { return s.terminal }

// Summary renders the state in one line when the model keeps summaries (ZABModel.summaries), and
// names it by its fingerprint otherwise.
func (s *zabState) Summary() string {
	if s.summary == "" {
		return fmt.Sprintf("state %016x%016x", s.fp[0], s.fp[1])
	}
	return s.summary
}

// Describe implements Model.
func (m *ZABModel) Describe(st State, a Action) (string, string) {
	if s, ok := st.(*zabState); ok {
		for i, b := range s.actions {
			if b == a {
				return s.lines[2*i], s.lines[2*i+1]
			}
		}
	}
	zw := &zabWorld{m: m}
	line, _ := zw.describe(a)
	return line, ""
}

// ParseAction implements Model.
func (m *ZABModel) ParseAction(line string) (Action, error) {
	fields := strings.Fields(line)
	if len(fields) == 1 && fields[0] == "write" {
		return zabAction(zabWrite, 0), nil
	}
	if len(fields) == 1 && fields[0] == "read" {
		return zabAction(zabRead, 0), nil
	}
	skip := 0
	if len(fields) == 3 && fields[0] == "crash-at-boundary" {
		n, err := strconv.Atoi(strings.TrimPrefix(fields[2], "+"))
		if err != nil || !strings.HasPrefix(fields[2], "+") || n < 0 || n > 255 {
			return 0, fmt.Errorf("modelcheck: %q: want crash-at-boundary zkN +K", line)
		}
		skip = n
		fields = fields[:2]
	}
	if len(fields) != 2 {
		return 0, fmt.Errorf("modelcheck: %q: want an action and its argument", line)
	}
	if fields[0] == "lock" {
		i, err := strconv.Atoi(strings.TrimPrefix(fields[1], "l"))
		if err != nil || !strings.HasPrefix(fields[1], "l") || i < 1 || i > m.cfg.Lockers {
			return 0, fmt.Errorf("modelcheck: %q: no locker %q (l1 to l%d)", line, fields[1], m.cfg.Lockers)
		}
		return zabAction(zabLock, i-1), nil
	}
	if fields[0] == "fire" {
		i, err := strconv.Atoi(fields[1])
		if err != nil || i < 0 || i >= 1<<24 {
			return 0, fmt.Errorf("modelcheck: %q: want fire N", line)
		}
		return zabAction(zabFire, i), nil
	}
	kinds := map[string]uint32{"crash": zabCrash, "crash-at-boundary": zabCrashAt, "restart": zabRestart}
	kind, ok := kinds[fields[0]]
	if !ok {
		return 0, fmt.Errorf("modelcheck: %q: unknown action %q", line, fields[0])
	}
	id, err := strconv.Atoi(strings.TrimPrefix(fields[1], "zk"))
	if err != nil || !strings.HasPrefix(fields[1], "zk") || id < 1 || id > m.cfg.Servers {
		return 0, fmt.Errorf("modelcheck: %q: no server %q (zk1 to zk%d)", line, fields[1], m.cfg.Servers)
	}
	return zabAction(kind, id-1|skip<<8), nil
}

// ReplayPath implements PathReplayer: one world runs the whole path with its trace rendered to w,
// each step announced before the trace lines it causes.
func (m *ZABModel) ReplayPath(path []Action, w io.Writer) (*Violation, error) {
	zw, err := m.replay(path, w)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "state after %d steps: %s\n", len(path), zw.summary())
	if v := zw.judge(); v != nil {
		return v, nil
	}
	if actions, cut := zw.actions(nil); len(actions) == 0 {
		return zw.checkTerminal(cut), nil
	}
	return nil, nil
}

// checkTerminal judges a state in which the search takes no action: the settled judges, and the
// two deadlocks. A path that ends with a write or a read issued and unanswered, and not because
// a bound stopped it, leaves it unanswered for ever. A state in which the world has no pending event at all (no
// timer either: a settled path ends while timers are still armed, and those are no deadlock)
// and in which no leader serves stays so for ever: the ensemble is stuck without a leader.
func (zw *zabWorld) checkTerminal(cut bool) *Violation {
	if v := zw.checkSettled(); v != nil {
		return v
	}
	if cut {
		return nil
	}
	if zw.writesDone < zw.writesIssued || zw.readsDone < zw.readsIssued {
		return &Violation{Invariant: "Deadlock", Explanation: "no event is enabled and an operation is unanswered: " + zw.summary()}
	}
	if zw.lock != nil && zw.lock.done < zw.lock.issued {
		return &Violation{Invariant: "Deadlock", Explanation: "no event is enabled and a lock cycle is unfinished: " + zw.summary()}
	}
	if len(zw.enabled) == 0 && !zw.w.Ended() && !zw.serving() {
		return &Violation{Invariant: "Deadlock", Explanation: "no event is pending and no leader serves: " + zw.summary()}
	}
	return nil
}

// Settings implements Settings.
func (m *ZABModel) Settings() [][2]string {
	c := m.cfg
	bugs := "none"
	if !c.Bugs.Empty() {
		bugs = strings.Join(c.Bugs.Names(), ",")
	}
	settings := [][2]string{
		{"servers", strconv.Itoa(c.Servers)}, {"writes", strconv.Itoa(c.Writes)},
		{"crashes", strconv.Itoa(c.Crashes)}, {"restarts", strconv.Itoa(c.Restarts)},
		{"early-timeouts", strconv.Itoa(c.EarlyTimeouts)}, {"timers", strconv.Itoa(c.Timers)}, {"bugs", bugs},
		{"warmup", strconv.FormatBool(c.Warmup)}, {"no-commute", strconv.FormatBool(c.NoCommute)}, {"zxid-counter", "0x" + strconv.FormatInt(c.ZxidCounter, 16)},
		{"coarse", strconv.FormatBool(c.Coarse)}, {"boundary-skips", strconv.Itoa(c.BoundarySkips)},
	}
	// Reads and self-tests are written only when used, so that older counterexample files and
	// the printed settings of runs without them stay as they were.
	if c.Reads > 0 {
		settings = append(settings, [2]string{"reads", strconv.Itoa(c.Reads)})
	}
	if !c.SelfTests.Empty() {
		settings = append(settings, [2]string{"self-tests", strings.Join(c.SelfTests.Names(), ",")})
	}
	if c.HideTimers {
		settings = append(settings, [2]string{"hide-timers", "true"})
	}
	if c.MinTimers > 0 {
		settings = append(settings, [2]string{"min-timers", strconv.Itoa(c.MinTimers)})
	}
	if c.Lockers > 0 {
		settings = append(settings, [2]string{"lockers", strconv.Itoa(c.Lockers)})
	}
	if !c.RecipeBugs.Empty() {
		settings = append(settings, [2]string{"recipe-bugs", strings.Join(c.RecipeBugs.Names(), ",")})
	}
	if c.LockStartBy > 0 {
		settings = append(settings, [2]string{"lock-start-by", strconv.Itoa(c.LockStartBy)})
	}
	return settings
}

func zabFromSettings(settings map[string]string) (Model, error) {
	var cfg ZABConfig
	ints := map[string]*int{
		"servers": &cfg.Servers, "writes": &cfg.Writes, "crashes": &cfg.Crashes,
		"restarts": &cfg.Restarts, "early-timeouts": &cfg.EarlyTimeouts, "timers": &cfg.Timers,
		"boundary-skips": &cfg.BoundarySkips, "reads": &cfg.Reads, "min-timers": &cfg.MinTimers, "lockers": &cfg.Lockers, "lock-start-by": &cfg.LockStartBy,
	}
	bools := map[string]*bool{
		"no-commute": &cfg.NoCommute, "coarse": &cfg.Coarse, "warmup": &cfg.Warmup, "hide-timers": &cfg.HideTimers,
	}
	// Keys are taken in sorted order, so that of several bad settings the same one is reported.
	for _, key := range slices.Sorted(maps.Keys(settings)) {
		value := settings[key]
		if p, ok := ints[key]; ok {
			v, err := strconv.Atoi(value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			*p = v
			continue
		}
		if p, ok := bools[key]; ok {
			v, err := strconv.ParseBool(value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			*p = v
			continue
		}
		if key == "zxid-counter" {
			v, err := strconv.ParseInt(value, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("zxid-counter: %w", err)
			}
			cfg.ZxidCounter = v
			continue
		}
		if key == "recipe-bugs" {
			bugs, err := lockmodel.ParseBugs(value)
			if err != nil {
				return nil, fmt.Errorf("recipe-bugs: %w", err)
			}
			cfg.RecipeBugs = bugs
			continue
		}
		if key == "self-tests" {
			tests, err := zabmodel.ParseSelfTests(value)
			if err != nil {
				return nil, fmt.Errorf("self-tests: %w", err)
			}
			cfg.SelfTests = tests
			continue
		}
		if key != "bugs" {
			return nil, fmt.Errorf("unknown setting %q for model zab", key)
		}
		if value != "none" {
			bugs, err := zabmodel.ParseBugs(value)
			if err != nil {
				return nil, fmt.Errorf("bugs: %w", err)
			}
			cfg.Bugs = bugs
		}
	}
	return NewZAB(cfg)
}

func init() { RegisterModel("zab", zabFromSettings) }
