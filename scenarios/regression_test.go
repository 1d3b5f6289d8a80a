package scenarios

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/zabmodel"
)

// regressions are runs that once found a fault in zabsim's own ensemble, each kept as the script
// its seed drew, so that the run stays the same while the swarm's drawing evolves. Each script's
// comment says what went wrong. They must pass.
var regressions = []struct {
	script     string
	seed       uint64
	bugs       zabmodel.Bugs
	recipeBugs lockmodel.Bugs
}{
	{"trunc-below-snap", 1000, zabmodel.Bugs{}, lockmodel.Bugs{}.With(lockmodel.BugUnprotectedCreate)},
	{"stale-newleader-ack", 300034, zabmodel.Bugs{}, lockmodel.Bugs{}},
	{"late-newleader-1005550", 1005550, zabmodel.Bugs{}, lockmodel.Bugs{}},
	{"late-newleader-1069851", 1069851, zabmodel.Bugs{}, lockmodel.Bugs{}},
}

// TestStaleNewLeaderAckIsThe3_8_0Behaviour: the stale-newleader-ack regression passes because the
// leader forgets a departed learner's NEWLEADER ack; 3.8.0 as released (the stale-ack switch)
// keeps it, and the same script breaks LeaderLogCompleteness.
func TestStaleNewLeaderAckIsThe3_8_0Behaviour(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "regressions", "stale-newleader-ack.script"))
	require.NoError(t, err)
	defer f.Close()
	script, err := ParseScript(f)
	require.NoError(t, err)
	rep, err := Run(Options{Seed: 300034, Script: script, Bugs: zabmodel.Bugs{}.With(zabmodel.BugStaleAck)})
	require.NoError(t, err)
	require.Equal(t, "zab:LeaderLogCompleteness", rep.Failure(), rep.Explain())
}

func TestRegressions(t *testing.T) {
	for _, c := range regressions {
		t.Run(c.script, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "regressions", c.script+".script"))
			require.NoError(t, err)
			defer f.Close()
			script, err := ParseScript(f)
			require.NoError(t, err)
			rep, err := Run(Options{Seed: c.seed, Script: script, Bugs: c.bugs, RecipeBugs: c.recipeBugs})
			require.NoError(t, err)
			require.False(t, rep.Failed(), rep.Explain())
		})
	}
}
