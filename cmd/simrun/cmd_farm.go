package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zabsim/zabsim/internal/failurestore"
	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/sim"
)

const farmUsage = `Usage: simrun farm --db FILE --time-limit D [--seeds N] [flags]

Runs fresh seeds on every core until the time limit (or --seeds of them), as a long-running search does (a night, a
spare machine), and records each failing seed in an SQLite database (--db): the seed, the build,
the failure class and invariant, and its script shrunk by the shrinker of 'simrun shrink' within
--shrink-time. Failures are deduplicated by signature: class, invariant, and shape (where in the
protocol it broke: for a ZAB invariant, the kind of event and the server's role), never the seed,
times or faults, so the same bug found ten thousand times is one row with its count and its
smallest script. 'simrun failures' lists and exports them.

Each failure is committed (SQLite WAL, synchronous=FULL) before its line is printed: a farm that
is killed, even with SIGKILL, keeps every failure it printed. SIGINT or SIGTERM stops it cleanly:
no new seed starts and the seeds running finish. A new farm on the same database with the same
flags continues after the seeds earlier farms reached, unless --seed-start is given.

Exit status: 0 when no seed failed, 1 when one did, 2 on bad usage or a database it cannot use.

Examples:
  simrun farm --db failures.db --time-limit 8h
  simrun farm --db zk3911.db --time-limit 10m --bug ZK-3911 --shrink-time 20s
  simrun failures --db failures.db
`

// farmFlags are the farm command's flags.
type farmFlags struct {
	scenario   scenarioFlags
	db         string
	timeLimit  time.Duration
	seeds      int64
	parallel   int
	seedStart  seedFlag
	shrinkTime time.Duration
	shrinkRuns int
	quiet      bool
}

func newFarmFlags() (*flag.FlagSet, *farmFlags) {
	f := &farmFlags{}
	fs := flag.NewFlagSet("farm", flag.ContinueOnError)
	fs.StringVar(&f.db, "db", "", "the SQLite `FILE` that keeps the failures (created if absent)")
	fs.DurationVar(&f.timeLimit, "time-limit", 0, "start no new seed after this long, e.g. 8h (this or --seeds is required)")
	fs.Int64Var(&f.seeds, "seeds", 0, "start no new seed after this many (0: as many as --time-limit allows)")
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "seeds run at once, one goroutine each")
	fs.Var(&f.seedStart, "seed-start", "first seed `S` (default: after the seeds earlier farms on --db reached with the same flags)")
	fs.DurationVar(&f.shrinkTime, "shrink-time", 30*time.Second, "shrink each failing seed's script for at most this long (0: keep the seed's whole script)")
	fs.IntVar(&f.shrinkRuns, "shrink-runs", 500, "shrink each failing seed's script with at most this many runs")
	fs.BoolVar(&f.quiet, "quiet", false, "print only the summary, not a line per failure")
	f.scenario.register(fs)
	return fs, f
}

// validate checks the farm's own flags.
func (f *farmFlags) validate() error {
	var problems []error
	if f.db == "" {
		problems = append(problems, errors.New("--db FILE is required: the database the failures go to"))
	}
	switch {
	case f.timeLimit == 0 && f.seeds == 0:
		problems = append(problems, errors.New("--time-limit or --seeds is required: a farm runs until one of them is reached"))
	case f.timeLimit < 0 || f.timeLimit > maxTimeLimit:
		problems = append(problems, fmt.Errorf("--time-limit must be 0 (none) to %v, not %v", maxTimeLimit, f.timeLimit))
	case f.seeds < 0 || f.seeds > maxSeedsPerSweep:
		problems = append(problems, fmt.Errorf("--seeds must be 0 (none) to %d, not %d", int64(maxSeedsPerSweep), f.seeds))
	}
	if f.parallel < 1 || f.parallel > maxParallel {
		problems = append(problems, fmt.Errorf("--parallel must be 1 to %d, not %d", maxParallel, f.parallel))
	}
	if f.shrinkTime < 0 || f.shrinkTime > time.Hour {
		problems = append(problems, fmt.Errorf("--shrink-time must be 0 to 1h, not %v", f.shrinkTime))
	}
	if f.shrinkRuns < 1 || f.shrinkRuns > 1_000_000 {
		problems = append(problems, fmt.Errorf("--shrink-runs must be 1 to 1000000, not %d", f.shrinkRuns))
	}
	if f.scenario.scriptPath != "" {
		problems = append(problems, errors.New("--script cannot be used with farm: a farm draws a fresh script from each seed ('simrun run --script' sweeps one)"))
	}
	return errors.Join(problems...)
}

func cmdFarm(env *environment, args []string) int {
	fs, f := newFarmFlags()
	if err := parseFlags(env, "farm", fs, args); err != nil {
		return flagExit(err)
	}
	f.scenario.noteSet(fs)
	err := f.validate()
	var opts scenarios.Options
	if err == nil {
		opts, err = f.scenario.options()
	}
	if err != nil {
		usageFailed(env, "farm", err)
		return exitUsage
	}
	store, err := failurestore.Open(f.db)
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun farm: %v\n", err)
		return exitUsage
	}
	defer store.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	farm := &farm{env: env, flags: f, opts: opts, store: store, build: currentBuild().String(),
		sweepFlags: strings.Join(f.scenario.replayArgs(), " ")}
	return farm.run(ctx)
}

// farm is one farm run.
type farm struct {
	env        *environment
	flags      *farmFlags
	opts       scenarios.Options
	store      *failurestore.Store
	build      string
	sweepFlags string

	// smallest is the smallest script size per signature, from the database and this run's finds.
	mu       sync.Mutex
	smallest map[string]int
	// shrunk counts the failures whose scripts were shrunk.
	shrunk atomic.Int64
}

// farmResult is what a worker hands the recorder for one seed.
type farmResult struct {
	seed    uint64
	failure *failurestore.Failure // nil for a pass
	shrunk  bool                  // the failure's script was shrunk
	err     error                 // the run could not be set up
}

func (fm *farm) run(ctx context.Context) int {
	start := fm.flags.seedStart.value
	if !fm.flags.seedStart.given {
		next, err := fm.store.NextSeed(fm.sweepFlags)
		if err != nil {
			fmt.Fprintf(fm.env.stderr, "simrun farm: %v\n", err)
			return exitUsage
		}
		start = next
	}
	entries, err := fm.store.List()
	if err != nil {
		fmt.Fprintf(fm.env.stderr, "simrun farm: %v\n", err)
		return exitUsage
	}
	fm.smallest = map[string]int{}
	for _, e := range entries {
		fm.smallest[e.Signature] = e.ScriptActions
	}
	began := time.Now()
	runID, err := fm.store.StartRun(fm.build, fm.sweepFlags, start, began)
	if err != nil {
		fmt.Fprintf(fm.env.stderr, "simrun farm: %v\n", err)
		return exitUsage
	}
	deadline := began.Add(fm.flags.timeLimit)
	if fm.flags.timeLimit == 0 {
		deadline = began.Add(maxTimeLimit)
	}
	// last is the last seed to start: --seeds of them, or as many as there are.
	last := uint64(math.MaxUint64)
	if fm.flags.seeds > 0 && start <= math.MaxUint64-uint64(fm.flags.seeds-1) {
		last = start + uint64(fm.flags.seeds-1)
	}
	var next atomic.Uint64
	next.Store(start)
	results := make(chan farmResult, fm.flags.parallel)
	var stopping atomic.Bool
	var workers sync.WaitGroup
	for range fm.flags.parallel {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for !stopping.Load() && ctx.Err() == nil && time.Now().Before(deadline) {
				seed := next.Add(1) - 1
				if seed < start || seed > last { // --seeds reached, or past the largest seed.
					return
				}
				results <- fm.runSeed(seed)
			}
		}()
	}
	go func() {
		workers.Wait()
		close(results)
	}()

	var seedsRun, failed, repeats int64
	signatures := map[string]bool{}
	newSignatures := 0
	var problem error
	lastProgress := time.Now()
	for result := range results {
		if result.err != nil {
			if problem == nil {
				problem = result.err
			}
			stopping.Store(true)
			continue
		}
		seedsRun++
		if result.failure != nil {
			failed++
			recorded, err := fm.store.Record(*result.failure)
			if err != nil {
				if problem == nil {
					problem = err
				}
				stopping.Store(true)
				continue
			}
			if recorded.Repeat {
				repeats++
			}
			fm.noteSmallest(recorded.Signature, result.failure.ScriptActions)
			if recorded.New {
				newSignatures++
			}
			signatures[recorded.Signature] = true
			if !fm.flags.quiet {
				fm.printRecorded(result, recorded)
			}
		}
		if time.Since(lastProgress) >= time.Second {
			lastProgress = time.Now()
			if err := fm.store.UpdateRun(runID, next.Load(), seedsRun, lastProgress); err != nil && problem == nil {
				problem = err
				stopping.Store(true)
			}
		}
	}
	if err := fm.store.UpdateRun(runID, next.Load(), seedsRun, time.Now()); err != nil && problem == nil {
		problem = err
	}
	fmt.Fprintf(fm.env.stdout, "farm: %d seeds from %d in %s, %d failed (%d shrunk), %d signatures (%d new); %s\n", seedsRun, start,
		time.Since(began).Round(time.Second), failed, fm.shrunk.Load(), len(signatures), newSignatures, fm.flags.db)
	if repeats > 0 {
		fmt.Fprintf(fm.env.stdout, "note: %d failing seeds were already in the database and were not counted again\n", repeats)
	}
	switch {
	case problem != nil:
		fmt.Fprintf(fm.env.stderr, "simrun farm: %v\n", problem)
		return exitUsage
	case failed > 0:
		fmt.Fprintf(fm.env.stdout, "FAIL: %d failing seeds; 'simrun failures --db %s' lists them by signature\n", failed, fm.flags.db)
		return exitFailure
	}
	fmt.Fprintf(fm.env.stdout, "PASS: all %d seeds passed\n", seedsRun)
	return exitPass
}

// printRecorded prints one line per failure, after it is committed: every seed printed is in the
// database, whatever happens to the farm afterwards.
func (fm *farm) printRecorded(result farmResult, recorded failurestore.Recorded) {
	f := result.failure
	what := fmt.Sprintf("%d finds", recorded.Count)
	switch {
	case recorded.New:
		what = "new"
	case recorded.Repeat:
		what = "already recorded"
	}
	shrunk := "shrunk"
	if !result.shrunk {
		shrunk = "not shrunk"
	}
	fmt.Fprintf(fm.env.stdout, "recorded seed %d: %s [%s, %s] %s; script %d actions, %s (%s)\n", f.Seed, f.Class,
		failurestore.ShortID(recorded.Signature), f.Shape, what, f.ScriptActions, shrunk, f.Faults)
}

// runSeed runs one seed and, if it fails, shrinks its script and works out its signature.
func (fm *farm) runSeed(seed uint64) farmResult {
	report, err := fm.env.runSeed(fm.opts, seed)
	if err != nil {
		if _, ok := err.(*setupPanic); !ok {
			return farmResult{seed: seed, err: err}
		}
		// A panic while building the run is a failure of this seed, without a script to shrink.
		return farmResult{seed: seed, failure: &failurestore.Failure{
			Seed: seed, Build: fm.build, Flags: fm.sweepFlags, Class: "panic:setup", Invariant: maskNumbers(firstLine(err.Error())),
			Shape: "setup", Faults: failurestore.FaultSet(nil), ScriptSeed: seed, Explanation: headline(err.Error()), FoundAt: time.Now(),
		}}
	}
	class := classify(report)
	if class == "" {
		return farmResult{seed: seed}
	}
	// The signature is the seed's own run's; the shrunk script only represents it.
	failure := &failurestore.Failure{Seed: seed, Build: fm.build, Flags: fm.sweepFlags, Class: class, ScriptSeed: seed,
		Invariant: failureInvariant(report), Shape: failureShape(report), Explanation: headline(report.Explain()),
		Faults: failurestore.FaultSet(nil), FoundAt: time.Now()}
	script, shrunk := report.Script, false
	if script != nil && fm.flags.shrinkTime > 0 && fm.worthShrinking(failure.Signature()) {
		script, shrunk = fm.shrink(seed, class, report), true
		fm.shrunk.Add(1)
	}
	if script != nil {
		failure.Script = script.String()
		failure.ScriptActions = len(script.Actions)
		failure.Faults = failurestore.FaultSet(scriptVerbs(script))
	}
	return farmResult{seed: seed, failure: failure, shrunk: shrunk}
}

// worthShrinking reports whether shrinking a new find of a signature could give it a smaller
// script: not when its smallest script already has a single action (or none). Shrinking costs up
// to --shrink-runs runs, and a bug found ten thousand times needs its smallest script once.
func (fm *farm) worthShrinking(signature string) bool {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	best, known := fm.smallest[signature]
	return !known || best > 1
}

// noteSmallest keeps the smallest script size recorded for a signature.
func (fm *farm) noteSmallest(signature string, actions int) {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if best, known := fm.smallest[signature]; !known || actions < best {
		fm.smallest[signature] = actions
	}
}

// errShrinkTime stops a shrink at --shrink-time: the shrinker keeps the smallest script so far.
var errShrinkTime = errors.New("farm: shrink time spent")

// shrink shrinks a failing seed's script with the shrinker of 'simrun shrink', bounded by
// --shrink-time and --shrink-runs, and returns the smallest script. If that script, run as a
// script, does not fail alike (which would be a zabsim bug that 'simrun shrink' warns about), the
// seed's own script is kept.
func (fm *farm) shrink(seed uint64, class string, report *scenarios.Report) *scenarios.Script {
	deadline := time.Now().Add(fm.flags.shrinkTime)
	base := fm.env.run
	quiet := &environment{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, run: func(opts scenarios.Options) (*scenarios.Report, error) {
		if time.Now().After(deadline) {
			return nil, errShrinkTime
		}
		if base != nil {
			return base(opts)
		}
		return scenarios.Run(opts)
	}}
	opts := fm.opts
	opts.Seed = seed
	s := &shrinker{env: quiet, opts: opts, class: class, maxRuns: fm.flags.shrinkRuns, originalSeed: seed}
	minimal := s.shrink(report.Script)
	// One more run, outside the shrink budget, checks that the script fails alike.
	final, err := fm.env.runSeed(withScript(opts, minimal), seed)
	if err != nil || classify(final) != class {
		return report.Script
	}
	return minimal
}

func withScript(opts scenarios.Options, script *scenarios.Script) scenarios.Options {
	opts.Script = script
	return opts
}

// failureShape says where in the protocol a failure broke, as the failure store's signature wants
// it: for a ZAB invariant, the kind of event at which it was seen and the role of the server it
// happened in; for a client-visible check, the workload whose history broke it.
func failureShape(report *scenarios.Report) string {
	if len(report.Zab) > 0 {
		event := report.Zab[0].Event
		return event.Kind.String() + " at " + event.Role.String()
	}
	if report.Script != nil && report.Script.Workload != "" {
		return "workload " + report.Script.Workload
	}
	return "-"
}

// scriptVerbs lists a script's fault verbs, the shape of its failure.
func scriptVerbs(script *scenarios.Script) []string {
	verbs := make([]string, 0, len(script.Actions))
	for _, action := range script.Actions {
		verbs = append(verbs, action.Verb)
	}
	return verbs
}

// numbers matches the numbers in a message, which differ between two finds of one bug.
var numbers = regexp.MustCompile(`0x[0-9a-fA-F]+|[0-9]+`)

func maskNumbers(text string) string { return numbers.ReplaceAllString(text, "N") }

func firstLine(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	return line
}

// failureInvariant names what exactly broke within a failure class: the ZAB invariant, the
// checker finding's rule, the budget, or a panic's message with its numbers masked.
func failureInvariant(report *scenarios.Report) string {
	if len(report.Zab) > 0 {
		return string(report.Zab[0].Invariant)
	}
	switch report.Outcome.Kind {
	case sim.Panic, sim.Failure:
		if report.Outcome.Err != nil {
			return maskNumbers(firstLine(report.Outcome.Err.Error()))
		}
		return report.Outcome.Kind.String()
	case sim.EventBudget, sim.TimeBudget, sim.QueueBudget:
		return report.Outcome.Kind.String()
	}
	if report.CheckErr != nil {
		return "history could not be judged"
	}
	for _, result := range report.Checks.Results {
		if result.Failed() {
			if len(result.Findings) > 0 && result.Findings[0].Rule != "" {
				return result.Findings[0].Rule
			}
			return result.Checker + " " + result.Status.String()
		}
	}
	return ""
}
