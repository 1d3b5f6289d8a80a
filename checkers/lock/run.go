package lock

import (
	"time"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
)

// Names of the lock checkers, as they appear in results.
const (
	// CheckerMutualExclusion: two holders used the resource at once, and the recipe had granted
	// both (a recipe bug).
	CheckerMutualExclusion = "lock/mutual-exclusion"
	// CheckerUnfenced: two holders used the resource at once because a holder that had lost its
	// lock (its session expired while it was paused or cut off) went on using it. This is the
	// inherent limit of ZooKeeper locks, which only fencing at the resource removes; it is reported
	// apart from recipe bugs.
	CheckerUnfenced = "lock/unsafe-without-fencing"
	// CheckerFairness: a fair lock was granted out of queue order.
	CheckerFairness = "lock/fairness"
	// CheckerHerd: one change to a queue woke more than one waiter that must wait alone.
	CheckerHerd = "lock/herd"
	// CheckerOrphans: a lock node outlived the session that created it.
	CheckerOrphans = "lock/orphans"
	// CheckerProgress: after the faults healed, a live waiter was never granted the lock.
	CheckerProgress = "lock/progress"
	// CheckerExclusiveBelief: two clients believed at once that they held conflicting locks (from
	// the recipes' own state), with no fencing at the resource.
	CheckerExclusiveBelief = "lock/exclusive-belief"
	// CheckerExclusiveBeliefFenced: the same with fencing on, where the resource's fencing kept
	// the overlap from doing harm: "fencing saved you here". It fails the run all the same, except
	// for Curator 5.x's own LeaderLatch window (KnownLatchReplacedNode), a known finding.
	CheckerExclusiveBeliefFenced = "lock/exclusive-belief-fenced"
	// CheckerChurn: a participant kept abandoning its node and queueing again, or a lock's queue
	// kept changing with nobody holding it after the heal.
	CheckerChurn = "lock/churn"
)

// KnownLatchReplacedNode is the known class (checkers.Known) of Curator 5.x's own window of two
// believers: a LeaderLatch participant whose RECONNECTED listing did not find its node (its create
// was still being retried) resets and starts a second create (LeaderLatch.handleStateChange,
// checkLeadership, reset); the first completes, the participant leads on it, then the second
// completes and its callback's setNode deletes the leader's node in the background and lists the
// children, and the participant gives up leadership only when that listing returns
// (checkLeadership, CURATOR-653). A waiter that watched the deleted node may be granted within that
// round trip. With fencing, the resource refuses the stale leader, so the overlap is reported as
// this known class of lock/exclusive-belief-fenced, not as a failure; without fencing it stays a
// violation of lock/exclusive-belief.
const KnownLatchReplacedNode = "curator-latch-replaced-node"

// Options configure the lock checkers.
type Options struct {
	// ProgressBound is how long after the later of its start and the heal a waiter may wait;
	// 0 means DefaultProgressBound.
	ProgressBound clock.Duration
	// ChurnBound is how many requeues one participant may make in one session; 0 means
	// DefaultChurnBound.
	ChurnBound int
	// LivelockBound is how long after the heal a lock may go without a holder while its queue
	// keeps changing; 0 means DefaultLivelockBound.
	LivelockBound clock.Duration
	// Stopwatch, if set, times each checker (host time, from outside the simulation).
	Stopwatch func() time.Duration
}

// DefaultProgressBound matches the scenario runner's default liveness bound.
const DefaultProgressBound = 60 * clock.Second

// Defaults of the churn check. A participant requeues once for each reconnect that finds its
// create still in flight and for each parent the container manager deletes under it; 16 in one
// session is beyond what a minute of faults causes.
const (
	DefaultChurnBound    = 16
	DefaultLivelockBound = 30 * clock.Second
)

// Run validates the history and applies every lock checker, in a fixed order: mutual exclusion,
// unsafe without fencing, fairness, herd, orphans, progress, exclusive belief (without fencing,
// then with), churn. An error means the history is
// malformed; a failing check is a result.
func Run(h *History, opts Options) ([]checkers.Result, error) {
	if err := Validate(h); err != nil {
		return nil, err
	}
	start := opts.elapsed()
	t := newLockTree(h.Locks, h.Committed)
	fenced := newCollector(CheckerExclusiveBeliefFenced)
	results := checkExclusion(h, t, fenced)
	for _, check := range []func(*History, *lockTree, Options) checkers.Result{checkFairness, checkHerd, checkOrphans, checkProgress} {
		results = append(results, check(h, t, opts))
	}
	results = append(results, checkBelief(h, t, fenced)...)
	results = append(results, checkChurn(h, t, opts))
	if opts.Stopwatch != nil {
		// The checks share the replay, so their time is reported once, on the first result.
		results[0].Duration = opts.elapsed() - start
	}
	return results, nil
}

func (o Options) elapsed() time.Duration {
	if o.Stopwatch == nil {
		return 0
	}
	return o.Stopwatch()
}

// maxFindings bounds the findings one result keeps; the rest are counted.
const maxFindings = 25

// collector accumulates one checker's findings.
type collector struct {
	checker  string
	findings []checkers.Finding
	dropped  int
	notes    []string
}

func newCollector(checker string) *collector { return &collector{checker: checker} }

func (c *collector) add(f checkers.Finding) {
	f.Checker = c.checker
	if len(c.findings) >= maxFindings {
		c.dropped++
		return
	}
	c.findings = append(c.findings, f)
}

func (c *collector) note(n string) { c.notes = append(c.notes, n) }

func (c *collector) result(checked int, summary string) checkers.Result {
	return checkers.Result{Checker: c.checker, Status: checkers.StatusOf(c.findings), Summary: summary, Findings: c.findings,
		Dropped: c.dropped, Notes: c.notes, Checked: checked}
}

func skipped(checker, why string) checkers.Result {
	return checkers.Result{Checker: checker, Status: checkers.Skipped, Summary: why}
}
