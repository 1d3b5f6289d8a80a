package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// evenSplitRun is what TestEvenSplitHasNoQuorumUntilHealed records of one run of the named script
// even-split: when the partition and the heal acted, and when leaders were established and
// transactions committed.
type evenSplitRun struct {
	partition, heal clock.Time
	established     []clock.Time
	commits         []clock.Time
}

// TestEvenSplitHasNoQuorumUntilHealed runs four servers split two and two for 80 s. Two of four
// voters are not a quorum (QuorumMaj: more than half), so while the partition lasts no server is
// established as leader and no transaction commits; once it heals a leader is established and
// the clients' writes commit again. Every checker passes: the availability check judges only
// groups of three (the smallest quorum of four), so the 80 s without a leader, longer than its
// recovery bound, is not a finding.
func TestEvenSplitHasNoQuorumUntilHealed(t *testing.T) {
	script := namedScript(t, "even-split")
	require.Equal(t, 4, script.Servers)
	for seed := uint64(1); seed <= 3; seed++ {
		var run evenSplitRun
		watch := &Watch{
			Protocol: func(e zabmodel.Event) {
				switch e.Kind {
				case zabmodel.EventEstablished:
					run.established = append(run.established, e.Time)
				case zabmodel.EventCommit:
					run.commits = append(run.commits, e.Time)
				}
			},
			Action: func(_ int, a Action, at clock.Time, idle string) {
				require.Empty(t, idle, "seed %d: %s did nothing", seed, a)
				switch a.Verb {
				case "partition":
					run.partition = at
				case "heal":
					run.heal = at
				}
			},
		}
		rep, err := Run(Options{Seed: seed, Script: script, Watch: watch})
		require.NoError(t, err)
		require.False(t, rep.Failed(), "seed %d: %s", seed, rep.Explain())
		require.Positive(t, run.partition, "seed %d: the partition acted", seed)
		require.Greater(t, run.heal.Sub(run.partition), availabilityBound(zabmodel.Config{}.WithDefaults(), 0),
			"the partition outlasts the availability check's recovery bound")

		// Messages already on their way when the partition came may still complete a commit.
		const grace = clock.Second
		for _, at := range run.established {
			assert.False(t, at > run.partition && at < run.heal, "seed %d: a leader was established at %v, inside the 2|2 partition", seed, at)
		}
		for _, at := range run.commits {
			assert.False(t, at > run.partition.Add(grace) && at < run.heal, "seed %d: a transaction committed at %v, inside the 2|2 partition", seed, at)
		}
		assert.True(t, anyBetween(run.established, 0, run.partition), "seed %d: a leader before the partition", seed)
		assert.True(t, anyBetween(run.established, run.heal, rep.Stats.VirtualTime), "seed %d: a leader after the heal", seed)
		assert.True(t, anyBetween(run.commits, run.heal, rep.Stats.VirtualTime), "seed %d: commits after the heal", seed)

		availability, ok := rep.Checks.Result(CheckerAvailability)
		require.True(t, ok)
		assert.Equal(t, checkers.Pass, availability.Status, "seed %d: %s", seed, availability.Summary)
		assert.Positive(t, availability.Checked, "seed %d: the availability check judged the run's quorate spells", seed)
	}
}

func anyBetween(times []clock.Time, from, to clock.Time) bool {
	for _, at := range times {
		if at > from && at < to {
			return true
		}
	}
	return false
}
