package zab

import (
	"github.com/zabsim/zabsim/zabmodel"
)

// snapshot is one durable snapshot a server wrote: the zxid it was taken at and the applied
// history it covers (the applied history at that moment, up to that zxid).
type snapshot struct {
	zxid    int64
	content []txn
	// generation is the applied history the content was taken from: two snapshots of the same
	// generation are prefixes of one another.
	generation uint64
}

// server is the checker's model of one ZooKeeper server, built from its events alone.
type server struct {
	sid   int64
	voter bool
	up    bool
	// incarnation counts the process starts the checker saw (EventRestart).
	incarnation int

	// log is the txn log and synced how many of its first records are durable.
	log    []txn
	synced int

	// applied is the applied history: what the in-memory tree reflects, in order. It survives
	// while the process is down; a restart replaces it. What a dead process sent before dying is
	// judged against the history its learners' bindings kept (leaderBinding.history).
	applied []txn
	// generation identifies the current applied history; it changes whenever applied is replaced.
	generation uint64
	// lastAppliedEpoch is the proposing leader's epoch of the last applied transaction.
	lastAppliedEpoch int64

	// snapshots are the durable snapshots in the order taken; restore indexes the one a restart
	// would load (highest zxid, latest among equals, as ZooKeeper picks snapshot files), or -1.
	snapshots []snapshot
	restore   int

	// acceptedEpoch and currentEpoch are the epoch files, electedEpoch the peer epoch of the vote
	// that gave the server its role, and role that role; they go into explanations.
	acceptedEpoch, currentEpoch, electedEpoch int64
	role                                      zabmodel.Role

	// The leader this server follows (from EventElected) and what that leader held then.
	leader leaderBinding
	// syncing is true between electing another server and starting to serve.
	syncing bool

	// leading is the epoch this server reached a quorum for (EventEpochQuorum) or established
	// (EventEstablished) in its current role, established whether it may broadcast, and
	// lastCounter the counter of its last proposal in that epoch.
	leading     int64
	established bool
	lastCounter int64
	// proposed is what this server proposed in its current leading role, in zxid order. Those
	// above its applied history are its pipeline (Leader.outstandingProposals and toBeApplied),
	// which Leader.startForwarding queues to every learner it synchronizes.
	proposed []txn

	primary   primaryCursor
	monotonic monotonicCheck
	votes     voteHistory
	// fuzzy is what a fuzzy SNAP may cause in the current applied history (see fuzzyWindow).
	fuzzy fuzzyWindow
}

// leaderBinding records, when a learner elects its leader, which incarnation and applied history
// of the leader it is about to synchronize with and how long that history was: everything the
// leader had applied by then reaches the learner before NEWLEADER, since the leader computes the
// synchronization only after the learner connects. The leader's EventLearnerSync for this learner
// confirms the process or moves the binding to the process that really synchronizes it (the
// learner elected an earlier process of that server, or one that was down).
type leaderBinding struct {
	sid         int64
	incarnation int
	generation  uint64
	// floor is how much of history the learner must hold durably when it acknowledges NEWLEADER
	// or persists the new currentEpoch.
	floor int
	// history is the leader's applied history as it was when bound, clipped so that nothing the
	// leader applies later changes it. A NEWLEADER promises this history, not whatever the leader
	// holds when the learner reads it: the bytes of a leader that has since died, or been
	// restarted and elected again, can still arrive (seeds 1005550 and 1069851).
	history []txn
	// forwarded is what the bound leader process had proposed above history when it computed the
	// learner's synchronization (EventLearnerSync): LearnerHandler.syncFollower ends with
	// Leader.startForwarding, which queues these proposals right after the DIFF or TRUNC. A TRUNC
	// may remove them: they were above the leader's committed log (ZKDatabase.committedLog, which
	// the truncation point is taken from) when it chose that point.
	forwarded []txn
	known     bool
	// snapFrom is the leader's last applied zxid when it computed this learner's synchronization,
	// snapTo its last applied zxid when the walk of the SNAP it streamed ended (0 before).
	snapFrom, snapTo int64
}

// promised is the part of the bound leader's history that a NEWLEADER ACK or a currentEpoch write
// promises to hold durably.
func (b leaderBinding) promised() []txn { return b.history[:min(b.floor, len(b.history))] }

func newServer(sid int64, voter bool) *server {
	return &server{sid: sid, voter: voter, up: true, incarnation: 1, restore: -1}
}

func (s *server) lastApplied() (txn, bool) {
	if len(s.applied) == 0 {
		return txn{}, false
	}
	return s.applied[len(s.applied)-1], true
}

// history returns the server's history: its applied history followed by its logged records with
// a higher zxid.
func (s *server) history() historyView {
	start := 0
	if last, ok := s.lastApplied(); ok {
		start = countUpTo(s.log, last.zxid)
	}
	return historyView{applied: s.applied, tail: s.log[start:]}
}

// restoreSnapshot returns the snapshot a restart would load, if any.
func (s *server) restoreSnapshot() (snapshot, bool) {
	if s.restore < 0 {
		return snapshot{}, false
	}
	return s.snapshots[s.restore], true
}

// durable reports whether t would survive a crash of the server: it is in the synced prefix of
// the log, or covered by the snapshot a restart would load. A snapshot that restore would not pick
// protects nothing, so older snapshots do not count.
func (s *server) durable(t txn) bool {
	if i, found := searchZxid(s.log, t.zxid); found && i < s.synced && s.log[i].hash == t.hash {
		return true
	}
	snap, ok := s.restoreSnapshot()
	return ok && contains(snap.content, t)
}

// durabilityCursor answers durable(t) for queries in increasing zxid order in amortised O(1).
type durabilityCursor struct {
	log, snap sortedCursor
}

func (s *server) durabilityCursor() durabilityCursor {
	cursor := durabilityCursor{log: sortedCursor{sequence: s.log[:s.synced]}}
	if snap, ok := s.restoreSnapshot(); ok {
		cursor.snap = sortedCursor{sequence: snap.content}
	}
	return cursor
}

func (c *durabilityCursor) durable(t txn) bool {
	inLog := c.log.holds(t)
	inSnap := c.snap.holds(t)
	return inLog || inSnap
}

// replaceApplied installs a new applied history (a reload or a restart) under a new generation.
func (c *Checker) replaceApplied(s *server, content []txn) {
	s.applied = content
	s.fuzzy = fuzzyWindow{}
	c.generations++
	s.generation = c.generations
	s.lastAppliedEpoch = 0
	if last, ok := s.lastApplied(); ok {
		s.lastAppliedEpoch, _ = c.proposerEpoch(last)
	}
	s.primary = primaryCursor{}
}

// leaveRole forgets what the server's role allowed it to do.
func (s *server) leaveRole() {
	s.role = zabmodel.Looking
	s.syncing = false
	s.leader = leaderBinding{}
	s.leading = 0
	s.established = false
	s.lastCounter = 0
	s.proposed = nil
}
