package zabmodel

import (
	"github.com/zabsim/zabsim/internal/switches"
)

// Bug names a real ZooKeeper bug that the server can re-introduce, exactly where the real code had it.
// A bug switch changes the implementation and nothing else: no hint to a checker, no special fault.
type Bug uint32

// The bug zoo (see shared/BUGS.md). Each is off unless switched on.
const (
	// BugZK3911: learners acknowledge NEWLEADER before logging the proposals of a DIFF; they log them
	// only after UPTODATE.
	BugZK3911 Bug = 1 << iota
	// BugZK4646: learners queue the DIFF's committed proposals to the asynchronous sync processor at
	// NEWLEADER and acknowledge without waiting for the fsync (3.8.0's code).
	BugZK4646
	// BugZK4643: learners persist currentEpoch at NEWLEADER before persisting the synced proposals.
	BugZK4643
	// BugZK2845: a server leaving its role keeps its in-memory tree without fast-forwarding it to its
	// txn log, so an fsynced but uncommitted txn is on disk and not in memory.
	BugZK2845
	// BugZK4394: a COMMIT arriving between NEWLEADER and UPTODATE finds the pending list drained and
	// dereferences nothing (a NullPointerException in Java, a panic here).
	BugZK4394
	// BugZK4712: a follower leaving its role fast-forwards its tree before stopping its sync
	// processor, which keeps writing queued txns to the log: the run draws whether its thread
	// appends them before the fast-forward reads the log or afterwards.
	BugZK4712
	// BugZK335: the leader takes its new epoch before a quorum agrees (no acceptedEpoch discipline):
	// it proposes max(own epochs)+1 at once and learners accept any epoch not below their own.
	BugZK335
	// BugZK1653: a crash between writing currentEpoch.tmp and renaming it leaves a server that refuses
	// to start, because the startup check ignores currentEpoch.tmp.
	BugZK1653
	// BugZK1277: the leader does not step down before the zxid counter overflows.
	BugZK1277
	// BugZK4925: committed txns applied during synchronization (before NEWLEADER after a SNAP or
	// TRUNC, and at NEWLEADER) skip the committed log, leaving a hole that the server, once leader,
	// propagates to stale learners in a DIFF.
	BugZK4925
	// BugEpochRefusal is ZooKeeper's behaviour since the fix of ZOOKEEPER-4643 (3.8.x, master),
	// which this harness found to lose a server for good: a late joiner whose DIFF holds txns of the
	// new epoch persists them at NEWLEADER and then currentEpoch; a crash between the two leaves a log
	// newer than currentEpoch, and the startup check refuses to start ("The current epoch is older
	// than the last zxid"). zabsim recovers the epoch from acceptedEpoch unless this switch is on.
	BugEpochRefusal
	// BugStaleAck is ZooKeeper 3.8.0's own behaviour, which this harness found to break quorum
	// durability: a leader keeps a learner's acknowledgements of outstanding proposals after the
	// learner's connection ends. When the learner comes back it gets a TRUNC below those proposals
	// (they are above the leader's last commit) and logs them again; meanwhile its old ack still
	// counts, and the leader may commit a proposal that a quorum no longer holds durably. It keeps
	// a departed learner's NEWLEADER ack as well, and may be established on it after that learner
	// has moved on to a newer epoch; that alone is harmless (such a stale leader cannot commit, and
	// a leader cannot always know an ack to be stale: seed 1000187).
	BugStaleAck
	// BugSnapLogGap is ZooKeeper 3.8.0's own behaviour, which this harness found to lose committed
	// transactions: after a SNAP sync a learner keeps its old txn log, so the log jumps from its old
	// history to what follows the snapshot. Once that server leads, a DIFF from its txn log sends a
	// stale learner the records on both sides of the jump and silently skips what the snapshot held.
	// zabsim deletes the old log once the synced snapshot is durable, unless this switch is on; the
	// switch also restores FileTxnLog.truncate's rule of keeping the first record at or after the
	// truncation point, which keeps a record too many when the log lacks that point.
	BugSnapLogGap
	// BugTruncSnapshot is ZooKeeper 3.8.0's own behaviour, which this harness found to lose
	// consistency: a TRUNC truncates the txn log but keeps snapshots taken at higher zxids, so the
	// tree reloaded after it still reflects the truncated transactions (for instance one that a
	// leader fast-forwarded into its tree and snapshotted at lead() without ever committing it).
	// A fuzzy snapshot named at or below the point lies the same way when its walk ended above
	// it: a learner leaving its role fast-forwards a logged, uncommitted proposal into the tree
	// its snapshot thread is walking (seed 3071591 of the sweep from 3000001), and restore only
	// warns that the log does not reach the file's digest. zabsim deletes every snapshot that
	// may reflect a txn above the point (named above it, or with its stored digest above it)
	// unless this switch is on. Deleting them can leave a learner
	// unable to rebuild the truncation point (its only snapshot was a SNAP's, named by the next
	// epoch's first zxid, and its old log was deleted after that SNAP); the learner then claims the
	// point all the same, as every release's Learner.syncWithLeader does.
	BugTruncSnapshot
	// BugZK4394Sync is the NEWLEADER of 3.8.5, 3.8.6 and 3.9.2: ZOOKEEPER-4785's synchronous logging
	// (every pending proposal appended and fsynced before the ACK, currentEpoch after them) without
	// ZOOKEEPER-4394's fix, so that the pending list is empty and a COMMIT between NEWLEADER and
	// UPTODATE dereferences nothing (a NullPointerException in Java, a panic here).
	BugZK4394Sync
	// BugZK4846 is DataTree.createNode before ZOOKEEPER-4846 (3.8.0 to 3.8.4, 3.9.0 to 3.9.3):
	// replaying the create of a node that a fuzzy snapshot already holds keeps the node's ACL index
	// from the snapshot, which the snapshot's ACL cache (written before the walk) may lack. The next
	// setData or delete of that node throws "Failed to fetch acls": out of
	// FileTxnSnapLog.restore, a server that cannot start again; after a SNAP, a learner's processTxn.
	BugZK4846
)

var bugTable = switches.NewTable("bug",
	switches.Switch[Bug]{Bit: BugZK3911, Name: "ZK-3911", Description: "learners ACK NEWLEADER before logging the DIFF's proposals"},
	switches.Switch[Bug]{Bit: BugZK4646, Name: "ZK-4646", Description: "learners ACK NEWLEADER before the DIFF's proposals are fsynced"},
	switches.Switch[Bug]{Bit: BugZK4643, Name: "ZK-4643", Description: "learners persist currentEpoch before the synced proposals"},
	switches.Switch[Bug]{Bit: BugZK2845, Name: "ZK-2845", Description: "a server leaving its role does not fast-forward its tree to its log"},
	switches.Switch[Bug]{Bit: BugZK4394, Name: "ZK-4394", Description: "a COMMIT between NEWLEADER and UPTODATE finds no pending proposal"},
	switches.Switch[Bug]{Bit: BugZK4394Sync, Name: "ZK-4394-sync", Description: "3.8.5's synchronous NEWLEADER logging empties the pending list: a COMMIT before UPTODATE finds nothing"},
	switches.Switch[Bug]{Bit: BugZK4846, Name: "ZK-4846", Description: "replaying a create over a fuzzy snapshot keeps a node's ACL index the snapshot's cache lacks"},
	switches.Switch[Bug]{Bit: BugZK4712, Name: "ZK-4712", Description: "a follower's sync processor keeps writing after the tree was fast-forwarded"},
	switches.Switch[Bug]{Bit: BugZK335, Name: "ZK-335", Description: "epochs are taken without a quorum's acceptedEpoch agreement"},
	switches.Switch[Bug]{Bit: BugZK1653, Name: "ZK-1653", Description: "startup ignores currentEpoch.tmp"},
	switches.Switch[Bug]{Bit: BugZK1277, Name: "ZK-1277", Description: "the leader lets the zxid counter overflow"},
	switches.Switch[Bug]{Bit: BugZK4925, Name: "ZK-4925", Description: "txns applied during sync skip the committed log, whose hole a later DIFF propagates"},
	switches.Switch[Bug]{Bit: BugEpochRefusal, Name: "epoch-refusal", Description: "a crash between NEWLEADER's txns and currentEpoch leaves a server that refuses to start (4643's order)"},
	switches.Switch[Bug]{Bit: BugStaleAck, Name: "stale-ack", Description: "a leader keeps the acks of a learner whose connection ended, across its TRUNC (3.8.0 as released)"},
	switches.Switch[Bug]{Bit: BugSnapLogGap, Name: "snap-log-gap", Description: "after a SNAP sync the old txn log is kept, and a later txn-log DIFF skips the gap (3.8.0 as released)"},
	switches.Switch[Bug]{Bit: BugTruncSnapshot, Name: "trunc-snapshot", Description: "a TRUNC keeps snapshots newer than the truncation point, or fuzzy ones reaching past it (3.8.0 as released)"},
)

// Table returns the bug zoo's table, which names the switches of a Bugs set.
func (Bug) Table() *switches.Table[Bug] { return &bugTable }

// Bugs is a set of bug switches (Has, With, Union, Empty, Names, String, Validate); the zero value
// switches nothing on.
type Bugs = switches.Set[Bug]

// BugInfo describes one switch for listings (simrun bugs): its Bit, Name and Description.
type BugInfo = switches.Switch[Bug]

// BugList returns the zoo in order.
func BugList() []BugInfo { return bugTable.List() }

// ParseBugs parses a comma-separated list of bug names ("ZK-3911,ZK-4646"); "" and "none" are the
// empty set. An unknown name is an error that lists the known ones.
func ParseBugs(list string) (Bugs, error) { return switches.ParseSet[Bug](list) }
