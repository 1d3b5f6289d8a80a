package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mergeSweepFlags are a small sweep with a bug switched on, so that about half of the seeds fail
// and the merge has a failure list to get right.
var mergeSweepFlags = []string{"run", "--seeds", "24", "--seed-start", "7", "--duration", "5s", "--workload", "registers",
	"--bug", "ZK-3911", "--parallel", "1"}

// runProcess runs the built simrun and returns its exit code and output.
func runProcess(t *testing.T, binary string, env []string, args ...string) cliResult {
	t.Helper()
	command := exec.Command(binary, args...)
	command.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	command.Stdout, command.Stderr = &stdout, &stderr
	err := command.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// comparable is what must agree seed by seed between a merged sweep and a single one: everything
// but the host times.
func comparable(r seedRecord) seedRecord {
	r.WallSeconds, r.CheckerSeconds = 0, 0
	return r
}

// timingLines are the summary table's lines that measure the host, not the sweep.
var timingLines = regexp.MustCompile(`(?m)^  (seeds/s|virtual s per wall s|checker share of busy time|wall time) .*\n|, \d+ in parallel`)

func TestFourShardProcessesMergeToTheSingleProcessSweep(t *testing.T) {
	binary := simrunBinary(t)
	dir := t.TempDir()
	var files []string
	for i := range 4 {
		// Two of the shards take their index from the environment, as Kubernetes pods do.
		args := append(slices.Clone(mergeSweepFlags), "--json", "--quiet")
		var env []string
		if i%2 == 0 {
			args = append(args, "--shard", fmt.Sprintf("%d/4", i))
		} else {
			args = append(args, "--shard-from-env", "4")
			env = []string{fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i)}
		}
		shard := runProcess(t, binary, env, args...)
		require.NotEqual(t, exitUsage, shard.code, shard.stderr)
		files = append(files, filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i)))
		require.NoError(t, os.WriteFile(files[i], []byte(shard.stdout), 0o644))
	}
	singleJSON := runProcess(t, binary, nil, append(slices.Clone(mergeSweepFlags), "--json", "--quiet")...)
	singleText := runProcess(t, binary, nil, mergeSweepFlags...)

	// The shards are given out of order: the merge puts the seeds back in order.
	shuffled := []string{files[2], files[0], files[3], files[1]}
	mergedJSON := runCLI(t, "", append([]string{"merge", "--json", "--quiet"}, shuffled...)...)
	mergedText := runCLI(t, "", append([]string{"merge"}, shuffled...)...)

	require.Equal(t, exitFailure, singleJSON.code, "the bug makes some seed fail:\n%s", singleText.stdout)
	assert.Equal(t, singleJSON.code, mergedJSON.code, mergedJSON.stderr)
	assert.Equal(t, singleText.code, mergedText.code, mergedText.stderr)

	singleSeeds, singleSummary := seedLines(t, singleJSON.stdout)
	mergedSeeds, mergedSummary := seedLines(t, mergedJSON.stdout)
	require.Len(t, singleSeeds, 24)
	require.Len(t, mergedSeeds, len(singleSeeds))
	for i := range singleSeeds {
		assert.Equal(t, comparable(singleSeeds[i]), comparable(mergedSeeds[i]), "seed %d", singleSeeds[i].Seed)
	}
	assert.Equal(t, singleSummary.SeedsRun, mergedSummary.SeedsRun)
	assert.Equal(t, singleSummary.Passed, mergedSummary.Passed)
	assert.Equal(t, singleSummary.Failed, mergedSummary.Failed)
	assert.Positive(t, mergedSummary.Failed)
	assert.Equal(t, singleSummary.Failures, mergedSummary.Failures)
	assert.Equal(t, singleSummary.Events, mergedSummary.Events)
	assert.InDelta(t, singleSummary.VirtualSeconds, mergedSummary.VirtualSeconds, 1e-6)
	assert.Equal(t, singleSummary.Flags, mergedSummary.Flags)
	assert.Equal(t, singleSummary.Build, mergedSummary.Build)
	assert.Equal(t, "0/1", mergedSummary.Shard)
	assert.False(t, mergedSummary.StoppedEarly)

	// The human output is the single sweep's, but for the host's timings.
	assert.Equal(t, timingLines.ReplaceAllString(singleText.stdout, ""), timingLines.ReplaceAllString(mergedText.stdout, ""))
	assert.Contains(t, mergedText.stdout, "FAIL seed ")
	assert.Contains(t, mergedText.stdout, "summary: seeds 7..30, shard 0/1, 4 in parallel")
}

// shardOutputs runs a small passing sweep in n shards in-process and returns their --json outputs.
func shardOutputs(t *testing.T, n int, extra ...string) []string {
	t.Helper()
	var outputs []string
	for i := range n {
		r := runCLI(t, "", append(append([]string{"run"}, args("--seeds", "6", "--faults", "none", "--duration", "2s",
			"--json", "--quiet", "--shard", fmt.Sprintf("%d/%d", i, n))...), extra...)...)
		require.Equal(t, exitPass, r.code, r.stderr)
		outputs = append(outputs, r.stdout)
	}
	return outputs
}

func TestMergeReadsConcatenatedShardsFromStandardInput(t *testing.T) {
	outputs := shardOutputs(t, 3)
	r := runCLI(t, outputs[1]+outputs[0]+"\n"+outputs[2], "merge")
	require.Equal(t, exitPass, r.code, r.stderr)
	assert.True(t, strings.HasSuffix(r.stdout, "PASS: all 6 seeds passed\n"), r.stdout)
	assert.Contains(t, r.stdout, "summary: seeds 1..6, shard 0/1, 6 in parallel")
}

func TestMergeRefusesShardsThatDoNotMakeOneSweep(t *testing.T) {
	outputs := shardOutputs(t, 2)
	other := shardOutputs(t, 2, "--clients", "3")
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}
	zero, one := write("zero.jsonl", outputs[0]), write("one.jsonl", outputs[1])
	seedLinesOf := func(output string) []string { return strings.SplitAfter(strings.TrimSpace(output), "\n") }
	lines := seedLinesOf(outputs[1])
	require.Len(t, lines, 4, "three seed lines and the summary")
	otherBuild := strings.Replace(outputs[1], `"version":"`, `"version":"v9.9.9`, 1)
	require.NotEqual(t, otherBuild, outputs[1], "the summary names the build")
	countMismatch := strings.Replace(outputs[1], `"seeds_run":3`, `"seeds_run":4`, 1)
	wrongShard := strings.Replace(outputs[1], `"seed":2,`, `"seed":3,`, 1)

	cases := []struct {
		name  string
		stdin string
		files []string
		want  string
	}{
		{"missing file", "", []string{zero, filepath.Join(dir, "absent.jsonl")}, "absent.jsonl: no such file"},
		{"empty input", "", nil, "no shard in -"},
		{"not JSON", "", []string{zero, write("text.jsonl", "summary: seeds 1..6\n")}, "text.jsonl:1: not a JSON line"},
		{"another type", "", []string{zero, write("type.jsonl", `{"type":"hunt"}`+"\n")}, `type.jsonl:1: a line of type "hunt"`},
		{"killed shard", "", []string{zero, write("killed.jsonl", lines[0]+lines[1])}, "killed.jsonl: 2 seed lines after the last summary line"},
		{"missing shard", "", []string{zero}, "gap: shard 1/2 is missing, so the seeds 2, 4, ..."},
		{"duplicate shard", "", []string{zero, one, write("again.jsonl", outputs[1])}, "overlap: shard 1/2 appears twice"},
		{"mixed builds", "", []string{zero, write("build.jsonl", otherBuild)}, "mixed builds: "},
		{"other flags", "", []string{zero, write("flags.jsonl", other[1])}, "different sweeps: "},
		{"other shard count", "", []string{zero, write("three.jsonl", shardOutputs(t, 3)[1])}, "different shard counts"},
		{"summary miscounts", "", []string{zero, write("count.jsonl", countMismatch)}, "its summary counts 4 seeds, but 3 seed lines"},
		{"seed of another shard", "", []string{zero, write("wrong.jsonl", wrongShard)}, "has seed 3, which belongs to shard 0/2"},
		{"lost seed line", "", []string{zero, write("lost.jsonl", lines[0]+lines[2]+lines[3])}, "lost.jsonl:3) has no line for seed 4, but has seed 6"},
		{"unknown flag", "", []string{"--frobnicate", zero}, "flag provided but not defined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, c.stdin, append([]string{"merge"}, c.files...)...)
			assert.Equal(t, exitUsage, r.code, "stdout:\n%s", r.stdout)
			assert.Contains(t, r.stderr, c.want)
			assert.Empty(t, r.stdout, "nothing is printed from shards that were refused")
		})
	}
}

func TestTimeLimitedShardsMergeAndSayWhatTheyCovered(t *testing.T) {
	var outputs []string
	for i := range 2 {
		r := runCLI(t, "", append([]string{"run"}, args("--faults", "none", "--duration", "2s", "--time-limit", "300ms",
			"--json", "--quiet", "--shard", fmt.Sprintf("%d/2", i))...)...)
		require.Equal(t, exitPass, r.code, r.stderr)
		_, summary := seedLines(t, r.stdout)
		require.True(t, summary.TimeLimitReached, "the limit, not the range, ended the shard")
		require.False(t, summary.StoppedEarly, "running out of time is a time-limited sweep's planned end")
		require.Equal(t, "300ms", summary.TimeLimit)
		outputs = append(outputs, r.stdout)
	}
	r := runCLI(t, outputs[0]+outputs[1], "merge", "--json")
	require.Equal(t, exitPass, r.code, r.stderr)
	seeds, summary := seedLines(t, r.stdout)
	assert.Equal(t, int64(len(seeds)), summary.SeedsRun)
	assert.Positive(t, summary.ContiguousSeeds)
	for i := range summary.ContiguousSeeds {
		assert.Equal(t, uint64(1+i), seeds[i].Seed, "every seed up to the contiguous count ran, in order")
	}
	assert.Contains(t, r.stderr, fmt.Sprintf("covered: every seed of 1..%d", summary.ContiguousSeeds))
	assert.Contains(t, r.stderr, "note: --time-limit 300ms ran out after")
}

func TestShardFromEnvironment(t *testing.T) {
	lookup := func(value string, present bool) func(string) (string, bool) {
		return func(name string) (string, bool) {
			require.Equal(t, jobCompletionIndexVariable, name)
			return value, present
		}
	}
	s, err := shardFromEnvironment(8, lookup("3", true))
	require.NoError(t, err)
	assert.Equal(t, shard{index: 3, count: 8}, s)
	for _, c := range []struct {
		count   int64
		value   string
		present bool
		want    string
	}{
		{8, "", false, "$JOB_COMPLETION_INDEX is not set"},
		{8, "three", true, `$JOB_COMPLETION_INDEX is "three", not an integer`},
		{8, "8", true, "shard index i must be 0 to 7"},
		{0, "0", true, "takes the shard count N"},
	} {
		_, err := shardFromEnvironment(c.count, lookup(c.value, c.present))
		assert.ErrorContains(t, err, c.want)
	}
}

func TestShardFromEnvAndTimeLimitRefuseBadUse(t *testing.T) {
	t.Setenv(jobCompletionIndexVariable, "5")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard-from-env", "4"}, "shard index i must be 0 to 3"},
		{[]string{"--shard-from-env", "8", "--shard", "1/8"}, "--shard-from-env and --shard both choose the shard"},
		{[]string{"--time-limit", "-1s"}, "--time-limit must be 0 (none) to"},
		{[]string{"--time-limit", "1000h"}, "--time-limit must be 0 (none) to"},
	} {
		r := runCLI(t, "", append([]string{"run"}, c.args...)...)
		assert.Equal(t, exitUsage, r.code, "%v", c.args)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
	}
}
