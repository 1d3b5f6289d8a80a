package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/scenarios"
)

// huntLines parses hunt --json output into its bug records and its summary.
func huntLines(t *testing.T, stdout string) ([]huntRecord, huntSummary) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.NotEmpty(t, lines)
	var records []huntRecord
	for _, line := range lines[:len(lines)-1] {
		var record huntRecord
		require.NoError(t, json.Unmarshal([]byte(line), &record), line)
		require.Equal(t, "bug", record.Type, line)
		records = append(records, record)
	}
	var summary huntSummary
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &summary))
	require.Equal(t, "summary", summary.Type)
	return records, summary
}

// TestHuntFindsARealBugAndItsReplayFailsAlike hunts one server bug over a few short seeds: the
// find passes without the bug, and its replay command fails with the class the hunt reported.
func TestHuntFindsARealBugAndItsReplayFailsAlike(t *testing.T) {
	r := runCLI(t, "", "hunt", "--only", "ZK-3911", "--seeds", "20", "--duration", "10s", "--parallel", "2", "--json")
	require.Equal(t, exitPass, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	records, summary := huntLines(t, r.stdout)
	require.Len(t, records, 1)
	found := records[0]
	assert.Equal(t, "ZK-3911", found.Bug)
	assert.Equal(t, "server", found.Kind)
	assert.Equal(t, "mixed", found.Workload, "a server bug is hunted with the drawn workloads")
	require.True(t, found.Found, "ZK-3911 is found within 20 seeds")
	assert.Equal(t, int64(found.Seed), found.SeedsRun, "the seeds run up to the find, from seed 1")
	assert.NotEmpty(t, found.Class)
	assert.Positive(t, found.WallSeconds)
	assert.Equal(t, 1, summary.Bugs)
	assert.Equal(t, 1, summary.Found)

	without := runCLI(t, "", strings.Fields(strings.Replace(found.Replay, " --bug ZK-3911", "", 1))[1:]...)
	assert.Equal(t, exitPass, without.code, "the seed passes without the bug: %s", without.stdout[max(0, len(without.stdout)-1000):])
	replay := runCLI(t, "", strings.Fields(found.Replay)[1:]...)
	assert.Equal(t, exitFailure, replay.code, replay.stderr)
	assert.Contains(t, replay.stdout, "FAIL "+found.Class+"\n", "the replay command fails as the hunt said")
}

// TestHuntDoesNotCountASeedThatFailsWithoutTheBug: seed 2 fails with or without the switch, seed 4
// only with it. The hunt reports seed 2 as not counted and the find at seed 4; the table says so.
func TestHuntDoesNotCountASeedThatFailsWithoutTheBug(t *testing.T) {
	run := failOnlyWhen(func(opts scenarios.Options) bool {
		return opts.Seed == 2 || (opts.Seed == 4 && !opts.RecipeBugs.Empty())
	})
	flags := []string{"hunt", "--only", "lock-herd", "--seeds", "6", "--duration", "2s", "--parallel", "2"}
	r := runCLIWith(t, run, "", append(flags, "--json")...)
	require.Equal(t, exitPass, r.code, r.stderr)
	records, summary := huntLines(t, r.stdout)
	require.Len(t, records, 1)
	record := records[0]
	assert.Equal(t, "lock", record.Workload, "a recipe bug is hunted on the workload that exercises it")
	assert.True(t, record.Found)
	assert.Equal(t, uint64(4), record.Seed)
	assert.Equal(t, int64(4), record.SeedsRun)
	assert.Equal(t, "panic", record.Class)
	assert.Equal(t, 1, record.NotCounted)
	assert.Equal(t, []notCounted{{Seed: 2, Class: "panic", WithoutClass: "panic"}}, record.NotCountedSeeds)
	assert.Equal(t, 1, summary.NotCounted)
	assert.Equal(t, "simrun replay --seed 4 --workload lock --duration 2s --bug lock-herd", record.Replay)

	table := runCLIWith(t, run, "", flags...)
	require.Equal(t, exitPass, table.code, table.stderr)
	assert.Regexp(t, `(?m)^lock-herd\s+recipe\s+lock\s+4\s+4\s+\S+\s+panic\s+passes \(1 failing seeds not counted\)$`, table.stdout)
	assert.Contains(t, table.stdout, "lock-herd: seed 2 failed with panic but also fails without the bug (panic): not counted")
	assert.Contains(t, table.stdout, "found 1 of 1 bugs")
}

// TestHuntExitsOneWhenABugIsNotFound: a bug whose every failing seed fails without it too is not
// found, and the hunt says so and exits 1.
func TestHuntExitsOneWhenABugIsNotFound(t *testing.T) {
	run := failOnlyWhen(func(opts scenarios.Options) bool { return opts.Seed == 3 })
	r := runCLIWith(t, run, "", "hunt", "--only", "ZK-4646,rwlock-writer-skips-readers", "--seeds", "4", "--duration", "2s")
	assert.Equal(t, exitFailure, r.code, r.stderr)
	assert.Regexp(t, `(?m)^ZK-4646\s+server\s+mixed\s+-\s+4\s+\S+\s+not found\s+- \(1 failing seeds not counted\)$`, r.stdout)
	assert.Regexp(t, `(?m)^rwlock-writer-skips-readers\s+recipe\s+rwlock\s+-\s+4\s+`, r.stdout)
	assert.Contains(t, r.stdout, "found 0 of 2 bugs")
}
