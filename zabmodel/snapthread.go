package zabmodel

import (
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/datatree"
)

// How a walk of the live tree (the snapshot thread's, or a SNAP's) is cut into steps: each step
// writes between 1 and snapshotStepNodes nodes, and the next one comes after walkPause, so that
// commits land between any two nodes, while a walk of the largest trees the workloads build (a
// few thousand nodes) lasts tens of milliseconds, not the seconds that would make every SNAP's
// learner and every restore live with a fuzzy tree for hundreds of transactions.
const (
	snapshotStepNodes   = 32
	snapshotStepLatency = 200 * clock.Microsecond
	// walkStallOdds is one in how many of a walk's steps stall (walkPause).
	walkStallOdds = 8
	// walkStallMin and walkStallMax bound a stalled step's pause.
	walkStallMin = clock.Millisecond
	walkStallMax = 10 * clock.Millisecond
)

// walkPause draws how long after a step of a walk (or after its start, when the session table
// and the ACL cache are written) the next step comes. Mostly 0.1 to 1 ms; one step in
// walkStallOdds stalls for 1 to 10 ms, as Java's walk does when FileSnap's buffered stream flushes
// onto a busy disk, when a SNAP's socket buffer is full because the learner reads slowly, or at a
// safepoint. Every change applied during a stall lies between what the walk has written and what
// it will write: the fuzzy part of the snapshot, where replays over a node the snapshot already
// holds and a node whose ACL the written cache lacks come from. Without stalls the walk of the
// small trees most runs build ended within one step of its start, so that part was nearly empty.
// The model checker's chooser answers 0 to every draw, so there each step stalls by walkStallMin;
// the checker abstracts time away and orders the step against every other enabled event anyway.
func walkPause(h host) clock.Duration {
	if h.choose(walkStallOdds) == 0 {
		return h.between(walkStallMin, walkStallMax, 100*clock.Microsecond)
	}
	return h.between(snapshotStepLatency/2, snapshotStepLatency*5, 50*clock.Microsecond)
}

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
// "snapshot-serializing", before each effectSerializeStep; "before-snapshot" comes before the
// thread's effectSnapshotOpen), and the file exists only once the walk is over. One simplification:
// Java's thread keeps walking the DataTree object it started with even after ZKDatabase.clear
// replaced it (a TRUNC reload, a learner leaving between SNAP and NEWLEADER); here the thread ends
// with the database's tree. That race needs a walk longer than an election and a resync, and its
// effect, a snapshot of a discarded tree, is the one the trunc-snapshot switch already has.
//
// The walk is a core (see ready.go): snapshotThread is its state and step its step function, whose
// inputs are the thread's start, each step of the walk (a timer the previous step armed) and the
// answer to its draw; zkDatabase is its driver (runSnapshotThread).
//
// Ordering contract: the start opens the file (effectSnapshotOpen) before the walk's first step is
// armed; at a step, the boundary snapshot-serializing precedes the draw of how many nodes to write
// (both are effectSerializeStep's); the walk ends (effectWalkEnd, the thread unregistered) in the same step as its
// file is written (effectSnapshotFile), right before it: nothing of the server runs between them.
type snapshotThread struct {
	tree   *tree
	zxid   int64
	writer *datatree.SnapshotWriter
	// resumeWrite says that the core awaits the draw of how many nodes to write.
	resumeWrite bool
	readies     readyPool
	// db is the driver, the database whose thread this is.
	db *zkDatabase
}

// snapshotInputKind names what a step of the snapshot thread's core is about.
type snapshotInputKind uint8

const (
	// snapshotStart is the thread's start, once it is registered.
	snapshotStart snapshotInputKind = iota + 1
	// snapshotStep is the walk's next step (the timer of effectWalkNext).
	snapshotStep
	// snapshotContinue resumes the core after its draw, with the draw.
	snapshotContinue
)

// snapshotView is what the core reads of its database: whether it is still the thread the database
// runs, and whether the database still holds the tree it walks (ZKDatabase.clear replaces it).
type snapshotView interface {
	walking(st *snapshotThread) bool
	walksCurrentTree(st *snapshotThread) bool
}

// step takes one input and returns what must happen; the ready is the driver's until it gives it
// back with done.
func (st *snapshotThread) step(kind snapshotInputKind, draw int, view snapshotView) *ready {
	out := st.readies.get()
	switch kind {
	case snapshotStart:
		out.add(effect{kind: effectSnapshotOpen, zxid: st.zxid})
		out.add(effect{kind: effectWalkNext})
	case snapshotStep:
		if !view.walking(st) {
			break
		}
		if !view.walksCurrentTree(st) {
			out.add(effect{kind: effectWalkEnd})
			break
		}
		out.add(effect{kind: effectSerializeStep, zxid: snapshotStepNodes})
		out.resume, st.resumeWrite = true, true
	case snapshotContinue:
		if !st.resumeWrite {
			break
		}
		st.resumeWrite = false
		if !st.writer.Step(1 + draw) {
			out.add(effect{kind: effectWalkNext})
			break
		}
		out.add(effect{kind: effectWalkEnd})
		out.add(effect{kind: effectSnapshotFile, zxid: st.zxid, packet: st.writer.Finish()})
	}
	return out
}

func (st *snapshotThread) done(r *ready) { st.readies.put(r) }

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
	st := &snapshotThread{tree: db.tree, zxid: db.tree.lastProcessedZxid(), db: db}
	st.writer = db.tree.t.NewSnapshotWriter(sessionList(db.sessions), true)
	db.snapThread = st
	db.runSnapshotThread(st, snapshotStart)
}

// walking and walksCurrentTree make the database the snapshot thread's view.
func (db *zkDatabase) walking(st *snapshotThread) bool          { return db.snapThread == st }
func (db *zkDatabase) walksCurrentTree(st *snapshotThread) bool { return db.tree == st.tree }

// runSnapshotThread is the driver of the snapshot thread's core: it steps it with kind and applies
// what it returns, stepping it again with the draw it asked for.
func (db *zkDatabase) runSnapshotThread(st *snapshotThread, kind snapshotInputKind) {
	p := db.p
	draw := 0
	for {
		out := st.step(kind, draw, db)
		for i := range out.effects {
			e := &out.effects[i]
			switch e.kind {
			case effectWalkNext:
				p.h.setTimer(walkPause(p.h), st)
			case effectWalkEnd:
				db.snapThread = nil
			case effectSnapshotOpen:
				p.askBoundaries(e.kind, 0)
			case effectSerializeStep:
				p.askBoundaries(e.kind, 0)
				draw = p.h.choose(int(e.zxid))
			case effectSnapshotFile:
				p.applyStorageEffect(*e)
			default:
				panic("zabmodel: the snapshot thread's core asked for " + e.kind.String())
			}
		}
		resume := out.resume
		st.done(out)
		if !resume {
			return
		}
		kind = snapshotContinue
	}
}
