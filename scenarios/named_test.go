package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
)

// namedProtocolScripts are the classic protocol scenarios in testdata/named, each a hand-written
// script with a comment that says what should happen. Every seed must pass every checker.
var namedProtocolScripts = []struct {
	name string
	// leaders is the least number of leaders a run of the script establishes: 2 or more where the
	// script takes the leader away.
	leaders int
}{
	{"leader-crash-during-broadcast", 2},
	{"minority-partition", 2},
	{"zk-1675-sync-not-quorum", 2},
	{"rolling-restart", 2},
	{"power-loss", 2},
	{"clock-skew", 2},
	{"session-expiry-partition", 1},
	{"oneway-leader", 2},
	{"crash-inside-newleader", 2},
	{"forced-expiry", 1},
}

func TestNamedProtocolScenarios(t *testing.T) {
	seeds := uint64(4)
	if testing.Short() {
		seeds = 1
	}
	for _, c := range namedProtocolScripts {
		t.Run(c.name, func(t *testing.T) {
			script := namedScript(t, c.name)
			for seed := uint64(1); seed <= seeds; seed++ {
				rep, err := Run(Options{Seed: seed, Script: script})
				require.NoError(t, err)
				require.False(t, rep.Failed(), "seed %d: %s", seed, rep.Explain())
				// A crash point that is reached counts as one more fault.
				assert.GreaterOrEqual(t, rep.Stats.FaultsInjected, len(script.Actions), "seed %d: every action of the script was injected", seed)
				assert.GreaterOrEqual(t, rep.Stats.Leaders, c.leaders, "seed %d: leaders established", seed)
			}
		})
	}
}

// TestSyncIsNotAQuorumOperation shows ZOOKEEPER-1675 end to end: on a seed of the named script,
// a sync on the deposed leader's side returns without a write the new leader had already
// committed and acknowledged. ZooKeeper promises no more, so the default checks pass, and the
// opt-in check finds it and marks its result as beyond ZooKeeper's guarantees.
func TestSyncIsNotAQuorumOperation(t *testing.T) {
	script := namedScript(t, "zk-1675-sync-not-quorum")
	const seed = 187
	plain, err := Run(Options{Seed: seed, Script: script})
	require.NoError(t, err)
	require.False(t, plain.Failed(), "the default checks do not flag it: %s", plain.Explain())

	strong, err := Run(Options{Seed: seed, Script: script, LinearizableReadsAfterSync: true})
	require.NoError(t, err)
	require.Equal(t, checkers.CheckerLinearizableReadsAfterSync, strong.Failure(), strong.Explain())
	res, ok := strong.Checks.Result(checkers.CheckerLinearizableReadsAfterSync)
	require.True(t, ok)
	assert.True(t, res.BeyondGuarantee)
	assert.Equal(t, plain.Outcome.TraceHash, strong.Outcome.TraceHash, "the opt-in check judges the same run")
}
