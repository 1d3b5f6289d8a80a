package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckRejectsBadBounds(t *testing.T) {
	exists := filepath.Join(t.TempDir(), "exists.cex")
	require.NoError(t, os.WriteFile(exists, nil, 0o600))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--servers", "0"}, "servers 0: must be 1 to 9"},
		{[]string{"--servers", "3", "--crashes", "-1"}, "negative bound"},
		{[]string{"--restarts", "1"}, "1 restarts need at least as many crashes (0)"},
		{[]string{"--strategy", "dfs", "--workers", "2"}, "--strategy dfs runs on one worker"},
		{[]string{"--strategy", "sideways"}, `--strategy "sideways": want bfs or dfs`},
		{[]string{"--depth", "-3"}, "must not be negative"},
		{[]string{"--model", "raft"}, `--model "raft": want fle or zab`},
		{[]string{"--model", "zab", "--servers", "6"}, "servers 6: must be 1 to 5"},
		{[]string{"--model", "zab", "--bug", "ZK-0"}, "--bug:"},
		{[]string{"--model", "zab", "--timeouts", "1"}, "apply to --model fle only"},
		{[]string{"--bug", "ZK-3911"}, "apply to --model zab only"},
		{[]string{"--coarse"}, "apply to --model zab only"},
		{[]string{"--model", "zab", "--boundary-skips", "-1"}, "boundary skips -1: must be 0 to 255"},
		{[]string{"--zxids", "1,x,3"}, "--zxids:"},
		{[]string{"--selftest", "nope"}, `--selftest "nope"`},
		{[]string{"--model", "zab", "--selftest", "hide-timers,nope"}, "--selftest:"},
		{[]string{"--model", "zab", "--reads", "-1"}, "reads -1: must be 0 to 100"},
		{[]string{"--reads", "1"}, "apply to --model zab only"},
		{[]string{"--no-reuse"}, "apply to --model zab only"},
		{[]string{"--copy=false"}, "apply to --model zab only"},
		{[]string{"--out", exists}, "exists; give a new file"},
		{[]string{"17"}, `unexpected argument "17"`},
	}
	for _, c := range cases {
		r := runCLI(t, "", append([]string{"check"}, c.args...)...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
		assert.Empty(t, r.stdout, "%v", c.args)
	}
}

func TestCheckPassesAndCounts(t *testing.T) {
	profile := filepath.Join(t.TempDir(), "cpu.out")
	r := runCLI(t, "", "check", "--servers", "2", "--crashes", "1", "--restarts", "1", "--cpuprofile", profile)
	require.Equal(t, exitPass, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Model checking completed. No error has been found.")
	assert.Contains(t, r.stdout, "distinct states found, 0 states left on queue.")
	assert.Contains(t, r.stdout, "Bounds exhausted")
	info, err := os.Stat(profile)
	require.NoError(t, err, "--cpuprofile writes the profile")
	assert.Positive(t, info.Size())
}

// TestCheckCounterexampleReplays: the never-abandon self-test breaks liveness; check saves the
// shortest path, and replay runs it to the same violation.
func TestCheckCounterexampleReplays(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fle.cex")
	r := runCLI(t, "", "check", "--servers", "3", "--selftest", "never-abandon", "--out", out)
	require.Equal(t, exitFailure, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Error: Invariant ElectionLiveness is violated.")
	assert.Contains(t, r.stdout, "The behavior up to this point is (20 steps):")
	saved, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(saved), "violation ElectionLiveness")

	replay := runCLI(t, "", "replay", "--counterexample", out)
	assert.Equal(t, exitFailure, replay.code)
	assert.Empty(t, replay.stderr, "the replay reaches the recorded violation")
	assert.Contains(t, replay.stdout, "step 20: timer zk3 (finalize wait)")
	assert.Contains(t, replay.stdout, "Error: Invariant ElectionLiveness is violated.")

	broken := filepath.Join(t.TempDir(), "broken.cex")
	require.NoError(t, os.WriteFile(broken, []byte("model fle\nservers 3\nstep deliver zk1->zk4\n"), 0o600))
	bad := runCLI(t, "", "replay", "--counterexample", broken)
	assert.Equal(t, exitUsage, bad.code)
	assert.Contains(t, bad.stderr, `no process "zk4"`)
}

// TestCheckLockers: --lockers with a recipe bug through --bug finds the herd through the lock
// checkers, and bad lock bounds exit 2 with the reason.
func TestCheckLockers(t *testing.T) {
	r := runCLI(t, "", "check", "--model", "zab", "--coarse", "--writes", "0", "--lockers", "3", "--lock-start-by", "1", "--timers", "80", "--bug", "lock-herd")
	assert.Equal(t, exitFailure, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Error: Invariant lock/herd is violated.")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--model", "zab", "--lockers", "4"}, "lockers 4: must be 0 to 3"},
		{[]string{"--model", "zab", "--bug", "lock-herd"}, "act on lockers"},
		{[]string{"--lockers", "1"}, "apply to --model zab only"},
		{[]string{"--model", "zab", "--lockers", "1", "--lock-start-by", "-1"}, "must not be negative"},
		{[]string{"--model", "zab", "--timers", "5", "--min-timers", "6"}, "exceeds the timers bound"},
	}
	for _, c := range cases {
		r := runCLI(t, "", append([]string{"check"}, c.args...)...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
	}
}

func TestCheckMemoryBudget(t *testing.T) {
	for _, c := range []struct{ size, want string }{
		{"12x", `not "12x"`},
		{"-1GB", `not "-1GB"`},
		{"NaN", `not "NaN"`},
		{"10MB", "below 64 MiB"},
		{"9999999TB", "too large"},
	} {
		r := runCLI(t, "", "check", "--max-memory", c.size)
		assert.Equal(t, exitUsage, r.code, "%s: %s", c.size, r.stderr)
		assert.Contains(t, r.stderr, c.want, c.size)
		assert.Empty(t, r.stdout, c.size)
	}

	// Four FLE servers with no other bound reach millions of states: without a budget this
	// search runs until the machine's memory is gone. Stopped at a 64 MiB budget, it stops after
	// a live heap of 32 MiB and says why, as for any other budget.
	r := runCLI(t, "", "check", "--servers", "4", "--max-memory", "64MiB")
	require.Equal(t, exitPass, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Memory budget: 64 MiB.")
	assert.Contains(t, r.stdout, "Model checking stopped (cut by memory).")
	assert.Contains(t, r.stdout, "Budget cut the search (memory)")

	r = runCLI(t, "", "check", "--servers", "2")
	require.Equal(t, exitPass, r.code, r.stderr)
	assert.Regexp(t, `Memory budget: (none \(this machine's memory is unknown; set --max-memory\)|[0-9.]+ [KMGT]iB, half this machine's memory)`, r.stdout)
}

func TestMemoryBudgetParsesUnits(t *testing.T) {
	for text, want := range map[string]int64{
		"0": 0, "64MiB": 64 << 20, "1.5GiB": 3 << 29, "2GB": 2e9, "1 TiB": 1 << 40, "67108864": 64 << 20, "100000KB": 1e8,
	} {
		var b memoryBudget
		require.NoError(t, b.Set(text), text)
		assert.Equal(t, want, b.bytes, text)
		assert.False(t, b.auto, text)
	}
	assert.Equal(t, "1.5 GiB", formatBytes(3<<29))
	assert.Equal(t, "64 MiB", formatBytes(64<<20))
	assert.Equal(t, "512 B", formatBytes(512))
}
