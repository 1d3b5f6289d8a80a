// Package storage is a ZooKeeper server's durable state, modelled as the real server keeps it on
// disk: a transaction log with an fsync frontier, snapshots of the data tree, and small files
// written atomically (acceptedEpoch, currentEpoch, currentEpoch.tmp).
//
// A Disk survives a crash of its server; only writes that were never fsynced can be lost. Crash
// takes a decision about how much of the unsynced tail of the log the operating system had already
// written (any prefix of it, from none to all): that is the "lost unsynced writes" of ZAB's fault
// model, and where several historical ZooKeeper bugs live (ZOOKEEPER-3911, -4646, -4643).
// Snapshot files written without fsync are at risk the same way: the operating system writes back
// in the order of the writes, so a file written before the first lost record survived, the file at
// that point is partly written (invalid, skipped by LatestSnapshot as FileSnap skips it), and a
// file written after it is missing.
//
// The log holds opaque records keyed by zxid; the server encodes transactions into them. Log
// operations follow FileTxnLog in ZooKeeper 3.8.0, including its edge cases: Append refuses a zxid
// that does not increase, and Truncate keeps every record up to and including the first one whose
// zxid is at least the target, failing if the log never reaches the target.
//
// Usage:
//
//	d := storage.New()
//	_ = d.Append(storage.Record{Zxid: 0x100000001, Data: txn})
//	target := d.Len()          // what an fsync started now will cover
//	...                        // the fsync takes virtual time; the server may crash meanwhile
//	d.Synced(target)           // the fsync completed
//	d.WriteFile(storage.CurrentEpochFile, []byte("1"))  // atomic and durable, as write+rename
//	d.SaveSnapshot(storage.Snapshot{Zxid: z, Data: tree}, false) // not fsynced, as most of 3.8's
//	lost := d.Crash(kept)      // kept unsynced records survive, the rest are gone, and so are
//	                           // the unsynced snapshot files written after the first lost record
package storage
