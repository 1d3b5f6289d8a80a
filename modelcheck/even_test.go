package modelcheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFLEFourServers explores FastLeaderElection among four voters, whose quorum is three, depth
// first within a state budget (the complete fault-free graph has millions of states): no safety
// violation, and fault-free paths end with one established leader. The never-abandon self-test,
// which keeps a server that decided for a leader without a quorum in its role, must fail the
// liveness judge at this size too.
func TestFLEFourServers(t *testing.T) {
	r := checkFLE(t, FLEConfig{Servers: 4}, Options{Strategy: DFS, MaxStates: 30_000})
	assert.Nil(t, r.Violation)
	assert.False(t, r.Complete, "a budget of 30,000 states cuts the search")
	assert.Positive(t, r.Terminal, "fault-free paths end, and the liveness judge saw them")

	broken := checkFLE(t, FLEConfig{Servers: 4, NeverAbandon: true}, Options{Strategy: DFS, MaxStates: 1_000_000})
	require.NotNil(t, broken.Violation)
	assert.Equal(t, "ElectionLiveness", broken.Violation.Invariant)
}

// TestZABEvenEnsembles checks the ZAB model's bounds take two and four voters, and that an
// exploration of four voters finds ZK-1277's counter overflow as it does with three.
func TestZABEvenEnsembles(t *testing.T) {
	for _, servers := range []int{2, 4} {
		assert.NoError(t, ZABConfig{Servers: servers}.Validate(), "%d servers", servers)
	}
	assert.ErrorContains(t, ZABConfig{Servers: 6}.Validate(), "servers 6: must be 1 to 5")

	checkZK1277(t, 4)
}
