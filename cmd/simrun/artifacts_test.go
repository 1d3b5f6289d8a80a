package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/scenarios"
)

// failLinearizability runs the real scenario, with whatever hooks the options carry, and then turns
// its verdict into a failed linearizability check, so that the artifacts of such a failure can be
// tested without depending on a bug that the other checkers do not catch first.
func failLinearizability(opts scenarios.Options) (*scenarios.Report, error) {
	report, err := scenarios.Run(opts)
	if err != nil {
		return nil, err
	}
	report.Checks.Results = append([]checkers.Result{{Checker: checkers.CheckerRegister, Status: checkers.Violation,
		Summary: "made to fail by the test"}}, report.Checks.Results...)
	return report, nil
}

func TestOutWritesPorcupineVisualizationsForALinearizabilityFailure(t *testing.T) {
	dir := t.TempDir()
	r := runCLIWith(t, failLinearizability, "", "run", "--seed", "2", "--duration", "5s", "--faults", "none",
		"--workload", "registers", "--out", dir)
	require.Equal(t, exitFailure, r.code, r.stderr)
	assert.Contains(t, r.stdout, "FAIL seed 2: "+checkers.CheckerRegister)
	assert.NotContains(t, r.stderr, "DETERMINISM BUG", "asking for the visualization does not change the run")

	seedDir := filepath.Join(dir, "seed-2")
	html, err := os.ReadFile(filepath.Join(seedDir, "porcupine-register-root.html"))
	require.NoError(t, err, "the registers workload checks the register model on /")
	assert.Contains(t, strings.ToLower(string(html[:min(len(html), 200)])), "<!doctype html", "a self-contained HTML page")
	assert.Greater(t, len(html), 1000)
	explanation, err := os.ReadFile(filepath.Join(seedDir, "explanation.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(explanation), "porcupine visualizations (open in a browser): porcupine-register-root.html")
	for _, name := range []string{"trace.txt", "script.txt"} {
		_, err := os.Stat(filepath.Join(seedDir, name))
		assert.NoError(t, err, name)
	}
}

func TestOutWritesNoVisualizationForOtherFailures(t *testing.T) {
	sweep, err := failingSweep()
	require.NoError(t, err)
	match := failLine.FindStringSubmatch(sweep.stdout)
	require.NotNil(t, match)
	require.False(t, linearizabilityClass(match[2]), "the shared failing seed fails another checker: %s", match[2])
	dir := t.TempDir()
	r := runCLI(t, "", "run", "--seed", match[1], "--bug", "ZK-3911", "--duration", "10s", "--workload", "registers", "--out", dir)
	require.Equal(t, exitFailure, r.code, r.stderr)
	visualizations, err := filepath.Glob(filepath.Join(dir, "seed-"+match[1], "porcupine-*.html"))
	require.NoError(t, err)
	assert.Empty(t, visualizations)
}

func TestVisualizationFileNames(t *testing.T) {
	set := &visualizationSet{}
	set.writer(checkers.RegisterModel, "/")
	set.writer(checkers.TreeModel, "/multi/tree")
	set.writer(checkers.QueueModel, "/q")
	set.writer(checkers.QueueModel, "/q")
	set.writer(checkers.ModelKind(99), "/weird name")
	names, err := set.save(t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, []string{"porcupine-register-root.html", "porcupine-tree-multi-tree.html", "porcupine-queue-q.html",
		"porcupine-queue-q-2.html", "porcupine-model99-weird_name.html"}, names)

	assert.True(t, linearizabilityClass("linearizability/register"))
	assert.True(t, linearizabilityClass("unknown:linearizability/tree"))
	assert.True(t, linearizabilityClass(outsidePrefix+"linearizability/queue"))
	assert.False(t, linearizabilityClass("zab:ProcessConsistency"))
	assert.False(t, linearizabilityClass("sequential-consistency"))
}
