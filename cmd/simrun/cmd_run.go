package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/zabsim/zabsim/scenarios"
)

const runUsage = `Usage: simrun run [flags]

Sweeps a range of seeds, one scenarios.Run per seed, in parallel across seeds. Each seed draws its
own cluster, workload and fault schedule (swarm testing) unless flags fix them. Prints every
failing seed with the exact command that replays it, then a summary.

Exit status: 0 when every seed passed, 1 when a seed failed, 2 on bad usage or input, 130 when
interrupted (Ctrl-C) before any seed failed. An interrupted sweep starts no new seed, finishes the
ones running, and prints its partial summary (with --json, the summary object too); a second
Ctrl-C ends it at once.

On a terminal a progress bar shows the seeds run, the rate and the time left; otherwise a
progress line goes to stderr every 10 s. --quiet shows neither.

Examples:
  simrun run                                   # seeds 1..100 with every fault family
  simrun run --seeds 10000 --seed-start 5000 --parallel 8 --quiet
  simrun run --seed 42 --servers 5 --faults crash,partition --duration 2m
  simrun run --seeds 200 --bug ZK-3911 --stop-on-failure --out failures/
  simrun run --seeds 100000 --shard 3/16 --json > shard-3.jsonl   # one of 16 CI workers
  simrun run --seeds 50 --script scenarios/testdata/named/minority-partition.script  # a script over seeds

Shards: --shard i/n runs the seeds whose index in the range is i modulo n, so n workers given the
same range and shards 0/n..n-1/n cover it exactly once; their JSON seed lines concatenate and
their summary counts add up.

--out DIR (a new or empty directory: two sweeps never mix) writes, for each of the first
--out-max failing seeds (in seed order) and for the first seed of every failure class, a
directory seed-S/ with report.html (the run drawn: servers, clients, messages, faults and the
violation; open it in a browser), the text trace (the seed replayed with the trace on), the
script, and the explanation with the replay command, the build and the command line. The replay
also writes porcupine's HTML visualization of each linearizability check of the run, failing or
not, named porcupine-MODEL-PREFIX.html (e.g. porcupine-register-root.html). DIR/index.html lists
every failing seed by failure class. With --shrink, each seed-S/ also gets shrunk.script, the
seed's script shrunk as 'simrun shrink' does (at most 300 runs per seed).
`

// runFlags are the run command's flags.
type runFlags struct {
	scenario      scenarioFlags
	seeds         int64
	seedStart     seedFlag
	seed          seedFlag
	shard         shard
	parallel      int
	json          bool
	outDir        string
	outMax        int
	stopOnFailure bool
	quiet         bool
	// timeLimit, when positive, starts no new seed once it has passed (cmd_run_limits.go).
	timeLimit time.Duration
	// shardFromEnv, when positive, is the shard count, the index coming from the environment.
	shardFromEnv int64
	shrink       bool
}

func newRunFlags() (*flag.FlagSet, *runFlags) {
	f := &runFlags{seedStart: seedFlag{value: 1}, shard: shard{index: 0, count: 1}}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.Int64Var(&f.seeds, "seeds", 100, "number of seeds in the range")
	fs.Var(&f.seedStart, "seed-start", "first seed `S` of the range")
	fs.Var(&f.seed, "seed", "run exactly this one seed `S` (instead of --seeds and --seed-start)")
	fs.Var(&f.shard, "shard", "run only the seeds whose index in the range is i modulo n (`i/n`; default 0/1, every seed)")
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "seeds run at once, one goroutine each")
	fs.BoolVar(&f.json, "json", false, "print one JSON object per seed on stdout, then a summary object")
	fs.StringVar(&f.outDir, "out", "", "write the failing seeds' traces, scripts and explanations under `DIR`")
	fs.IntVar(&f.outMax, "out-max", 20, "write --out artifacts for this many failing seeds at most, besides the first seed of each failure class")
	fs.BoolVar(&f.stopOnFailure, "stop-on-failure", false, "start no new seed after the first failure")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress line and no explanations; failing seeds and the summary only")
	registerDistributedRunFlags(fs, f)
	fs.BoolVar(&f.shrink, "shrink", false, "with --out: also shrink each failing seed written there and save shrunk.script beside its trace")
	f.scenario.register(fs)
	return fs, f
}

// validate checks the sweep flags that scenarioFlags does not know about and returns the range.
func (f *runFlags) validate(set map[string]bool) (seedRange, error) {
	var problems []error
	r := seedRange{start: f.seedStart.value, count: f.seeds, shard: f.shard}
	if f.seed.given {
		if set["seeds"] || set["seed-start"] {
			problems = append(problems, errors.New("--seed runs exactly one seed: it cannot be combined with --seeds or --seed-start"))
		}
		r.start, r.count = f.seed.value, 1
	}
	if f.timeLimit > 0 && !set["seeds"] && !f.seed.given {
		r.count = unboundedSeeds(r.start) // Seeds until the time limit: the range is only a bound.
	}
	if r.count < 1 || r.count > maxSeedsPerSweep {
		problems = append(problems, fmt.Errorf("--seeds must be 1 to %d, not %d", int64(maxSeedsPerSweep), r.count))
	} else if r.start > math.MaxUint64-uint64(r.count-1) {
		problems = append(problems, fmt.Errorf("the range of %d seeds from %d goes past the largest seed", r.count, r.start))
	}
	if f.parallel < 1 || f.parallel > maxParallel {
		problems = append(problems, fmt.Errorf("--parallel must be 1 to %d, not %d", maxParallel, f.parallel))
	}
	if f.shrink && f.outDir == "" {
		problems = append(problems, errors.New("--shrink saves each shrunk script beside its trace: it needs --out DIR"))
	}
	if f.outMax < 0 {
		problems = append(problems, fmt.Errorf("--out-max must not be negative, not %d", f.outMax))
	}
	if err := f.validateDistributed(set, &r); err != nil {
		problems = append(problems, err)
	}
	return r, errors.Join(problems...)
}

func cmdRun(env *environment, args []string) int {
	fs, f := newRunFlags()
	if err := parseFlags(env, "run", fs, args); err != nil {
		return flagExit(err)
	}
	f.scenario.noteSet(fs)
	seeds, err := f.validate(f.scenario.set)
	var opts scenarios.Options
	if err == nil {
		opts, err = f.scenario.options()
	}
	if err == nil && f.outDir != "" {
		err = prepareOutDir(f.outDir)
	}
	if err == nil && f.scenario.otherBuild != "" {
		fmt.Fprintln(env.stderr, f.scenario.otherBuild)
	}
	if err != nil {
		usageFailed(env, "run", err)
		return exitUsage
	}
	return runSweep(env, f, opts, seeds)
}

// runSweep runs the sweep and prints as it goes.
func runSweep(env *environment, f *runFlags, opts scenarios.Options, seeds seedRange) int {
	out := newSweepPrinter(env, f, seeds)
	out.start()
	began := time.Now()
	var setupErr error
	sweep(env, opts, seeds, f.parallel, func(result seedResult) bool {
		if result.err != nil {
			if setupErr == nil {
				setupErr = result.err
			}
			return false
		}
		out.seed(opts, result)
		if f.timeLimit > 0 && time.Since(began) >= f.timeLimit {
			out.timeUp = true
			return false
		}
		if interrupted(env) {
			out.interrupted = true
			return false
		}
		return !(f.stopOnFailure && result.failed())
	})
	out.finish(time.Since(began), setupErr != nil)
	switch {
	case setupErr != nil:
		fmt.Fprintf(env.stderr, "simrun run: a run could not be set up: %v\n", setupErr)
		return exitUsage
	case out.totals.failed > 0 || out.determinismBugs > 0:
		return exitFailure
	case out.interrupted:
		return exitInterrupted
	}
	return exitPass
}

// interrupted reports whether SIGINT asked the sweep to stop.
func interrupted(env *environment) bool {
	select {
	case <-env.interrupt:
		return true
	default:
		return false
	}
}

// totals are the additive counts of a sweep: shards' totals add up to the whole range's.
type totals struct {
	run, passed, failed int64
	failures            map[string]int64
	events              int64
	virtual, busy       time.Duration
	checkers            time.Duration
	zabCheckers         time.Duration
	beyondGuarantee     int64
	// known counts the passing seeds' known findings by class, and knownSeeds those seeds.
	known      map[string]int64
	knownSeeds int64
}

func (t *totals) add(r seedResult) {
	t.run++
	t.events += r.events
	t.virtual += r.virtual
	t.busy += r.wall
	t.checkers += r.checkers
	t.zabCheckers += r.zabCheckers
	if !r.failed() {
		t.passed++
		if len(r.known) > 0 {
			t.knownSeeds++
			if t.known == nil {
				t.known = map[string]int64{}
			}
			for _, class := range r.known {
				t.known[class]++
			}
		}
		return
	}
	t.failed++
	t.failures[r.class]++
	if r.beyondGuarantee {
		t.beyondGuarantee++
	}
}

// seedRecord is the JSON line of one seed.
type seedRecord struct {
	Type              string   `json:"type"`
	Seed              uint64   `json:"seed"`
	Passed            bool     `json:"passed"`
	Class             string   `json:"class,omitempty"`
	Known             []string `json:"known,omitempty"`
	BeyondGuarantee   bool     `json:"beyond_guarantee,omitempty"`
	Events            int64    `json:"events"`
	VirtualSeconds    float64  `json:"virtual_seconds"`
	WallSeconds       float64  `json:"wall_seconds"`
	CheckerSeconds    float64  `json:"checker_seconds"`
	TraceHash         string   `json:"trace_hash"`
	OutsideFaultModel []string `json:"outside_fault_model,omitempty"`
	Replay            string   `json:"replay,omitempty"`
	Explanation       string   `json:"explanation,omitempty"`
	Script            string   `json:"script,omitempty"`
	Artifacts         string   `json:"artifacts,omitempty"`
}

// summaryRecord is the final JSON object of a sweep. Its counts and times are sums, so that the
// summaries of shards add up to the summary of the whole range.
type summaryRecord struct {
	Type      string           `json:"type"`
	SeedStart uint64           `json:"seed_start"`
	Seeds     int64            `json:"seeds"`
	Shard     string           `json:"shard"`
	SeedsRun  int64            `json:"seeds_run"`
	Passed    int64            `json:"passed"`
	Failed    int64            `json:"failed"`
	Failures  map[string]int64 `json:"failures"`
	// KnownSeeds counts the passing seeds with known findings, and Known those findings by class.
	KnownSeeds        int64            `json:"known_seeds,omitempty"`
	Known             map[string]int64 `json:"known,omitempty"`
	Events            int64            `json:"events"`
	VirtualSeconds    float64          `json:"virtual_seconds"`
	BusySeconds       float64          `json:"busy_seconds"`
	CheckerSeconds    float64          `json:"checker_seconds"`
	WallSeconds       float64          `json:"wall_seconds"`
	SeedsPerSecond    float64          `json:"seeds_per_second"`
	VirtualPerWall    float64          `json:"virtual_seconds_per_wall_second"`
	MeanEventsPerSeed float64          `json:"mean_events_per_seed"`
	OutsideFaultModel bool             `json:"outside_fault_model"`
	StoppedEarly      bool             `json:"stopped_early"`
	Flags             []string         `json:"flags"`
	DeterminismBugs   int              `json:"determinism_bugs,omitempty"`
	// Build, Parallel, TimeLimit and TimeLimitReached let 'simrun merge' check that shards belong
	// together and print the whole sweep's summary (cmd_merge.go).
	Build            buildInfo `json:"build"`
	Parallel         int       `json:"parallel,omitempty"`
	TimeLimit        string    `json:"time_limit,omitempty"`
	TimeLimitReached bool      `json:"time_limit_reached,omitempty"`
	// ContiguousSeeds, in a merge of shards that stopped early or ran out of time, counts the
	// seeds from SeedStart that every shard covered.
	ContiguousSeeds int64 `json:"contiguous_seeds,omitempty"`
	Interrupted     bool  `json:"interrupted,omitempty"`
	// Command says how the summary was made: it is an artifact too.
	Command string `json:"command"`
}

func writeJSON(w io.Writer, value any) {
	line, err := json.Marshal(value)
	if err != nil {
		panic(fmt.Sprintf("simrun: encoding %T: %v", value, err)) // Only plain structs are encoded.
	}
	_, _ = w.Write(append(line, '\n'))
}

// ratio divides, giving 0 for an empty denominator instead of infinity.
func ratio(numerator, denominator float64) float64 {
	if denominator <= 0 {
		return 0
	}
	return numerator / denominator
}
