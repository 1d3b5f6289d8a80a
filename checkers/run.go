package checkers

import "time"

// Options select and configure the checkers Run applies.
type Options struct {
	// Linearizability lists the linearizability checks to run, one per model and prefix (for
	// example a register check of /registers and a queue check of /queue). None runs if empty.
	Linearizability []LinearizabilityOptions
	Reads           ReadOptions
	Watches         WatchOptions
	Sessions        SessionOptions
	Liveness        LivenessOptions
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
		t := opts.elapsed()
		res, err := checkLinearizability(h, lin)
		if err != nil {
			return report, err
		}
		res.Duration = opts.elapsed() - t
		report.Results = append(report.Results, res)
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
