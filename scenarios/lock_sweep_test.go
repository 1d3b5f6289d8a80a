package scenarios

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/sim"
)

// The lock sweeps are long and run only on request, from the environment (this file is a test, so
// it may read it):
//
//	LOCK_SWEEP=2000 LOCK_WORKLOAD=rwlock go test ./scenarios -run TestLockSweep -v
//	LOCK_SWEEP=500 LOCK_WORKLOAD=lock LOCK_BUGS=lock-herd LOCK_STOP=1 go test ./scenarios -run TestLockSweep -v
//	LOCK_SEED=17 LOCK_WORKLOAD=lock go test ./scenarios -run TestLockSeed -v   (trace in /tmp/lock-trace.txt)
//
// LOCK_START sets the first seed (default 1); LOCK_STOP=1 stops at the first failure and reports
// how many seeds and how much wall time it took.

func lockOptions(t *testing.T, seed uint64) Options {
	bugs, err := lockmodel.ParseBugs(os.Getenv("LOCK_BUGS"))
	require.NoError(t, err)
	workload := os.Getenv("LOCK_WORKLOAD")
	if workload == "" {
		workload = "lock"
	}
	return Options{Seed: seed, Observers: -1, Workload: workload, RecipeBugs: bugs}
}

func TestLockSeed(t *testing.T) {
	seed, err := strconv.ParseUint(os.Getenv("LOCK_SEED"), 10, 64)
	if err != nil {
		t.Skip("set LOCK_SEED")
	}
	f, err := os.Create("/tmp/lock-trace.txt")
	require.NoError(t, err)
	defer f.Close()
	opts := lockOptions(t, seed)
	opts.Trace = sim.TraceConfig{Text: f}
	rep, err := Run(opts)
	require.NoError(t, err)
	t.Logf("%s\nfailure %q\n%s\n%s", rep.Script, rep.Failure(), rep.Explain(), rep.Checks)
}

func TestLockSweep(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("LOCK_SWEEP"))
	if err != nil {
		t.Skip("set LOCK_SWEEP")
	}
	start := uint64(1)
	if s, err := strconv.ParseUint(os.Getenv("LOCK_START"), 10, 64); err == nil {
		start = s
	}
	stop := os.Getenv("LOCK_STOP") == "1"
	var (
		mu       sync.Mutex
		counts   = map[string]int{}
		examples = map[string]uint64{}
		first    uint64
		firstAt  time.Duration
		wg       sync.WaitGroup
	)
	began := time.Now()
	seeds := make(chan uint64)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				rep, err := Run(lockOptions(t, seed))
				require.NoError(t, err)
				f := rep.Failure()
				mu.Lock()
				counts[f]++
				if _, seen := examples[f]; !seen || seed < examples[f] {
					examples[f] = seed
				}
				if f != "" && (first == 0 || seed < first) {
					first, firstAt = seed, time.Since(began)
					t.Logf("seed %d: %s\n%s", seed, f, rep.Explain())
				}
				mu.Unlock()
			}
		}()
	}
	for s := start; s < start+uint64(n); s++ {
		mu.Lock()
		done := stop && first != 0
		mu.Unlock()
		if done {
			break
		}
		seeds <- s
	}
	close(seeds)
	wg.Wait()
	var lines []string
	for f, c := range counts { // determinism:ok a test's report, sorted below
		lines = append(lines, fmt.Sprintf("%q: %d (e.g. seed %d)", f, c, examples[f]))
	}
	slices.Sort(lines)
	t.Logf("%d seeds in %v; first failing seed %d after %v\n%s", n, time.Since(began), first, firstAt, strings.Join(lines, "\n"))
}
