package realzk

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/scenarios/conform"
)

var update = flag.Bool("update", false, "rewrite scenarios/conform/testdata/*.real.jsonl from the real server")

// testdataDir holds the hand-written sequences and their goldens.
const testdataDir = "../../scenarios/conform/testdata"

// goldenSuffix names the normalized real-server output of a sequence.
const goldenSuffix = ".real.jsonl"

// randomSequences and randomSeedStart choose the generated sequences
// TestRandomSequencesDeterministic runs: CI runs the first 30; a longer
// conformance campaign against the real server raises the count or moves
// the start (go test ./internal/realzk -run RandomSequences
// -random-sequences 300 -random-seed-start 1000).
var (
	randomSequences = flag.Int("random-sequences", 30, "how many generated sequences TestRandomSequencesDeterministic runs (at least 1)")
	randomSeedStart = flag.Int("random-seed-start", 1, "the first generated sequence's seed (at least 1)")
)

// runTimeout bounds one run of one sequence.
const runTimeout = 2 * time.Minute

// runTwice runs ops on two fresh servers and requires identical normalized
// results, which shows that the runner's output does not depend on timing.
func runTwice(t *testing.T, ops []conform.Op) []conform.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	first, err := RunFresh(ctx, Options{}, ops)
	require.NoError(t, err, "first run")
	second, err := RunFresh(ctx, Options{}, ops)
	require.NoError(t, err, "second run")
	require.Len(t, first, len(ops))
	diffs := conform.Compare(first, second)
	require.Empty(t, diffs, "two runs of the same sequence differ:\n%s", conform.Report(diffs))
	return first
}

// TestTestdataDeterministic runs every hand-written sequence twice on the
// real server, requires identical results, and compares them with the
// golden file (or rewrites it with -update).
func TestTestdataDeterministic(t *testing.T) {
	SkipIfUnavailable(t, Options{})
	files, err := filepath.Glob(filepath.Join(testdataDir, "*.jsonl"))
	require.NoError(t, err)
	var compared atomic.Int64
	count := 0
	t.Run("files", func(t *testing.T) {
		for _, file := range files {
			if strings.HasSuffix(file, goldenSuffix) {
				continue
			}
			count++
			name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ops, err := conform.ParseFile(file)
				require.NoError(t, err)
				results := runTwice(t, ops)
				compared.Add(int64(len(ops)))
				checkGolden(t, strings.TrimSuffix(file, ".jsonl")+goldenSuffix, results)
			})
		}
	})
	require.NotZero(t, count, "no sequences in %s", testdataDir)
	t.Logf("compared %d operations of %d files, each run twice", compared.Load(), count)
}

// checkGolden compares results with the golden file, or writes it.
func checkGolden(t *testing.T, golden string, results []conform.Result) {
	t.Helper()
	normalized := conform.Normalize(results)
	if *update {
		var buffer bytes.Buffer
		require.NoError(t, conform.WriteResults(&buffer, normalized))
		require.NoError(t, os.WriteFile(golden, buffer.Bytes(), 0o644))
		return
	}
	want, err := conform.ReadResultsFile(golden)
	require.NoError(t, err, "missing or bad golden; rerun with -update")
	diffs := conform.Compare(want, normalized)
	assert.Empty(t, diffs, "real server output differs from %s (rerun with -update if intended):\n%s",
		golden, conform.Report(diffs))
}

// TestRandomSequencesDeterministic runs generated sequences twice each on
// the real server and once on the simulated one, and compares all three.
// Sessions ask for 2 s, the most the server's 100 ms tick allows: each
// generated expire costs a session timeout of wall time, but a shorter
// timeout lets a loaded machine (CI runs test packages side by side) stall
// the JVM or the client long enough to lose a session nobody expired, and
// the test would then compare timing, not semantics.
func TestRandomSequencesDeterministic(t *testing.T) {
	SkipIfUnavailable(t, Options{})
	options := conform.GenOptions{MinOps: 10, MaxOps: 30, Sessions: 3, Expire: true, SessionTimeoutMs: 2000}
	generator := conform.SequenceWith(options)
	require.Positive(t, *randomSequences, "-random-sequences must be at least 1")
	require.Positive(t, *randomSeedStart, "-random-seed-start must be at least 1")
	var compared atomic.Int64
	t.Run("seeds", func(t *testing.T) {
		for seed := *randomSeedStart; seed < *randomSeedStart+*randomSequences; seed++ {
			t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
				t.Parallel()
				ops := generator.Example(seed)
				defer func() {
					if t.Failed() {
						var buffer bytes.Buffer
						_ = conform.WriteOps(&buffer, ops)
						t.Logf("seed %d, sequence:\n%s", seed, buffer.String())
					}
				}()
				real := conform.Normalize(runTwice(t, ops))
				simulated, err := conform.Simulate(conform.SimOptions{Seed: uint64(seed)}, ops)
				require.NoError(t, err, "simulated run")
				diffs := conform.Compare(real, conform.Normalize(simulated))
				assert.Empty(t, diffs, "zabsim differs from the real server on random sequence %d:\n%s", seed, conform.Report(diffs))
				compared.Add(int64(len(ops)))
			})
		}
	})
	t.Logf("compared %d operations of %d random sequences with zabsim's simulated server, each run twice on the real server",
		compared.Load(), *randomSequences)
}

// TestRunRequiresFreshServer shows that Run refuses a server that has run
// something, since root-level stats would carry over.
func TestRunRequiresFreshServer(t *testing.T) {
	server := StartForTest(t)
	ctx := context.Background()
	ops := []conform.Op{{Session: "s1", Kind: conform.OpCreate, Path: "/a", Version: -1}}
	results, err := Run(ctx, server, ops)
	require.NoError(t, err)
	assert.Equal(t, conform.CodeOK, results[0].Err)
	_, err = Run(ctx, server, ops)
	assert.ErrorIs(t, err, ErrNotFresh)
}

// TestRunRejectsInvalidSequence shows that Run validates what it is given.
func TestRunRejectsInvalidSequence(t *testing.T) {
	server := StartForTest(t)
	_, err := Run(context.Background(), server, []conform.Op{{Session: "", Kind: conform.OpSync, Path: "/"}})
	assert.ErrorContains(t, err, "bad session name")
}

// TestRunRefusesReconnectWithWatches shows the guard against the one
// timing-dependent case: a session that loses its connection while it holds
// watches.
func TestRunRefusesReconnectWithWatches(t *testing.T) {
	server := StartForTest(t)
	ops, err := conform.Parse(strings.NewReader(`
{"session": "s1", "op": "exists", "path": "/w", "watch": true}
{"session": "s1", "op": "addauth", "scheme": "nosuch", "auth": "x"}
`))
	require.NoError(t, err)
	_, err = Run(context.Background(), server, ops)
	assert.ErrorContains(t, err, "lost its connection while holding watches")
}
