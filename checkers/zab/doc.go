// Package zab checks ZAB's safety invariants on the stream of protocol events that simulated
// ZooKeeper servers report (zabmodel.Event), while the run goes, after every event that can break
// one of them.
//
// The checker keeps a model of what each server holds, built only from the events: its txn log
// with the synced prefix, its durable snapshots and the history each covers, its applied history
// (what its in-memory tree reflects), its epochs and its role; and a global view: every proposal
// by zxid and hash, the committed set, and the leader established in each epoch. The invariants
// carry the names of the TLA+ specifications of ZooKeeper (Leadership, Integrity, Agreement,
// PrefixConsistency, TotalOrder, GlobalPrimaryOrder, LocalPrimaryOrder, PrimaryIntegrity,
// CommittedLogDurability, LeaderLogCompleteness, ProcessConsistency, MonotonicRead, NoVoteCircle),
// plus DigestMismatch, which ZooKeeper itself detects, TxnThrew (a committed transaction that makes
// a server's processTxn throw), and EventStream for event sequences that no
// server can produce (a bug in the model that reports them, not in ZAB).
//
// Usage:
//
//	checker, err := zab.New(zab.Config{Voters: []int64{1, 2, 3}, Observers: []int64{4}})
//	if err != nil {
//		return err
//	}
//	ensembleConfig.Observer = checker // a zabmodel.Observer
//	// ... run the world ...
//	for _, v := range checker.Violations() {
//		fmt.Println(v) // invariant, virtual time, servers, zxids, epoch, explanation
//	}
//	fmt.Println(checker.Summary()) // violations per invariant, events seen, time spent
//
// A recorded stream can be judged in one call: violations, err := zab.Check(config, events).
//
// Definitions the servers' events must follow (zabmodel.Event documents each kind). A server's
// applied history is the sequence of EventApply since its last EventTreeLoaded or EventRestart; a
// tree load from its own disk starts from the content of the snapshot it names, a SNAP from its
// leader's applied history up to the SNAP's zxid. Its history is its applied history followed by
// its logged records with higher zxids. A transaction is durable at a server if it is in the
// fsynced prefix of its txn log or in the snapshot a restart would load (the highest zxid, the
// latest among equals); older snapshots protect nothing. A transaction is committed by
// EventCommit, and when a leader establishes itself, every transaction of its history up to the
// Through its EventEstablished reports (a report that stops short of the history is an EventStream
// violation: establishing commits everything the leader holds). A quorum is a majority of the voters; observers never count, and because ZooKeeper 3.8.0
// logs the synchronized proposals at NEWLEADER only for followers, an observer's NEWLEADER ACK
// promises no durability.
//
// A SNAP is streamed from the leader's live tree, so the learner's tree may reflect transactions
// past the SNAP's zxid that are also forwarded behind it: between the leader's EventLearnerSync
// and its end-of-walk EventLearnerSync (Source SourceSnap), a repeated apply of a transaction the
// learner holds and a digest mismatch before the walk's last zxid are what ZooKeeper tolerates,
// and are not reported (fuzzy.go).
//
// Only the first violation of each invariant is kept (later ones are usually echoes of the first),
// but every one is counted in the Summary. Config.OnViolation is called as each kept violation is
// found, so that a runner can end the run at once with sim.World.Fail.
//
// Per event the work is O(1) amortised or O(log n) in the length of a history; the events that
// need a pass over a whole history are rare (an established leader, a learner's currentEpoch and
// NEWLEADER acknowledgement, the start of serving, a tree reload after TRUNC or SNAP, a snapshot
// that replaces one of another history).
//
// The package is simulated code: it reads no clock, randomness or environment and never lets a
// map's order reach a result. The host time it spends is measured only if the caller passes a
// Stopwatch, which code inside a simulated world must not do.
package zab
