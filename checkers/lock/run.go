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
)

// Options configure the lock checkers.
type Options struct {
	// ProgressBound is how long after the later of its start and the heal a waiter may wait;
	// 0 means DefaultProgressBound.
	ProgressBound clock.Duration
	// Stopwatch, if set, times each checker (host time, from outside the simulation).
	Stopwatch func() time.Duration
}

// DefaultProgressBound matches the scenario runner's default liveness bound.
const DefaultProgressBound = 60 * clock.Second

// Run validates the history and applies every lock checker, in a fixed order: mutual exclusion,
// unsafe without fencing, fairness, herd, orphans, progress. An error means the history is
// malformed; a failing check is a result.
func Run(h *History, opts Options) ([]checkers.Result, error) {
	if err := Validate(h); err != nil {
		return nil, err
	}
	start := opts.elapsed()
	t := newLockTree(h.Locks, h.Committed)
	results := checkExclusion(h, t)
	for _, check := range []func(*History, *lockTree, Options) checkers.Result{checkFairness, checkHerd, checkOrphans, checkProgress} {
		results = append(results, check(h, t, opts))
	}
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
	status := checkers.Pass
	if len(c.findings) > 0 {
		status = checkers.Violation
	}
	return checkers.Result{Checker: c.checker, Status: status, Summary: summary, Findings: c.findings,
		Dropped: c.dropped, Notes: c.notes, Checked: checked}
}

func skipped(checker, why string) checkers.Result {
	return checkers.Result{Checker: checker, Status: checkers.Skipped, Summary: why}
}
