package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompareLocksPrintsATableWithReplays(t *testing.T) {
	res := runCLI(t, "", "compare-locks", "--seeds", "2", "--only", "redis-single", "--families", "pause", "--parallel", "1", "--verbose")
	require.Equal(t, exitPass, res.code, res.stderr)
	assert.Contains(t, res.stdout, "implementation  fencing  pause")
	lines := strings.Split(res.stdout, "\n")
	var rows []string
	for _, l := range lines {
		if strings.HasPrefix(l, "redis-single") {
			rows = append(rows, l)
		}
	}
	require.Len(t, rows, 2, "one row with fencing and one without: %s", res.stdout)
	assert.Contains(t, rows[0], " on ")
	assert.Contains(t, rows[0], "/2")
	assert.NotContains(t, res.stdout, "curator-mutex", "only the implementation asked for")
	// Seed 1 of the pause family without fencing has a paused holder act on its expired lease
	// (compare-locks --seeds 30 shows it); the replay command names the seed and the switch.
	assert.Contains(t, res.stdout, "replay: simrun replay --seed 1 --workload redis-lock --faults pause --bug lock-no-fencing")
	assert.Contains(t, res.stdout, "stale-holder")

	// The replay command is the very run the cell counted.
	replay := runCLI(t, "", "replay", "--seed", "1", "--workload", "redis-lock", "--faults", "pause", "--bug", "lock-no-fencing")
	assert.Equal(t, exitFailure, replay.code)
	assert.Contains(t, replay.stdout, "FAIL lock/unsafe-without-fencing")
}

func TestCompareLocksRefusesUnknownNames(t *testing.T) {
	for _, args := range [][]string{
		{"compare-locks", "--only", "etcd"},
		{"compare-locks", "--families", "meteor"},
		{"compare-locks", "--seeds", "0"},
	} {
		res := runCLI(t, "", args...)
		assert.Equal(t, exitUsage, res.code, "%v", args)
		assert.NotEmpty(t, res.stderr)
	}
}
