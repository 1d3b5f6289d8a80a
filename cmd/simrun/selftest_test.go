package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestASelfTestIsCaughtAndReplayedWithItsFlags: --selftest with --no-zab-checker fails a sweep
// with the client-visible checker's class, and the printed replay command repeats both flags.
func TestASelfTestIsCaughtAndReplayedWithItsFlags(t *testing.T) {
	res := runCLI(t, "", "run", "--seeds", "5", "--workload", "registers", "--selftest", "stale-read",
		"--no-zab-checker", "--parallel", "1", "--quiet")
	require.Equal(t, exitFailure, res.code, res.stdout+res.stderr)
	assert.Contains(t, res.stdout, "FAIL seed 1: sequential-consistency")
	assert.Contains(t, res.stdout, "simrun replay --seed 1 --workload registers --selftest stale-read --no-zab-checker")
}

// TestSelfTestsAreNotBugs: the self-tests have their own flag and listing; the bug flag refuses
// them, the self-test flag refuses bugs, and the bug zoo's listing does not show them.
func TestSelfTestsAreNotBugs(t *testing.T) {
	res := runCLI(t, "", "run", "--seeds", "1", "--bug", "stale-read")
	assert.Equal(t, exitUsage, res.code)
	assert.Contains(t, res.stderr, `unknown bug "stale-read"`)
	res = runCLI(t, "", "run", "--seeds", "1", "--selftest", "ZK-3911")
	assert.Equal(t, exitUsage, res.code)
	assert.Contains(t, res.stderr, `unknown self-test "ZK-3911"`)
	bugs := runCLI(t, "", "bugs")
	require.Equal(t, exitPass, bugs.code)
	selfTests := runCLI(t, "", "selftests")
	require.Equal(t, exitPass, selfTests.code)
	for _, name := range allSelfTestNames() {
		assert.NotContains(t, bugs.stdout, name)
		assert.Contains(t, selfTests.stdout, name)
	}
}

// TestAnUndecidedCheckIsAFailingExitStatus: a porcupine check that runs out of time (a
// nanosecond for thirty clients' history) fails the seed, and the sweep exits 1. (The default
// zxid-order checker never runs out of time.)
func TestAnUndecidedCheckIsAFailingExitStatus(t *testing.T) {
	res := runCLI(t, "", "run", "--seeds", "1", "--workload", "registers", "--clients", "30",
		"--check-time-limit", "1ns", "--parallel", "1", "--quiet", "--checker", "porcupine")
	assert.Equal(t, exitFailure, res.code, res.stdout+res.stderr)
	assert.Contains(t, res.stdout, "FAIL seed 1: unknown:linearizability/register")
}
