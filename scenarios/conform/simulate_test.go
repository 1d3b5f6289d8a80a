package conform

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenSuffix names a sequence's normalized output recorded from the real 3.8.0 server
// (internal/realzk writes them with -update).
const goldenSuffix = ".real.jsonl"

// TestSimulatedServerMatchesRealServerGoldens runs every hand-written sequence against zabsim's
// simulated server and compares the normalized results with the real server's.
func TestSimulatedServerMatchesRealServerGoldens(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	require.NoError(t, err)
	compared := 0
	for _, file := range files {
		if strings.HasSuffix(file, goldenSuffix) {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			ops, err := ParseFile(file)
			require.NoError(t, err)
			want, err := ReadResultsFile(strings.TrimSuffix(file, ".jsonl") + goldenSuffix)
			require.NoError(t, err)
			got, err := Simulate(SimOptions{Seed: 1}, ops)
			require.NoError(t, err)
			diffs := Compare(want, Normalize(got))
			assert.Empty(t, diffs, "zabsim differs from the real server on %s:\n%s", file, Report(diffs))
			compared += len(ops)
		})
	}
	require.NotZero(t, compared)
	t.Logf("compared %d operations with the real server's goldens", compared)
}

// TestSimulateDoesNotDependOnTheSeed: latencies and the clients' choices change with the seed, the
// results must not.
func TestSimulateDoesNotDependOnTheSeed(t *testing.T) {
	ops, err := ParseFile(filepath.Join("testdata", "watches.jsonl"))
	require.NoError(t, err)
	first, err := Simulate(SimOptions{Seed: 1}, ops)
	require.NoError(t, err)
	for seed := uint64(2); seed <= 5; seed++ {
		other, err := Simulate(SimOptions{Seed: seed}, ops)
		require.NoError(t, err)
		diffs := Compare(Normalize(first), Normalize(other))
		assert.Empty(t, diffs, "seed %d:\n%s", seed, Report(diffs))
	}
}
