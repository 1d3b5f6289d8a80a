package zabmodel

import (
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/datatree"
)

// How a walk of the live tree (the snapshot thread's, or a SNAP's) is cut into steps: each step
// writes between 1 and snapshotStepNodes nodes and the next one comes 0.1 to 1 ms later, so that
// commits land between any two nodes, while a walk of the largest trees the workloads build (a
// few thousand nodes) lasts tens of milliseconds, not the seconds that would make every SNAP's
// learner and every restore live with a fuzzy tree for hundreds of transactions.
const (
	snapshotStepNodes   = 32
	snapshotStepLatency = 200 * clock.Microsecond
)

// snapshotThread is SyncRequestProcessor's "Snapshot Thread": ZooKeeperServer.takeSnapshot,
// FileTxnSnapLog.save and FileSnap.serialize running beside the request processors, which keep
// applying transactions to the tree it walks. The file is named by the tree's last processed zxid
// when the thread starts (FileTxnSnapLog.save reads it first) and holds what DataTree.serialize
// found node by node, so it may reflect transactions past that zxid; restore replays the log from
// the file's zxid and relies on DataTree.processTxn tolerating them (see datatree.SnapshotWriter).
// It is written without fsync (takeSnapshot(false)), so the storage model decides its fate in a
// crash.
//
// The walk is a sequence of events: at each one the process may crash (boundary
// "snapshot-serializing"), and the file exists only once the walk is over. One simplification:
// Java's thread keeps walking the DataTree object it started with even after ZKDatabase.clear
// replaced it (a TRUNC reload, a learner leaving between SNAP and NEWLEADER); here the thread ends
// with the database's tree. That race needs a walk longer than an election and a resync, and its
// effect, a snapshot of a discarded tree, is the one the trunc-snapshot switch already has.
type snapshotThread struct {
	db       *zkDatabase
	tree     *tree
	zxid     int64
	writer   *datatree.SnapshotWriter
	stepFunc func()
}

// startSnapshotThread is what SyncRequestProcessor.run does once shouldSnapshot says so: roll the
// log (which restarts ZKDatabase.getTxnCount) and start the snapshot thread, unless the previous
// one still runs (snapThreadMutex.tryAcquire failing: "Too busy to snap, skipping").
func (db *zkDatabase) startSnapshotThread() {
	db.txnsSinceSnapshot = 0
	if db.snapThread != nil {
		db.p.note("snapshot", "too busy to snap, skipping")
		return
	}
	if db.tree == nil {
		return
	}
	db.p.crashPoint("before-snapshot")
	st := &snapshotThread{db: db, tree: db.tree, zxid: db.tree.lastProcessedZxid()}
	st.writer = db.tree.t.NewSnapshotWriter(sessionList(db.sessions), true)
	st.stepFunc = st.step
	db.snapThread = st
	st.schedule()
}

func (st *snapshotThread) schedule() {
	p := st.db.p
	p.h.after(p.h.between(snapshotStepLatency/2, snapshotStepLatency*5, 50*clock.Microsecond), st.stepFunc)
}

// step writes the next few nodes, or, with the walk over, the file.
func (st *snapshotThread) step() {
	db := st.db
	if db.snapThread != st {
		return
	}
	if db.tree != st.tree {
		db.snapThread = nil
		return
	}
	db.p.crashPoint("snapshot-serializing")
	if !st.writer.Step(1 + db.p.h.choose(snapshotStepNodes)) {
		st.schedule()
		return
	}
	db.snapThread = nil
	db.p.applyStorageEffect(effect{kind: effectSnapshotFile, zxid: st.zxid, packet: st.writer.Finish()})
}
