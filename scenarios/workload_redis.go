package scenarios

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/checkers/lock"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/lockmodel/redis"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
)

// The Redis lock workloads run the lock clients of package lockmodel/redis against simulated
// Redis servers (nodes r1..rN in scripts) and the same protected resource and lock checkers as
// the ZooKeeper lock workloads:
//
//   - redis-lock: the single-instance lock (SET NX PX, compare-and-delete) on one master;
//   - redis-failover: the same lock on a master with an asynchronously replicated replica (r1
//     and r2) and a modelled Sentinel that promotes the replica when the master is down or
//     paused for redis.DefaultDownAfter;
//   - redlock: Redlock over five independent masters (r1..r5).
//
// With fencing (the default; BugNoFencing turns it off, as for the ZooKeeper locks) the lock
// pipelines an INCR of the lock's token counter after every SET NX on each instance, and the
// resource checks that token: on one instance it is the instance's counter, on five the largest
// of the granting instances' counters. Nothing in Redis makes either survive what loses the lock
// itself: a failover that lost the lock can lose the increments too, and a restart without
// persistence starts the counter again. Redlock's own value is random, not ordered, so it offers
// no token at all; the INCR variant is this harness's, not the published algorithm, and its token
// is not monotonic even without a crash (the masters' counters diverge, and two quorums share as
// little as one master: lockmodel/redis TestRedlockTokensAreNotMonotonic).
//
// Each seed draws the servers' persistence (none or AOF everysec). An application's cycle:
// acquire (redsync's retry policy), use the resource one to four times (a third of the holds: 8
// to 16 times, up to a second apart, past the TTL), each time checking its validity on its own
// monotonic clock, extending the lease when less than half of it is left, and then preparing the
// access for up to lockPrepareMax (the window in which a pause makes a careful holder act on an
// expired lease), then release. In the liveness phase each application makes one more
// acquisition, which must succeed.
//
// The applications keep their ZooKeeper client (the runner gives every application one); only
// the lock traffic goes to Redis. The Redis workloads are not in the swarm's draw of workloads
// (drawnWorkloads): a run names them, and without fencing they are expected to fail.
var redisWorkloads = []string{"redis-lock", "redis-failover", "redlock"}

func init() {
	workloadMakers["redis-lock"] = func(w *sim.World) workload { return newRedisWorkload(w, 1, false) }
	workloadMakers["redis-failover"] = func(w *sim.World) workload { return newRedisWorkload(w, 1, true) }
	workloadMakers["redlock"] = func(w *sim.World) workload { return newRedisWorkload(w, 5, false) }
}

// drawnWorkloads are the workloads a swarm seed draws from: all but the Redis ones.
func drawnWorkloads() []string {
	return slices.DeleteFunc(Workloads(), func(name string) bool { return slices.Contains(redisWorkloads, name) })
}

// redisServerCount is how many Redis servers a workload runs (r1..rN), 0 for the others.
func redisServerCount(workload string) int {
	switch workload {
	case "redis-lock":
		return 1
	case "redis-failover":
		return 2
	case "redlock":
		return 5
	}
	return 0
}

// The lock's names and the cycle's bounds.
const (
	redisLockPath  = "/redis/lock" // the resource object and the checkers' lock name
	redisLockKey   = "lock"
	lockPrepareMax = 200 * clock.Millisecond
	// A third of the holds are long: redisLongHoldMin to twice that accesses, up to
	// redisLongHoldGapMax apart, which outlasts the 8 s TTL, so the holder extends its lease.
	redisLongHoldMin    = 8
	redisLongHoldGapMax = clock.Second
)

type redisWorkload struct {
	masters     int
	replicated  bool
	persistence redis.Persistence
	think       clock.Duration

	r        *runner
	servers  []*redis.Server
	sentinel *redis.Sentinel
	resource *lockmodel.Resource
	fencing  bool
	apps     []*redisApp

	leases   []lock.Lease
	attempts []lock.LeaseAttempt
}

type redisApp struct {
	rw    *redisWorkload
	a     *app
	inc   uint32
	lock  *redis.Lock
	rc    *lockmodel.ResourceClient
	lease int            // index in rw.leases of the lease held, -1 for none
	gap   clock.Duration // the longest pause between two accesses of this hold
	// extendFailed: this hold's extension failed, and the holder lets its validity run out.
	extendFailed bool
	final        int // index in rw.attempts of the liveness-phase acquisition, -1 before it
	settled      bool
}

// builder is implemented by workloads with nodes of their own, which the runner has them make
// when it builds the world (after the ensemble and before the applications).
type builder interface {
	build(r *runner) error
}

// healer is implemented by workloads with nodes of their own, which the liveness phase heals.
type healer interface {
	heal()
}

// settler is implemented by workloads whose applications have work of their own to finish in the
// liveness phase, beside their barrier.
type settler interface {
	settled(a *app) bool
}

// settled reports whether the application's liveness-phase acquisition got the lock and released it.
// An application restarted by the heal never drives (app.tick stops at a.stopped), so its lock
// loop starts here, the first time the liveness phase asks.
func (rw *redisWorkload) settled(a *app) bool {
	if a.index > len(rw.apps) || rw.apps[a.index-1] == nil || rw.apps[a.index-1].inc != rw.r.w.Incarnation(a.node) {
		if rw.r.w.IsUp(a.node) {
			rw.drive(a)
		}
		return false
	}
	return rw.apps[a.index-1].settled
}

// redisNoder is implemented by the Redis workloads: scripts name their servers r1..rN.
type redisNoder interface {
	redisNodes() []sim.NodeID
}

func newRedisWorkload(w *sim.World, masters int, replicated bool) *redisWorkload {
	rw := &redisWorkload{masters: masters, replicated: replicated, think: thinkTimeMax}
	if w.Chance(1, 2) {
		rw.persistence = redis.PersistenceAOFEverySec
	}
	if w.Chance(1, 3) {
		rw.think = w.Between(clock.Second, 10*clock.Second, 100*clock.Millisecond)
	}
	return rw
}

// build makes the servers, the Sentinel and the resource when the runner builds the world.
func (rw *redisWorkload) build(r *runner) error {
	rw.r = r
	rw.fencing = !r.opts.RecipeBugs.Has(lockmodel.BugNoFencing)
	for i := 1; i <= rw.masters; i++ {
		s, err := redis.NewServer(r.w, r.nw, redis.Config{Name: fmt.Sprintf("r%d", i), Persistence: rw.persistence})
		if err != nil {
			return err
		}
		rw.servers = append(rw.servers, s)
	}
	if rw.replicated {
		replica, err := redis.NewServer(r.w, r.nw, redis.Config{Name: "r2", Persistence: rw.persistence, ReplicaOf: rw.servers[0]})
		if err != nil {
			return err
		}
		rw.servers = append(rw.servers, replica)
		if rw.sentinel, err = redis.NewSentinel(r.w, redis.DefaultDownAfter, rw.servers...); err != nil {
			return err
		}
	}
	res, err := lockmodel.NewResource(r.w, r.nw, lockmodel.ResourceConfig{Fencing: rw.fencing})
	if err != nil {
		return err
	}
	rw.resource = res
	return nil
}

// redisNodes lists the servers' nodes, r1 first.
func (rw *redisWorkload) redisNodes() []sim.NodeID {
	out := make([]sim.NodeID, len(rw.servers))
	for i, s := range rw.servers {
		out[i] = s.Node()
	}
	return out
}

// heal restarts every Redis server and sets its clock's drift back to none (the liveness phase).
func (rw *redisWorkload) heal() {
	for _, n := range rw.redisNodes() {
		rw.r.w.Restart(n)
		_ = rw.r.w.Clock(n).SetDrift(rw.r.w.Now(), 0)
	}
}

func (rw *redisWorkload) thinkTimeMax() clock.Duration { return rw.think }

func (rw *redisWorkload) next(*sim.World, *app) opSpec {
	panic("scenarios: a Redis lock workload is driven by its lock clients, not by next")
}

func (rw *redisWorkload) observe(*app, opSpec, result) {}

func (rw *redisWorkload) checks() []checkers.LinearizabilityOptions { return nil }

func (rw *redisWorkload) connectionEvent(*app, client.Event) {}

// drive starts the application's lock loop, once per process incarnation: the loop runs on its
// own timers from then on, whatever its ZooKeeper session does.
func (rw *redisWorkload) drive(a *app) {
	for len(rw.apps) < a.index {
		rw.apps = append(rw.apps, nil)
	}
	if ra := rw.apps[a.index-1]; ra != nil && ra.inc == rw.r.w.Incarnation(a.node) {
		return
	}
	ra := &redisApp{rw: rw, a: a, inc: rw.r.w.Incarnation(a.node), lease: -1, final: -1}
	var clients []*redis.Client
	for _, s := range rw.servers[:rw.masters] {
		target := func() *redis.Server { return s }
		if rw.sentinel != nil {
			target = rw.sentinel.Master
		}
		c, err := redis.NewClient(rw.r.w, rw.r.nw, a.node, target)
		if err != nil {
			panic(fmt.Sprintf("scenarios: redis client of %s: %v", a.name, err))
		}
		clients = append(clients, c)
	}
	l, err := redis.NewLock(rw.r.w, a.node, redis.LockConfig{Key: redisLockKey, Fencing: rw.fencing}, clients...)
	if err == nil {
		ra.rc, err = lockmodel.NewResourceClient(rw.r.w, rw.r.nw, a.node, rw.resource, a.name)
	}
	if err != nil {
		panic(fmt.Sprintf("scenarios: redis lock of %s: %v", a.name, err))
	}
	ra.lock = l
	rw.apps[a.index-1] = ra
	ra.after(a.think(), ra.cycle)
}

// crashed forgets the application's lock: its process is gone, its key stays until it expires.
func (rw *redisWorkload) crashed(a *app) {
	if a.index <= len(rw.apps) {
		rw.apps[a.index-1] = nil
	}
}

func (ra *redisApp) alive() bool {
	w := ra.rw.r.w
	return w.IsUp(ra.a.node) && w.Incarnation(ra.a.node) == ra.inc && ra.rw.apps[ra.a.index-1] == ra
}

// after runs fn on the application's node after d of its own clock, unless it crashed meanwhile.
func (ra *redisApp) after(d clock.Duration, fn func()) {
	if !ra.alive() {
		return
	}
	ra.rw.r.w.AfterFunc(ra.a.node, d, func() {
		if ra.alive() {
			fn()
		}
	})
}

// cycle starts one acquisition; in the liveness phase, the application's last one.
func (ra *redisApp) cycle() {
	rw, w := ra.rw, ra.rw.r.w
	switch {
	case !ra.a.stopped:
	case ra.final < 0:
		ra.final = len(rw.attempts)
		rw.attempts = append(rw.attempts, lock.LeaseAttempt{Client: ra.a.name, Start: w.Now()})
	case rw.attempts[ra.final].Granted:
		return
	}
	if err := ra.lock.Acquire(ra.granted); err != nil {
		ra.after(lockPollInterval, ra.cycle)
	}
}

func (ra *redisApp) granted(g redis.Grant) {
	rw, w := ra.rw, ra.rw.r.w
	if !ra.alive() {
		return
	}
	if !g.Held {
		ra.after(ra.a.think(), ra.cycle)
		return
	}
	now := w.Now()
	left := g.Until - w.Elapsed(ra.a.node)
	ra.lease = len(rw.leases)
	rw.leases = append(rw.leases, lock.Lease{Client: ra.a.name, ID: int64(len(rw.leases) + 1), Token: g.Token,
		Granted: now, Expires: now.Add(clock.Duration(left))})
	w.Note(ra.a.node, "redis-lock", "%s holds %s: lease %d, token %d, %d votes, valid %s more", ra.a.name, redisLockKey, len(rw.leases), g.Token, g.Votes, clock.Duration(left))
	if ra.final >= 0 {
		rw.attempts[ra.final].End, rw.attempts[ra.final].Granted = now, true
		ra.release()
		return
	}
	accesses := 1 + w.Choose(lockAccessesMax)
	ra.gap, ra.extendFailed = lockAccessGapMax, false
	if w.Chance(1, 3) {
		// A long hold, past the TTL: the holder extends its lease as it goes.
		accesses, ra.gap = redisLongHoldMin+w.Choose(redisLongHoldMin), redisLongHoldGapMax
	}
	ra.after(w.Between(clock.Millisecond, ra.gap, clock.Millisecond), func() { ra.use(accesses) })
}

// use makes one access if the holder's validity has not run out on its own clock: it checks,
// prepares the access, then sends it. A pause between the check and the send is the classic
// case of a holder acting on an expired lease.
func (ra *redisApp) use(left int) {
	w := ra.rw.r.w
	if left == 0 || !ra.lock.Held() {
		ra.release()
		return
	}
	if remaining := ra.lock.Until() - w.Elapsed(ra.a.node); clock.Duration(remaining) < ra.lock.Config().TTL/2 && !ra.extendFailed {
		// Less than half the validity left: extend first (redsync's Extend), which moves the
		// lease's end. A failed extension leaves the validity the holder already had, which it
		// uses to the end (redsync's Until stays as it was), without trying again.
		if err := ra.lock.Extend(func(ok bool) {
			if ok {
				ra.rw.leases[ra.lease].Expires = w.Now().Add(clock.Duration(ra.lock.Until() - w.Elapsed(ra.a.node)))
			}
			ra.extendFailed = !ok
			ra.use(left)
		}); err != nil {
			ra.release()
		}
		return
	}
	lease := ra.rw.leases[ra.lease]
	ra.after(w.Between(clock.Millisecond, lockPrepareMax, clock.Millisecond), func() {
		err := ra.rc.Access(redisLockPath, lease.ID, lease.Token, true, func(lockmodel.AccessResult) {
			ra.after(w.Between(clock.Millisecond, ra.gap, clock.Millisecond), func() { ra.use(left - 1) })
		})
		if err != nil {
			ra.after(lockPollInterval, func() { ra.use(left - 1) })
		}
	})
}

func (ra *redisApp) release() {
	ra.lease = -1
	done := func(int) {
		if ra.final >= 0 {
			ra.settled = true
			return
		}
		ra.after(ra.a.think(), ra.cycle)
	}
	if err := ra.lock.Release(done); err != nil {
		ra.lock.Abandon()
		ra.after(ra.a.think(), func() { done(0) })
	}
}

// judge implements judged: the lease checkers on the grants and the resource's log.
func (rw *redisWorkload) judge(r *runner, h *checkers.History) []checkers.Result {
	lh := &lock.LeaseHistory{Lock: redisLockPath, Leases: rw.leases, Fencing: rw.fencing, End: h.End}
	if h.Liveness != nil {
		lh.Attempts = rw.attempts
	}
	if rw.resource != nil {
		lh.Accesses = accessesOf(rw.resource.Log())
	}
	results, err := lock.RunLeases(lh)
	if err != nil {
		return []checkers.Result{{Checker: "lock/history", Status: checkers.Unknown, Summary: err.Error()}}
	}
	return results
}

// drawRedisScript draws a Redis lock workload's faults: the families of the swarm, aimed at the
// Redis servers (r1..rN) and the clients instead of the ZooKeeper ensemble, which no fault touches
// (it only gives the applications the sessions the runner expects).
// Forced session expiries do nothing to a Redis lock and are not drawn. Servers and observers the
// options set are kept (they only cost time); drawn ones are replaced by one server.
func drawRedisScript(d *drawer, o Options) *Script {
	s, w := d.s, d.w
	s.InitialZxidCounter = 0
	if o.Servers == 0 {
		s.Servers = 1
	}
	if o.Observers < 0 || s.Servers == 1 {
		s.Observers = 0
	}
	servers := redisServerCount(s.Workload)
	server := func() string { return fmt.Sprintf("r%d", 1+w.Choose(servers)) }
	node := func() string {
		if w.Chance(1, 2) {
			return server()
		}
		return d.client()
	}
	for _, family := range FaultFamilies {
		if !slices.Contains(o.Faults, family) || family == FaultExpire || family == FaultDisk || !w.Chance(2, 3) {
			continue
		}
		mean := w.Between(2*clock.Second, 20*clock.Second, 100*clock.Millisecond)
		for at := d.between(0, mean); at < s.Duration; at += d.between(mean/2, mean*3/2) {
			switch family {
			case FaultCrash:
				target := server()
				d.add(at, "crash", target)
				d.add(at+d.between(200*clock.Millisecond, 20*clock.Second), "restart", target)
			case FaultPartition:
				if w.Chance(1, 2) {
					d.add(at, "isolate", node())
				} else {
					a, b := server(), d.client()
					d.add(at, "partition", a, "|", b)
				}
				d.add(at+d.between(500*clock.Millisecond, 15*clock.Second), "heal")
			case FaultClog:
				d.add(at, "clog", node(), formatDuration(d.between(100*clock.Millisecond, 6*clock.Second)))
			case FaultReset:
				d.add(at, "reset", node())
			case FaultPause:
				if w.Chance(1, 2) {
					d.add(at, "pause", d.client(), formatDuration(d.between(500*clock.Millisecond, 20*clock.Second)))
				} else {
					d.add(at, "pause", server(), formatDuration(d.between(100*clock.Millisecond, 15*clock.Second)))
				}
			case FaultClock:
				if w.Chance(1, 2) {
					d.add(at, "drift", node(), fmt.Sprintf("%+dppm", w.Choose(1001)-500))
				} else {
					d.add(at, "stepwall", node(), formatDuration(d.between(-30*clock.Second, 30*clock.Second)))
				}
			case FaultClientKill:
				c := d.client()
				d.add(at, "kill", c)
				d.add(at+d.between(500*clock.Millisecond, 10*clock.Second), "revive", c)
			}
		}
	}
	slices.SortStableFunc(s.Actions, func(a, b Action) int { return int(a.At - b.At) })
	return s
}
