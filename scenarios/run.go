package scenarios

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/checkers/zab"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// warmup is the time before the fault phase: the ensemble elects a leader and the applications
// connect.
const warmup = 5 * clock.Second

// runner is the state of one run.
type runner struct {
	opts   Options
	script *Script
	w      *sim.World
	nw     *net.Network
	ens    *zabmodel.Ensemble
	zab    *zab.Checker
	rec    *checkers.Recorder
	apps   []*app
	gen    workload

	faultStart, faultEnd clock.Time
	lastCommitted        int64
	proposed             map[txnKey]*proto.TxnEntry
	committedZxids       []int64 // sorted
	leaders              int     // establishments seen
	opsCompleted         int
	faultsInjected       int
	actionResults        []actionResult         // by index in script.Actions
	crashPoints          map[int64][]armedCrash // armed crash points by sid, in arming order
	paused               map[sim.NodeID]bool
	health               *healthSampler
	availability         *availabilityMonitor
	zabViolation         *zab.Violation
	txnDecoder           proto.Decoder // cloneTxn's, reused for every proposal
}

// Run runs one seed and judges it.
func Run(opts Options) (*Report, error) {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	r, err := newRunner(opts)
	if err != nil {
		return nil, err
	}
	r.runFaultPhase()
	liveness := r.runLivenessPhase()
	rep := r.judge(liveness)
	r.w.Release() // The report holds what it needs of the world.
	return rep, nil
}

func newRunner(opts Options) (*runner, error) {
	w, err := sim.New(sim.Config{Seed: opts.Seed, Chooser: opts.Chooser, Trace: opts.Trace,
		Budget: sim.Budget{MaxTime: opts.Duration + opts.LivenessBound + warmup + 10*clock.Minute}})
	if err != nil {
		return nil, err
	}
	r := &runner{opts: opts, w: w, rec: checkers.NewRecorder(), crashPoints: map[int64][]armedCrash{}, paused: map[sim.NodeID]bool{},
		proposed: map[txnKey]*proto.TxnEntry{}}
	r.script = opts.Script
	switch {
	case r.script != nil:
	case opts.Chooser != nil:
		// A replayed choice list or a fuzzer's bytes decide the script too, so that the fuzzer
		// steers the faults as well as the run: the disk stalls included, which here come from
		// the same choices rather than from a stream of their own.
		r.script = drawScript(w, w, opts)
	default:
		if r.script, err = DrawScript(opts); err != nil {
			return nil, err
		}
	}
	if r.script.Clients == 0 {
		r.script.Clients = opts.Clients
	}
	if r.script.Duration == 0 {
		r.script.Duration = opts.Duration
	}
	r.script.Workload = scriptWorkload(r.script, opts)
	// Every script is checked against the run's cluster, clients and duration, whether it was
	// parsed (which checked what the script itself says), drawn or built in code.
	if err := r.script.check(r.script.Clients, r.script.Duration, nil); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if err := r.build(); err != nil {
		return nil, err
	}
	return r, nil
}

// build makes the network, the ensemble, the checkers' hooks and the applications.
func (r *runner) build() error {
	s := r.script
	nw, err := net.New(r.w, net.Config{})
	if err != nil {
		return err
	}
	r.nw = nw
	if r.opts.DatagramFaults {
		if err := nw.EnableDatagramFaults(net.DatagramFaults{DropPermille: 5, DuplicatePermille: 5, ReorderPermille: 5}); err != nil {
			return err
		}
	}
	bugs := r.opts.Bugs
	if s.ZKVersion != "" {
		release, err := zabmodel.ParseRelease(s.ZKVersion)
		if err != nil {
			return err
		}
		bugs = bugs.Union(release.Bugs)
	}
	cfg := zabmodel.Config{Voters: s.Servers, Observers: s.Observers, SnapCount: r.opts.SnapCount, Bugs: bugs,
		SelfTests:          r.opts.SelfTests,
		InitialZxidCounter: s.InitialZxidCounter, ContainerCheckInterval: s.ContainerCheckInterval}
	checker, err := zab.New(zab.Config{
		Voters: cfg.WithDefaults().VoterSids(), Observers: cfg.WithDefaults().Sids()[s.Servers:],
		InitialZxidCounter: s.InitialZxidCounter, OnViolation: r.zabFailed, OnCommit: r.onCommitted,
		Stopwatch: r.opts.Stopwatch,
	})
	if err != nil {
		return err
	}
	r.zab = checker
	cfg.Observer = zabmodel.ObserverFunc(r.observe)
	r.ens, err = zabmodel.NewEnsemble(r.w, nw, cfg)
	if err != nil {
		return err
	}
	r.ens.SetBoundaryHook(r.crashHook)
	r.gen = workloadMakers[s.Workload](r.w)
	if b, ok := r.gen.(builder); ok {
		if err := b.build(r); err != nil { // The Redis workloads' servers (workload_redis.go).
			return err
		}
	}
	for i := 1; i <= s.Clients; i++ {
		r.apps = append(r.apps, newApp(r, i, r.gen))
	}
	r.health = newHealthSampler(r)
	r.availability = newAvailabilityMonitor(r)
	return nil
}

// zabFailed ends the run at the first broken ZAB invariant: what follows would be its echoes.
func (r *runner) zabFailed(v zab.Violation) {
	if r.opts.NoZabChecker {
		return
	}
	if r.zabViolation == nil {
		r.zabViolation = &v
		r.w.Fail(fmt.Errorf("%s", v.String()))
	}
}

// observe receives every protocol event: the invariant checker sees it first (and reports the
// transactions that become committed through onCommitted), then the runner keeps every proposed
// transaction and counts the leaders.
func (r *runner) observe(e zabmodel.Event) {
	switch e.Kind {
	case zabmodel.EventPropose:
		// A copy: applying a failed multi rewrites its sub-txn types in place (as Java does), and
		// the checkers must replay the transaction as it was proposed.
		r.proposed[txnKey{e.Zxid, e.Hash}] = r.cloneTxn(e.Txn, e.TxnData)
	case zabmodel.EventEstablished:
		r.leaders++
	}
	if r.opts.Watch != nil && r.opts.Watch.Protocol != nil {
		r.opts.Watch.Protocol(e)
	}
	r.zab.Observe(e)
	if r.opts.Coverage != nil {
		r.opts.Coverage.event(e)
	}
}

// txnKey identifies a transaction: its zxid and its hash (zabmodel.TxnHash).
type txnKey struct {
	zxid int64
	hash uint64
}

// onCommitted is the invariant checker's report that a transaction became committed, by a leader's
// commit or as part of an established leader's history (which may be held only in snapshots, after
// SNAP syncs). Every committed transaction was proposed by some leader of this run.
func (r *runner) onCommitted(zxid int64, hash uint64) {
	entry, ok := r.proposed[txnKey{zxid, hash}]
	if !ok {
		r.w.Fail(fmt.Errorf("scenarios: transaction %s became committed but no leader proposed it", zabmodel.FormatZxid(zxid)))
		return
	}
	r.commit(entry, r.w.Now())
}

// commit adds a transaction to the committed log the client-visible checkers replay.
func (r *runner) commit(entry *proto.TxnEntry, at clock.Time) {
	r.lastCommitted = max(r.lastCommitted, entry.Header.Zxid)
	// Transactions become committed in zxid order but for the holes an establishment fills: append
	// without a search when the zxid is the newest.
	if n := len(r.committedZxids); n == 0 || r.committedZxids[n-1] < entry.Header.Zxid {
		r.committedZxids = append(r.committedZxids, entry.Header.Zxid)
	} else if i, found := slices.BinarySearch(r.committedZxids, entry.Header.Zxid); !found {
		r.committedZxids = slices.Insert(r.committedZxids, i, entry.Header.Zxid)
	}
	if err := r.rec.Commit(*entry, at); err != nil {
		r.w.Fail(fmt.Errorf("scenarios: committed log: %w", err))
		return
	}
	if entry.Header.Type == proto.OpCloseSession {
		r.health.ended(entry.Header.ClientID)
		_ = r.rec.SessionEnded(entry.Header.ClientID, checkers.SessionEnd{
			Zxid: entry.Header.Zxid, Time: at, Expired: entry.Header.Cxid == 0,
		})
	}
}

func (r *runner) sessionStarted(a *app, id int64, timeout clock.Duration) {
	r.rec.SessionStarted(id, a.name, timeout)
	r.health.track(a, id)
}

// runFaultPhase starts everything and plays the script's actions.
func (r *runner) runFaultPhase() {
	r.faultStart = clock.Time(warmup)
	r.faultEnd = r.faultStart.Add(r.script.Duration)
	r.startWatch()
	r.ens.Start()
	startApps := func() {
		for _, a := range r.apps {
			r.w.After(r.w.Between(0, clock.Second, clock.Millisecond), a.begin)
		}
	}
	if s, ok := r.gen.(setupper); ok {
		newSetup(r, s.setup(), startApps).start()
	} else {
		startApps()
	}
	r.health.start()
	r.availability.start()
	r.actionResults = make([]actionResult, len(r.script.Actions))
	for i, action := range r.script.Actions {
		r.w.At(r.faultStart.Add(action.At), func() { r.act(i, action) })
	}
	r.w.RunUntil(r.faultEnd)
	r.noteUnfiredCrashpoints()
}

// actionResult is what became of one scripted action: whether it changed anything (a crashpoint
// action: whether its server crashed there), or why not, and which server led when it came (0 for
// none), so that a test can tell whether a named scenario happened as its comment says.
type actionResult struct {
	done   bool
	idle   string
	leader int64
}

// cloneTxn returns a deep copy of entry, decoded from data, its encoding, when the proposer gave it
// (a leader encodes every proposal for its PROPOSAL packets), else from a fresh encoding. Decoding
// copies every buffer and string it reads, so the copy shares nothing with the proposer.
func (r *runner) cloneTxn(entry *proto.TxnEntry, data []byte) *proto.TxnEntry {
	if entry == nil {
		return nil
	}
	if data == nil {
		data = proto.Marshal(entry)
	}
	var c proto.TxnEntry
	d := &r.txnDecoder
	d.Reset(data)
	c.Decode(d)
	err := d.Finish()
	d.Reset(nil) // Hold no reference to the proposer's bytes.
	if err != nil {
		panic("scenarios: a committed txn does not round-trip: " + err.Error())
	}
	return &c
}

// scriptWorkload is the workload a script runs: its own, or if it names none, the options' workload
// if they name one (a script may leave it to the command line), registers otherwise.
func scriptWorkload(s *Script, opts Options) string {
	switch {
	case s.Workload != "":
		return s.Workload
	case opts.Workload != "" && opts.Workload != "mixed":
		return opts.Workload
	}
	return "registers"
}
