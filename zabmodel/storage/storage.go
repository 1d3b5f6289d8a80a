package storage

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/internal/slab"
)

// Names of the epoch files, as ZooKeeper's QuorumPeer names them.
const (
	AcceptedEpochFile   = "acceptedEpoch"
	CurrentEpochFile    = "currentEpoch"
	CurrentEpochTmpFile = "currentEpoch.tmp"
)

// Record is one transaction log record: a zxid and the encoded transaction.
type Record struct {
	Zxid int64
	Data []byte
}

// Snapshot is a serialized data tree taken at a zxid (the last transaction it reflects).
type Snapshot struct {
	Zxid int64
	Data []byte
	// Durable reports whether the file is on the platter: written with fsync, or kept through a
	// crash. Invalid marks a file that a crash left partly written (FileSnap's restore skips it).
	Durable, Invalid bool
	// after is how many log records were written before it, its place in the order of writes.
	after int
}

// ErrTruncate is returned when Truncate cannot find a position to truncate at, which the real server
// treats as fatal (the learner exits).
var ErrTruncate = errors.New("storage: unable to truncate the txn log")

// Stats counts durable work, for reports and benchmarks.
type Stats struct {
	Appends, Fsyncs, Truncations, Snapshots, FileWrites int64
	LostOnCrash                                         int64
}

// Disk is one server's durable storage.
type Disk struct {
	log       []Record
	synced    int
	snapshots []Snapshot
	// crashedSnapshots counts the unsynced snapshot files the last crash left partial and missing.
	crashedSnapshots [2]int
	files            map[string][]byte
	stats            Stats
	// records holds the log records' copies of appended data, carved from shared chunks (see
	// package slab): the caller keeps no access to them, and a record's bytes are its own.
	records slab.Bytes
	// generation counts the removals of records (truncations, the deletion of the log, crashes),
	// so that an fsync that started before one knows that its count of records no longer names
	// the same records.
	generation uint64
}

// New returns an empty disk, as a fresh dataDir.
func New() *Disk { return &Disk{files: map[string][]byte{}} }

// Stats returns the counters.
func (d *Disk) Stats() Stats { return d.stats }

// --- Transaction log ------------------------------------------------------------------------------

// Append adds a record at the end of the log, unsynced. Like FileTxnLog.append, it refuses a zxid
// that is not greater than the last one logged; the caller decides whether that is fatal.
func (d *Disk) Append(r Record) error {
	if n := len(d.log); n > 0 && r.Zxid <= d.log[n-1].Zxid {
		return fmt.Errorf("storage: zxid %#x is not above the last logged zxid %#x", r.Zxid, d.log[n-1].Zxid)
	}
	d.log = append(d.log, Record{Zxid: r.Zxid, Data: d.records.Copy(r.Data)})
	d.stats.Appends++
	return nil
}

// Len returns the number of records in the log, synced or not. An fsync that starts now covers
// exactly this many records.
func (d *Disk) Len() int { return len(d.log) }

// Generation changes whenever records leave the log (Truncate, TruncateAfter, ClearLog, Crash).
func (d *Disk) Generation() uint64 { return d.generation }

// SyncedLen returns how many records are durable.
func (d *Disk) SyncedLen() int { return d.synced }

// Synced records that an fsync covering the first n records completed. Records appended after the
// fsync started are not covered, which is why the caller passes the length it saw at the start.
func (d *Disk) Synced(n int) {
	if n > len(d.log) {
		n = len(d.log) // A truncation happened while the fsync was in flight.
	}
	if n > d.synced {
		d.synced = n
	}
	d.stats.Fsyncs++
}

// LastZxid returns the zxid of the last record in the log, or 0 for an empty log.
func (d *Disk) LastZxid() int64 {
	if len(d.log) == 0 {
		return 0
	}
	return d.log[len(d.log)-1].Zxid
}

// Records returns the records with zxid greater than after, in order. The slice is a copy of the
// index; record data must not be modified.
func (d *Disk) Records(after int64) []Record {
	i, _ := slices.BinarySearchFunc(d.log, after+1, func(r Record, z int64) int { return cmp64(r.Zxid, z) })
	return slices.Clone(d.log[i:])
}

// FirstZxid returns the zxid of the first record in the log, or 0 for an empty log.
func (d *Disk) FirstZxid() int64 {
	if len(d.log) == 0 {
		return 0
	}
	return d.log[0].Zxid
}

// Truncate removes records from the log as FileTxnLog.truncate does in ZooKeeper 3.8.0: it keeps
// every record up to and including the first whose zxid is at least zxid (so a target missing from
// the log keeps one record beyond it), and fails if no record reaches zxid. Truncation is durable at
// once, as a file truncation is. Snapshots are not touched, exactly as in 3.8.0, even those newer than
// the truncation point.
func (d *Disk) Truncate(zxid int64) error {
	i := slices.IndexFunc(d.log, func(r Record) bool { return r.Zxid >= zxid })
	if i < 0 {
		return fmt.Errorf("%w: no record at or after %#x (last is %#x)", ErrTruncate, zxid, d.LastZxid())
	}
	clear(d.log[i+1:])
	d.log = d.log[:i+1]
	d.synced = min(d.synced, len(d.log))
	d.stats.Truncations++
	d.generation++
	d.clampSnapshots()
	return nil
}

// --- Snapshots and files --------------------------------------------------------------------------

// SaveSnapshot writes a snapshot file, as FileSnap.serialize does. With fsync (SnapStream's
// AtomicFileOutputStream: a temporary file, fsync, rename) it is durable at once, all or nothing.
// Without fsync (a plain FileOutputStream: every snapshot of ZooKeeper 3.8 but a learner's after a
// SNAP sync, ZooKeeperServer.takeSnapshot(syncSnap)) it is in the operating system's cache only,
// and a crash may keep it, leave it partly written, or lose it (see Crash).
func (d *Disk) SaveSnapshot(s Snapshot, fsync bool) {
	d.snapshots = append(d.snapshots, Snapshot{Zxid: s.Zxid, Data: slices.Clone(s.Data), Durable: fsync, after: len(d.log)})
	d.stats.Snapshots++
}

// LatestSnapshot returns the valid snapshot with the highest zxid (the latest taken among equals),
// as FileSnap.findNValidSnapshots picks the newest valid file.
func (d *Disk) LatestSnapshot() (Snapshot, bool) {
	best, found := Snapshot{}, false
	for _, s := range d.snapshots {
		if !s.Invalid && (!found || s.Zxid >= best.Zxid) {
			best, found = s, true
		}
	}
	return best, found
}

// UnsyncedSnapshots returns how many snapshot files a crash now could lose or damage.
func (d *Disk) UnsyncedSnapshots() int {
	n := 0
	for _, s := range d.snapshots {
		if !s.Durable {
			n++
		}
	}
	return n
}

// CrashedSnapshots returns how many unsynced snapshot files the last Crash left partly written and
// how many it lost.
func (d *Disk) CrashedSnapshots() (partial, missing int) {
	return d.crashedSnapshots[0], d.crashedSnapshots[1]
}

// crashSnapshots decides the unsynced snapshot files' fate in a crash that kept the first end
// records of the log. The model's operating system writes back in the order of the writes, so one
// decision, how much of the unsynced tail survived, covers the snapshot files in their place among
// the appends: a file written before a surviving record survived; the file at the cut, between the
// last surviving record and the first lost one, is partly written (invalid: FileSnap skips it); a
// file written after a lost record is missing. With no record lost, every file survived. Whatever
// a crash leaves is durable afterwards.
func (d *Disk) crashSnapshots(end int, recordsLost bool) {
	d.crashedSnapshots = [2]int{}
	kept := d.snapshots[:0]
	for _, s := range d.snapshots {
		if !s.Durable && recordsLost {
			switch {
			case s.after == end:
				s.Invalid = true
				d.crashedSnapshots[0]++
			case s.after > end:
				d.crashedSnapshots[1]++
				continue
			}
		}
		s.Durable = true
		kept = append(kept, s)
	}
	clear(d.snapshots[len(kept):])
	d.snapshots = kept
}

// clampSnapshots keeps the unsynced snapshot files' place in the order of writes within a log that
// a truncation shortened.
func (d *Disk) clampSnapshots() {
	for i := range d.snapshots {
		d.snapshots[i].after = min(d.snapshots[i].after, len(d.log))
	}
}

// Snapshots returns every snapshot in the order taken.
func (d *Disk) Snapshots() []Snapshot { return slices.Clone(d.snapshots) }

// WriteFile replaces a small file atomically and durably, as AtomicFileOutputStream does (write a
// temporary file, fsync, rename).
func (d *Disk) WriteFile(name string, data []byte) {
	d.files[name] = slices.Clone(data)
	d.stats.FileWrites++
}

// ReadFile returns a file's contents.
func (d *Disk) ReadFile(name string) ([]byte, bool) {
	b, ok := d.files[name]
	return slices.Clone(b), ok
}

// DeleteFile removes a file; removing a missing file does nothing.
func (d *Disk) DeleteFile(name string) { delete(d.files, name) }

// --- Crashes --------------------------------------------------------------------------------------

// Unsynced returns how many records a crash now could lose.
func (d *Disk) Unsynced() int { return len(d.log) - d.synced }

// Crash applies a crash to the disk: of the unsynced tail of the log, only the first kept records
// survive (the operating system may have written some of them before the crash), and the snapshot
// files written without fsync fare as their place among those writes says (crashSnapshots). kept
// is clamped to [0, Unsynced()]. It returns how many records were lost. The caller draws kept from
// the run's Chooser.
func (d *Disk) Crash(kept int) int {
	kept = max(0, min(kept, d.Unsynced()))
	end := d.synced + kept
	lost := len(d.log) - end
	d.crashSnapshots(end, lost > 0)
	clear(d.log[end:])
	d.log = d.log[:end]
	d.synced = end // What survived a crash is on the platter now.
	d.stats.LostOnCrash += int64(lost)
	d.generation++
	return lost
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// SyncedZxid returns the zxid of the last durable record, or 0 when none is.
func (d *Disk) SyncedZxid() int64 {
	if d.synced == 0 {
		return 0
	}
	return d.log[d.synced-1].Zxid
}

// DeleteSnapshots removes every snapshot file for which drop reports true, durably at once, and
// reports how many it removed. A truncation uses it for the files that would lie once the log is
// shorter: those that may reflect transactions it no longer holds.
func (d *Disk) DeleteSnapshots(drop func(Snapshot) bool) int {
	before := len(d.snapshots)
	d.snapshots = slices.DeleteFunc(d.snapshots, drop)
	return before - len(d.snapshots)
}

// ClearLog removes every record of the txn log, durably at once: the log files are deleted.
func (d *Disk) ClearLog() {
	clear(d.log)
	d.log = d.log[:0]
	d.synced = 0
	d.stats.Truncations++
	d.generation++
	d.clampSnapshots()
}

// TruncateAfter removes every record above zxid, durably at once. Unlike Truncate it keeps nothing
// beyond zxid when the log does not hold zxid itself (a log that starts after a snapshot, or one with
// a gap).
func (d *Disk) TruncateAfter(zxid int64) {
	i, _ := slices.BinarySearchFunc(d.log, zxid+1, func(r Record, z int64) int { return cmp64(r.Zxid, z) })
	clear(d.log[i:])
	d.log = d.log[:i]
	d.synced = min(d.synced, len(d.log))
	d.stats.Truncations++
	d.generation++
	d.clampSnapshots()
}
