package scenarios

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/checkers/lock"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/lockmodel"
)

func lockResult(t *testing.T, rep *Report, checker string) checkers.Result {
	t.Helper()
	res, ok := rep.Checks.Result(checker)
	require.True(t, ok, "no result of %s: the checker is not wired", checker)
	return res
}

// TestElectionSeed38TwoLeaders: in election seed 38, c1's create is still being retried when it
// reconnects, so LeaderLatch starts a second create; the first makes c1 leader, the second
// replaces (deletes) that node, and c5 is granted. LeaderLatch as it was before Curator 5.4.0 (the
// latch-keeps-leadership self-test) keeps c1 leading on its deleted node for half a second, which
// fencing rejects: lock/exclusive-belief-fenced fires, naming c1's own deletion. Curator 5.4.0's
// checkLeadership gives up leadership at the next listing (CURATOR-653), and the seed passes.
//
// The seed is kept as a script (testdata/regressions/election-seed38-two-leaders.script): the
// seed's own run changed when the lock workloads began to draw their timeouts. Since snapshots
// became fuzzy (their walks draw from the seed) the script runs with another seed: since the lock
// recipes' retry loops wait for a connection only before their first attempt, as Curator's do,
// seed 107 until a learner handler's reads became steps of their own, seed 214 until only a
// quarter of the handler threads woke late and snapshot walks stalled; now seed 87 (the second of
// the script's seeds from 1 where the self-test fails on c4's own node and the plain latch
// passes; in the first, 8, Curator 5.4.0's latch below gives up leadership 0.4 ms after the next
// one is granted), where it happens to c4 (whose node is replaced at about 42.31 s) and c1
// (granted).
func TestElectionSeed38TwoLeaders(t *testing.T) {
	const seed = 87
	script := regressionScript(t, "election-seed38-two-leaders")
	keeps := lockmodel.SelfTests{}.With(lockmodel.SelfTestLatchKeepsLeadership)
	rep, err := Run(Options{Seed: seed, Script: script, RecipeSelfTests: keeps})
	require.NoError(t, err)
	require.Equal(t, lock.CheckerExclusiveBeliefFenced, rep.Failure(), rep.Explain())
	res := lockResult(t, rep, lock.CheckerExclusiveBeliefFenced)
	rules := map[string]bool{}
	for _, f := range res.Findings {
		rules[f.Rule] = true
		assert.Contains(t, f.Clients, "c4")
	}
	assert.True(t, rules["own-node-deleted"], "%v", res.Findings)
	assert.Equal(t, checkers.Pass, lockResult(t, rep, lock.CheckerMutualExclusion).Status, "fencing kept the resource safe")

	// Without fencing the same two believers are the unfenced class.
	noFencing := lockmodel.Bugs{}.With(lockmodel.BugNoFencing)
	rep, err = Run(Options{Seed: seed, Script: script, RecipeSelfTests: keeps, RecipeBugs: noFencing})
	require.NoError(t, err)
	assert.Equal(t, checkers.Violation, lockResult(t, rep, lock.CheckerExclusiveBelief).Status, rep.Explain())

	rep, err = Run(Options{Seed: seed, Script: script})
	require.NoError(t, err)
	assert.False(t, rep.Failed(), rep.Explain())
	assert.Equal(t, checkers.Pass, lockResult(t, rep, lock.CheckerExclusiveBeliefFenced).Status)

	// The same run with LeaderLatch as Curator 5.4.0-5.6.x have it (no owner check, which changes
	// the schedule) shows what 5.4.0 does: the leader whose node was replaced gives up leadership
	// at its next listing, one round trip after its second create replaced its node, before the
	// next one is granted.
	noOwnerCheck := lockmodel.SelfTests{}.With(lockmodel.SelfTestLatchNoOwnerCheck)
	rep, l := runLock(t, Options{Seed: seed, Script: script, RecipeSelfTests: noOwnerCheck})
	assert.False(t, rep.Failed(), rep.Explain())
	var replaced, granted *lock.Hold
	// An open span ends at the end of time here, so that a leadership never given up fails.
	holds := l.log.Holds(clock.Time(math.MaxInt64))
	for i, x := range holds {
		if x.Client == "c4" && x.Start > at(41.5) && x.Start < at(42.5) {
			replaced = &holds[i]
		}
		if x.Client == "c1" && x.Start > at(41.5) && x.Start < at(42.5) {
			granted = &holds[i]
		}
	}
	require.NotNil(t, replaced, "c4 leads at about 41.83 s")
	require.NotNil(t, granted, "c1 leads at about 42.31 s")
	assert.LessOrEqual(t, replaced.End, granted.Start, "c4 gave up leadership before c1 was granted")
	assert.Less(t, granted.Start.Sub(replaced.End), 50*clock.Millisecond, "and c1 was granted within a few round trips")
}

func at(seconds float64) clock.Time { return clock.Time(seconds * float64(clock.Second)) }

// TestLatchYieldsIsChurn: with the latch-yields self-test a participant that is first requeues
// instead of leading while others wait, so nobody leads while the queue keeps changing, every
// session healthy: lock/churn reports each participant's requeue storm and the livelock. The same
// seed without the self-test has no churn.
func TestLatchYieldsIsChurn(t *testing.T) {
	yields := lockmodel.SelfTests{}.With(lockmodel.SelfTestLatchYields)
	rep, err := Run(Options{Seed: 2, Workload: "election", Observers: -1, RecipeSelfTests: yields})
	require.NoError(t, err)
	res := lockResult(t, rep, lock.CheckerChurn)
	require.Equal(t, checkers.Violation, res.Status, rep.Explain())
	rules := map[string]int{}
	for _, f := range res.Findings {
		rules[f.Rule]++
	}
	assert.Positive(t, rules["requeue-storm"], "%v", res.Findings)
	assert.Positive(t, rules["livelock"], "%v", res.Findings)

	rep, err = Run(Options{Seed: 2, Workload: "election", Observers: -1})
	require.NoError(t, err)
	assert.False(t, rep.Failed(), rep.Explain())
	assert.Equal(t, checkers.Pass, lockResult(t, rep, lock.CheckerChurn).Status)
}

// TestExclusiveLockRetriedDeleteSyncsFirst: lock seed 7106 (kept as a script) failed
// lock/exclusive-belief-fenced when the exclusive lock's retried delete checked its node without
// a sync and deleted the next holder's; it passes now.
func TestExclusiveLockRetriedDeleteSyncsFirst(t *testing.T) {
	script := regressionScript(t, "lock-seed7106-retried-delete")
	rep, err := Run(Options{Seed: 7106, Script: script})
	require.NoError(t, err)
	assert.False(t, rep.Failed(), rep.Explain())
	assert.Equal(t, checkers.Pass, lockResult(t, rep, lock.CheckerExclusiveBeliefFenced).Status)
}
