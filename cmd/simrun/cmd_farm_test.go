package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/internal/failurestore"
)

// farmBugFlags make failures come fast: ZK-3911 fails about half of these short seeds.
var farmBugFlags = []string{"--bug", "ZK-3911", "--workload", "registers", "--duration", "5s", "--parallel", "1"}

var recordedLine = regexp.MustCompile(`(?m)^recorded seed (\d+): (\S+) \[([0-9a-f]{12}), `)

// storedSeeds reads every recorded find's seed from a failure database.
func storedSeeds(t *testing.T, path string) map[uint64]bool {
	t.Helper()
	store, err := failurestore.Open(path)
	require.NoError(t, err)
	defer store.Close()
	entries, err := store.List()
	require.NoError(t, err)
	seeds := map[uint64]bool{}
	for _, e := range entries {
		found, err := store.Occurrences(e.Signature)
		require.NoError(t, err)
		require.Len(t, found, int(e.Count), "a signature's count is its number of finds")
		for _, seed := range found {
			seeds[seed] = true
		}
	}
	return seeds
}

func TestAFarmKilledWithSIGKILLKeepsEveryFailureItPrinted(t *testing.T) {
	binary := simrunBinary(t)
	db := filepath.Join(t.TempDir(), "failures.db")
	farm := exec.Command(binary, append([]string{"farm", "--db", db, "--time-limit", "5m", "--shrink-time", "300ms"}, farmBugFlags...)...)
	stdout, err := farm.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, farm.Start())
	killed := false
	defer func() {
		if !killed {
			_ = farm.Process.Kill()
			_ = farm.Wait()
		}
	}()

	// Read the farm's lines as it prints them, and kill it without warning after a few failures.
	const wanted = 6
	printed := map[uint64]bool{}
	lines := bufio.NewScanner(stdout)
	for len(printed) < wanted && lines.Scan() {
		if match := recordedLine.FindStringSubmatch(lines.Text()); match != nil {
			seed, err := strconv.ParseUint(match[1], 10, 64)
			require.NoError(t, err)
			printed[seed] = true
		}
	}
	require.Len(t, printed, wanted, "the farm printed failures before it was killed")
	require.NoError(t, farm.Process.Signal(syscall.SIGKILL))
	killed = true
	err = farm.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	status, ok := exit.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	require.Equal(t, syscall.SIGKILL, status.Signal(), "the farm died of SIGKILL, not of its own accord")

	stored := storedSeeds(t, db)
	for seed := range printed {
		assert.True(t, stored[seed], "seed %d was printed as recorded, so it must be in the database", seed)
	}
	t.Logf("printed %d failures, %d in the database after SIGKILL", len(printed), len(stored))

	// The killed farm's database is usable: a new farm continues with fresh seeds.
	again := runCLI(t, "", append([]string{"farm", "--db", db, "--time-limit", "200ms", "--shrink-time", "0"}, farmBugFlags...)...)
	require.NotEqual(t, exitUsage, again.code, again.stderr)
	var highest uint64
	for seed := range stored {
		highest = max(highest, seed)
	}
	match := regexp.MustCompile(`farm: \d+ seeds from (\d+) `).FindStringSubmatch(again.stdout)
	require.NotNil(t, match, again.stdout)
	start, err := strconv.ParseUint(match[1], 10, 64)
	require.NoError(t, err)
	assert.Greater(t, start, uint64(1), "the new farm does not start over at seed 1")
}

func TestAnInterruptedFarmStopsCleanlyWithItsSummary(t *testing.T) {
	binary := simrunBinary(t)
	db := filepath.Join(t.TempDir(), "failures.db")
	farm := exec.Command(binary, append([]string{"farm", "--db", db, "--time-limit", "5m", "--shrink-time", "0"}, farmBugFlags...)...)
	stdout, err := farm.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, farm.Start())
	lines := bufio.NewScanner(stdout)
	var output strings.Builder
	for lines.Scan() {
		output.WriteString(lines.Text() + "\n")
		if recordedLine.MatchString(lines.Text()) {
			break
		}
	}
	require.NoError(t, farm.Process.Signal(os.Interrupt))
	for lines.Scan() {
		output.WriteString(lines.Text() + "\n")
	}
	err = farm.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, output.String())
	assert.Equal(t, exitFailure, exit.ExitCode(), "it found failures and says so:\n%s", output.String())
	assert.Regexp(t, `farm: \d+ seeds from 1 in `, output.String(), "the summary is printed")
	assert.Contains(t, output.String(), "FAIL: ")
	assert.NotEmpty(t, storedSeeds(t, db))
}

func TestFarmCountsEachBugOnceWithItsSmallestScriptAndFailuresExportsIt(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "failures.db")
	// A seed count, not a time, bounds the farm, so that what it finds does not depend on the
	// machine's speed: seeds 100..111 with ZK-3911.
	farm := runCLI(t, "", append([]string{"farm", "--db", db, "--seeds", "12", "--time-limit", "10m", "--shrink-time", "1s",
		"--seed-start", "100"}, farmBugFlags...)...)
	require.Equal(t, exitFailure, farm.code, "stdout:\n%s\nstderr:\n%s", farm.stdout, farm.stderr)
	printed := recordedLine.FindAllStringSubmatch(farm.stdout, -1)
	require.GreaterOrEqual(t, len(printed), 2, farm.stdout)
	assert.Regexp(t, `farm: 12 seeds from 100 in `, farm.stdout)
	assert.Contains(t, farm.stdout, "FAIL: ")

	listed := runCLI(t, "", "failures", "--db", db, "--json", "--export", filepath.Join(dir, "scripts"))
	require.Equal(t, exitPass, listed.code, listed.stderr)
	var records []failureJSON
	var finds int64
	ids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(listed.stdout), "\n") {
		var record failureJSON
		require.NoError(t, json.Unmarshal([]byte(line), &record))
		records = append(records, record)
		finds += record.Count
		ids[record.ID] = true
		assert.Equal(t, failurestore.Signature(record.Class, record.Invariant, record.Shape), record.Signature)
		assert.Equal(t, "ProcessConsistency", record.Invariant)
		assert.Contains(t, record.Flags, "--bug ZK-3911")
	}
	assert.Equal(t, int64(len(printed)), finds, "every printed failure is one find, and none is lost or counted twice")
	assert.Less(t, len(records), len(printed), "finds of one bug share a signature")
	for _, match := range printed {
		assert.True(t, ids[match[3]], "the printed signature ID %s is listed", match[3])
	}

	// The exported smallest script replays the failure.
	smallest := records[0]
	require.NotEmpty(t, smallest.Exported)
	script, err := os.ReadFile(smallest.Exported)
	require.NoError(t, err)
	assert.Contains(t, string(script), "# Replay: "+smallest.ScriptReplay)
	replay := runCLI(t, "", strings.Fields(smallest.ScriptReplay)[1:]...)
	assert.Equal(t, exitFailure, replay.code, replay.stderr)
	assert.Contains(t, replay.stdout, "FAIL "+smallest.Class+"\n")

	text := runCLI(t, "", "failures", "--db", db, "--id", smallest.ID)
	require.Equal(t, exitPass, text.code, text.stderr)
	assert.Contains(t, text.stdout, smallest.ID)
	assert.Contains(t, text.stdout, "replay: "+smallest.Replay)
	assert.Contains(t, text.stdout, "1 signatures, ")
}

func TestFarmAndFailuresRefuseBadUse(t *testing.T) {
	dir := t.TempDir()
	notADatabase := writeTempFile(t, "notes.txt", strings.Repeat("not a database at all. ", 20))
	empty := filepath.Join(dir, "empty.db")
	store, err := failurestore.Open(empty)
	require.NoError(t, err)
	require.NoError(t, store.Close())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"farm", "--time-limit", "1s"}, "--db FILE is required"},
		{[]string{"farm", "--db", filepath.Join(dir, "a.db")}, "--time-limit or --seeds is required"},
		{[]string{"farm", "--db", filepath.Join(dir, "a.db"), "--seeds", "-4"}, "--seeds must be 0 (none) to"},
		{[]string{"farm", "--db", filepath.Join(dir, "a.db"), "--time-limit", "1s", "--script", notADatabase}, "--script cannot be used with farm"},
		{[]string{"farm", "--db", filepath.Join(dir, "a.db"), "--time-limit", "1s", "--shrink-runs", "0"}, "--shrink-runs must be"},
		{[]string{"farm", "--db", notADatabase, "--time-limit", "1s"}, "not a readable SQLite database"},
		{[]string{"farm", "--db", filepath.Join(dir, "no", "such", "dir.db"), "--time-limit", "1s"}, "simrun farm: "},
		{[]string{"failures"}, "--db FILE is required"},
		{[]string{"failures", "--db", filepath.Join(dir, "absent.db")}, "no failure database"},
		{[]string{"failures", "--db", notADatabase}, "not a readable SQLite database"},
		{[]string{"failures", "--db", empty, "--id", "000000000000"}, `no signature with ID "000000000000"`},
	} {
		r := runCLI(t, "", c.args...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", c.args, r.stdout)
		assert.Contains(t, r.stderr, c.want, "%v", c.args)
	}
	r := runCLI(t, "", "failures", "--db", empty)
	assert.Equal(t, exitPass, r.code, r.stderr)
	assert.Contains(t, r.stdout, "no failures recorded in ")
}

func TestStoredFlagsReadBackWhatShellQuoteWrote(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		words := rapid.SliceOfN(rapid.StringMatching(`[a-z0-9 '"\\.,/-]{0,12}`), 0, 6).Draw(t, "words")
		quoted := make([]string, len(words))
		for i, word := range words {
			quoted[i] = shellQuote(word)
		}
		split, err := splitShellWords(strings.Join(quoted, " "))
		require.NoError(t, err)
		if len(words) == 0 {
			assert.Empty(t, split)
			return
		}
		assert.Equal(t, words, split)
	})
}

func TestAFarmShrinksASignatureOnlyUntilItsScriptHasOneAction(t *testing.T) {
	fm := &farm{smallest: map[string]int{"known": 3, "minimal": 1}}
	assert.True(t, fm.worthShrinking("new"), "the first find of a signature is shrunk")
	assert.True(t, fm.worthShrinking("known"), "a smaller script than 3 actions may exist")
	assert.False(t, fm.worthShrinking("minimal"), "no script is smaller than one action")
	fm.noteSmallest("known", 5)
	assert.True(t, fm.worthShrinking("known"), "a larger find does not raise the smallest")
	fm.noteSmallest("known", 1)
	assert.False(t, fm.worthShrinking("known"))
}

func TestFailureInvariantMasksWhatDiffersBetweenFinds(t *testing.T) {
	assert.Equal(t, "panic at zxid N in epoch N", maskNumbers("panic at zxid 0x1a2 in epoch 17"))
	assert.Equal(t, "first", firstLine("  first\nsecond"))
}
