package failurestore

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var epoch = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func failure(seed uint64, invariant string, actions int) Failure {
	script := "servers 3\n"
	for range actions {
		script += "at 1s crash leader\n"
	}
	return Failure{
		Seed: seed, Build: "v1 abc", Flags: "--bug ZK-3911", Class: "zab:" + invariant, Invariant: invariant, Shape: "current-epoch at FOLLOWING", Faults: "crash",
		Script: script, ScriptSeed: seed, ScriptActions: actions, Explanation: "broke", FoundAt: epoch.Add(time.Duration(seed) * time.Second),
	}
}

func open(t *testing.T, path string) *Store {
	t.Helper()
	store, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	return store
}

func TestRepeatedFindsOfOneBugAreOneRowWithItsCountAndSmallestScript(t *testing.T) {
	store := open(t, filepath.Join(t.TempDir(), "failures.db"))
	first, err := store.Record(failure(10, "ProcessConsistency", 5))
	require.NoError(t, err)
	assert.True(t, first.New)
	assert.Equal(t, int64(1), first.Count)

	smaller, err := store.Record(failure(11, "ProcessConsistency", 2))
	require.NoError(t, err)
	assert.False(t, smaller.New)
	assert.True(t, smaller.Smaller)
	larger, err := store.Record(failure(12, "ProcessConsistency", 4))
	require.NoError(t, err)
	assert.False(t, larger.Smaller)
	repeat, err := store.Record(failure(11, "ProcessConsistency", 1))
	require.NoError(t, err)
	assert.True(t, repeat.Repeat, "the same seed, build and flags again is not a new find")
	assert.True(t, repeat.Smaller, "but its script, shrunk further, is still the smallest")
	other, err := store.Record(failure(13, "LeaderLogCompleteness", 3))
	require.NoError(t, err)
	assert.True(t, other.New, "another invariant is another signature")

	entries, err := store.List()
	require.NoError(t, err)
	require.Len(t, entries, 2)
	top := entries[0]
	assert.Equal(t, "zab:ProcessConsistency", top.Class)
	assert.Equal(t, "crash", top.Faults)
	assert.Equal(t, int64(3), top.Count, "three distinct seeds")
	assert.Equal(t, uint64(11), top.Seed, "the smallest script's seed")
	assert.Equal(t, 1, top.ScriptActions)
	assert.Equal(t, epoch.Add(10*time.Second), top.FirstSeen)
	assert.Equal(t, epoch.Add(12*time.Second), top.LastSeen)
	assert.Equal(t, ShortID(top.Signature), top.ID)
	assert.Len(t, top.ID, 12)
	assert.Equal(t, int64(1), entries[1].Count)
	seeds, err := store.Occurrences(top.Signature)
	require.NoError(t, err)
	assert.Equal(t, []uint64{10, 11, 12}, seeds)
	finds, err := store.Finds()
	require.NoError(t, err)
	assert.Equal(t, int64(4), finds)
}

func TestTheStoreSurvivesReopeningAndKnowsWhereTheFarmGot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "failures.db")
	store := open(t, path)
	next, err := store.NextSeed("--bug X")
	require.NoError(t, err)
	assert.Equal(t, uint64(1), next, "a new database starts at seed 1")
	id, err := store.StartRun("v1", "--bug X", 1, epoch)
	require.NoError(t, err)
	require.NoError(t, store.UpdateRun(id, 501, 500, epoch))
	_, err = store.Record(failure(1<<63+5, "ProcessConsistency", 1))
	require.NoError(t, err, "a seed past the largest int64 is kept")
	require.NoError(t, store.Close())

	reopened := open(t, path)
	next, err = reopened.NextSeed("--bug X")
	require.NoError(t, err)
	assert.Equal(t, uint64(501), next)
	_, err = reopened.Record(failure(900, "ProcessConsistency", 1))
	require.NoError(t, err)
	next, err = reopened.NextSeed("--bug ZK-3911")
	require.NoError(t, err)
	assert.Equal(t, uint64(901), next, "a failure recorded after the last progress counts too")
	next, err = reopened.NextSeed("--bug Y")
	require.NoError(t, err)
	assert.Equal(t, uint64(1), next, "other flags search their own seeds")
	entries, err := reopened.List()
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, uint64(1<<63+5), entries[0].Seed)
}

func TestOpenRefusesWhatIsNotAFailureStore(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("not a database, just some text that is long enough to have a header"), 0o644))
	_, err := Open(text)
	assert.ErrorContains(t, err, "not a readable SQLite database")

	newer := filepath.Join(dir, "newer.db")
	store := open(t, newer)
	_, err = store.db.Exec("PRAGMA user_version = 99")
	require.NoError(t, err)
	require.NoError(t, store.Close())
	_, err = Open(newer)
	assert.ErrorContains(t, err, "written by a newer simrun")

	_, err = Open(filepath.Join(dir, "missing", "dir", "failures.db"))
	assert.Error(t, err, "a database in a directory that does not exist")
	_, err = Open("")
	assert.Error(t, err)
}

func TestFaultSetIgnoresOrderAndRepeats(t *testing.T) {
	assert.Equal(t, "crash+partition", FaultSet([]string{"partition", "crash", "partition"}))
	assert.Equal(t, "no-faults", FaultSet(nil))
	assert.NotEqual(t, Signature("a", "b", "c"), Signature("a", "bc", ""), "the parts are kept apart")
}

func TestTheDatabaseCommitsDurably(t *testing.T) {
	store := open(t, filepath.Join(t.TempDir(), "failures.db"))
	var journal string
	var synchronous int
	require.NoError(t, store.db.QueryRow("PRAGMA journal_mode").Scan(&journal))
	require.NoError(t, store.db.QueryRow("PRAGMA synchronous").Scan(&synchronous))
	assert.Equal(t, "wal", journal, "readers do not block the farm's writes")
	assert.Equal(t, 2, synchronous, "synchronous=FULL: a commit is on disk before Record returns")
}
