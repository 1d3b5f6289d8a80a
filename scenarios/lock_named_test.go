package scenarios

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers/lock"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/lockmodel"
)

// runLock runs one seed as Run does and also returns the lock workload, whose log the tests read.
func runLock(t *testing.T, opts Options) (*Report, *lockWorkload) {
	t.Helper()
	rep, r := runScripted(t, opts)
	l, ok := r.gen.(*lockWorkload)
	require.True(t, ok, "seed %d: not a lock workload", opts.Seed)
	return rep, l
}

func namedScript(t *testing.T, name string) *Script {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "named", name+".script"))
	require.NoError(t, err)
	defer f.Close()
	s, err := ParseScript(f)
	require.NoError(t, err)
	return s
}

// actionTime is when a script's first action of verb happens, in run time.
func actionTime(t *testing.T, s *Script, verb string) clock.Time {
	t.Helper()
	for _, a := range s.Actions {
		if a.Verb == verb {
			return clock.Time(warmup).Add(a.At)
		}
	}
	t.Fatalf("the script has no %s", verb)
	return 0
}

// holdsAt reports whether the client held some lock at time at (granted before, released after).
func (l *lockWorkload) holdsAt(client string, at clock.Time) bool {
	for _, g := range l.log.Grants {
		end, released := l.log.Released[g.Token]
		if (client == "" || g.Client == client) && g.Time < at && (!released || end > at) {
			return true
		}
	}
	return false
}

// waitsAt reports whether the client was waiting for a lock at time at.
func (l *lockWorkload) waitsAt(client string, at clock.Time) bool {
	for _, a := range l.log.Attempts {
		if a.Client == client && a.Start < at && (a.Outcome == lock.Waiting || a.End > at) {
			return true
		}
	}
	return false
}

// TestNamedLockScenarios runs each classic case on several seeds: every seed must pass every
// checker, and on at least one of them the case must really have happened (the crashed, cut-off
// or paused client held or waited for the lock at that moment).
// namedLockSeeds is how many seeds each named lock scenario runs: whether the holder holds at the
// scripted moment depends on the run's timing, so a few seeds must show it.
const namedLockSeeds = 16

func TestNamedLockScenarios(t *testing.T) {
	cases := []struct {
		name, verb string
		happened   func(l *lockWorkload, at clock.Time) bool
	}{
		{"lock-holder-crash", "kill", func(l *lockWorkload, at clock.Time) bool { return l.holdsAt("c1", at) }},
		{"lock-holder-partitioned", "partition", func(l *lockWorkload, at clock.Time) bool { return l.holdsAt("c1", at) }},
		{"lock-leader-failover", "crash", func(l *lockWorkload, at clock.Time) bool { return l.holdsAt("", at) }},
		{"lock-waiter-expiry", "pause", func(l *lockWorkload, at clock.Time) bool { return l.waitsAt("c2", at) }},
		{"lock-holder-gc-pause", "pause", func(l *lockWorkload, at clock.Time) bool { return l.holdsAt("c1", at) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := namedScript(t, c.name)
			at := actionTime(t, script, c.verb)
			happened := 0
			for seed := uint64(1); seed <= namedLockSeeds; seed++ {
				rep, l := runLock(t, Options{Seed: seed, Script: script})
				require.False(t, rep.Failed(), "seed %d: %s", seed, rep.Explain())
				if c.happened(l, at) {
					happened++
				}
			}
			assert.Positive(t, happened, "in no seed did the case happen as the script means it")
			t.Logf("the case happened in %d of %d seeds", happened, namedLockSeeds)
		})
	}
}

// TestGCPausedHolderIsUnsafeWithoutFencing runs the GC-pause script without fencing until a seed
// shows the paused holder acting on its lost lock, checks that it is classified as unsafe without
// fencing (not a recipe bug), and that the same seed passes with fencing.
func TestGCPausedHolderIsUnsafeWithoutFencing(t *testing.T) {
	script := namedScript(t, "lock-holder-gc-pause")
	noFencing := lockmodel.Bugs{}.With(lockmodel.BugNoFencing)
	for seed := uint64(1); seed <= 30; seed++ {
		rep, _ := runLock(t, Options{Seed: seed, Script: script, RecipeBugs: noFencing})
		if !rep.Failed() {
			continue
		}
		require.Equal(t, lock.CheckerUnfenced, rep.Failure(), "seed %d: %s", seed, rep.Explain())
		res, ok := rep.Checks.Result(lock.CheckerUnfenced)
		require.True(t, ok)
		f := res.Findings[0]
		assert.Equal(t, "stale-holder", f.Rule)
		assert.Len(t, f.Clients, 2, "the finding names both holders")
		assert.Len(t, f.Sessions, 2)
		assert.Len(t, f.Zxids, 2, "and both tokens")
		mutex, _ := rep.Checks.Result(lock.CheckerMutualExclusion)
		assert.NotEqual(t, "VIOLATION", mutex.Status.String(), "not a recipe bug")
		fenced, _ := runLock(t, Options{Seed: seed, Script: script})
		assert.False(t, fenced.Failed(), "seed %d with fencing: %s", seed, fenced.Explain())
		return
	}
	t.Fatal("no seed of the GC-pause script made the paused holder use the resource after losing its lock")
}
