package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/zabsim/zabsim/modelcheck"
	"github.com/zabsim/zabsim/zabmodel"
)

const checkUsage = `Usage: simrun check [--model fle|zab] [bounds] [--strategy bfs|dfs] [--out FILE]

Explores every state of a small configuration within bounds, as TLC or stateright explore a
specification, but on zabsim's implementation itself (package modelcheck). Each step is one
enabled event: a message delivered (the oldest in flight on one connection), a timer that expires
(any armed timer, at any moment: the asynchronous model), or, within the bounds, a fault. Every
state is judged by the safety invariants; a state with no enabled event is judged by the
liveness rule (a fault-free path that ends must end with one established leader). States are
identified by a canonical fingerprint, so each is explored once.

Models:
  fle   Fast Leader Election (package electionmodel) among --servers voters and --observers
        observers; faults: --crashes, --restarts; --timeouts bounds notification-timeout expiries,
        --abandons how often a decided server gives up its role (ZAB's initLimit / syncLimit).
  zab   the ZooKeeper ensemble itself (package zabmodel) with one client that issues --writes
        creates, through the simulator's schedule mode: each step is a due event (a connection's
        oldest message, a server's own hand-off), once nothing is due the earliest timer, or
        within the bounds another timer (--early-timeouts; --timers bounds them all), a write, a crash now or at a server's next effect boundary
        (--crashes), a restart (--restarts). --bug switches bug-zoo bugs on. Every state is judged
        by checkers/zab; a path ends when every write is answered and nothing is due. States are
        paths from the start (after a canonical warm-up to a serving ensemble unless
        --warmup=false), so this model is far slower than fle; bound it with --depth, and
        prefer --strategy dfs for speed: it continues in a live world, and a state's later
        successors start from a copy of its world (--copy=false re-executes their paths instead;
        --no-reuse switches copies, live worlds and the recorded warm-up off). --reads adds
        exists(/k0) calls with a watch; the client's history is judged at every state by the
        sweep's client-visible checkers (--selftest drop-watch, stale-read, ... make them fire;
        --selftest hide-timers makes the deadlock judge fire).
        --lockers N adds N lock applications running InterProcessMutex on /locks/fair, each
        one cycle (acquire, one write to a fenced resource, release) started by the action
        'lock lN'; the lock checkers (mutual exclusion, fairness, herd, orphans, exclusive
        belief, churn) judge every state, and --bug takes the recipe bugs (lock-herd, ...).
        --min-timers N keeps a path going until it fired N timers, so that time passes
        (session renewals and expiries: the sessions checker's wrongful-expiry).
        --coarse runs the due events in their canonical order after every step and explores only
        timers, writes, crashes (--boundary-skips K: also at the K-th effect boundary from
        now) and restarts: depth goes to faults, where bugs live, but it is NOT the full
        interleaving space (no reordering of deliveries), so a clean coarse run proves less.

It prints the figures TLC prints (states generated, distinct states, depth, queue, distinct states
per second) and whether the bounds were exhausted or a budget (--max-states, --time-limit) cut the
search. On a violation it prints the path and, with --out, saves it as a counterexample file that
'simrun replay --counterexample FILE' runs to the same violation, one step per line. Breadth-first
search (the default) finds a shortest path; --workers N expands each level on N goroutines, with
the same result for every N.

Exit status: 0 when no state within the bounds violates an invariant (complete or cut by a
budget: the summary says which), 1 on a violation, 2 on bad usage.

Examples:
  simrun check --servers 3
  simrun check --servers 3 --crashes 1 --restarts 1 --timeouts 1 --workers 2
  simrun check --servers 3 --selftest never-abandon --out fle.cex; simrun replay --counterexample fle.cex
  simrun check --model zab --bug ZK-1277 --zxid-counter 0xfffffffd --out zab.cex
  simrun check --model zab --coarse --writes 0 --lockers 3 --lock-start-by 1 --timers 80 --bug lock-herd
`

type checkFlags struct {
	model      string
	servers    int
	observers  int
	crashes    int
	restarts   int
	timeouts   int
	abandons   int
	zxids      string
	epochs     string
	strategy   string
	workers    int
	depth      int
	maxStates  int64
	timeLimit  time.Duration
	out        string
	writes     int
	early      int
	warmup     bool
	bugs       string
	selftest   string
	counter    int64
	timers     int
	noCommute  bool
	coarse     bool
	skips      int
	noReuse    bool
	copyWorlds bool
	reads      int
	noSleep    bool
	minTimers  int
	lockers    int
	lockStart  int
	cpuprofile string
	maxMemory  memoryBudget
}

func newCheckFlags() (*flag.FlagSet, *checkFlags) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	f := &checkFlags{}
	fs.StringVar(&f.model, "model", "fle", "the `MODEL` to explore: fle or zab")
	fs.IntVar(&f.servers, "servers", 3, "voting servers (1 to 9)")
	fs.IntVar(&f.observers, "observers", 0, "observers")
	fs.IntVar(&f.crashes, "crashes", 0, "crashes a path may take")
	fs.IntVar(&f.restarts, "restarts", 0, "restarts a path may take (at most --crashes)")
	fs.IntVar(&f.timeouts, "timeouts", 0, "fle: notification-timeout expiries a path may take")
	fs.IntVar(&f.abandons, "abandons", 0, "fle: times a decided server may give up its role")
	fs.StringVar(&f.zxids, "zxids", "", "each process's last logged zxid, comma-separated (default all 0)")
	fs.StringVar(&f.epochs, "epochs", "", "each process's current epoch, comma-separated (default all 0)")
	fs.StringVar(&f.strategy, "strategy", "bfs", "bfs (shortest counterexample) or dfs")
	fs.IntVar(&f.workers, "workers", 1, "goroutines that expand states (bfs only; 0: one per core)")
	fs.IntVar(&f.depth, "depth", 0, "the longest path explored (0: no bound)")
	fs.Int64Var(&f.maxStates, "max-states", 0, "stop after this many distinct states (0: no bound)")
	fs.DurationVar(&f.timeLimit, "time-limit", 0, "stop after this much wall time (0: no limit)")
	f.maxMemory = defaultMemoryBudget()
	fs.Var(&f.maxMemory, "max-memory", "stop the search before the process's memory passes `SIZE` (e.g. 8GiB, 500MB; 0: no bound): the collector is held to SIZE and the search is cut by memory once the live heap reaches half of it (default: half the machine's memory)")
	fs.StringVar(&f.out, "out", "", "save a counterexample to `FILE`")
	fs.IntVar(&f.writes, "writes", 1, "zab: creates the client issues")
	fs.IntVar(&f.early, "early-timeouts", 0, "zab: timers a path may fire before the earliest pending one")
	fs.BoolVar(&f.warmup, "warmup", true, "zab: start from the state where a leader serves and the client is connected")
	fs.StringVar(&f.selftest, "selftest", "", "fle: never-abandon, a deliberately broken driver whose followers never give up (the liveness judge must fail); zab: server self-tests, comma-separated ('simrun selftests' lists them), which the client-visible judges must catch, or hide-timers, a driver that withholds every timer (the deadlock judge must fail)")
	fs.BoolVar(&f.noSleep, "no-sleep-sets", false, "switch off the partial-order reduction (sleep sets): the same states, more successors generated")
	fs.IntVar(&f.reads, "reads", 0, "zab: exists(/k0) calls with a watch the client issues")
	fs.IntVar(&f.timers, "timers", 20, "zab: timers a path may fire in all (0: no bound)")
	fs.IntVar(&f.lockers, "lockers", 0, "zab: lock applications (0 to 3), each running InterProcessMutex on one fair lock once ('lock lN'); the lock checkers judge every state")
	fs.IntVar(&f.lockStart, "lock-start-by", 0, "zab: a locker may start only while fewer than this many timers have fired (0: any time; 1: all before the first timer)")
	fs.IntVar(&f.minTimers, "min-timers", 0, "zab: timers a path fires at least before it may settle, so that time passes (pings, session expiries)")
	fs.BoolVar(&f.noCommute, "no-commute", false, "zab: switch off the merging of commuting deliveries (a state is then its path)")
	fs.BoolVar(&f.coarse, "coarse", false, "zab: run due events in their canonical order; explore only timers, writes and faults (not the full interleaving space)")
	fs.BoolVar(&f.copyWorlds, "copy", true, "zab: copy worlds instead of re-executing paths (the world after the warm-up, a state's world for its later successors); --copy=false re-executes; same results")
	fs.BoolVar(&f.noReuse, "no-reuse", false, "zab: re-execute every state from scratch (no recorded warm-up, no stepping in a live world); same results, slower")
	fs.IntVar(&f.skips, "boundary-skips", 0, "zab: an armed crash may pass over up to this many effect boundaries (crash-at-boundary zkN +K)")
	fs.Int64Var(&f.counter, "zxid-counter", 0, "zab: start every new leader's zxid counter here (to reach ZK-1277's overflow)")
	fs.StringVar(&f.bugs, "bug", "", "zab: bug-zoo switches, comma-separated ('simrun bugs' lists them): server bugs, and recipe bugs with --lockers")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the search to `FILE` (go tool pprof)")
	return fs, f
}

func (f *checkFlags) build() (modelcheck.Model, modelcheck.Options, error) {
	var opts modelcheck.Options
	switch f.strategy {
	case "bfs":
		opts.Strategy = modelcheck.BFS
	case "dfs":
		opts.Strategy = modelcheck.DFS
	default:
		return nil, opts, fmt.Errorf("--strategy %q: want bfs or dfs", f.strategy)
	}
	if f.workers < 0 {
		return nil, opts, fmt.Errorf("--workers %d: must not be negative", f.workers)
	}
	opts.Workers = f.workers
	if opts.Workers == 0 {
		opts.Workers = runtime.NumCPU()
	}
	if opts.Strategy == modelcheck.DFS && opts.Workers > 1 {
		return nil, opts, errors.New("--strategy dfs runs on one worker; drop --workers")
	}
	if f.depth < 0 || f.maxStates < 0 || f.timeLimit < 0 {
		return nil, opts, errors.New("--depth, --max-states and --time-limit must not be negative")
	}
	opts.MaxDepth, opts.MaxStates, opts.TimeLimit = f.depth, f.maxStates, f.timeLimit
	opts.MaxMemory = f.maxMemory.liveHeapBound()
	opts.NoSleepSets = f.noSleep
	switch f.model {
	case "fle":
		cfg := modelcheck.FLEConfig{
			Servers: f.servers, Observers: f.observers, Crashes: f.crashes, Restarts: f.restarts,
			Timeouts: f.timeouts, Abandons: f.abandons,
		}
		var err error
		if f.zxids != "" {
			if cfg.LastZxids, err = modelcheck.ParseInts(f.zxids); err != nil {
				return nil, opts, fmt.Errorf("--zxids: %w", err)
			}
		}
		if f.epochs != "" {
			if cfg.CurrentEpochs, err = modelcheck.ParseInts(f.epochs); err != nil {
				return nil, opts, fmt.Errorf("--epochs: %w", err)
			}
		}
		if f.bugs != "" || f.writes != 1 || f.early != 0 || f.counter != 0 || f.timers != 20 || f.noCommute || f.coarse || f.skips != 0 || f.noReuse || f.reads != 0 || f.minTimers != 0 || f.lockers != 0 || f.lockStart != 0 || !f.copyWorlds {
			return nil, opts, errors.New("--bug, --writes, --reads, --lockers, --lock-start-by, --early-timeouts, --timers, --min-timers, --no-commute, --no-reuse, --copy, --coarse, --boundary-skips and --zxid-counter apply to --model zab only")
		}
		switch f.selftest {
		case "":
		case "never-abandon":
			cfg.NeverAbandon = true
		default:
			return nil, opts, fmt.Errorf("--selftest %q: want never-abandon", f.selftest)
		}
		m, err := modelcheck.NewFLE(cfg)
		return m, opts, err
	case "zab":
		if f.observers != 0 || f.timeouts != 0 || f.zxids != "" || f.epochs != "" {
			return nil, opts, errors.New("--observers, --timeouts, --zxids and --epochs apply to --model fle only")
		}
		cfg := modelcheck.ZABConfig{
			Servers: f.servers, Writes: f.writes, Crashes: f.crashes, Restarts: f.restarts,
			EarlyTimeouts: f.early, Warmup: f.warmup, ZxidCounter: f.counter, Timers: f.timers,
			NoCommute: f.noCommute, Coarse: f.coarse, BoundarySkips: f.skips, NoReuse: f.noReuse, NoCopy: !f.copyWorlds, Reads: f.reads,
			MinTimers: f.minTimers, Lockers: f.lockers, LockStartBy: f.lockStart,
		}
		// hide-timers breaks the checker's driver, the other names break the servers.
		var server []string
		for _, name := range strings.Split(f.selftest, ",") {
			switch name {
			case "":
			case "hide-timers":
				cfg.HideTimers = true
			default:
				server = append(server, name)
			}
		}
		if len(server) > 0 {
			tests, err := zabmodel.ParseSelfTests(strings.Join(server, ","))
			if err != nil {
				return nil, opts, fmt.Errorf("--selftest: %w (or hide-timers, a driver that withholds every timer)", err)
			}
			cfg.SelfTests = tests
		}
		if f.bugs != "" {
			// One flag for both kinds, as 'simrun run --bug' takes them: server bugs and recipe bugs.
			var bugs bugFlag
			if err := bugs.Set(f.bugs); err != nil {
				return nil, opts, fmt.Errorf("--bug: %w", err)
			}
			cfg.Bugs, cfg.RecipeBugs = bugs.bugs, bugs.recipe
		}
		m, err := modelcheck.NewZAB(cfg)
		return m, opts, err
	}
	return nil, opts, fmt.Errorf("--model %q: want fle or zab", f.model)
}

func cmdCheck(env *environment, args []string) int {
	fs, f := newCheckFlags()
	if err := parseFlags(env, "check", fs, args); err != nil {
		return flagExit(err)
	}
	m, opts, err := f.build()
	if err != nil {
		usageFailed(env, "check", err)
		return exitUsage
	}
	if f.out != "" {
		// The output is checked before the search, so that a bad path costs nothing.
		if _, err := os.Stat(f.out); err == nil {
			usageFailed(env, "check", fmt.Errorf("--out %s exists; give a new file", f.out))
			return exitUsage
		}
	}
	opts.Progress = func(s modelcheck.Stats) {
		fmt.Fprintf(env.stderr, "Progress(%d) at %s: %d states generated, %d distinct states found (%.0f/s), %d states left on queue.\n",
			s.Depth, s.Elapsed.Truncate(time.Second), s.Generated, s.Distinct, s.PerSecond(), s.Queue)
	}
	fmt.Fprintf(env.stdout, "Model checking %s (%s, %d worker(s)) with %s.\n", m.Name(), opts.Strategy, opts.Workers, describeSettings(m))
	fmt.Fprintf(env.stdout, "Memory budget: %s.\n", f.maxMemory.describe())
	defer f.maxMemory.hold()()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if env.interrupt != nil {
		go func() {
			select {
			case <-env.interrupt:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	stopProfile, err := startProfile(f.cpuprofile)
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun check: %v\n", err)
		return exitFailure
	}
	r, err := modelcheck.Check(ctx, m, opts)
	if stopErr := stopProfile(); stopErr != nil {
		fmt.Fprintf(env.stderr, "simrun check: %v\n", stopErr)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun check: %v\n", err)
		return exitFailure
	}
	writeCheckResult(env, m, r)
	if r.Violation == nil {
		return exitPass
	}
	if f.out != "" {
		file, err := os.Create(f.out)
		if err == nil {
			cx := &modelcheck.Counterexample{Model: m, Path: r.Path, Violation: r.Violation}
			err = cx.Write(file)
			if closeErr := file.Close(); err == nil {
				err = closeErr
			}
		}
		if err != nil {
			fmt.Fprintf(env.stderr, "simrun check: --out: %v\n", err)
		} else {
			fmt.Fprintf(env.stdout, "The counterexample is in %s; replay it with: simrun replay --counterexample %s\n", f.out, f.out)
		}
	}
	return exitFailure
}

func describeSettings(m modelcheck.Model) string {
	s, ok := m.(modelcheck.Settings)
	if !ok {
		return "no settings"
	}
	var parts []string
	for _, kv := range s.Settings() {
		parts = append(parts, kv[0]+"="+kv[1])
	}
	return strings.Join(parts, " ")
}

// writeCheckResult prints the verdict as TLC does: the error and its trace, or that none was
// found, then the counts.
func writeCheckResult(env *environment, m modelcheck.Model, r modelcheck.Result) {
	w := env.stdout
	if r.Violation != nil {
		fmt.Fprintf(w, "Error: Invariant %s is violated.\n%s\n", r.Violation.Invariant, r.Violation.Explanation)
		fmt.Fprintf(w, "The behavior up to this point is (%d steps):\n", len(r.Path))
		if _, err := modelcheck.Replay(m, r.Path, w); err != nil {
			fmt.Fprintf(env.stderr, "simrun check: rendering the path: %v\n", err)
		}
	} else if r.Complete {
		fmt.Fprintln(w, "Model checking completed. No error has been found.")
	} else {
		fmt.Fprintf(w, "Model checking stopped (cut by %s). No error has been found in the states explored.\n", strings.Join(r.CutBy, ", "))
	}
	fmt.Fprintf(w, "%d states generated, %d distinct states found, %d states left on queue.\n", r.Generated, r.Distinct, r.Queue)
	fmt.Fprintf(w, "The depth of the complete state graph search is %d.\n", r.Depth)
	fmt.Fprintf(w, "%d terminal states (%d of them cut by a bound).\n", r.Terminal, r.CutTerminal)
	fmt.Fprintf(w, "Finished in %s: %.0f distinct states/s.\n", r.Elapsed.Round(time.Millisecond), r.PerSecond())
	if c, ok := m.(interface{ CopyStatus() string }); ok {
		fmt.Fprintf(w, "Copies of worlds: %s.\n", c.CopyStatus())
	}
	switch {
	case r.Violation != nil:
	case r.Complete:
		fmt.Fprintln(w, "Bounds exhausted: every state within them was explored.")
	default:
		fmt.Fprintf(w, "Budget cut the search (%s): the bounds were not exhausted.\n", strings.Join(r.CutBy, ", "))
	}
}

// cmdReplayCounterexample replays a counterexample file that 'simrun check --out' saved.
func cmdReplayCounterexample(env *environment, args []string) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	var path string
	fs.StringVar(&path, "counterexample", "", "")
	if err := parseFlags(env, "replay", fs, args); err != nil {
		return flagExit(err)
	}
	file, err := os.Open(path)
	if err != nil {
		usageFailed(env, "replay", err)
		return exitUsage
	}
	defer file.Close()
	cx, err := modelcheck.ReadCounterexample(file)
	if err != nil {
		usageFailed(env, "replay", fmt.Errorf("%s: %w", path, err))
		return exitUsage
	}
	fmt.Fprintf(env.stdout, "Replaying %d steps of model %s with %s.\n", len(cx.Path), cx.Model.Name(), describeSettings(cx.Model))
	v, err := modelcheck.Replay(cx.Model, cx.Path, env.stdout)
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun replay: %s: %v\n", path, err)
		return exitFailure
	}
	if v == nil {
		fmt.Fprintln(env.stdout, "No invariant is violated on this path.")
		if cx.Violation != nil {
			fmt.Fprintf(env.stderr, "simrun replay: %s records a violation of %s, which the replay did not reach\n", path, cx.Violation.Invariant)
		}
		return exitFailure
	}
	fmt.Fprintf(env.stdout, "Error: Invariant %s is violated.\n%s\n", v.Invariant, v.Explanation)
	if cx.Violation != nil && cx.Violation.Invariant != v.Invariant {
		fmt.Fprintf(env.stderr, "simrun replay: %s records a violation of %s, but the replay found %s\n", path, cx.Violation.Invariant, v.Invariant)
	}
	return exitFailure
}

// mentionsFlag reports whether args set the named flag, in any of the spellings flag accepts.
func mentionsFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}
