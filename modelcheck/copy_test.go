package modelcheck

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel"
)

// TestZABCopyMatchesReplay: for random paths of the fine and the coarse model with crashes and
// restarts, a world copied after a prefix of the path and stepped along the rest reaches the
// fingerprint and the trace hash a fresh re-execution of the whole path reaches; and stepping the
// copy on leaves the world it was copied from as it was.
func TestZABCopyMatchesReplay(t *testing.T) {
	configs := []ZABConfig{
		{Servers: 3, Writes: 2, Reads: 1, Crashes: 1, Restarts: 1, Timers: 10, Warmup: true},
		{Servers: 3, Writes: 2, Crashes: 1, Restarts: 1, Timers: 10, BoundarySkips: 2, Warmup: true, Coarse: true},
	}
	rapid.Check(t, func(t *rapid.T) {
		cfg := configs[rapid.IntRange(0, len(configs)-1).Draw(t, "config")]
		ref := cfg
		ref.NoCopy = true
		replayer, err := NewZAB(ref)
		require.NoError(t, err)
		copier, err := NewZAB(cfg)
		require.NoError(t, err)

		// A random path, taken in one world without copies.
		zw, err := replayer.build(nil)
		require.NoError(t, err)
		var path []Action
		for range rapid.IntRange(1, 24).Draw(t, "length") {
			actions, _ := zw.actions(nil)
			if len(actions) == 0 {
				break
			}
			a := actions[rapid.IntRange(0, len(actions)-1).Draw(t, "action")]
			path = append(path, a)
			require.NoError(t, zw.step(a))
		}
		want, wantTrace := zw.fingerprint(), zw.w.Trace().Hash()

		k := rapid.IntRange(0, len(path)).Draw(t, "prefix")
		prefix, err := copier.replay(path[:k], nil)
		require.NoError(t, err)
		prefixFP, prefixTrace := prefix.fingerprint(), prefix.w.Trace().Hash()
		var copied *zabWorld
		if rapid.Bool().Draw(t, "frozen") {
			// A copy of a frozen copy, as the search's later successors take them.
			_, frozen, err := copier.copyWorldFrozen(prefix)
			require.NoError(t, err)
			copied = copier.copyFrozen(frozen)
		} else {
			copied, err = copier.copyWorld(prefix)
			require.NoError(t, err)
		}
		for _, a := range path[k:] {
			require.NoError(t, copied.step(a))
		}
		assert.Equal(t, want, copied.fingerprint(), "the copy stepped on reaches the re-executed state")
		assert.Equal(t, wantTrace, copied.w.Trace().Hash(), "with the same trace")
		assert.Equal(t, prefixFP, prefix.fingerprint(), "stepping the copy left the original as it was")
		assert.Equal(t, prefixTrace, prefix.w.Trace().Hash())
	})
}

// TestZABCopyKeepsResults: searches with copies report exactly the counts, verdicts and
// counterexamples of searches that re-execute, breadth- and depth-first, on the fine and the
// coarse model, and find a bug switch with the same path.
func TestZABCopyKeepsResults(t *testing.T) {
	k1277, err := zabmodel.ParseBugs("ZK-1277")
	require.NoError(t, err)
	cases := []struct {
		cfg  ZABConfig
		opts Options
	}{
		{ZABConfig{Servers: 3, Writes: 1, Timers: 2, Warmup: true}, Options{Strategy: BFS}},
		{ZABConfig{Servers: 3, Writes: 1, Timers: 2, Warmup: true}, Options{Strategy: DFS}},
		{ZABConfig{Servers: 3, Writes: 1, Crashes: 1, Restarts: 1, Timers: 4, BoundarySkips: 1, Warmup: true, Coarse: true}, Options{Strategy: DFS}},
		{ZABConfig{Servers: 3, Writes: 1, Crashes: 1, Restarts: 1, Timers: 4, BoundarySkips: 1, Warmup: true, Coarse: true}, Options{Strategy: BFS, Workers: 2}},
		{ZABConfig{Servers: 3, Writes: 1, Timers: 3, Warmup: true, Bugs: k1277, ZxidCounter: 0xfffffffd}, Options{Strategy: BFS}},
	}
	for _, c := range cases {
		results := map[bool]Result{}
		for _, noCopy := range []bool{false, true} {
			cfg := c.cfg
			cfg.NoCopy = noCopy
			m, err := NewZAB(cfg)
			require.NoError(t, err)
			r, err := Check(context.Background(), m, c.opts)
			require.NoError(t, err)
			if noCopy {
				assert.Zero(t, m.copies.Load(), "no copies with NoCopy")
			} else {
				assert.Positive(t, m.copies.Load(), "%+v: copies were made", c.cfg)
				assert.Contains(t, m.CopyStatus(), "on (")
			}
			r.Elapsed = 0
			results[noCopy] = r
		}
		assert.Equal(t, results[true], results[false], "%+v %s", c.cfg, c.opts.Strategy)
	}
	assert.NotNil(t, func() *Violation {
		m, err := NewZAB(cases[4].cfg)
		require.NoError(t, err)
		r, err := Check(context.Background(), m, cases[4].opts)
		require.NoError(t, err)
		return r.Violation
	}(), "ZK-1277 is found")
}

// TestZABCopyFallsBack: lockers run the recipes' continuations as closures, which a world cannot
// copy; such a configuration re-executes and says why, with the same counts.
func TestZABCopyFallsBack(t *testing.T) {
	cfg := ZABConfig{Servers: 3, Lockers: 2, Timers: 40, LockStartBy: 1, Warmup: true, Coarse: true}
	m, err := NewZAB(cfg)
	require.NoError(t, err)
	r, err := Check(context.Background(), m, Options{Strategy: DFS})
	require.NoError(t, err)
	assert.Contains(t, m.CopyStatus(), "falling back to re-execution")
	assert.Contains(t, m.CopyStatus(), "func value")
	cfg.NoCopy = true
	ref, err := NewZAB(cfg)
	require.NoError(t, err)
	want, err := Check(context.Background(), ref, Options{Strategy: DFS})
	require.NoError(t, err)
	r.Elapsed, want.Elapsed = 0, 0
	assert.Equal(t, want, r)
}
