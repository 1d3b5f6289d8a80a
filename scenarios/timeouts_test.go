package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
)

func TestScriptSessionAndConnectionTimeouts(t *testing.T) {
	s, err := ParseScript(strings.NewReader("servers 3\nworkload lock\nsessiontimeout 40s\nconnectiontimeout 15s\n"))
	require.NoError(t, err)
	assert.Equal(t, 40*clock.Second, s.SessionTimeout)
	assert.Equal(t, 15*clock.Second, s.ConnectionTimeout)
	again, err := ParseScript(strings.NewReader(s.String()))
	require.NoError(t, err)
	assert.Equal(t, s, again, "the text form keeps the timeouts")
	for _, bad := range []string{"sessiontimeout 0s", "sessiontimeout 60s", "sessiontimeout", "connectiontimeout soon", "connectiontimeout 11m"} {
		_, err := ParseScript(strings.NewReader("servers 3\n" + bad + "\n"))
		assert.Error(t, err, bad)
	}
}

// TestLockWorkloadsDrawTimeoutsAsCuratorUsersRunThem: every lock workload's seed draws a session
// and a connection timeout, from Curator's defaults, short sessions, and the combination Curator
// warns about (connection timeout above the session timeout); the other workloads draw none, and
// the faults are the same either way.
func TestLockWorkloadsDrawTimeoutsAsCuratorUsersRunThem(t *testing.T) {
	defaults, short, warned := 0, 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		s, err := DrawScript(Options{Seed: seed, Workload: "lock", Observers: -1})
		require.NoError(t, err)
		switch {
		case s.SessionTimeout == 40*clock.Second && s.ConnectionTimeout == 15*clock.Second:
			defaults++
		case s.ConnectionTimeout > s.SessionTimeout:
			warned++
			assert.GreaterOrEqual(t, s.SessionTimeout, 4*clock.Second)
			assert.LessOrEqual(t, s.SessionTimeout, 10*clock.Second)
		default:
			short++
			assert.GreaterOrEqual(t, s.SessionTimeout, 4*clock.Second)
			assert.LessOrEqual(t, s.SessionTimeout, 20*clock.Second)
			assert.GreaterOrEqual(t, s.ConnectionTimeout, clock.Second)
		}
		other, err := DrawScript(Options{Seed: seed, Workload: "registers", Observers: -1})
		require.NoError(t, err)
		assert.Zero(t, other.SessionTimeout)
		assert.Zero(t, other.ConnectionTimeout)
		assert.Equal(t, s.Actions, other.Actions, "seed %d: the timeouts are drawn after the faults", seed)
	}
	assert.Positive(t, defaults)
	assert.Positive(t, short)
	assert.Positive(t, warned)
}

// TestElectionRecipeIsDrawnAndScripted: half the election seeds run LeaderSelector, named in the
// script ("electionrecipe selector"); a script without the line runs LeaderLatch.
func TestElectionRecipeIsDrawnAndScripted(t *testing.T) {
	selectors := 0
	for seed := uint64(1); seed <= 40; seed++ {
		s, err := DrawScript(Options{Seed: seed, Workload: "election", Observers: -1})
		require.NoError(t, err)
		if s.ElectionRecipe == "selector" {
			selectors++
			assert.Contains(t, s.String(), "electionrecipe selector\n")
		} else {
			assert.Empty(t, s.ElectionRecipe)
		}
		other, err := DrawScript(Options{Seed: seed, Workload: "lock", Observers: -1})
		require.NoError(t, err)
		assert.Empty(t, other.ElectionRecipe)
	}
	assert.Greater(t, selectors, 5)
	assert.Less(t, selectors, 35)
	_, err := ParseScript(strings.NewReader("servers 3\nelectionrecipe mutex\n"))
	assert.Error(t, err)
}
