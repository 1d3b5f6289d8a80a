package scenarios

import (
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
)

// The sweep's seeds come from flags, so that `go test ./scenarios -run TestSweep -seeds 5000` or
// `-seed 1234` work like simrun: go test -run TestSweep ./scenarios -args -seed 1234.
var (
	flagSeed     optionalSeed
	flagSeeds    = flag.Int("seeds", 60, "how many seeds TestSweep runs, from -seed-start (at least 1)")
	flagStart    = flag.Uint64("seed-start", 1, "the first seed TestSweep runs")
	flagWorkload = flag.String("workload", "", "the workload of every seed (default: drawn per seed)")
)

func init() {
	flag.Var(&flagSeed, "seed", "run only this seed `S` in TestSweep (any unsigned 64-bit integer, 0 included)")
}

// optionalSeed is -seed: it remembers whether it was given, so that seed 0 can be asked for like
// any other seed (simrun accepts it too).
type optionalSeed struct {
	value uint64
	given bool
}

func (s *optionalSeed) String() string {
	if s == nil {
		return "0"
	}
	return strconv.FormatUint(s.value, 10)
}

func (s *optionalSeed) Set(text string) error {
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return fmt.Errorf("a seed is an unsigned 64-bit integer, not %q", text)
	}
	s.value, s.given = v, true
	return nil
}

// TestSweep runs seeds of the default swarm (every workload, every fault family) and requires every
// checker to pass. A failure prints the seed, what failed and the command that replays it.
func TestSweep(t *testing.T) {
	seeds, err := sweepSeeds(flagSeed, *flagSeeds, *flagStart)
	require.NoError(t, err)
	failures := runSeeds(t, seeds, func(seed uint64) Options {
		return Options{Seed: seed, Observers: -1, Workload: *flagWorkload}
	})
	for _, f := range failures {
		t.Errorf("%s", f)
	}
	t.Logf("%d seeds, %d failed", len(seeds), len(failures))
}

// sweepSeeds turns the flags into the seeds to run. A sweep of no seeds would pass without running
// anything, so -seeds must be at least 1; the range must not wrap past the largest seed.
func sweepSeeds(one optionalSeed, count int, start uint64) ([]uint64, error) {
	if one.given {
		return []uint64{one.value}, nil
	}
	if count < 1 {
		return nil, fmt.Errorf("-seeds must be at least 1, not %d", count)
	}
	if start > math.MaxUint64-uint64(count-1) {
		return nil, fmt.Errorf("-seed-start %d with -seeds %d runs past the largest seed", start, count)
	}
	seeds := make([]uint64, count)
	for i := range seeds {
		seeds[i] = start + uint64(i)
	}
	return seeds, nil
}

func TestSweepSeedsFromFlags(t *testing.T) {
	seeds, err := sweepSeeds(optionalSeed{}, 3, 7)
	require.NoError(t, err)
	assert.Equal(t, []uint64{7, 8, 9}, seeds)

	var zero optionalSeed
	require.NoError(t, zero.Set("0"))
	seeds, err = sweepSeeds(zero, 60, 1)
	require.NoError(t, err)
	assert.Equal(t, []uint64{0}, seeds, "-seed 0 runs seed 0, not the default sweep")

	for _, count := range []int{0, -1} {
		_, err = sweepSeeds(optionalSeed{}, count, 1)
		assert.ErrorContains(t, err, "-seeds must be at least 1")
	}
	_, err = sweepSeeds(optionalSeed{}, 2, math.MaxUint64)
	assert.ErrorContains(t, err, "past the largest seed")
	assert.Error(t, new(optionalSeed).Set("-1"))
	assert.Error(t, new(optionalSeed).Set("abc"))
}

// runSeeds runs the seeds in parallel (one world per goroutine) and returns a description of every
// failing one.
func runSeeds(t *testing.T, seeds []uint64, options func(uint64) Options) []string {
	t.Helper()
	var (
		mu       sync.Mutex
		failures []string
		wg       sync.WaitGroup
	)
	work := make(chan uint64)
	for i := 0; i < runtime.GOMAXPROCS(0); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range work {
				opts := options(seed)
				rep, err := Run(opts)
				if err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("seed %d: %v", seed, err))
					mu.Unlock()
					continue
				}
				if rep.Failed() {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("seed %d failed (%s); replay with: %s\n%s",
						seed, rep.Failure(), replayCommand(opts), rep.Explain()))
					mu.Unlock()
				}
			}
		}()
	}
	for _, s := range seeds {
		work <- s
	}
	close(work)
	wg.Wait()
	return failures
}

// replayCommand is the simrun command that reproduces a run of these options.
func replayCommand(o Options) string {
	args := []string{"go run ./cmd/simrun replay", fmt.Sprintf("--seed %d", o.Seed)}
	if o.Workload != "" {
		args = append(args, "--workload "+o.Workload)
	}
	if o.Servers != 0 {
		args = append(args, fmt.Sprintf("--servers %d", o.Servers))
	}
	if o.Observers >= 0 {
		args = append(args, fmt.Sprintf("--observers %d", o.Observers))
	}
	if !o.Bugs.Empty() {
		args = append(args, "--bug "+o.Bugs.String())
	}
	if o.Duration != 0 && o.Duration != DefaultDuration {
		args = append(args, "--duration "+formatDuration(o.Duration))
	}
	return strings.Join(args, " ")
}

// TestSameSeedSameTrace: a run is a function of its seed. Every seed runs twice, in parallel with
// others, and both runs must end with the same trace hash, the same outcome and the same history.
func TestSameSeedSameTrace(t *testing.T) {
	type result struct {
		hash   uint64
		events int64
		ops    int
	}
	run := func(seed uint64) result {
		rep, err := Run(Options{Seed: seed, Observers: -1, Duration: 20 * clock.Second})
		require.NoError(t, err)
		return result{rep.Outcome.TraceHash, rep.Outcome.Events, rep.Stats.OpsCompleted}
	}
	var wg sync.WaitGroup
	results := make([][2]result, 8)
	for i := range results {
		for j := 0; j < 2; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i][j] = run(uint64(100 + i))
			}()
		}
	}
	wg.Wait()
	for i, r := range results {
		assert.Equal(t, r[0], r[1], "seed %d ran differently twice", 100+i)
	}
	assert.NotEqual(t, results[0][0].hash, results[1][0].hash, "different seeds, different runs")
}

// TestRenderingTheTraceDoesNotChangeTheRun runs a seed of every workload with the trace rendered
// and with the hash only: the hashes must agree, or replaying a failure with its trace (simrun
// replay, --out) would report a determinism bug. Code that writes to the trace only when it is
// rendered breaks this.
func TestRenderingTheTraceDoesNotChangeTheRun(t *testing.T) {
	for _, workload := range Workloads() {
		t.Run(workload, func(t *testing.T) {
			opts := Options{Seed: 7, Workload: workload, Observers: -1, Duration: 15 * clock.Second}
			plain, err := Run(opts)
			require.NoError(t, err)
			opts.Trace = sim.TraceConfig{Text: io.Discard}
			rendered, err := Run(opts)
			require.NoError(t, err)
			assert.Equal(t, plain.Outcome.TraceHash, rendered.Outcome.TraceHash)
			assert.Equal(t, plain.Outcome.Events, rendered.Outcome.Events)
		})
	}
}
