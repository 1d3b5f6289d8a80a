package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"text/tabwriter"
	"time"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/checkers/zab"
	"github.com/zabsim/zabsim/scenarios"
)

const benchUsage = `Usage: simrun bench [flags]

Runs the standard scenario (5 servers, no observers, 10 clients, the registers workload, 60 s of
virtual fault phase with every fault family) for a number of seeds and reports seeds per second,
virtual seconds per wall second, simulated events per second, and the share of the runs' time
spent in the client-visible checkers (the streaming ZAB invariant checker runs inside the
simulation and counts as simulation).

Exit status: 0 when the benchmark ran (even if seeds failed: the failure count is reported), 2 on
bad usage.

Examples:
  simrun bench
  simrun bench --seeds 50 --parallel 1 --cpuprofile cpu.out && go tool pprof -top cpu.out
  simrun bench --seeds 20 --memprofile mem.out && go tool pprof -sample_index=alloc_space -top mem.out
`

type benchFlags struct {
	seeds      int64
	seedStart  seedFlag
	parallel   int
	cpuprofile string
	memprofile string
	checker    string
}

func newBenchFlags() (*flag.FlagSet, *benchFlags) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	f := &benchFlags{seedStart: seedFlag{value: 1}}
	fs.Int64Var(&f.seeds, "seeds", 20, "number of seeds to run")
	fs.Var(&f.seedStart, "seed-start", "first seed `S`")
	fs.IntVar(&f.parallel, "parallel", 1, "seeds run at once (1 measures one core)")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the benchmark to `FILE`")
	fs.StringVar(&f.checker, "checker", "zxid", "how linearizability is decided: zxid, porcupine or both (to compare their cost)")
	fs.StringVar(&f.memprofile, "memprofile", "", "write an allocation profile of the benchmark to `FILE` (every allocation is sampled, which slows the run)")
	return fs, f
}

// benchOptions is the fixed standard scenario.
func benchOptions() scenarios.Options {
	return scenarios.Options{
		Servers: 5, Observers: 0, Clients: 10, Workload: "registers",
		Duration: 60 * time.Second, Faults: append([]string(nil), scenarios.FaultFamilies...),
	}
}

func cmdBench(env *environment, args []string) int {
	fs, f := newBenchFlags()
	if err := parseFlags(env, "bench", fs, args); err != nil {
		return flagExit(err)
	}
	var problems []error
	if f.seeds < 1 || f.seeds > 1_000_000 {
		problems = append(problems, fmt.Errorf("--seeds must be 1 to 1000000, not %d", f.seeds))
	} else if f.seedStart.value > math.MaxUint64-uint64(f.seeds-1) {
		problems = append(problems, fmt.Errorf("the range of %d seeds from %d goes past the largest seed", f.seeds, f.seedStart.value))
	}
	if f.parallel < 1 || f.parallel > maxParallel {
		problems = append(problems, fmt.Errorf("--parallel must be 1 to %d, not %d", maxParallel, f.parallel))
	}
	if _, err := checkers.ParseLinearizabilityChecker(f.checker); err != nil {
		problems = append(problems, fmt.Errorf("--checker: %w", err))
	}
	if err := errors.Join(problems...); err != nil {
		usageFailed(env, "bench", err)
		return exitUsage
	}
	stopProfile, err := startProfile(f.cpuprofile)
	if err != nil {
		usageFailed(env, "bench", err)
		return exitUsage
	}
	stopMemProfile, err := startMemProfile(f.memprofile)
	if err != nil {
		_ = stopProfile()
		usageFailed(env, "bench", err)
		return exitUsage
	}
	t, wall, setupErr := runBench(env, f)
	if err := errors.Join(stopProfile(), stopMemProfile()); err != nil {
		fmt.Fprintf(env.stderr, "simrun bench: %v\n", err)
		return exitFailure
	}
	if setupErr != nil {
		fmt.Fprintf(env.stderr, "simrun bench: %v\n", setupErr)
		return exitUsage
	}
	writeBench(env, f, t, wall)
	return exitPass
}

// runBench runs the standard scenario over the seeds.
func runBench(env *environment, f *benchFlags) (totals, time.Duration, error) {
	t := totals{failures: map[string]int64{}}
	var setupErr error
	began := time.Now()
	seeds := seedRange{start: f.seedStart.value, count: f.seeds, shard: shard{index: 0, count: 1}}
	opts := benchOptions()
	opts.Checker, _ = checkers.ParseLinearizabilityChecker(f.checker) // validated in cmdBench
	sweep(env, opts, seeds, f.parallel, func(r seedResult) bool {
		if r.err != nil {
			setupErr = r.err
			return false
		}
		t.add(r)
		return true
	})
	return t, time.Since(began), setupErr
}

// startProfile starts a CPU profile if asked, and returns the function that stops it.
func startProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	file, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(file); err != nil {
		file.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := file.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}

// startMemProfile samples allocations from now on if asked, and returns the function that writes
// the allocation profile. Sampling one allocation per memProfileRateBytes rather than the default
// one per 512 KiB makes the profile close to exact for the many small allocations of a simulation,
// at the price of a slower run: the numbers the bench prints are then not the ones to quote.
const memProfileRateBytes = 512

func startMemProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	file, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--memprofile: %w", err)
	}
	previousRate := runtime.MemProfileRate
	runtime.MemProfileRate = memProfileRateBytes
	return func() error {
		defer func() { runtime.MemProfileRate = previousRate }()
		runtime.GC() // The profile reports allocations as of the last collection.
		err := pprof.Lookup("allocs").WriteTo(file, 0)
		if closeErr := file.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		return nil
	}, nil
}

func writeBench(env *environment, f *benchFlags, t totals, wall time.Duration) {
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "bench: 5 servers, 10 clients, registers, 60s virtual fault phase, all faults; seeds %d..%d, %d in parallel\n",
		f.seedStart.value, f.seedStart.value+uint64(f.seeds)-1, f.parallel)
	fmt.Fprintf(tw, "  seeds run\t%d (%d failed)\n", t.run, t.failed)
	for _, class := range sortedKeys(t.failures) {
		fmt.Fprintf(tw, "    %s\t%d\n", class, t.failures[class])
	}
	fmt.Fprintf(tw, "  seeds/s\t%.2f\n", ratio(float64(t.run), wall.Seconds()))
	fmt.Fprintf(tw, "  virtual s per wall s\t%.1f\n", ratio(t.virtual.Seconds(), wall.Seconds()))
	fmt.Fprintf(tw, "  events/s\t%.0f\n", ratio(float64(t.events), wall.Seconds()))
	fmt.Fprintf(tw, "  mean events per seed\t%.0f\n", ratio(float64(t.events), float64(t.run)))
	fmt.Fprintf(tw, "  checker share of run time\t%.1f%%\n", 100*ratio(t.checkers.Seconds(), t.busy.Seconds()))
	fmt.Fprintf(tw, "    streaming ZAB invariants\t%.1f%% (estimated from one event in %d)\n",
		100*ratio(t.zabCheckers.Seconds(), t.busy.Seconds()), zab.HostTimeSampleEvery)
	fmt.Fprintf(tw, "    client-visible and lock checks\t%.1f%%\n", 100*ratio((t.checkers-t.zabCheckers).Seconds(), t.busy.Seconds()))
	fmt.Fprintf(tw, "  wall time\t%s\n", wall.Round(time.Millisecond))
	_ = tw.Flush()
}
