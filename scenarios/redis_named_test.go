package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/checkers/lock"
	"github.com/zabsim/zabsim/lockmodel"
)

var noFencing = lockmodel.Bugs{}.With(lockmodel.BugNoFencing)

// firstFinding returns the first finding of checker in a report.
func firstFinding(t *testing.T, rep *Report, checker string) checkers.Finding {
	t.Helper()
	res, ok := rep.Checks.Result(checker)
	require.True(t, ok, "no %s result", checker)
	require.NotEmpty(t, res.Findings, "%s has no finding: %s", checker, rep.Explain())
	return res.Findings[0]
}

// TestRedisWorkloadsPassWithoutFaults: with nothing going wrong, every Redis lock workload keeps
// mutual exclusion at the resource, hands the lock round, and gets it again after the heal; and a
// seed run twice is the same run.
func TestRedisWorkloadsPassWithoutFaults(t *testing.T) {
	for _, workload := range redisWorkloads {
		t.Run(workload, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				rep, r := runScripted(t, Options{Seed: seed, Workload: workload, Faults: []string{}, Duration: 20e9})
				require.False(t, rep.Failed(), "seed %d: %s", seed, rep.Explain())
				rw := r.gen.(*redisWorkload)
				assert.Greater(t, len(rw.leases), 5, "the lock went round")
				assert.Greater(t, len(rw.resource.Log()), 5, "the holders used the resource")
				again, _ := runScripted(t, Options{Seed: seed, Workload: workload, Faults: []string{}, Duration: 20e9})
				assert.Equal(t, rep.Outcome.TraceHash, again.Outcome.TraceHash, "deterministic")
			}
		})
	}
}

// TestRedisGCPauseIsUnsafeWithoutFencing: the paused holder acts on its expired lease. Without
// fencing some seed shows it as a stale holder, not a double grant (the lock behaved); the same
// seed with the INCR token passes.
func TestRedisGCPauseIsUnsafeWithoutFencing(t *testing.T) {
	script := namedScript(t, "redis-gc-pause")
	for seed := uint64(1); seed <= 30; seed++ {
		rep, _ := runScripted(t, Options{Seed: seed, Script: script, RecipeBugs: noFencing})
		if !rep.Failed() {
			continue
		}
		require.Equal(t, lock.CheckerUnfenced, rep.Failure(), "seed %d: %s", seed, rep.Explain())
		f := firstFinding(t, rep, lock.CheckerUnfenced)
		assert.Equal(t, "stale-holder", f.Rule)
		assert.Len(t, f.Clients, 2)
		fenced, _ := runScripted(t, Options{Seed: seed, Script: script})
		assert.False(t, fenced.Failed(), "seed %d with fencing: %s", seed, fenced.Explain())
		return
	}
	t.Fatal("no seed of redis-gc-pause made the paused holder act on its expired lease")
}

// TestRedisFailoverLosesAnUnreplicatedLock: after the failover the lock is granted again while
// the first holder's lease is valid; the checkers call it a double grant, with and without the
// token (the INCR counter was not replicated either).
func TestRedisFailoverLosesAnUnreplicatedLock(t *testing.T) {
	script := namedScript(t, "redis-failover-unreplicated")
	for _, bugs := range []lockmodel.Bugs{noFencing, {}} {
		caught := false
		for seed := uint64(1); seed <= 10 && !caught; seed++ {
			rep, r := runScripted(t, Options{Seed: seed, Script: script, RecipeBugs: bugs})
			if !rep.Failed() {
				continue
			}
			if rep.Failure() != lock.CheckerMutualExclusion {
				continue // the token went backwards (lock/progress), or nothing overlapped
			}
			f := firstFinding(t, rep, lock.CheckerMutualExclusion)
			assert.Contains(t, []string{"overlapping-holders", "fenced-live-holder"}, f.Rule)
			assert.Equal(t, 1, r.gen.(*redisWorkload).sentinel.Failovers(), "the script makes one failover")
			caught = true
		}
		assert.True(t, caught, "no seed of the failover script showed the double grant (bugs: %s)", bugs)
	}
}

// TestRedlockClockJumpGrantsTheLockTwice: a wall-clock jump on one of the three masters that
// granted c1's lock lets c2 build a quorum of its own.
func TestRedlockClockJumpGrantsTheLockTwice(t *testing.T) {
	script := namedScript(t, "redlock-clock-jump")
	for seed := uint64(1); seed <= 10; seed++ {
		rep, _ := runScripted(t, Options{Seed: seed, Script: script, RecipeBugs: noFencing})
		if !rep.Failed() {
			continue
		}
		require.Equal(t, lock.CheckerMutualExclusion, rep.Failure(), "seed %d: %s", seed, rep.Explain())
		f := firstFinding(t, rep, lock.CheckerMutualExclusion)
		assert.Equal(t, "overlapping-holders", f.Rule)
		assert.ElementsMatch(t, []string{"c1", "c2"}, f.Clients)
		return
	}
	t.Fatal("no seed of redlock-clock-jump showed the double grant")
}

func TestRedisScriptTargets(t *testing.T) {
	_, err := ParseScript(strings.NewReader("servers 1\nworkload redis-lock\nduration 10s\nat 1s crash r2\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "there is no Redis server r2")
	_, err = ParseScript(strings.NewReader("servers 1\nworkload redlock\nduration 10s\nat 1s crash r5\nat 2s stepwall r3 -5s\n"))
	assert.NoError(t, err)
	_, err = ParseScript(strings.NewReader("servers 1\nworkload redlock\nduration 10s\nat 1s kill r1\n"))
	assert.Error(t, err, "kill takes clients")
	opts := Options{Seed: 1, Workload: "lock", RecipeBugs: noFencing}
	assert.NoError(t, opts.Validate())
	opts.Workload = "redlock"
	assert.NoError(t, opts.Validate(), "lock-no-fencing acts on the Redis workloads")
	opts.RecipeBugs = lockmodel.Bugs{}.With(lockmodel.BugHerd)
	assert.ErrorIs(t, opts.Validate(), ErrOptions, "no other recipe bug does")
	for _, name := range drawnWorkloads() {
		assert.Zero(t, redisServerCount(name), "the swarm never draws %s", name)
	}
}
