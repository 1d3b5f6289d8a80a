package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/zabsim/zabsim/scenarios"
)

func TestFuzzUsageErrors(t *testing.T) {
	notADir := writeTempFile(t, "file", "x")
	badCorpus := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(badCorpus, "a.script"), []byte("servers 3\n"), 0o644))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"fuzz", "--script", "x.script"}, "--script cannot be used with fuzz"},
		{[]string{"fuzz", "--fresh-percent", "0"}, "--fresh-percent must be 1 to 100"},
		{[]string{"fuzz", "--fresh-first", "-1"}, "--fresh-first must be 0 to"},
		{[]string{"fuzz", "--time-limit", "0s"}, "--time-limit 0 needs --execs"},
		{[]string{"fuzz", "--time-limit", "-1s"}, "--time-limit must be"},
		{[]string{"fuzz", "--execs", "-1"}, "--execs must be 0 or more"},
		{[]string{"fuzz", "--parallel", "0"}, "--parallel must be"},
		{[]string{"fuzz", "--out", filepath.Join(notADir, "sub")}, "--out"},
		{[]string{"fuzz", "--corpus", badCorpus}, `no "# seed N" line`},
		{[]string{"fuzz", "--bug", "ZK-1"}, `unknown bug "ZK-1"`},
		{[]string{"fuzz", "17"}, `unexpected argument "17"`},
		{[]string{"hunt", "--clients", "0"}, "--clients must be 1 to 100"},
		{[]string{"hunt", "--trials", "3"}, "--trials needs --fuzz"},
		{[]string{"hunt", "--fuzz-only"}, "--fuzz-only needs --fuzz"},
		{[]string{"hunt", "--fuzz", "--trials", "0"}, "--trials must be 1 to 100"},
	}
	for _, c := range cases {
		r := runCLI(t, "", c.args...)
		assert.Equal(t, exitUsage, r.code, "args %q: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.want, "args %q", c.args)
	}
}

var fuzzFailLine = regexp.MustCompile(`FAIL (\S+): run \d+, seed (\d+)`)

// TestFuzzSavesAFailureThatReplays: a campaign with a bug switch finds it, saves the input as a
// script with its seed, and simrun replay runs that script to the same failure; the corpus it
// kept is read back by the next campaign.
func TestFuzzSavesAFailureThatReplays(t *testing.T) {
	out, corpus := t.TempDir(), t.TempDir()
	// From seed 2: seeds 2 and 3 pass and join the corpus (a failing run does not), seed 4 fails.
	r := runCLI(t, "", "fuzz", "--bug", "ZK-3911", "--duration", "10s", "--clients", "3", "--execs", "40", "--parallel", "1",
		"--seed-start", "2", "--out", out, "--corpus", corpus, "--stop-on-failure")
	require.Equal(t, exitFailure, r.code, r.stdout+r.stderr)
	match := fuzzFailLine.FindStringSubmatch(r.stdout)
	require.NotNil(t, match, r.stdout)
	class, seed := match[1], match[2]
	saved, err := filepath.Glob(filepath.Join(out, "*.script"))
	require.NoError(t, err)
	require.Len(t, saved, 1, "one class, one file")
	text, err := os.ReadFile(saved[0])
	require.NoError(t, err)
	savedSeed, _, err := scenarios.ParseFuzzScript(string(text))
	require.NoError(t, err)
	assert.Equal(t, seed, strconv.FormatUint(savedSeed, 10))
	assert.Contains(t, r.stdout, "simrun replay --seed "+seed+" --script "+saved[0]+" --bug ZK-3911")

	replay := runCLI(t, "", "replay", "--seed", seed, "--script", saved[0], "--bug", "ZK-3911")
	assert.Equal(t, exitFailure, replay.code)
	assert.Contains(t, replay.stdout+replay.stderr, class)

	entries, err := filepath.Glob(filepath.Join(corpus, "*.script"))
	require.NoError(t, err)
	require.NotEmpty(t, entries, "the first runs reach new situations and join the corpus")
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(filepath.Base(e), "seed"+seed+"-"), "the failing input %s is not a corpus entry", e)
	}
	again := runCLI(t, "", "fuzz", "--duration", "10s", "--clients", "3", "--execs", strconv.Itoa(len(entries)), "--parallel", "1", "--corpus", corpus)
	require.Equal(t, exitPass, again.code, again.stdout+again.stderr)
	assert.Contains(t, again.stdout, "fuzz: "+strconv.Itoa(len(entries))+" runs")
	assert.Contains(t, again.stdout, ", 0 of them fresh seeds)", "a campaign as long as its corpus runs the corpus first")
}

func TestHuntFuzzComparesBothSearches(t *testing.T) {
	r := runCLI(t, "", "hunt", "--fuzz", "--trials", "2", "--only", "ZK-3911", "--seeds", "30", "--duration", "10s", "--clients", "3", "--parallel", "1")
	require.Equal(t, exitPass, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "SWARM RUNS")
	assert.Regexp(t, `ZK-3911 +\d+ +\S+ +\d+ +\S+ +\S+ +2/2 / 2/2 +zab:`, r.stdout, "both searches found it in both trials")
}

// TestHuntFuzzOnlyRunsTheFuzzer: --fuzz-only hunts with the fuzzer alone; the swarm's side of
// every trial is empty (no runs), and the fuzzer's finds are those of the full comparison.
func TestHuntFuzzOnlyRunsTheFuzzer(t *testing.T) {
	r := runCLI(t, "", "hunt", "--fuzz", "--fuzz-only", "--json", "--trials", "2", "--only", "ZK-3911", "--seeds", "30", "--duration", "10s", "--clients", "3", "--parallel", "1")
	require.Equal(t, exitPass, r.code, r.stdout+r.stderr)
	line, _, _ := strings.Cut(r.stdout, "\n")
	var record huntRecord
	require.NoError(t, json.Unmarshal([]byte(line), &record))
	require.NotNil(t, record.Fuzz)
	require.Len(t, record.Fuzz.Fuzz, 2)
	for _, trial := range record.Fuzz.Swarm {
		assert.Zero(t, trial.Runs, "the swarm did not run")
	}
	for _, trial := range record.Fuzz.Fuzz {
		assert.True(t, trial.Found, "the fuzzer found it")
		assert.Positive(t, trial.Runs)
	}
}

// TestFuzzWorkflowExample: the CI example parses as YAML, runs a bounded simrun fuzz campaign from
// a copy of the committed corpus, and keeps the failures; every flag it passes is one fuzz takes.
func TestFuzzWorkflowExample(t *testing.T) {
	text, err := os.ReadFile("../../.github/workflows/fuzz.yml")
	require.NoError(t, err)
	var workflow struct {
		On   map[string]any `yaml:"on"`
		Jobs map[string]struct {
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	require.NoError(t, yaml.Unmarshal(text, &workflow))
	require.Contains(t, workflow.On, "pull_request")
	job, ok := workflow.Jobs["fuzz"]
	require.True(t, ok)
	var command string
	for _, step := range job.Steps {
		if strings.Contains(step.Run, "simrun fuzz") {
			command = step.Run
		}
	}
	require.NotEmpty(t, command, "a step runs simrun fuzz")
	assert.Contains(t, command, "scenarios/testdata/fuzzcorpus/")
	fields := strings.Fields(strings.ReplaceAll(command[strings.Index(command, "simrun fuzz")+len("simrun fuzz"):], "\\\n", " "))
	fs, _ := newFuzzFlags()
	for _, field := range fields {
		if name, ok := strings.CutPrefix(field, "--"); ok {
			assert.NotNil(t, fs.Lookup(name), "simrun fuzz takes --%s", name)
		}
	}
	for _, name := range []string{"--time-limit", "--corpus", "--out"} {
		assert.Contains(t, fields, name)
	}
}
