package zabmodel

import (
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// EventKind names a protocol step that the white-box checkers watch. Servers report each step at the
// moment it takes effect, in the order it takes effect, through the ensemble's Observer. Events are
// facts about one server; the checker combines them into the global view that ZAB's invariants speak
// of. Every event carries the server's sid and the virtual time.
type EventKind uint8

const (
	// EventVote: a LOOKING server changed its election proposal (Leader, Zxid, Epoch = the proposed
	// peer epoch, Round = its logical clock). Rounds restart the NoVoteCircle history.
	EventVote EventKind = iota + 1
	// EventElected: a server left LOOKING for Role, naming Leader, with Epoch = the vote's peer
	// epoch and Round = the election round.
	EventElected
	// EventAcceptedEpoch: the acceptedEpoch file now durably holds Epoch.
	EventAcceptedEpoch
	// EventCurrentEpoch: the currentEpoch file now durably holds Epoch.
	EventCurrentEpoch
	// EventEpochQuorum: a prospective leader received ACKEPOCH from a quorum (itself included) for
	// Epoch and starts synchronization; the TLA+ spec records it as the epoch's leader here.
	EventEpochQuorum
	// EventNewLeaderAck: a learner sent its ACK of NEWLEADER for Epoch to Leader. At this instant its
	// durable history is what it acknowledges: ProcessConsistency compares it with the leader's.
	EventNewLeaderAck
	// EventEstablished: a leader received NEWLEADER ACKs from a quorum (itself included) for Epoch
	// and starts broadcast (Zxid is the new epoch's zxid, its commit frontier), or a standalone
	// server started. Leadership: at most one server per epoch. Establishing commits the history the
	// server holds, through Through.
	EventEstablished
	// EventPropose: a leader assigned Zxid to a transaction whose identity is Hash (see TxnHash).
	EventPropose
	// EventLog: a server appended (Zxid, Hash) to its txn log, not yet durable.
	EventLog
	// EventFsync: the first Count records of the server's txn log are durable, the last of them
	// being Zxid.
	EventFsync
	// EventAck: a follower sent ACK for Zxid (after the fsync that covers it).
	EventAck
	// EventCommit: a leader decided to commit Zxid (Hash), acknowledged by a quorum.
	EventCommit
	// EventApply: a server applied (Zxid, Hash) to its in-memory tree; Digest is the tree digest
	// after it. Source says why (a commit while serving, log replay at startup, a sync).
	EventApply
	// EventTruncate: a server truncated its txn log so that Zxid is its last record.
	EventTruncate
	// EventLost: a crash destroyed the unsynced tail of the server's txn log; Zxid is the last
	// record that survived (0 if none) and Count how many records were lost.
	EventLost
	// EventTreeLoaded: a server replaced its in-memory tree by a snapshot at Zxid (Digest); Source
	// says whether from its own disk at startup or from a leader's SNAP.
	EventTreeLoaded
	// EventSnapshot: a server durably wrote a snapshot of its tree at Zxid (Digest).
	EventSnapshot
	// EventServing: a server started serving clients in Epoch as Role.
	EventServing
	// EventStopServing: a server stopped serving clients (it left its role or shut down).
	EventStopServing
	// EventCrash and EventRestart: the server's process crashed or was started again.
	EventCrash
	EventRestart
	// EventDigestMismatch: applying Zxid left a tree digest (Digest) different from the one the
	// leader computed for it (Hash holds the leader's digest). Java logs and counts it.
	EventDigestMismatch
	// EventLogDeleted: a server deleted its whole txn log, after a SNAP sync whose snapshot (the
	// EventSnapshot just before) covers everything the log held.
	EventLogDeleted
	// EventLearnerSync: a leader computed the synchronization (DIFF, TRUNC or SNAP) of the learner
	// Learner on that learner's connection (LearnerHandler.syncFollower): everything the leader has
	// applied now reaches that learner before the NEWLEADER this handler sends, followed by the
	// proposals still in its pipeline (Leader.startForwarding; the checker knows them from the
	// leader's EventPropose, so the event does not repeat them). It tells the checker
	// which leader process a learner's NEWLEADER comes from, even when that process has since died
	// or been restarted and its bytes arrive late. With Source SourceSnap it marks instead the end
	// of the walk of a SNAP streamed from the live tree (snapstream.go), Zxid the leader's last
	// processed zxid then: the learner's snapshot may reflect transactions up to there, which it
	// also gets forwarded behind the SNAP.
	EventLearnerSync
	// EventTxnThrew: applying Zxid made DataTree.processTxn throw an unchecked exception (the trace
	// says which); what the tree holds after it is what the statements before the throw left. In
	// Java no committed transaction throws: it is a server bug (ZK-4846's "Failed to fetch acls"),
	// and out of FileTxnSnapLog.restore it stops the server from starting.
	EventTxnThrew
)

var eventNames = [...]string{
	EventVote: "vote", EventElected: "elected", EventAcceptedEpoch: "accepted-epoch",
	EventCurrentEpoch: "current-epoch", EventEpochQuorum: "epoch-quorum", EventNewLeaderAck: "newleader-ack",
	EventEstablished: "established", EventPropose: "propose", EventLog: "log", EventFsync: "fsync",
	EventAck: "ack", EventCommit: "commit", EventApply: "apply", EventTruncate: "truncate", EventLost: "lost",
	EventTreeLoaded: "tree-loaded", EventSnapshot: "snapshot", EventServing: "serving",
	EventStopServing: "stop-serving", EventCrash: "crash", EventRestart: "restart",
	EventDigestMismatch: "digest-mismatch", EventLogDeleted: "log-deleted", EventLearnerSync: "learner-sync",
	EventTxnThrew: "txn-threw",
}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return fmt.Sprintf("event(%d)", k)
}

// Source qualifies EventApply and EventTreeLoaded.
type Source uint8

const (
	SourceNone Source = iota
	// SourceCommit: a committed transaction applied while following, leading or observing.
	SourceCommit
	// SourceStartup: replayed from the server's own snapshot and txn log when its process started,
	// or when a running server reloads a database that a learner's full shutdown cleared.
	SourceStartup
	// SourceFastForward: replayed from the txn log when the server left a role (fastForwardDataBase).
	SourceFastForward
	// SourceSync: applied during synchronization with a leader (a COMMIT before NEWLEADER, or the
	// committed packets at NEWLEADER / UPTODATE).
	SourceSync
	// SourceSnap: a snapshot received from a leader.
	SourceSnap
	// SourceTruncate: the tree was rebuilt from disk after a TRUNC.
	SourceTruncate
)

var sourceNames = [...]string{
	SourceNone: "-", SourceCommit: "commit", SourceStartup: "startup", SourceFastForward: "fast-forward",
	SourceSync: "sync", SourceSnap: "snap", SourceTruncate: "truncate",
}

func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return fmt.Sprintf("source(%d)", s)
}

// Event is one protocol step of one server. Fields that do not apply to a kind are zero.
type Event struct {
	Kind   EventKind
	Time   clock.Time
	Server int64 // the sid of the server the event happened in
	Role   Role
	Epoch  int64
	Zxid   int64
	Hash   uint64 // a transaction's identity (TxnHash), or for EventDigestMismatch the expected digest
	Digest int64  // the tree digest after the step
	Leader int64  // EventVote, EventElected, EventNewLeaderAck: the leader concerned
	// Learner is, for EventLearnerSync, the sid of the learner the leader synchronizes.
	Learner int64
	Round   int64 // EventVote, EventElected: the election round
	// Through is, for EventEstablished, the last zxid of the history that establishing commits, as
	// the server reads it from its own database: its tree's last processed zxid, or its txn log's
	// last record if that is higher (0: an empty history). Every transaction of the server's
	// history up to it is committed (Leader.startZkServer's lastCommitted, the new epoch's zxid,
	// lies above them all). The server's tree keeps no list of the transactions it reflects (nor
	// does Java's: a snapshot holds none), so the event names the range and a checker knows the
	// transactions in it from the server's own EventLog and EventApply.
	Through int64
	Count   int // EventFsync: durable records; EventLost: records lost
	Source  Source
	// Txn is the transaction itself for EventPropose and EventCommit, so that a runner can keep the
	// committed log that the client-visible checkers replay. It must not be modified.
	Txn *proto.TxnEntry
	// TxnData is Txn's encoding for an EventPropose of a leader (nil from a standalone server),
	// the bytes the leader sends in its PROPOSAL packets. An observer that keeps a copy of the
	// transaction as proposed can decode it from here instead of encoding Txn again. It belongs to
	// the leader: an observer may read it only during Observe and must not modify it.
	TxnData []byte
}

func (e Event) String() string {
	s := fmt.Sprintf("%ss %s sid=%d", strings.TrimSpace(e.Time.String()), e.Kind, e.Server)
	if e.Epoch != 0 {
		s += fmt.Sprintf(" epoch=%d", e.Epoch)
	}
	if e.Zxid != 0 {
		s += fmt.Sprintf(" zxid=%#x", e.Zxid)
	}
	if e.Leader != 0 {
		s += fmt.Sprintf(" leader=%d", e.Leader)
	}
	if e.Learner != 0 {
		s += fmt.Sprintf(" learner=%d", e.Learner)
	}
	if e.Source != SourceNone {
		s += " from=" + e.Source.String()
	}
	return s
}

// Observer receives every Event of an ensemble, synchronously, inside the simulator's event loop.
// A checker that finds a violation ends the run with sim.World.Fail; it must not modify servers.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function.
type ObserverFunc func(Event)

// Observe implements Observer.
func (f ObserverFunc) Observe(e Event) { f(e) }
