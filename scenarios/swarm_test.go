package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
)

// TestSwarmDrawsAZxidCounterOnlyForAQuorum: about one seed in ten starts its leaders' counter near
// the top, and never one of a single server, which would not apply it.
func TestSwarmDrawsAZxidCounterOnlyForAQuorum(t *testing.T) {
	counters := map[int]int{}
	for seed := uint64(1); seed <= 300; seed++ {
		for _, servers := range []int{1, 3} {
			s, err := DrawScript(Options{Seed: seed, Servers: servers, Observers: -1})
			require.NoError(t, err)
			if s.InitialZxidCounter > 0 {
				counters[servers]++
			}
		}
	}
	assert.Zero(t, counters[1], "seeds of one server that drew a zxid counter")
	assert.Greater(t, counters[3], 10, "seeds of three servers that drew a zxid counter")
}

// TestSwarmSkewsServerAndClientClocksBothWays: the clock family draws drift and wall-clock steps on
// clients as well as servers, and steps the wall clock backwards as well as forwards, all within
// what the fault model and a local clock allow.
func TestSwarmSkewsServerAndClientClocksBothWays(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 200; seed++ {
		s, err := DrawScript(Options{Seed: seed, Faults: []string{FaultClock}, Observers: -1})
		require.NoError(t, err)
		for _, a := range s.Actions {
			require.Contains(t, []string{"drift", "stepwall"}, a.Verb, "seed %d", seed)
			kind, _, ok := parseTarget(a.Args[0])
			require.True(t, ok, "seed %d: %s", seed, a)
			switch kind {
			case aServer:
				seen[a.Verb+" server"]++
			case aClient:
				seen[a.Verb+" client"]++
			}
			if a.Verb == "stepwall" {
				step, err := parseSignedDuration(a.Args[1])
				require.NoError(t, err)
				require.LessOrEqual(t, step.Abs(), 30*clock.Second, "seed %d: %s", seed, a)
				if step < 0 {
					seen["backwards"]++
				} else if step > 0 {
					seen["forwards"]++
				}
			}
		}
	}
	for _, what := range []string{"drift server", "drift client", "stepwall server", "stepwall client", "backwards", "forwards"} {
		assert.Positive(t, seen[what], "%s in 200 seeds: %v", what, seen)
	}
}
