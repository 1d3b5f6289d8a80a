package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/scenarios"
)

// exploreJSON is the explore command's JSON object, as a consumer reads it.
type exploreJSON struct {
	Type         string   `json:"type"`
	Seed         uint64   `json:"seed"`
	BaseScript   string   `json:"base_script"`
	BaseFile     string   `json:"base_file"`
	Bugs         string   `json:"bugs"`
	Points       []string `json:"points"`
	RestartAfter string   `json:"restart_after"`
	BaseFailure  string   `json:"base_failure"`
	HitsByPoint  []struct {
		Point string `json:"point"`
		Hits  int    `json:"hits"`
	} `json:"hits_by_point"`
	Hits       int            `json:"hits"`
	Candidates int            `json:"candidates"`
	Explored   int            `json:"explored"`
	Exhaustive bool           `json:"exhaustive"`
	Stride     float64        `json:"stride"`
	Passed     bool           `json:"passed"`
	Failed     int            `json:"failed"`
	Misplaced  int            `json:"misplaced"`
	Classes    map[string]int `json:"failures_by_class"`
	Failures   []struct {
		Sid        int64   `json:"sid"`
		Point      string  `json:"point"`
		Occurrence int     `json:"occurrence"`
		AtSeconds  float64 `json:"at_seconds"`
		Seed       uint64  `json:"seed"`
		Class      string  `json:"class"`
		Headline   string  `json:"headline"`
		Action     string  `json:"action"`
		Script     string  `json:"script"`
		Replay     string  `json:"replay"`
		Artifacts  string  `json:"artifacts"`
	} `json:"failures"`
	WallSeconds float64  `json:"wall_seconds"`
	Flags       []string `json:"flags"`
}

func decodeExplore(t *testing.T, stdout string) exploreJSON {
	t.Helper()
	var record exploreJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &record), stdout)
	require.Equal(t, 1, strings.Count(strings.TrimSpace(stdout), "\n")+1, "--json prints one object on one line")
	return record
}

func TestExplorePassesWithoutABugAndPrintsJSON(t *testing.T) {
	r := runCLI(t, "", "explore", "--points", "epoch-file-renamed:currentEpoch", "--parallel", "2", "--json")
	require.Equal(t, exitPass, r.code, r.stderr+r.stdout)
	record := decodeExplore(t, r.stdout)
	assert.Equal(t, "explore", record.Type)
	assert.Equal(t, uint64(1), record.Seed)
	assert.Equal(t, "none", record.Bugs)
	assert.Equal(t, []string{"epoch-file-renamed:currentEpoch"}, record.Points)
	assert.Equal(t, "2s", record.RestartAfter)
	assert.True(t, record.Passed)
	assert.True(t, record.Exhaustive)
	assert.Positive(t, record.Explored)
	assert.Equal(t, record.Candidates, record.Explored)
	assert.Equal(t, 0, record.Failed)
	assert.NotNil(t, record.Failures, "failures is an empty list, not null")
	assert.Empty(t, record.Failures)
	require.Len(t, record.HitsByPoint, len(scenarios.CrashPoints()))
	total := 0
	for i, count := range record.HitsByPoint {
		assert.Equal(t, scenarios.CrashPoints()[i], count.Point)
		if i < 6 {
			// The persistence points; some send boundaries need an observer or a lagging
			// learner, which the default base lacks.
			assert.Positive(t, count.Hits, count.Point)
		}
		total += count.Hits
		if count.Point == "epoch-file-renamed:currentEpoch" {
			assert.Equal(t, count.Hits, record.Candidates)
		}
	}
	assert.Equal(t, total, record.Hits)
	base, err := scenarios.ParseScript(strings.NewReader(record.BaseScript))
	require.NoError(t, err)
	assert.Equal(t, scenarios.DefaultExploreScript().String(), base.String(), "the built-in base")
	assert.GreaterOrEqual(t, record.WallSeconds, 0.0)
	assert.Empty(t, r.stderr)
}

// TestExploreFindsABugAndItsArtifactsReplay explores the epoch file's crash point with ZK-1653:
// some crash fails (exit 1), --out holds the base and each failing crash's script and explanation,
// and the printed replay command reproduces the failure, which the same script without the bug
// does not have.
func TestExploreFindsABugAndItsArtifactsReplay(t *testing.T) {
	out := t.TempDir()
	r := runCLI(t, "", "explore", "--bug", "ZK-1653", "--points", "epoch-file-renamed:currentEpoch", "--out", out, "--json")
	require.Equal(t, exitFailure, r.code, r.stderr+r.stdout)
	record := decodeExplore(t, r.stdout)
	assert.False(t, record.Passed)
	assert.Equal(t, "ZK-1653", record.Bugs)
	assert.Equal(t, []string{"--bug", "ZK-1653"}, record.Flags)
	require.NotEmpty(t, record.Failures)
	assert.Equal(t, len(record.Failures), record.Failed)
	assert.Equal(t, 0, record.Misplaced)
	assert.Equal(t, filepath.Join(out, "base.script"), record.BaseFile)
	saved, err := os.ReadFile(record.BaseFile)
	require.NoError(t, err)
	assert.Equal(t, record.BaseScript, string(saved))

	for _, f := range record.Failures {
		assert.Equal(t, "epoch-file-renamed:currentEpoch", f.Point)
		assert.Positive(t, record.Classes[f.Class])
		assert.True(t, strings.HasPrefix(f.Action, "at 0s crashpoint zk"), f.Action)
		assert.Contains(t, f.Action, "restart 2s")
		script, err := os.ReadFile(filepath.Join(f.Artifacts, "script.txt"))
		require.NoError(t, err)
		assert.Equal(t, f.Script, string(script))
		explanation, err := os.ReadFile(filepath.Join(f.Artifacts, "explanation.txt"))
		require.NoError(t, err)
		assert.Contains(t, string(explanation), "class: "+f.Class)
		assert.Contains(t, string(explanation), "replay: "+f.Replay)
	}

	first := record.Failures[0]
	args := strings.Fields(strings.TrimPrefix(first.Replay, "simrun "))
	require.Equal(t, []string{"replay", "--script", filepath.Join(first.Artifacts, "script.txt"), "--seed", "1", "--bug", "ZK-1653"}, args)
	replay := runCLI(t, "", args...)
	assert.Equal(t, exitFailure, replay.code, replay.stderr)
	assert.Contains(t, replay.stdout, "FAIL "+first.Class)
	fixed := runCLI(t, "", args[:5]...)
	assert.Equal(t, exitPass, fixed.code, "the same crash without the bug passes:\n%s", tail(fixed.stdout))
}

func tail(text string) string { return text[max(0, len(text)-2000):] }

func TestExploreTextNamesEachFailureAndTheVerdict(t *testing.T) {
	r := runCLI(t, "", "explore", "--bug", "ZK-1653", "--points", "epoch-file-renamed:currentEpoch")
	require.Equal(t, exitFailure, r.code, r.stderr)
	assert.Contains(t, r.stdout, "base: seed 1, 3 servers, 0 observers, 2 clients, registers, 20s, 4 actions, bugs: ZK-1653\n")
	assert.Contains(t, r.stdout, "crash point hits in the base run's fault phase:\n")
	assert.Regexp(t, `FAIL zk\d epoch-file-renamed:currentEpoch #\d+ at [0-9.]+s: convergence\n`, r.stdout)
	assert.Contains(t, r.stdout, "  crash: at 0s crashpoint zk")
	assert.Contains(t, r.stdout, "note: --out DIR saves each failing crash's script")
	assert.Contains(t, r.stdout, "coverage: exhaustive: every hit of the explored points\n")
	assert.Regexp(t, `FAIL: \d+ of \d+ explored crashes failed\n$`, r.stdout)
}

// TestExploreSaysWhenItSampled: past --max-runs, the summary says the exploration was a sample.
func TestExploreSaysWhenItSampled(t *testing.T) {
	r := runCLI(t, "", "explore", "--points", "newleader-appended", "--max-runs", "3", "--json")
	require.Equal(t, exitPass, r.code, r.stderr+r.stdout)
	record := decodeExplore(t, r.stdout)
	assert.False(t, record.Exhaustive)
	assert.Equal(t, 3, record.Explored)
	assert.Greater(t, record.Candidates, 3)
	assert.InDelta(t, float64(record.Candidates)/3, record.Stride, 1e-9)

	text := runCLI(t, "", "explore", "--points", "newleader-appended", "--max-runs", "3")
	require.Equal(t, exitPass, text.code, text.stderr)
	assert.Contains(t, text.stdout, "coverage: NOT exhaustive: an evenly spaced sample of 3 of")
	assert.Contains(t, text.stdout, "PASS: all 3 explored crashes passed (a sample, not every hit)\n")
}

// TestExploreReportsAFailingBase: a bug that fails the base by itself is said to, and is a failure.
func TestExploreReportsAFailingBase(t *testing.T) {
	out := t.TempDir()
	r := runCLI(t, "", "explore", "--bug", "ZK-4643", "--out", out)
	require.Equal(t, exitFailure, r.code, r.stderr)
	assert.Contains(t, r.stdout, "FAIL base: zab:")
	assert.Contains(t, r.stdout, "replay: simrun replay --script "+filepath.Join(out, "base.script")+" --seed 1 --bug ZK-4643\n")
	assert.Contains(t, r.stdout, "FAIL: the base run fails without any injected crash; nothing was explored")
}

// TestExploreShapesTheBuiltInBase: the shape flags change the built-in base, and the crashes that
// a shorter duration leaves out are dropped.
func TestExploreShapesTheBuiltInBase(t *testing.T) {
	r := runCLI(t, "", "explore", "--servers", "5", "--clients", "1", "--duration", "8s", "--points", "newleader-before-epoch", "--json")
	require.Equal(t, exitPass, r.code, r.stderr+r.stdout)
	record := decodeExplore(t, r.stdout)
	base, err := scenarios.ParseScript(strings.NewReader(record.BaseScript))
	require.NoError(t, err)
	assert.Equal(t, 5, base.Servers)
	assert.Equal(t, 1, base.Clients)
	assert.Equal(t, 8*clock.Second, base.Duration)
	require.Len(t, base.Actions, 2, "the crashes at 11s and 14s fall past 8s")
	assert.Equal(t, "at 7s restart all", base.Actions[1].String())
}

// TestExploreSaysWhenNothingWasExplored: a base that reaches none of the points explores nothing,
// and says so instead of claiming that every crash passed.
func TestExploreSaysWhenNothingWasExplored(t *testing.T) {
	script := writeTempFile(t, "calm.script", "servers 3\nclients 1\nduration 3s\n")
	r := runCLI(t, "", "explore", "--script", script, "--points", "newleader-before-epoch")
	require.Equal(t, exitPass, r.code, r.stderr)
	assert.Contains(t, r.stdout, "summary: 0 of 0 hits of newleader-before-epoch explored")
	assert.Contains(t, r.stdout, "PASS, VACUOUSLY: the base run reached none of the explored points, so no crash was explored\n")
}

func TestExploreRefusesBadFlags(t *testing.T) {
	script := writeTempFile(t, "base.script", "servers 3\nclients 2\nduration 5s\nat 1s crash leader\n")
	badScript := writeTempFile(t, "bad.script", "servers 3\nat 1s crashpoint zk1 nowhere\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--points", "log-appended,nowhere"}, `--points: unknown crash point "nowhere" (known: epoch-file-renamed:acceptedEpoch`},
		{[]string{"--points", ""}, `--points: unknown crash point ""`},
		{[]string{"--max-runs", "0"}, "--max-runs must be 1 to 1000000, not 0"},
		{[]string{"--restart-after", "0s"}, "--restart-after must be more than 0"},
		{[]string{"--restart-after", "soon"}, `invalid value "soon" for flag -restart-after`},
		{[]string{"--parallel", "0"}, "--parallel must be 1 to 1024, not 0"},
		{[]string{"--servers", "8"}, "--servers must be 1 to 7, not 8"},
		{[]string{"--servers", "0"}, "--servers must be 1 to 7, not 0"},
		{[]string{"--clients", "0"}, "--clients must be 1 to 100, not 0"},
		{[]string{"--workload", "mixed"}, `--workload must be one of config,`},
		{[]string{"--duration", "0s"}, "--duration must be more than 0"},
		{[]string{"--bug", "ZK-0"}, `unknown bug "ZK-0"`},
		{[]string{"--seed", "-1"}, "a seed is an unsigned 64-bit integer"},
		{[]string{"17"}, `unexpected argument "17"`},
		{[]string{"--script", script, "--servers", "5"}, "--servers cannot be used with --script: the script sets it"},
		{[]string{"--script", script, "--duration", "9s"}, "--duration cannot be used with --script"},
		{[]string{"--script", badScript}, `script line 2: unknown crash point "nowhere"`},
		{[]string{"--script", filepath.Join(t.TempDir(), "missing.script")}, "--script: open"},
		{[]string{"--out", script}, "--out: mkdir"},
	}
	for _, c := range cases {
		r := runCLI(t, "", append([]string{"explore"}, c.args...)...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
		assert.Contains(t, r.stderr, "Run 'simrun help explore' for usage.", "%v", c.args)
		assert.Empty(t, r.stdout, "%v", c.args)
	}
}
