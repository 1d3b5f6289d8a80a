package checkers

import (
	"fmt"
	"time"
)

// Options select and configure the checkers Run applies.
type Options struct {
	// Linearizability lists the linearizability checks to run, one per model and prefix (for
	// example a register check of /registers and a queue check of /queue). None runs if empty.
	Linearizability []LinearizabilityOptions
	// Checker says how the linearizability checks decide: by the zxid order (the default), by
	// porcupine's search, or both, cross-checked.
	Checker  LinearizabilityChecker
	Reads    ReadOptions
	Watches  WatchOptions
	Sessions SessionOptions
	Liveness LivenessOptions
	// Stopwatch, if set, returns the host time elapsed since some fixed origin; Run uses it to
	// time each checker. Checkers belong to the simulated world, which never reads the host's
	// clock, so only a caller outside it (simrun, a test) can supply one.
	Stopwatch func() time.Duration
}

// Run validates the history once and runs every checker on it: the linearizability checks
// requested, sequential consistency (and the opt-in linearizable-reads-after-sync check),
// watches, sessions and liveness. An error means the history or the options are malformed; a
// failing check is a result, never an error.
func Run(h *History, opts Options) (Report, error) {
	var report Report
	start := opts.elapsed()
	if err := Validate(h); err != nil {
		return report, err
	}
	for _, lin := range opts.Linearizability {
		results, err := opts.linearizability(h, lin)
		if err != nil {
			return report, err
		}
		report.Results = append(report.Results, results...)
	}
	report.Results = append(report.Results, opts.timed(func() Result { return checkSequentialConsistency(h) }))
	if opts.Reads.LinearizableReadsAfterSync {
		report.Results = append(report.Results, opts.timed(func() Result { return checkLinearizableReadsAfterSync(h) }))
	}
	report.Results = append(report.Results, opts.timed(func() Result { return checkWatches(h, opts.Watches) }))
	report.Results = append(report.Results, opts.timed(func() Result { return checkSessions(h, opts.Sessions) }))
	report.Results = append(report.Results, opts.timed(func() Result { return checkLiveness(h, opts.Liveness) }))
	report.Total = opts.elapsed() - start
	return report, nil
}

// LinearizabilityChecker selects how linearizability is decided.
type LinearizabilityChecker uint8

// The linearizability checkers. The zero value is the default.
const (
	// ZxidOrderChecker verifies the order the zxids give (CheckZxidOrder): near-linear time, never
	// Unknown.
	ZxidOrderChecker LinearizabilityChecker = iota
	// PorcupineChecker searches for a linearization with porcupine (CheckLinearizability): it
	// ignores zxids, and may come out Unknown past its time limit.
	PorcupineChecker
	// BothCheckers runs both and adds a cross-check result that fails when one passes what the
	// other finds a violation.
	BothCheckers
)

// CheckerCrossCheck names the result that compares the zxid-order checker with porcupine.
const CheckerCrossCheck = "cross-check/zxid-porcupine"

// ParseLinearizabilityChecker reads "zxid", "porcupine" or "both".
func ParseLinearizabilityChecker(s string) (LinearizabilityChecker, error) {
	switch s {
	case "zxid":
		return ZxidOrderChecker, nil
	case "porcupine":
		return PorcupineChecker, nil
	case "both":
		return BothCheckers, nil
	}
	return 0, fmt.Errorf("checkers: unknown linearizability checker %q (want zxid, porcupine or both)", s)
}

// String names the checker as ParseLinearizabilityChecker reads it.
func (c LinearizabilityChecker) String() string {
	switch c {
	case ZxidOrderChecker:
		return "zxid"
	case PorcupineChecker:
		return "porcupine"
	case BothCheckers:
		return "both"
	}
	return "invalid-checker"
}

// linearizability runs the chosen checker or checkers on one linearizability check.
func (o Options) linearizability(h *History, lin LinearizabilityOptions) ([]Result, error) {
	var out []Result
	if o.Checker == ZxidOrderChecker || o.Checker == BothCheckers {
		t := o.elapsed()
		res, err := checkZxidOrderModel(h, lin)
		if err != nil {
			return nil, err
		}
		res.Duration = o.elapsed() - t
		out = append(out, res)
	}
	if o.Checker == ZxidOrderChecker && lin.Visualization != nil {
		// Only porcupine draws the visualization the caller asked for; its verdict is not the
		// one chosen, and is not reported.
		if _, err := checkLinearizability(h, lin); err != nil {
			return nil, err
		}
	}
	if o.Checker == PorcupineChecker || o.Checker == BothCheckers {
		t := o.elapsed()
		res, err := checkLinearizability(h, lin)
		if err != nil {
			return nil, err
		}
		res.Duration = o.elapsed() - t
		out = append(out, res)
	}
	if o.Checker == BothCheckers {
		out = append(out, crossCheck(out[0], out[1]))
	}
	return out, nil
}

// crossCheck compares the zxid-order verdict with porcupine's. They must agree wherever porcupine
// decides; a disagreement is a violation of its own, naming both verdicts.
func crossCheck(zxid, search Result) Result {
	res := Result{Checker: CheckerCrossCheck, Status: Pass, Checked: 1,
		Summary: fmt.Sprintf("%s and %s agree: %s", zxid.Checker, search.Checker, zxid.Status)}
	switch {
	case search.Status == Unknown:
		res.Summary = fmt.Sprintf("%s could not decide; %s says %s", search.Checker, zxid.Checker, zxid.Status)
	case search.Status == Skipped && zxid.Status != Skipped:
		res.Summary = fmt.Sprintf("%s did not judge; %s says %s", search.Checker, zxid.Checker, zxid.Status)
	case (zxid.Status == Violation) != (search.Status == Violation):
		res.Status = Violation
		res.Summary = fmt.Sprintf("%s says %s, %s says %s", zxid.Checker, zxid.Status, search.Checker, search.Status)
		res.Findings = []Finding{{Checker: CheckerCrossCheck, Rule: "agree", Message: res.Summary}}
	}
	return res
}

func (o Options) elapsed() time.Duration {
	if o.Stopwatch == nil {
		return 0
	}
	return o.Stopwatch()
}

func (o Options) timed(check func() Result) Result {
	t := o.elapsed()
	res := check()
	res.Duration = o.elapsed() - t
	return res
}
