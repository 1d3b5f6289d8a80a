package scenarios

import (
	"fmt"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/checkers/lock"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/lockmodel/locklog"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The lock workloads run Curator's recipes (package lockmodel) in every application, each holder
// using a protected resource under its lock, and are judged by the lock checkers on top of the
// client-visible ones:
//
//   - lock: a fair lock (InterProcessMutex, three cycles in four, sometimes reentrant) and a simple
//     exclusive lock on one ephemeral node;
//   - rwlock: a read-write lock (InterProcessReadWriteLock), readers reading and writers writing;
//   - election: leader election, with LeaderLatch on half the seeds and LeaderSelector (with
//     autoRequeue) on the other half (Script.ElectionRecipe); the leader writes, then leaves.
//
// An application's cycle is: acquire (sometimes with a timeout), use the resource a few times with
// its fencing token, release. It follows Curator's advice for connection states: it stops using the
// resource while SUSPENDED, resumes when RECONNECTED, and abandons the lock when LOST; what it
// cannot see (a garbage-collection pause past its session timeout) is what fencing is for.

// LockWorkloads lists the workloads whose applications run lock recipes: the only ones on which a
// recipe bug switch (Options.RecipeBugs) acts.
var LockWorkloads = []string{"lock", "rwlock", "election"}

func init() {
	workloadMakers["lock"] = func(w *sim.World) workload { return newLockWorkload(w, lockKindMutex) }
	workloadMakers["rwlock"] = func(w *sim.World) workload { return newLockWorkload(w, lockKindRW) }
	workloadMakers["election"] = func(w *sim.World) workload { return newLockWorkload(w, lockKindElection) }
}

// containerWorkloads are the workloads whose applications make container znodes: the lock
// workloads. A swarm draws their servers' container check interval (see drawScript).
var containerWorkloads = []string{"lock", "rwlock", "election"}

// driver is implemented by workloads whose applications run recipes that drive their client
// themselves instead of issuing one operation at a time. app.go calls these hooks.
type driver interface {
	// drive is called instead of next when the application is idle and has a session.
	drive(a *app)
	// connectionEvent receives every state event of the application's client.
	connectionEvent(a *app, e client.Event)
	// crashed is called when the application's process crashes.
	crashed(a *app)
}

type lockWorkloadKind uint8

const (
	lockKindMutex lockWorkloadKind = iota
	lockKindRW
	lockKindElection
)

// The lock paths. The fair, read-write and election locks are queues under a parent, the simple
// exclusive lock is one node under /locks. Nothing makes the parents beforehand: each recipe makes
// what is missing as containers (Curator's creatingParentContainersIfNeeded), which the leader's
// container manager deletes once they are empty again, so the recipes meet the races of a parent
// that comes and goes (see containerWorkloads).
const (
	locksRoot      = "/locks"
	fairLockPath   = "/locks/fair"
	simpleLockPath = "/locks/simple"
	rwLockPath     = "/locks/rw"
	electionPath   = "/election"
)

// Bounds of an application's cycle.
const (
	lockAccessesMax  = 4
	lockAccessGapMax = 300 * clock.Millisecond
	lockTimeoutMin   = 2 * clock.Second
	lockTimeoutMax   = 10 * clock.Second
	lockPollInterval = 100 * clock.Millisecond
)

type lockWorkload struct {
	kind     lockWorkloadKind
	selector bool           // the election runs LeaderSelector instead of LeaderLatch
	think    clock.Duration // the longest pause between two cycles of an application
	r        *runner
	resource *lockmodel.Resource
	apps     []*lockApp
	log      *locklog.Log
}

// newLockWorkload draws how busy the applications are. Most seeds keep them busy, each starting its
// next cycle within thinkTimeMax, so that the lock is always contended. A third of them pause for
// seconds between cycles: a holder keeps the lock for most of a second, so five applications that
// come back every few seconds leave every queue empty now and then, and the container manager
// deletes its parent under the recipes.
func newLockWorkload(w *sim.World, kind lockWorkloadKind) *lockWorkload {
	l := &lockWorkload{kind: kind, think: thinkTimeMax, log: locklog.New()}
	if w.Chance(1, 3) {
		l.think = w.Between(2*clock.Second, 15*clock.Second, 100*clock.Millisecond)
	}
	return l
}

// thinkTimeMax implements paced.
func (l *lockWorkload) thinkTimeMax() clock.Duration { return l.think }

func (l *lockWorkload) locks() []lock.Lock {
	switch l.kind {
	case lockKindRW:
		return []lock.Lock{{Path: rwLockPath, Kind: lock.KindReadWrite}}
	case lockKindElection:
		return []lock.Lock{{Path: electionPath, Kind: lock.KindElection}}
	}
	return []lock.Lock{{Path: fairLockPath, Kind: lock.KindFair}, {Path: simpleLockPath, Kind: lock.KindExclusive}}
}

// next is never called: drive replaces it (see app.tick).
func (l *lockWorkload) next(*sim.World, *app) opSpec {
	panic("scenarios: a lock workload is driven by its recipes, not by next")
}

// observe has nothing to learn: the recipes observe their own results.
func (l *lockWorkload) observe(*app, opSpec, result) {}

// checks: the lock paths are judged by the lock checkers, not by a state model (the server deletes
// their container parents by itself); the zxid-order checker judges the order of every recipe
// write (checkers.WriteOrderModel), and the client-visible checkers judge every recipe request for
// sequential consistency, watches and sessions.
func (l *lockWorkload) checks() []checkers.LinearizabilityOptions {
	return []checkers.LinearizabilityOptions{{Model: checkers.WriteOrderModel, Prefix: "/"}}
}

// lockApp is an application's recipe state, rebuilt for every client it opens.
type lockApp struct {
	l       *lockWorkload
	a       *app
	c       *client.Client // the client the session wraps
	inc     uint32
	session *lockmodel.Session
	rc      *lockmodel.ResourceClient
	mutex   *lockmodel.Mutex
	simple  *lockmodel.ExclusiveLock
	rw      *lockmodel.ReadWriteLock
	cycle   *lockCycle
	// outstanding holds the recorded requests not yet answered, failed if the process crashes.
	outstanding []checkers.OpRef
}

// lockCycle is one acquisition, use and release.
type lockCycle struct {
	lock     string
	recipe   acquirer
	latch    *lockmodel.LeaderLatch
	selector *lockmodel.LeaderSelector
	// leaderDone ends the selector's takeLeadership.
	leaderDone func()
	write      bool
	token      int64
	accesses   int
	reentrant  bool // take the lock a second time during the cycle
	downgrade  bool // a writer that takes the read lock and lets the write lock go (rwlock)
	using      bool // an access is in flight or scheduled
	ended      bool
}

// acquirer is what Mutex and ExclusiveLock have in common.
type acquirer interface {
	Acquire(timeout clock.Duration, done func(lockmodel.Grant)) error
	Release(done func(error)) error
	Held() bool
}

// appState returns the recipe state of the application's current client, making it if needed.
func (l *lockWorkload) appState(a *app) *lockApp {
	l.r = a.r
	if l.resource == nil {
		res, err := lockmodel.NewResource(a.r.w, a.r.nw, lockmodel.ResourceConfig{Fencing: !a.r.opts.RecipeBugs.Has(lockmodel.BugNoFencing)})
		if err != nil {
			panic(fmt.Sprintf("scenarios: the lock workload's resource: %v", err))
		}
		l.resource = res
	}
	for len(l.apps) < a.index {
		l.apps = append(l.apps, nil)
	}
	la := l.apps[a.index-1]
	if la == nil || la.c != a.c || la.inc != a.r.w.Incarnation(a.node) {
		la = l.newAppState(a)
		l.apps[a.index-1] = la
	}
	return la
}

func (l *lockWorkload) newAppState(a *app) *lockApp {
	la := &lockApp{l: l, a: a, c: a.c, inc: a.r.w.Incarnation(a.node)}
	s, err := lockmodel.NewSession(a.r.w, a.c, lockmodel.Config{
		Name: a.name, ConnectionTimeout: a.r.script.ConnectionTimeout, Bugs: a.r.opts.RecipeBugs, SelfTests: a.r.opts.RecipeSelfTests, Observer: lockObserver{la: la}, Tracer: lockTracer{la: la},
	})
	if err == nil {
		la.rc, err = lockmodel.NewResourceClient(a.r.w, a.r.nw, a.node, l.resource, a.name)
	}
	if err == nil {
		err = la.makeRecipes(s)
	}
	if err != nil {
		panic(fmt.Sprintf("scenarios: recipes of %s: %v", a.name, err))
	}
	la.session = s
	return la
}

func (la *lockApp) makeRecipes(s *lockmodel.Session) error {
	var err error
	switch la.l.kind {
	case lockKindRW:
		la.rw, err = lockmodel.NewReadWriteLock(s, rwLockPath, []byte(la.a.name))
	case lockKindMutex:
		if la.mutex, err = lockmodel.NewMutex(s, fairLockPath, []byte(la.a.name)); err == nil {
			la.simple, err = lockmodel.NewExclusiveLock(s, simpleLockPath, []byte(la.a.name))
		}
	}
	return err
}

// drive starts a cycle (app.tick calls it when the application is idle).
func (l *lockWorkload) drive(a *app) {
	la := l.appState(a)
	if la.cycle != nil && !la.cycle.ended {
		return
	}
	if la.session.State() == lockmodel.StateLost {
		return // The application opens a new client when it learns of the expiry.
	}
	cyc := &lockCycle{accesses: 1 + a.r.w.Choose(lockAccessesMax)}
	la.cycle = cyc
	a.busy = true
	if l.kind == lockKindElection && a.r.script.ElectionRecipe == "selector" {
		la.startSelector(cyc)
		return
	}
	if l.kind == lockKindElection {
		la.startLatch(cyc)
		return
	}
	la.chooseLock(cyc)
	timeout := clock.Duration(0)
	if a.r.w.Chance(1, 4) {
		timeout = a.r.w.Between(lockTimeoutMin, lockTimeoutMax, 100*clock.Millisecond)
	}
	if err := cyc.recipe.Acquire(timeout, func(g lockmodel.Grant) { la.granted(cyc, g) }); err != nil {
		la.endCycle(cyc)
	}
}

func (la *lockApp) chooseLock(cyc *lockCycle) {
	w := la.a.r.w
	switch {
	case la.l.kind == lockKindRW && w.Chance(3, 5):
		cyc.lock, cyc.recipe = rwLockPath, la.rw.ReadLock()
	case la.l.kind == lockKindRW:
		cyc.lock, cyc.recipe, cyc.write = rwLockPath, la.rw.WriteLock(), true
		// A writer sometimes downgrades, as InterProcessReadWriteLock allows: it takes the read
		// lock while it holds the write lock, then releases the write lock and reads on.
		cyc.downgrade = w.Chance(1, 3)
	case w.Chance(1, 4):
		cyc.lock, cyc.recipe, cyc.write = simpleLockPath, la.simple, true
	default:
		cyc.lock, cyc.recipe, cyc.write = fairLockPath, la.mutex, true
	}
	cyc.reentrant = w.Chance(1, 5)
}

// granted starts using the resource, or ends a cycle whose acquisition failed.
func (la *lockApp) granted(cyc *lockCycle, g lockmodel.Grant) {
	if cyc.ended || la.cycle != cyc {
		return
	}
	if !g.Held {
		la.endCycle(cyc)
		return
	}
	if g.Reentrant {
		la.schedule(cyc)
		return
	}
	cyc.token = g.Token
	if cyc.downgrade {
		cyc.downgrade = false
		la.downgrade(cyc)
		return
	}
	if cyc.reentrant {
		cyc.reentrant = false
		if err := cyc.recipe.Acquire(0, func(g lockmodel.Grant) { la.granted(cyc, g) }); err == nil {
			return
		}
	}
	la.schedule(cyc)
}

// downgrade takes the read lock while holding the write lock, then releases the write lock; the
// cycle's remaining accesses are reads. They present the write lock's token: the downgraded read
// node takes the write node's place in the queue (CURATOR-621) but is created later, so its czxid
// is newer than those of the writers already waiting behind it, and a resource that fenced with it
// would refuse the next writer. The read lock extends the write tenure, and its token is the
// tenure's. If the read lock is refused, the cycle goes on as a writer.
func (la *lockApp) downgrade(cyc *lockCycle) {
	read, write := la.rw.ReadLock(), la.rw.WriteLock()
	// Busy while it downgrades, as the Java thread blocked in acquire is: a RECONNECTED meanwhile
	// must not resume the writes (connectionEvent), or the cycle could end with the read lock
	// still being acquired.
	cyc.using = true
	err := read.Acquire(0, func(g lockmodel.Grant) {
		if cyc.ended || la.cycle != cyc {
			if g.Held {
				_ = read.Release(func(error) {})
			}
			return
		}
		if !g.Held {
			la.schedule(cyc)
			return
		}
		cyc.recipe, cyc.write = read, false
		if err := write.Release(func(error) {
			if !cyc.ended && la.cycle == cyc {
				la.schedule(cyc)
			}
		}); err != nil {
			la.schedule(cyc)
		}
	})
	if err != nil {
		la.schedule(cyc)
	}
}

// schedule plans the next access after a pause.
func (la *lockApp) schedule(cyc *lockCycle) {
	cyc.using = true
	la.after(la.a.r.w.Between(clock.Millisecond, lockAccessGapMax, clock.Millisecond), func() { la.use(cyc) })
}

// use makes one access, or releases the lock when the cycle's accesses are done. While the session
// is suspended the holder waits: it cannot be sure it still holds the lock.
func (la *lockApp) use(cyc *lockCycle) {
	cyc.using = false
	if cyc.ended || la.cycle != cyc {
		return
	}
	if !la.holds(cyc) {
		if la.session.State() == lockmodel.StateSuspended || la.session.State() == lockmodel.StateLatent {
			return // connectionEvent resumes it on RECONNECTED.
		}
		la.finish(cyc)
		return
	}
	if cyc.accesses == 0 {
		la.finish(cyc)
		return
	}
	cyc.accesses--
	cyc.using = true
	err := la.rc.Access(cyc.lock, la.session.SessionID(), cyc.token, cyc.write, func(lockmodel.AccessResult) {
		cyc.using = false
		if !cyc.ended && la.cycle == cyc {
			la.schedule(cyc)
		}
	})
	if err != nil {
		cyc.using = false
		la.after(lockPollInterval, func() { la.use(cyc) })
	}
}

// holds reports whether the application believes it may use the resource now.
func (la *lockApp) holds(cyc *lockCycle) bool {
	if !la.session.State().IsConnected() {
		return false
	}
	if cyc.latch != nil {
		return cyc.latch.HasLeadership()
	}
	if cyc.selector != nil {
		return cyc.selector.HasLeadership()
	}
	return cyc.recipe.Held()
}

// finish releases what the cycle holds (every hold, for a reentrant one) and ends it.
func (la *lockApp) finish(cyc *lockCycle) {
	if cyc.latch != nil {
		_ = cyc.latch.Close()
		la.endCycle(cyc)
		return
	}
	if cyc.selector != nil {
		// takeLeadership returns (the selector releases and, with autoRequeue, queues again),
		// and the application closes the selector: it leaves the election.
		if cyc.leaderDone != nil && cyc.selector.HasLeadership() {
			cyc.leaderDone()
		}
		_ = cyc.selector.Close()
		la.endCycle(cyc)
		return
	}
	if !cyc.recipe.Held() {
		la.endCycle(cyc)
		return
	}
	if err := cyc.recipe.Release(func(error) { la.finish(cyc) }); err != nil {
		la.endCycle(cyc)
	}
}

// endCycle makes the application idle again.
func (la *lockApp) endCycle(cyc *lockCycle) {
	if cyc.ended {
		return
	}
	cyc.ended = true
	if la.cycle == cyc && la.a.c == la.c && la.a.r.w.Incarnation(la.a.node) == la.inc {
		la.a.busy = false
		la.after(la.a.think(), la.a.tick)
	}
}

// after runs fn from a timer of the application's process, unless it crashed meanwhile.
func (la *lockApp) after(d clock.Duration, fn func()) {
	w := la.a.r.w
	if !w.IsUp(la.a.node) || w.Incarnation(la.a.node) != la.inc {
		return
	}
	w.AfterFunc(la.a.node, d, func() {
		if w.Incarnation(la.a.node) == la.inc {
			fn()
		}
	})
}

// startLatch joins the election; the leader uses the resource, then leaves.
func (la *lockApp) startLatch(cyc *lockCycle) {
	latch, err := lockmodel.NewLeaderLatch(la.session, electionPath, la.a.name)
	if err != nil {
		panic(fmt.Sprintf("scenarios: leader latch of %s: %v", la.a.name, err))
	}
	cyc.lock, cyc.latch, cyc.write = electionPath, latch, true
	latch.OnLeader = func(g lockmodel.Grant) {
		cyc.token = g.Token
		if !cyc.using && !cyc.ended {
			la.schedule(cyc)
		}
	}
	if err := latch.Start(); err != nil {
		la.endCycle(cyc)
	}
}

// startSelector joins the election with LeaderSelector and autoRequeue: the leader uses the
// resource, then returns from takeLeadership and leaves. Interrupted (SUSPENDED, LOST), it is
// queued again by the selector itself.
func (la *lockApp) startSelector(cyc *lockCycle) {
	sel, err := lockmodel.NewLeaderSelector(la.session, electionPath, la.a.name)
	if err != nil {
		panic(fmt.Sprintf("scenarios: leader selector of %s: %v", la.a.name, err))
	}
	cyc.lock, cyc.selector, cyc.write = electionPath, sel, true
	sel.AutoRequeue = true
	sel.TakeLeadership = func(g lockmodel.Grant, done func()) {
		cyc.token, cyc.leaderDone = g.Token, done
		if !cyc.using && !cyc.ended {
			la.schedule(cyc)
		}
	}
	if err := sel.Start(); err != nil {
		la.endCycle(cyc)
	}
}

// connectionEvent passes the client's state events to the session, then wakes a holder that waited
// out a suspension, or ends the cycle of a lost session.
func (l *lockWorkload) connectionEvent(a *app, e client.Event) {
	if a.c == nil {
		return
	}
	la := l.appState(a)
	la.session.ConnectionEvent(e)
	cyc := la.cycle
	if cyc == nil || cyc.ended {
		return
	}
	switch st := la.session.State(); {
	case st == lockmodel.StateLost:
		la.lost(cyc)
	case st.IsConnected() && !cyc.using && la.holds(cyc):
		la.schedule(cyc)
	}
}

// lost abandons the cycle of a lost session: the application lets the lock go (as Curator's
// advice has it: release in a finally block) and is idle until it opens its new client.
func (la *lockApp) lost(cyc *lockCycle) {
	switch {
	case cyc.latch != nil:
		_ = cyc.latch.Close()
	case cyc.selector != nil:
		_ = cyc.selector.Close()
	case cyc.recipe.Held():
		_ = cyc.recipe.Release(func(error) {})
	}
	cyc.ended = true
	if la.cycle == cyc && la.a.c == la.c {
		la.a.busy = false
	}
}

// crashed fails the recorded requests of the crashed process and abandons its acquisitions.
func (l *lockWorkload) crashed(a *app) {
	if a.index > len(l.apps) || l.apps[a.index-1] == nil {
		return
	}
	la := l.apps[a.index-1]
	now := a.r.w.Now()
	for _, ref := range la.outstanding {
		_ = a.r.rec.Fail(ref, now, proto.ConnectionLoss, checkers.OutcomeUnknown)
	}
	la.outstanding = nil
	l.log.Abandon(a.name, now)
	if la.cycle != nil {
		la.cycle.ended = true
	}
	l.apps[a.index-1] = nil
}

// judge implements judged: the lock checkers, on the recipes' reports, the resource's log and the
// committed log.
func (l *lockWorkload) judge(r *runner, h *checkers.History) []checkers.Result {
	lh := &lock.History{
		Locks: l.locks(), Committed: h.Committed, Liveness: h.Liveness, End: h.End,
		Fencing: !r.opts.RecipeBugs.Has(lockmodel.BugNoFencing),
	}
	l.log.Fill(lh, h.End)
	if l.resource != nil {
		lh.Accesses = accessesOf(l.resource.Log())
	}
	results, err := lock.Run(lh, lock.Options{ProgressBound: r.opts.LivenessBound, Stopwatch: r.opts.Stopwatch})
	if err != nil {
		return []checkers.Result{{Checker: "lock/history", Status: checkers.Unknown, Summary: err.Error()}}
	}
	return results
}

func accessesOf(log []lockmodel.Access) []lock.Access {
	out := make([]lock.Access, 0, len(log))
	for _, a := range log {
		out = append(out, lock.Access{Lock: a.Object, Client: a.Client, Session: a.Session, Token: a.Token,
			Write: a.Write, Accepted: a.Accepted, Newest: a.Newest, Time: a.Time})
	}
	return out
}
