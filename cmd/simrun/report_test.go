package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOutWritesAReportForEveryFailingSeedAndAnIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	r := runCLI(t, "", "run", "--seeds", "3", "--seed-start", "26", "--bug", "ZK-3911", "--parallel", "1", "--out", dir, "--out-max", "1")
	require.Equal(t, exitFailure, r.code, r.stderr)
	assert.Contains(t, r.stdout, "FAIL seed 26: zab:ProcessConsistency")
	page, err := os.ReadFile(filepath.Join(dir, "seed-26", "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), `id="timeline"`)
	assert.Contains(t, string(page), "simrun replay --seed 26 --bug ZK-3911")
	assert.Contains(t, string(page), "simrun run --seeds 3 --seed-start 26", "the report names the command that made it")
	explanation, err := os.ReadFile(filepath.Join(dir, "seed-26", "explanation.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(explanation), "build: github.com/zabsim/zabsim")
	assert.Contains(t, string(explanation), "command: simrun run --seeds 3")
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(index), "zab:ProcessConsistency")
	assert.Contains(t, string(index), `href="seed-26/report.html"`)
}

func TestOutRefusesADirectoryThatIsNotEmpty(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.html"), []byte("another sweep"), 0o644))
	r := runCLI(t, "", "run", "--seeds", "2", "--out", dir)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "is not empty")
	assert.Empty(t, r.stdout, "nothing ran")
}

func TestOutRefusesAPathThatIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	r := runCLI(t, "", "run", "--seeds", "2", "--out", file)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--out")
	assert.Empty(t, r.stdout, "nothing ran")
}

func TestReplayWritesAnHTMLReport(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seed-2.html")
	r := runCLIWith(t, failLinearizability, "", "replay", "--seed", "2", "--duration", "5s", "--faults", "none", "--workload", "registers", "--html", path)
	require.Equal(t, exitFailure, r.code, r.stderr)
	assert.Contains(t, r.stdout, "HTML report: "+path)
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(page), `href="seed-2-porcupine-register-root.html"`)
	visualization, err := os.ReadFile(filepath.Join(dir, "seed-2-porcupine-register-root.html"))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(visualization), "leads epoch"), "porcupine's page is annotated with the leaders")
}

func TestReplayChecksTheHTMLPathFirst(t *testing.T) {
	r := runCLI(t, "", "replay", "--seed", "2", "--html", filepath.Join(t.TempDir(), "missing", "x.html"))
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--html")
	assert.Empty(t, r.stdout, "no trace: nothing ran")
}

func TestVersion(t *testing.T) {
	r := runCLI(t, "", "--version")
	require.Equal(t, exitPass, r.code)
	assert.Contains(t, r.stdout, "simrun github.com/zabsim/zabsim")
}

func TestReplayOfAScriptFromAnotherBuildSaysSo(t *testing.T) {
	dir := t.TempDir()
	same := filepath.Join(dir, "same.script")
	other := filepath.Join(dir, "other.script")
	body := "servers 3\nclients 2\nduration 5s\n"
	require.NoError(t, os.WriteFile(same, []byte(buildHeaderPrefix+buildDescription()+"\n"+body), 0o644))
	require.NoError(t, os.WriteFile(other, []byte(buildHeaderPrefix+"github.com/zabsim/zabsim v0.0.1 revision 0123abc\n"+body), 0o644))

	r := runCLI(t, "", "replay", "--script", other)
	require.Equal(t, exitPass, r.code, r.stderr)
	assert.Contains(t, r.stderr, "was written by another build (github.com/zabsim/zabsim v0.0.1 revision 0123abc)")
	r = runCLI(t, "", "replay", "--script", same)
	require.Equal(t, exitPass, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "another build")
}

func TestSavedScriptsRecordTheirBuild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	r := runCLI(t, "", "run", "--seed", "26", "--bug", "ZK-3911", "--out", dir)
	require.Equal(t, exitFailure, r.code, r.stderr)
	script, err := os.ReadFile(filepath.Join(dir, "seed-26", "script.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(script), "# seed 26 fails with zab:ProcessConsistency; replay: simrun replay --seed 26 --bug ZK-3911\n")
	assert.Equal(t, buildDescription(), scriptBuild(string(script)))
	replay := runCLI(t, "", "replay", "--script", filepath.Join(dir, "seed-26", "script.txt"), "--seed", "26", "--bug", "ZK-3911")
	assert.Equal(t, exitFailure, replay.code)
	assert.Contains(t, replay.stdout, "FAIL zab:ProcessConsistency", "the saved script replays the failure")
	assert.NotContains(t, replay.stderr, "another build")
}

func TestHuntOutWritesAReportPerFindAndAnIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "zoo")
	r := runCLI(t, "", "hunt", "--only", "ZK-3911", "--seeds", "20", "--parallel", "1", "--out", dir)
	require.Equal(t, exitPass, r.code, r.stderr)
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(index), "<b>ZK-3911</b> seed 1: <a href=\"ZK-3911/seed-1/report.html\"")
	_, err = os.Stat(filepath.Join(dir, "ZK-3911", "seed-1", "report.html"))
	assert.NoError(t, err)

	again := runCLI(t, "", "hunt", "--only", "ZK-3911", "--out", dir)
	assert.Equal(t, exitUsage, again.code, "a second hunt does not mix into the first one's directory")
	assert.Contains(t, again.stderr, "is not empty")
}
