package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
