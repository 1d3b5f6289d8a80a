package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/zabmodel"
)

const huntUsage = `Usage: simrun hunt [flags]

The bug zoo benchmark (shared/BUGS.md). For every bug switch in turn, it sweeps the seeds with that
switch on and the default swarm (each seed draws its cluster, workload and faults; a lock recipe
bug runs on the workload that exercises it: rwlock for rwlock-*, lock for the others) until the
first failing seed. Per bug it reports the first failing seed, how many seeds and how much wall
time it took to get there, the failure class (which checker caught it), and the replay command.

Every find is checked against the same seed with the switch off. A seed that fails without the
bug too is not a find of that bug: it is reported as not counted, and the hunt goes on to the next
failing seed.

With its defaults it finds every switch: the slowest, stale-ack, at seed 1,089 (trunc-snapshot at
1,023, ZK-335 at 60, curator-unsynced-search at 55, ZK-4846 at 52, every other within 45), and
each bug gets 10,000 seeds, about nine times that, because seed
numbers move whenever the model's or the swarm's draws change. A hunt stops at each bug's first
find, so the budget costs time only for a bug that is not found. CI runs it.

Exit status: 0 when every bug hunted was found, 1 when some bug was not found within the seeds,
2 on bad usage.

Examples:
  simrun hunt                                  # every bug, seeds 1..10000 each
  simrun hunt --only ZK-3911,lock-herd --seeds 100
  simrun hunt --seeds 2000 --parallel 8 --json > zoo.jsonl
  simrun hunt --only ZK-3911,lock-no-fencing --out zoo/   # a report per find, zoo/index.html
`

// defaultHuntSeeds is how many seeds a bug gets before it counts as not found: over four times the
// seeds the slowest switch needs (stale-ack, found at seed 2,225 by 'simrun hunt --seeds 6000' at
// the commit that set this), so that a change that renumbers what each seed draws does not make a
// switch count as missed. Only a bug not found runs them all.
const defaultHuntSeeds = 10000

type huntFlags struct {
	seeds     int64
	seedStart seedFlag
	parallel  int
	json      bool
	only      bugFlag
	duration  time.Duration
	outDir    string
	clients   int
	fuzz      bool
	fuzzOnly  bool
	trials    int
}

func newHuntFlags() (*flag.FlagSet, *huntFlags) {
	f := &huntFlags{seedStart: seedFlag{value: 1}}
	fs := flag.NewFlagSet("hunt", flag.ContinueOnError)
	fs.Int64Var(&f.seeds, "seeds", defaultHuntSeeds, "seeds per bug before it counts as not found")
	fs.Var(&f.seedStart, "seed-start", "first seed `S` of each bug's sweep")
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "seeds run at once, one goroutine each")
	fs.BoolVar(&f.json, "json", false, "print one JSON object per bug on stdout, then a summary object")
	fs.Var(&f.only, "only", "hunt only these bugs, by `NAME` (comma-separated or repeated; default every bug in 'simrun bugs')")
	fs.DurationVar(&f.duration, "duration", scenarios.DefaultDuration, "virtual length of each run's fault phase (at most 1h)")
	fs.StringVar(&f.outDir, "out", "", "write each find's report, trace, script and explanation under `DIR`/BUG/seed-S, and DIR/index.html")
	fs.IntVar(&f.clients, "clients", scenarios.DefaultClients, "simulated client applications per run, 1 to 100")
	fs.BoolVar(&f.fuzz, "fuzz", false, "hunt each bug twice, with the random swarm and with simrun fuzz from the same first seed and run options, "+
		"and compare the runs and wall time each took (--seeds bounds both)")
	fs.BoolVar(&f.fuzzOnly, "fuzz-only", false, "with --fuzz, run only the fuzzer's hunts (the swarm's run counts depend only on the seeds and the model: "+
		"take them from an earlier hunt --fuzz or hunt of the same model, to measure a change of the fuzzer alone)")
	fs.IntVar(&f.trials, "trials", 1, "with --fuzz, hunt each bug this many times with each search, from seed ranges one --seeds apart, and compare medians")
	return fs, f
}

// huntTarget is one bug to hunt and the flags of its runs.
type huntTarget struct {
	name     string
	kind     string // "server" or "recipe"
	scenario scenarioFlags
}

// recipeWorkload names the workload that exercises a lock recipe bug: the read-write lock's bugs
// are named rwlock-*, and every other recipe bug is one of the exclusive lock's.
func recipeWorkload(name string) string {
	if strings.HasPrefix(name, "rwlock-") {
		return "rwlock"
	}
	return "lock"
}

// huntTargets lists the bugs to hunt in zoo order, server bugs first, each with the default
// swarm's flags and its switch on.
func huntTargets(f *huntFlags) []huntTarget {
	everything := f.only.empty()
	var targets []huntTarget
	add := func(name, kind, workload string) {
		scenario := defaultScenarioFlags()
		scenario.workload, scenario.duration, scenario.clients = workload, f.duration, f.clients
		if err := scenario.bugs.Set(name); err != nil {
			panic(fmt.Sprintf("simrun: the bug list names %q, which its parser refuses: %v", name, err))
		}
		targets = append(targets, huntTarget{name: name, kind: kind, scenario: scenario})
	}
	for _, bug := range zabmodel.BugList() {
		if everything || f.only.bugs.Has(bug.Bit) {
			add(bug.Name, "server", "mixed")
		}
	}
	for _, bug := range lockmodel.BugList() {
		if everything || f.only.recipe.Has(bug.Bit) {
			add(bug.Name, "recipe", recipeWorkload(bug.Name))
		}
	}
	return targets
}

// defaultScenarioFlags are the flags of a run given no scenario flag: the default swarm.
func defaultScenarioFlags() scenarioFlags {
	return scenarioFlags{
		servers: defaultServers, observers: defaultObservers, clients: scenarios.DefaultClients, workload: "mixed",
		faults: defaultFaults, duration: scenarios.DefaultDuration, livenessBound: scenarios.DefaultLivenessBound,
		checkTimeLimit: checkers.DefaultTimeLimit, zkVersion: zabmodel.DefaultRelease,
	}
}

// huntRecord is what the hunt learned of one bug; it is also the bug's JSON line.
type huntRecord struct {
	Type     string `json:"type"`
	Bug      string `json:"bug"`
	Kind     string `json:"kind"`
	Workload string `json:"workload"`
	Found    bool   `json:"found"`
	// Seed is the first failing seed that passes without the bug; SeedsRun counts the seeds of
	// the sweep up to and including it (or every seed, when none was found).
	Seed        uint64  `json:"seed,omitempty"`
	SeedsRun    int64   `json:"seeds_run"`
	WallSeconds float64 `json:"wall_seconds"`
	Class       string  `json:"class,omitempty"`
	Replay      string  `json:"replay,omitempty"`
	Headline    string  `json:"headline,omitempty"`
	// NotCounted counts the failing seeds before the find that fail without the bug as well;
	// NotCountedSeeds lists the first maxNotCountedListed of them.
	NotCounted      int          `json:"not_counted"`
	NotCountedSeeds []notCounted `json:"not_counted_seeds,omitempty"`
	// Fuzz compares the swarm with simrun fuzz on this bug (hunt --fuzz).
	Fuzz *fuzzComparison `json:"fuzz,omitempty"`
}

// notCounted is a failing seed that fails without the bug too.
type notCounted struct {
	Seed         uint64 `json:"seed"`
	Class        string `json:"class"`
	WithoutClass string `json:"class_without_bug"`
}

// maxNotCountedListed bounds the seeds a record lists as not counted; the count goes on.
const maxNotCountedListed = 20

type huntSummary struct {
	Type        string  `json:"type"`
	SeedStart   uint64  `json:"seed_start"`
	Seeds       int64   `json:"seeds_per_bug"`
	Bugs        int     `json:"bugs"`
	Found       int     `json:"found"`
	NotCounted  int     `json:"seeds_not_counted"`
	WallSeconds float64 `json:"wall_seconds"`
}

func cmdHunt(env *environment, args []string) int {
	fs, f := newHuntFlags()
	if err := parseFlags(env, "hunt", fs, args); err != nil {
		return flagExit(err)
	}
	err := f.validate()
	if err == nil && f.outDir != "" {
		err = prepareOutDir(f.outDir)
	}
	if err != nil {
		usageFailed(env, "hunt", err)
		return exitUsage
	}
	finds := &huntFinds{}
	began := time.Now()
	targets := huntTargets(f)
	records := make([]huntRecord, 0, len(targets))
	for _, target := range targets {
		record, err := huntRecord{Type: "bug", Bug: target.name, Kind: target.kind, Workload: target.scenario.workload}, error(nil)
		if !f.fuzzOnly {
			record, err = hunt(env, f, target, finds)
		}
		if err != nil {
			fmt.Fprintf(env.stderr, "simrun hunt: %s: a run could not be set up: %v\n", target.name, err)
			return runErrorExit(err)
		}
		if f.fuzz {
			comparison, err := compareWithFuzzing(env, f, target, record)
			if err != nil {
				fmt.Fprintf(env.stderr, "simrun hunt: %s: a fuzzed run could not be set up: %v\n", target.name, err)
				return runErrorExit(err)
			}
			record.Fuzz = comparison
			if f.fuzzOnly {
				// The fuzzer's hunts are the only ones: whether it found the bug decides.
				record.Found = comparison.FuzzFound > 0
			}
		}
		if env.stderrIsTerminal && !f.json {
			fmt.Fprintf(env.stderr, "hunt: %s\n", huntProgress(record))
		}
		if f.json {
			writeJSON(env.stdout, record)
		}
		records = append(records, record)
	}
	summary := summarizeHunt(f, records, time.Since(began))
	if f.outDir != "" {
		finds.write(env, f.outDir, summary)
	}
	if f.json {
		writeJSON(env.stdout, summary)
	} else if f.fuzz {
		writeFuzzHuntTable(env.stdout, f, records, summary)
	} else {
		writeHuntTable(env.stdout, f, records, summary)
	}
	if summary.Found < summary.Bugs {
		return exitFailure
	}
	return exitPass
}

func (f *huntFlags) validate() error {
	var problems []error
	if f.seeds < 1 || f.seeds > maxSeedsPerSweep {
		problems = append(problems, fmt.Errorf("--seeds must be 1 to %d, not %d", int64(maxSeedsPerSweep), f.seeds))
	} else if f.seedStart.value > math.MaxUint64-uint64(f.seeds-1) {
		problems = append(problems, fmt.Errorf("the range of %d seeds from %d goes past the largest seed", f.seeds, f.seedStart.value))
	}
	if f.parallel < 1 || f.parallel > maxParallel {
		problems = append(problems, fmt.Errorf("--parallel must be 1 to %d, not %d", maxParallel, f.parallel))
	}
	problems = append(problems, positiveDuration("--duration", f.duration))
	if f.trials < 1 || f.trials > 100 {
		problems = append(problems, fmt.Errorf("--trials must be 1 to 100, not %d", f.trials))
	} else if f.trials > 1 && !f.fuzz {
		problems = append(problems, errors.New("--trials needs --fuzz"))
	}
	if f.fuzzOnly && !f.fuzz {
		problems = append(problems, errors.New("--fuzz-only needs --fuzz"))
	}
	if f.clients < 1 || f.clients > 100 {
		problems = append(problems, fmt.Errorf("--clients must be 1 to 100, not %d", f.clients))
	}
	return errors.Join(problems...)
}

// hunt sweeps one bug's seeds until the first failing seed that passes without the bug. The wall
// time counts the sweep up to that find, not the runs without the bug that judge each find.
func hunt(env *environment, f *huntFlags, target huntTarget, finds *huntFinds) (huntRecord, error) {
	record := huntRecord{Type: "bug", Bug: target.name, Kind: target.kind, Workload: target.scenario.workload}
	withBug, err := target.scenario.options()
	if err != nil {
		return record, err
	}
	withoutBug := withBug
	withoutBug.Bugs, withoutBug.RecipeBugs = zabmodel.Bugs{}, lockmodel.Bugs{}
	seeds := seedRange{start: f.seedStart.value, count: f.seeds, shard: shard{index: 0, count: 1}}
	began := time.Now()
	var judging time.Duration
	var setupErr error
	sweep(env, withBug, seeds, f.parallel, func(r seedResult) bool {
		switch {
		case record.Found || setupErr != nil:
			return false // Seeds already running when the hunt stopped.
		case r.err != nil:
			setupErr = r.err
			return false
		}
		record.SeedsRun++
		record.WallSeconds = (time.Since(began) - judging).Seconds()
		if !r.failed() {
			return true
		}
		judged := time.Now()
		withoutClass, err := classWithout(env, withoutBug, r.seed)
		judging += time.Since(judged)
		if err != nil {
			setupErr = err
			return false
		}
		if withoutClass != "" {
			record.noteNotCounted(notCounted{Seed: r.seed, Class: r.class, WithoutClass: withoutClass})
			return true
		}
		record.Found, record.Seed, record.Class = true, r.seed, r.class
		record.Headline = headline(r.explanation)
		record.Replay = target.scenario.replayCommand(r.seed)
		finds.add(env, f.outDir, target, withBug, r, record.Replay)
		return false
	})
	if !record.Found {
		record.WallSeconds = (time.Since(began) - judging).Seconds()
	}
	return record, setupErr
}

// classWithout runs a seed with the bug switched off and returns its failure class ("" for a pass).
func classWithout(env *environment, opts scenarios.Options, seed uint64) (string, error) {
	report, err := env.runSeed(opts, seed)
	if _, ok := err.(*setupPanic); ok {
		return "panic:setup", nil // The same class a sweep gives such a seed.
	}
	if err != nil {
		return "", err
	}
	return classify(report), nil
}

func (r *huntRecord) noteNotCounted(seed notCounted) {
	r.NotCounted++
	if len(r.NotCountedSeeds) < maxNotCountedListed {
		r.NotCountedSeeds = append(r.NotCountedSeeds, seed)
	}
}

func summarizeHunt(f *huntFlags, records []huntRecord, wall time.Duration) huntSummary {
	s := huntSummary{Type: "summary", SeedStart: f.seedStart.value, Seeds: f.seeds, Bugs: len(records), WallSeconds: wall.Seconds()}
	for _, r := range records {
		if r.Found {
			s.Found++
		}
		s.NotCounted += r.NotCounted
	}
	return s
}

// huntProgress is the one-line account of a bug, for the progress lines on a terminal.
func huntProgress(r huntRecord) string {
	if !r.Found {
		return fmt.Sprintf("%s: not found in %d seeds (%s)", r.Bug, r.SeedsRun, seconds(r.WallSeconds))
	}
	return fmt.Sprintf("%s: seed %d, %s (%d seeds, %s)", r.Bug, r.Seed, r.Class, r.SeedsRun, seconds(r.WallSeconds))
}

// seconds renders a wall time to the millisecond.
func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// writeHuntTable prints the benchmark for a person: one row per bug, then each find's replay
// command and the seeds that did not count.
func writeHuntTable(w io.Writer, f *huntFlags, records []huntRecord, s huntSummary) {
	var b strings.Builder
	fmt.Fprintf(&b, "hunt: seeds %d..%d per bug, default swarm, %v fault phase, %d in parallel\n",
		f.seedStart.value, f.seedStart.value+uint64(f.seeds)-1, f.duration, f.parallel)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BUG\tKIND\tWORKLOAD\tFIRST SEED\tSEEDS\tWALL\tCAUGHT BY\tWITHOUT THE BUG")
	for _, r := range records {
		seed, class, without := "-", "not found", "-"
		if r.Found {
			seed, class, without = fmt.Sprint(r.Seed), r.Class, "passes"
		}
		if r.NotCounted > 0 {
			without = fmt.Sprintf("%s (%d failing seeds not counted)", without, r.NotCounted)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.Bug, r.Kind, r.Workload, seed, r.SeedsRun,
			seconds(r.WallSeconds), class, without)
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "found %d of %d bugs in %s\n", s.Found, s.Bugs, seconds(s.WallSeconds))
	for _, r := range records {
		if r.Found {
			fmt.Fprintf(&b, "  %s: %s\n    %s\n", r.Bug, r.Replay, r.Headline)
		}
		for _, n := range r.NotCountedSeeds {
			fmt.Fprintf(&b, "  %s: seed %d failed with %s but also fails without the bug (%s): not counted\n",
				r.Bug, n.Seed, n.Class, n.WithoutClass)
		}
	}
	_, _ = io.WriteString(w, b.String())
}
