package storage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func zxids(rs []Record) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.Zxid
	}
	return out
}

func filled(t *testing.T, zs ...int64) *Disk {
	d := New()
	for _, z := range zs {
		require.NoError(t, d.Append(Record{Zxid: z, Data: []byte{byte(z)}}))
	}
	return d
}

func TestAppendRefusesNonIncreasingZxids(t *testing.T) {
	d := filled(t, 1, 2, 5)
	assert.Error(t, d.Append(Record{Zxid: 5}))
	assert.Error(t, d.Append(Record{Zxid: 3}))
	assert.Equal(t, int64(5), d.LastZxid())
	assert.Equal(t, int64(1), d.FirstZxid())
	assert.Equal(t, []int64{2, 5}, zxids(d.Records(1)))
	assert.Equal(t, []int64{5}, zxids(d.Records(3)))
	assert.Empty(t, d.Records(5))
}

func TestAppendCopiesData(t *testing.T) {
	d := New()
	data := []byte("txn")
	require.NoError(t, d.Append(Record{Zxid: 1, Data: data}))
	data[0] = 'X'
	assert.Equal(t, "txn", string(d.Records(0)[0].Data))
}

func TestCrashLosesOnlyUnsyncedRecords(t *testing.T) {
	d := filled(t, 1, 2, 3)
	d.Synced(2)
	require.NoError(t, d.Append(Record{Zxid: 4}))
	assert.Equal(t, 2, d.Unsynced())
	assert.Equal(t, 2, d.Crash(0))
	assert.Equal(t, []int64{1, 2}, zxids(d.Records(0)))
	assert.Equal(t, int64(2), d.Stats().LostOnCrash)
}

func TestCrashMayKeepAPrefixOfTheUnsyncedTail(t *testing.T) {
	d := filled(t, 1, 2, 3, 4)
	d.Synced(1)
	assert.Equal(t, 1, d.Crash(2))
	assert.Equal(t, []int64{1, 2, 3}, zxids(d.Records(0)))
	assert.Zero(t, d.Unsynced(), "what survived a crash is durable")
	assert.Equal(t, 0, d.Crash(99), "kept is clamped")
}

func TestSyncedCoversOnlyWhatTheFsyncSaw(t *testing.T) {
	d := filled(t, 1, 2)
	target := d.Len()
	require.NoError(t, d.Append(Record{Zxid: 3})) // Appended while the fsync was in flight.
	d.Synced(target)
	assert.Equal(t, 2, d.SyncedLen())
	assert.Equal(t, 1, d.Crash(0))
}

func TestTruncateFollowsFileTxnLog(t *testing.T) {
	d := filled(t, 1, 2, 3, 4)
	d.Synced(4)
	require.NoError(t, d.Truncate(2))
	assert.Equal(t, []int64{1, 2}, zxids(d.Records(0)), "the target itself stays")

	d = filled(t, 0x100000001, 0x100000003, 0x200000001)
	require.NoError(t, d.Truncate(0x100000002))
	assert.Equal(t, []int64{0x100000001, 0x100000003}, zxids(d.Records(0)),
		"a missing target keeps the first record beyond it, as 3.8.0's iterator positioning does")

	d = filled(t, 1, 2)
	assert.ErrorIs(t, d.Truncate(3), ErrTruncate, "a log that never reaches the target cannot be truncated")
	assert.ErrorIs(t, New().Truncate(1), ErrTruncate)
}

func TestTruncateLeavesSnapshotsAlone(t *testing.T) {
	d := filled(t, 1, 2, 3)
	d.SaveSnapshot(Snapshot{Zxid: 3, Data: []byte("tree@3")}, true)
	require.NoError(t, d.Truncate(1))
	s, ok := d.LatestSnapshot()
	require.True(t, ok)
	assert.Equal(t, int64(3), s.Zxid, "3.8.0 keeps snapshots newer than the truncation point")
}

func TestDeleteSnapshotsRemovesWhatTheCallerPicks(t *testing.T) {
	d := filled(t, 1, 2, 3)
	for _, zxid := range []int64{1, 2, 3} {
		d.SaveSnapshot(Snapshot{Zxid: zxid, Data: []byte{byte(zxid)}}, zxid == 1)
	}
	assert.Equal(t, 2, d.DeleteSnapshots(func(s Snapshot) bool { return s.Zxid >= 2 }))
	s, ok := d.LatestSnapshot()
	require.True(t, ok)
	assert.Equal(t, int64(1), s.Zxid)
	assert.Len(t, d.Snapshots(), 1)
	assert.Zero(t, d.DeleteSnapshots(func(Snapshot) bool { return false }))
}

func TestLatestSnapshotPrefersHighestZxidThenLatest(t *testing.T) {
	d := New()
	_, ok := d.LatestSnapshot()
	assert.False(t, ok)
	d.SaveSnapshot(Snapshot{Zxid: 5, Data: []byte("a")}, true)
	d.SaveSnapshot(Snapshot{Zxid: 9, Data: []byte("b")}, true)
	d.SaveSnapshot(Snapshot{Zxid: 9, Data: []byte("c")}, true)
	d.SaveSnapshot(Snapshot{Zxid: 7, Data: []byte("d")}, true)
	s, _ := d.LatestSnapshot()
	assert.Equal(t, "c", string(s.Data))
	assert.Len(t, d.Snapshots(), 4)
}

// TestUnsyncedSnapshotsAreAtTheCrashsMercy follows FileSnap: a snapshot written without fsync may
// survive a crash, be left partly written (and then skipped by the restore, which takes the newest
// valid file), or be gone, as its place among the unsynced appends says; one written with fsync
// always survives. What a crash leaves is durable.
func TestUnsyncedSnapshotsAreAtTheCrashsMercy(t *testing.T) {
	d := filled(t, 1, 2)
	d.Synced(2)
	d.SaveSnapshot(Snapshot{Zxid: 2, Data: []byte("synced")}, true)
	d.SaveSnapshot(Snapshot{Zxid: 2, Data: []byte("kept")}, false)
	require.NoError(t, d.Append(Record{Zxid: 3}))
	d.SaveSnapshot(Snapshot{Zxid: 3, Data: []byte("partial")}, false)
	require.NoError(t, d.Append(Record{Zxid: 4}))
	d.SaveSnapshot(Snapshot{Zxid: 4, Data: []byte("missing")}, false)
	require.Equal(t, 3, d.UnsyncedSnapshots())
	s, _ := d.LatestSnapshot()
	require.Equal(t, "missing", string(s.Data), "before the crash the newest file is read back from the cache")

	assert.Equal(t, 1, d.Crash(1), "record 4 is lost; record 3 survives")
	partial, missing := d.CrashedSnapshots()
	assert.Equal(t, 1, partial, "the file written between records 3 and 4")
	assert.Equal(t, 1, missing, "the file written after record 4")
	assert.Zero(t, d.UnsyncedSnapshots())
	s, _ = d.LatestSnapshot()
	assert.Equal(t, "kept", string(s.Data), "the newest valid snapshot")
	assert.Len(t, d.Snapshots(), 3, "the partial file stays on disk")

	d.SaveSnapshot(Snapshot{Zxid: 3, Data: []byte("survives")}, false)
	d.Crash(0)
	partial, missing = d.CrashedSnapshots()
	assert.Zero(t, partial+missing, "no record lost: every file was written back")
	s, _ = d.LatestSnapshot()
	assert.Equal(t, "survives", string(s.Data))
}

func TestFilesAreAtomicAndSurviveCrashes(t *testing.T) {
	d := New()
	d.WriteFile(CurrentEpochFile, []byte("3"))
	d.WriteFile(CurrentEpochFile, []byte("4"))
	d.Crash(0)
	b, ok := d.ReadFile(CurrentEpochFile)
	assert.True(t, ok)
	assert.Equal(t, "4", string(b))
	d.DeleteFile(CurrentEpochFile)
	_, ok = d.ReadFile(CurrentEpochFile)
	assert.False(t, ok)
}

// The log is always a strictly increasing sequence, and the durable prefix never shrinks except by
// an explicit truncation.
func TestLogInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := New()
		next := int64(1)
		for i := rapid.IntRange(0, 60).Draw(t, "ops"); i > 0; i-- {
			syncedBefore := d.SyncedLen()
			truncated := false
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0, 1:
				next += rapid.Int64Range(1, 3).Draw(t, "gap")
				if err := d.Append(Record{Zxid: next}); err != nil {
					t.Fatal(err)
				}
			case 2:
				d.Synced(rapid.IntRange(0, d.Len()).Draw(t, "synced"))
			case 3:
				d.Crash(rapid.IntRange(0, d.Unsynced()).Draw(t, "kept"))
			case 4:
				if d.Len() > 0 {
					target := rapid.Int64Range(d.FirstZxid(), d.LastZxid()).Draw(t, "trunc")
					if err := d.Truncate(target); err != nil {
						t.Fatal(err)
					}
					truncated = true
				}
			}
			if !truncated && d.SyncedLen() < syncedBefore {
				t.Fatalf("the durable prefix shrank from %d to %d", syncedBefore, d.SyncedLen())
			}
			rs := d.Records(0)
			for j := 1; j < len(rs); j++ {
				if rs[j].Zxid <= rs[j-1].Zxid {
					t.Fatalf("log not increasing: %v", zxids(rs))
				}
			}
			if d.SyncedLen() > d.Len() {
				t.Fatalf("synced %d beyond length %d", d.SyncedLen(), d.Len())
			}
		}
	})
}

// TestGenerationChangesWhenRecordsLeave: appends and fsyncs keep the log's generation, and every
// removal of records changes it (a truncation, the deletion of the log, a crash), so that an fsync
// that started before one can tell its count of records no longer names the same records.
func TestGenerationChangesWhenRecordsLeave(t *testing.T) {
	d := filled(t, 1, 2, 3, 4)
	g := d.Generation()
	require.NoError(t, d.Append(Record{Zxid: 5}))
	d.Synced(5)
	assert.Equal(t, g, d.Generation(), "appends and fsyncs keep the generation")
	for _, remove := range []func(){
		func() { require.NoError(t, d.Truncate(4)) },
		func() { d.TruncateAfter(3) },
		func() { d.Crash(0) },
		func() { d.ClearLog() },
	} {
		remove()
		assert.NotEqual(t, g, d.Generation())
		g = d.Generation()
	}
}
