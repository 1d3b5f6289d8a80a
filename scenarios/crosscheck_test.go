package scenarios

import (
	"flag"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
)

var flagCrossCheckSeeds = flag.Int("crosscheck-seeds", 4, "seeds per workload for TestZxidOrderAgreesWithPorcupineOnSweeps")

// TestZxidOrderAgreesWithPorcupineOnSweeps runs seeds of every workload with both checkers and
// requires the same verdict wherever porcupine decides (the lock workloads' write order, which
// porcupine does not judge, must pass). CI runs the default few seeds; -crosscheck-seeds 100 is
// the wider cross-check.
func TestZxidOrderAgreesWithPorcupineOnSweeps(t *testing.T) {
	compared := 0
	// The ZooKeeper workloads; the Redis lock workloads have no linearizability check.
	for _, workload := range []string{"registers", "queue", "config", "registry", "multi", "lock", "rwlock", "election"} {
		for seed := uint64(1); seed <= uint64(*flagCrossCheckSeeds); seed++ {
			rep, err := Run(Options{Seed: seed, Observers: -1, Workload: workload, Checker: checkers.BothCheckers})
			require.NoError(t, err)
			require.NoError(t, rep.CheckErr)
			name := fmt.Sprintf("%s seed %d", workload, seed)
			statuses := map[string]checkers.Status{}
			for _, res := range rep.Checks.Results {
				statuses[res.Checker] = res.Status
				if res.Checker == checkers.CheckerCrossCheck {
					compared++
					assert.Equal(t, checkers.Pass, res.Status, "%s: %s", name, res)
				}
			}
			if len(rep.Zab) == 0 && rep.Outcome.OK() {
				assert.NotZero(t, statuses[checkers.CheckerCrossCheck], "%s: the linearizability checks did not run", name)
			}
		}
	}
	t.Logf("%d cross-checks compared", compared)
}
