package main

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/zabsim/zabsim/scenarios"
)

// outsidePrefix marks the failure class of a run that used faults outside ZAB's fault model: such a
// failure is not a ZooKeeper bug, and is never counted with the ones that are.
const outsidePrefix = "outside-fault-model:"

// seedResult is what a sweep keeps of one run. The Report itself holds the whole history and is
// dropped as soon as this is extracted, so that a sweep's memory does not grow with its length.
type seedResult struct {
	index int64 // position in the sweep's range
	seed  uint64
	class string // "" for a pass
	// known lists the run's known findings ("<checker>:<class>"), which do not fail it.
	known []string
	// beyondGuarantee marks a failure of an opt-in check stronger than ZooKeeper's promises.
	beyondGuarantee bool
	events          int64
	virtual         time.Duration
	wall            time.Duration
	checkers        time.Duration // every checker: the streaming ZAB one and those at the end
	zabCheckers     time.Duration // the streaming ZAB checker alone (estimated from samples)
	traceHash       uint64
	outside         []string
	explanation     string
	script          string
	err             error // the run could not be set up (bad options or script)
}

func (r *seedResult) failed() bool { return r.class != "" }

// classify names a report's failure class: Report.Failure, set apart when the run used faults
// outside the fault model.
func classify(report *scenarios.Report) string {
	class := report.Failure()
	if class != "" && len(report.Outcome.OutsideFaultModel) > 0 {
		class = outsidePrefix + class
	}
	return class
}

// runFunc runs one fully specified run. It is scenarios.Run, except in tests that need a run to
// misbehave (panic, or replay differently) to see simrun handle it.
type runFunc func(opts scenarios.Options) (*scenarios.Report, error)

// runSeed runs one seed and never panics: scenarios.Run already turns a panic inside the simulated
// world into a failed run, and a panic outside it (while building the run) is caught here and
// counted as a failure of that seed, so that a sweep never dies because one seed did.
func (env *environment) runSeed(opts scenarios.Options, seed uint64) (report *scenarios.Report, err error) {
	defer func() {
		if value := recover(); value != nil {
			report, err = nil, &setupPanic{seed: seed, value: value, stack: string(debug.Stack())}
		}
	}()
	opts.Seed = seed
	if opts.Script != nil {
		// The runner fills in a script's missing fields; each run gets its own copy.
		script := *opts.Script
		script.Actions = append([]scenarios.Action(nil), opts.Script.Actions...)
		opts.Script = &script
	}
	if env.run != nil {
		return env.run(opts)
	}
	return scenarios.Run(opts)
}

// runErrorExit is the exit code for a run that could not be made: a panic is simrun's or zabsim's
// bug (1), anything else is an input the run refused (2).
func runErrorExit(err error) int {
	if _, ok := err.(*setupPanic); ok {
		return exitFailure
	}
	return exitUsage
}

// setupPanic is a panic raised outside the simulated world while a run was being set up.
type setupPanic struct {
	seed  uint64
	value any
	stack string
}

func (p *setupPanic) Error() string {
	return fmt.Sprintf("seed %d: panic while setting up the run: %v\n%s", p.seed, p.value, p.stack)
}

// measureSeed runs one seed for a sweep and keeps what the summary and the outputs need.
func measureSeed(env *environment, opts scenarios.Options, index int64, seed uint64) seedResult {
	start := time.Now()
	opts.Stopwatch = func() time.Duration { return time.Since(start) }
	report, err := env.runSeed(opts, seed)
	result := seedResult{index: index, seed: seed, wall: time.Since(start)}
	if panicked, ok := err.(*setupPanic); ok {
		result.class = "panic:setup"
		result.explanation = panicked.Error()
		return result
	}
	if err != nil {
		result.err = err
		return result
	}
	result.class = classify(report)
	result.events = report.Stats.Events
	result.virtual = time.Duration(report.Stats.VirtualTime)
	result.checkers = report.Checks.Total + report.ZabCheckTime
	result.zabCheckers = report.ZabCheckTime
	result.traceHash = report.Outcome.TraceHash
	result.outside = report.Outcome.OutsideFaultModel
	result.known = report.KnownClasses()
	if result.failed() || len(result.known) > 0 {
		result.explanation = report.Explain()
	}
	if result.failed() {
		result.beyondGuarantee = failedBeyondGuarantee(report)
		result.explanation = report.Explain()
		if report.Script != nil {
			result.script = report.Script.String()
		}
	}
	return result
}

// failedBeyondGuarantee reports whether the failure is that of an opt-in check that demands more
// than ZooKeeper promises.
func failedBeyondGuarantee(report *scenarios.Report) bool {
	for _, res := range report.Checks.Results {
		if res.Failed() {
			return res.BeyondGuarantee
		}
	}
	return false
}

// maxHeadline bounds the length of the one-line explanation printed for a failing seed.
const maxHeadline = 240

// headline returns the line of an explanation that says best what broke: the first finding of a
// checker if there is one, else the first unindented line after the outcome (Explain's first line
// only restates the outcome; a ZAB violation's own line follows it), else the outcome itself.
// Runs of spaces are collapsed and the line is cut to maxHeadline bytes.
func headline(explanation string) string {
	lines := strings.Split(strings.TrimSpace(explanation), "\n")
	line := lines[0]
	for _, candidate := range lines[1:] {
		if !strings.HasPrefix(candidate, " ") {
			line = candidate
			break
		}
	}
	for _, candidate := range lines {
		if strings.HasPrefix(candidate, "  - ") {
			line = strings.TrimPrefix(candidate, "  - ")
			break
		}
	}
	line = strings.Join(strings.Fields(line), " ")
	if len(line) > maxHeadline {
		line = line[:maxHeadline] + "..."
	}
	return line
}
