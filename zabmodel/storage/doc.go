// Package storage is a ZooKeeper server's durable state, modelled as the real server keeps it on
// disk: a transaction log with an fsync frontier, snapshots of the data tree, and small files
// written atomically (acceptedEpoch, currentEpoch, currentEpoch.tmp).
//
// A Disk survives a crash of its server; only writes that were never fsynced can be lost. Crash
// takes a decision about how much of the unsynced tail of the log the operating system had already
// written (any prefix of it, from none to all): that is the "lost unsynced writes" of ZAB's fault
// model, and where several historical ZooKeeper bugs live (ZOOKEEPER-3911, -4646, -4643).
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
//	d.SaveSnapshot(storage.Snapshot{Zxid: z, Data: tree})
//	lost := d.Crash(kept)      // kept unsynced records survive, the rest are gone
package storage
