package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
)

// namedExpectation is what a protocol script of testdata/named expects of every run, stated in the
// script itself on a comment line such as
//
//	# expect pass leaders>=2 first-leader=zk5
//
// pass: every checker passes; leaders>=N: the least number of leaders a run establishes (2 or more
// where the script takes the leader away); first-leader=zkN: the server the script's comment
// expects to lead when its first action comes (the script cuts that server off by name).
type namedExpectation struct {
	name    string
	leaders int
	leader  int64
}

// namedProtocolScripts reads the expectation of every script of testdata/named that states one.
func namedProtocolScripts(t *testing.T) []namedExpectation {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "named", "*.script"))
	require.NoError(t, err)
	var out []namedExpectation
	for _, path := range paths {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 2 || fields[0] != "#" || fields[1] != "expect" {
				continue
			}
			e := namedExpectation{name: strings.TrimSuffix(filepath.Base(path), ".script")}
			for _, f := range fields[2:] {
				var n int
				switch {
				case f == "pass":
				case strings.HasPrefix(f, "leaders>="):
					n, err = strconv.Atoi(strings.TrimPrefix(f, "leaders>="))
					e.leaders = n
				case strings.HasPrefix(f, "first-leader=zk"):
					n, err = strconv.Atoi(strings.TrimPrefix(f, "first-leader=zk"))
					e.leader = int64(n)
				default:
					err = fmt.Errorf("unknown expectation %q", f)
				}
				require.NoError(t, err, "%s: %s", path, line)
			}
			require.Contains(t, fields[2:], "pass", "%s: only passing runs can be expected yet", path)
			out = append(out, e)
		}
	}
	return out
}

// TestNamedProtocolScenarios runs each script on several seeds. Besides passing every checker, each
// run must be the scenario its comment describes: every action took effect (none found its target
// missing, down already or without a session; the crashpoint action crashed its server at the
// point), and the scripts that cut off a server by name as the leader had that leader. An action
// whose legal target resolves to nothing would otherwise leave a green run of some other
// scenario.
func TestNamedProtocolScenarios(t *testing.T) {
	seeds := uint64(4)
	if testing.Short() {
		seeds = 1
	}
	cases := namedProtocolScripts(t)
	require.GreaterOrEqual(t, len(cases), 10, "the protocol scripts of testdata/named that state their expectation")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := namedScript(t, c.name)
			for seed := uint64(1); seed <= seeds; seed++ {
				rep, r := runScripted(t, Options{Seed: seed, Script: script})
				require.False(t, rep.Failed(), "seed %d: %s", seed, rep.Explain())
				for i, a := range script.Actions {
					assert.True(t, r.actionResults[i].done, "seed %d: %s did nothing: %s", seed, a, r.actionResults[i].idle)
				}
				if c.leader != 0 {
					assert.Equal(t, c.leader, r.actionResults[0].leader, "seed %d: the leader when %s came", seed, script.Actions[0])
				}
				assert.GreaterOrEqual(t, rep.Stats.FaultsInjected, len(script.Actions), "seed %d: faults injected", seed)
				assert.GreaterOrEqual(t, rep.Stats.Leaders, c.leaders, "seed %d: leaders established", seed)
			}
		})
	}
}

// TestNamedLockScriptsTakeEffect: every action of the lock scenarios in testdata/named takes
// effect (TestNamedLockScenarios checks what the recipes made of it).
func TestNamedLockScriptsTakeEffect(t *testing.T) {
	for _, name := range []string{"lock-holder-crash", "lock-holder-gc-pause", "lock-holder-partitioned", "lock-leader-failover", "lock-waiter-expiry"} {
		script := namedScript(t, name)
		for seed := uint64(1); seed <= 2; seed++ {
			rep, r := runScripted(t, Options{Seed: seed, Script: script})
			require.False(t, rep.Failed(), "%s seed %d: %s", name, seed, rep.Explain())
			for i, a := range script.Actions {
				assert.True(t, r.actionResults[i].done, "%s seed %d: %s did nothing: %s", name, seed, a, r.actionResults[i].idle)
			}
		}
	}
}

// TestSyncIsNotAQuorumOperation shows ZOOKEEPER-1675 end to end: on a seed of the named script,
// a sync on the deposed leader's side returns without a write the new leader had already
// committed and acknowledged. ZooKeeper promises no more, so the default checks pass, and the
// opt-in check finds it and marks its result as beyond ZooKeeper's guarantees.
func TestSyncIsNotAQuorumOperation(t *testing.T) {
	script := namedScript(t, "zk-1675-sync-not-quorum")
	const seed = 1821 // 507 until a learner handler's reads became steps of their own, 494 until a quarter of the handler threads woke late and snapshot walks stalled (1821 is the first of the script's seeds that shows it now)
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
