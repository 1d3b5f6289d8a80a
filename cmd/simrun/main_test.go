package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/zabmodel"
)

// cliResult is what one in-process invocation of simrun produced.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs simrun in-process with the given stdin and arguments.
func runCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	return runCLIWith(t, nil, stdin, args...)
}

// runCLIWith runs simrun with a replacement for scenarios.Run (nil keeps the real one).
func runCLIWith(t *testing.T, run runFunc, stdin string, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &environment{stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr, run: run}
	code := runMain(env, args)
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func TestHelpForEveryCommand(t *testing.T) {
	main := runCLI(t, "", "help")
	require.Equal(t, exitPass, main.code, main.stderr)
	for _, c := range commands() {
		assert.Contains(t, main.stdout, "  "+c.name+" ", "the main help lists %s", c.name)
		help := runCLI(t, "", "help", c.name)
		assert.Equal(t, exitPass, help.code, c.name)
		assert.Contains(t, help.stdout, "Usage: simrun "+c.name, c.name)
		assert.Contains(t, help.stdout, "simrun "+c.name, c.name)
		if c.name != "help" {
			assert.Contains(t, help.stdout, "Example", "%s has examples", c.name)
			dash := runCLI(t, "", c.name, "-h")
			assert.Equal(t, exitPass, dash.code, c.name)
			assert.Equal(t, help.stdout, dash.stdout, "'simrun %s -h' and 'simrun help %s' agree", c.name, c.name)
		}
	}
	assert.Equal(t, exitPass, runCLI(t, "", "--help").code)
	assert.Contains(t, runCLI(t, "", "help", "run").stdout, "--shard", "flags are listed")
}

func TestUsageErrorsExitTwoWithAClearMessage(t *testing.T) {
	badScript := writeTempFile(t, "bad.script", "servers 3\nat 5s explode zk1\n")
	noServers := writeTempFile(t, "none.script", "clients 2\n")
	goodScript := writeTempFile(t, "good.script", "servers 3\nclients 2\nduration 5s\nat 1s crash leader\n")
	cases := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"no command", "", nil, "Usage: simrun COMMAND"},
		{"unknown command", "", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", "", []string{"run", "--frobnicate"}, "flag provided but not defined: -frobnicate"},
		{"positional argument", "", []string{"run", "17"}, `unexpected argument "17"`},
		{"shard without slash", "", []string{"run", "--shard", "3"}, "a shard is i/n"},
		{"shard index too large", "", []string{"run", "--shard", "4/4"}, "shard index i must be 0 to 3"},
		{"shard count zero", "", []string{"run", "--shard", "0/0"}, "shard count n must be"},
		{"negative shard", "", []string{"run", "--shard", "-1/4"}, "shard index i must be"},
		{"shard not numbers", "", []string{"run", "--shard", "a/b"}, "two integers"},
		{"negative seed", "", []string{"run", "--seed", "-3"}, "a seed is an unsigned 64-bit integer"},
		{"seed not a number", "", []string{"replay", "--seed", "seventeen"}, "a seed is an unsigned 64-bit integer"},
		{"seed too large", "", []string{"script", "--seed", "18446744073709551616"}, "a seed is an unsigned 64-bit integer"},
		{"seed with seeds", "", []string{"run", "--seed", "3", "--seeds", "4"}, "cannot be combined"},
		{"zero seeds", "", []string{"run", "--seeds", "0"}, "--seeds must be"},
		{"range overflows", "", []string{"run", "--seed-start", "18446744073709551615", "--seeds", "2"}, "past the largest seed"},
		{"unknown bug", "", []string{"run", "--bug", "ZK-1"}, `unknown bug "ZK-1"`},
		{"unknown bug in a list", "", []string{"replay", "--seed", "1", "--bug", "ZK-3911,nope"}, `unknown bug "nope"`},
		{"unknown self-test", "", []string{"run", "--selftest", "nope"}, `latch-yields, latch-no-owner-check); 'simrun selftests' describes them`},
		{"recipe self-test off the lock workloads", "", []string{"run", "--workload", "registers", "--selftest", "latch-yields"}, `recipe self-test latch-yields acts only on the lock`},
		{"bad servers", "", []string{"run", "--servers", "8"}, "servers must be 1 to 7 (or 0 to draw), not 8"},
		{"negative servers", "", []string{"run", "--servers", "-1"}, "servers must be 1 to 7 (or 0 to draw), not -1"},
		{"bad observers", "", []string{"run", "--observers", "3"}, "observers must be 0 to 2"},
		{"bad clients", "", []string{"run", "--clients", "0"}, "--clients must be 1 to 100"},
		{"bad workload", "", []string{"run", "--workload", "nope"}, `unknown workload "nope"`},
		{"bad fault family", "", []string{"run", "--faults", "crash,meteor"}, `unknown fault family "meteor"`},
		{"empty fault list", "", []string{"run", "--faults", ""}, "an empty fault list"},
		{"empty workload", "", []string{"run", "--workload", ""}, "--workload must name a workload"},
		{"recipe bug on registers", "", []string{"run", "--bug", "lock-herd", "--workload", "registers"}, "acts only on the lock, rwlock, election workloads, never on registers"},
		{"recipe bug on explore's registers base", "", []string{"explore", "--bug", "lock-herd"}, "the base script: scenarios: invalid options: recipe bug lock-herd acts only on the lock, rwlock, election workloads, never on registers"},
		{"recipe bug on a registers script", "", []string{"replay", "--script", goodScript, "--bug", "lock-herd"}, "recipe bug lock-herd acts only on the lock, rwlock, election workloads, never on registers"},
		{"zero duration", "", []string{"run", "--duration", "0s"}, "--duration must be more than 0"},
		{"duration too long", "", []string{"run", "--liveness-bound", "2h"}, "--liveness-bound must be"},
		{"zero check time limit", "", []string{"run", "--check-time-limit", "0s"}, "--check-time-limit must be more than 0"},
		{"bad checker", "", []string{"run", "--checker", "elle"}, `unknown linearizability checker "elle"`},
		{"bad bench checker", "", []string{"bench", "--checker", ""}, `unknown linearizability checker ""`},
		{"empty checker", "", []string{"run", "--checker", ""}, `unknown linearizability checker ""`},
		{"bad parallel", "", []string{"run", "--parallel", "0"}, "--parallel must be"},
		{"negative out-max", "", []string{"run", "--out-max", "-1"}, "--out-max must not be negative"},
		{"replay without seed", "", []string{"replay"}, "--seed is required"},
		{"shrink without seed", "", []string{"shrink"}, "--seed is required"},
		{"script without seed", "", []string{"script"}, "--seed is required"},
		{"missing script file", "", []string{"replay", "--script", "/nonexistent/x.script"}, "no such file"},
		{"malformed script", "", []string{"replay", "--script", badScript}, `script line 2: unknown action "explode"`},
		{"script without servers", "", []string{"run", "--script", noServers}, `sets no "servers"`},
		{"script and servers", "", []string{"replay", "--script", goodScript, "--servers", "5"}, "--servers cannot be used with --script"},
		{"script and clients", "", []string{"run", "--script", goodScript, "--clients", "3"}, "--clients cannot be used with --script"},
		{"bad max runs", "", []string{"shrink", "--seed", "1", "--max-runs", "0"}, "--max-runs must be"},
		{"conform bad flag", "", []string{"conform", "--seed", "x"}, "a seed is an unsigned 64-bit integer"},
		{"conform malformed json", "{\"op\": \"create\", \"path\": \n", []string{"conform"}, "line 1:"},
		{"conform unknown op", "# comment\n{\"session\":\"s1\",\"op\":\"bogus\"}\n", []string{"conform"}, `line 2: unknown op "bogus"`},
		{"bench bad seeds", "", []string{"bench", "--seeds", "0"}, "--seeds must be"},
		{"hunt bad seeds", "", []string{"hunt", "--seeds", "0"}, "--seeds must be"},
		{"hunt unknown bug", "", []string{"hunt", "--only", "ZK-3911,lock-nope"}, `unknown bug "lock-nope"`},
		{"hunt bad parallel", "", []string{"hunt", "--parallel", "0"}, "--parallel must be"},
		{"hunt zero duration", "", []string{"hunt", "--duration", "0s"}, "--duration must be more than 0"},
		{"help too many", "", []string{"help", "run", "replay"}, "at most one command"},
		{"help unknown", "", []string{"help", "nope"}, `unknown command "nope"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, c.stdin, c.args...)
			assert.Equal(t, exitUsage, r.code, "args %q: stdout %s stderr %s", c.args, r.stdout, r.stderr)
			assert.Contains(t, r.stderr, c.want, "args %q", c.args)
			assert.NotContains(t, r.stderr, "internal error", "args %q", c.args)
		})
	}
}

func TestBugsListsEverySwitch(t *testing.T) {
	r := runCLI(t, "", "bugs")
	require.Equal(t, exitPass, r.code, r.stderr)
	for _, bug := range zabmodel.BugList() {
		assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(bug.Name)+`\s+server\s+`, r.stdout)
	}
	for _, bug := range lockmodel.BugList() {
		assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(bug.Name)+`\s+recipe \((lock|rwlock) workload\)\s+`, r.stdout)
	}
	assert.Equal(t, exitUsage, runCLI(t, "", "bugs", "extra").code)
}

// panickingWriter panics on every write, to see runMain survive a panic outside any run.
type panickingWriter struct{}

func (panickingWriter) Write([]byte) (int, error) { panic("the writer exploded") }

func TestAPanicInACommandIsReportedNotFatal(t *testing.T) {
	var stderr bytes.Buffer
	env := &environment{stdin: strings.NewReader(""), stdout: panickingWriter{}, stderr: &stderr}
	code := runMain(env, []string{"bugs"})
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr.String(), "internal error")
	assert.Contains(t, stderr.String(), "the writer exploded")
}

func TestAPanicWhileSettingUpARunIsAFailureWithContext(t *testing.T) {
	explode := func(scenarios.Options) (*scenarios.Report, error) { panic("kaboom") }
	r := runCLIWith(t, explode, "", "replay", "--seed", "7")
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stderr, "seed 7: panic while setting up the run: kaboom")
}

// writeTempFile writes a file in the test's temporary directory and returns its path.
func writeTempFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}
