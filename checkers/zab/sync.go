package zab

import (
	"github.com/zabsim/zabsim/zabmodel"
)

// boundLeader returns the leader a learner synchronizes with, if it is still the process and the
// applied history the learner is bound to (see leaderBinding and onLearnerSync). Otherwise the
// leader's memory is gone or replaced, and comparing with it would judge the learner against a
// different history: what such a process sent before it died can still arrive, and is judged
// against the history the binding keeps.
func (c *Checker) boundLeader(s *server, sid int64) (*server, bool) {
	binding := s.leader
	leader, ok := c.server(sid)
	if !ok || !binding.known || binding.sid != sid || !leader.up ||
		leader.incarnation != binding.incarnation || leader.generation != binding.generation {
		return nil, false
	}
	return leader, true
}

// onNewLeaderAck checks ProcessConsistency when a learner acknowledges NEWLEADER: its history is a
// prefix of the leader's, and (for a voter, whose ACK counts in the quorum) everything the leader
// had applied when the learner bound to it is durable at the learner. Observers are exempt from the
// durability half because ZooKeeper 3.8.0 logs the synced proposals only for followers
// (Learner.syncWithLeader) and an observer's ACK counts in no quorum.
func (c *Checker) onNewLeaderAck(s *server, e zabmodel.Event) {
	if e.Leader != s.leader.sid {
		c.report(EventStream, finding{servers: []int64{s.sid, e.Leader}, epoch: e.Epoch},
			"Server %d acknowledged NEWLEADER of epoch %d to server %d, but its last EventElected named "+
				"server %d; the checker cannot tell which history it synchronized with.",
			s.sid, e.Epoch, e.Leader, s.leader.sid)
		return
	}
	if leader, ok := c.boundLeader(s, e.Leader); ok {
		c.checkLearnerPrefix(s, leader, e.Epoch, "acknowledged NEWLEADER")
	}
	if s.voter && s.leader.known {
		c.checkLeaderHistoryDurable(s, e.Epoch, "acknowledged NEWLEADER")
	}
}

// checkLearnerPrefix reports ProcessConsistency if a learner's history is not a prefix of its
// leader's history.
func (c *Checker) checkLearnerPrefix(s, leader *server, epoch int64, when string) {
	mine, theirs := s.history(), leader.history()
	i := mine.prefixMismatch(theirs)
	if i < 0 {
		return
	}
	differs := mine.at(i)
	var leaderHas txn
	if i < theirs.length() {
		leaderHas = theirs.at(i)
	}
	c.report(ProcessConsistency, finding{servers: []int64{s.sid, leader.sid}, zxids: []int64{differs.zxid},
		epoch: epoch},
		"Server %d %s for epoch %d, but its history is not a prefix of leader %d's: at position %d it "+
			"holds %s (hash %#x) where the leader holds %s (hash %#x; zero means nothing). Its history "+
			"is its applied transactions (up to %s) followed by its logged ones; a record it kept "+
			"outside its tree, or failed to truncate, will come back at its next restart.",
		s.sid, when, epoch, leader.sid, i, zx(differs.zxid), differs.hash, zx(leaderHas.zxid), leaderHas.hash,
		zx(lastZxid(s.applied)))
}

// checkLeaderHistoryDurable reports ProcessConsistency if part of the leader's applied history,
// as it was when the learner bound to the leader, is not durable at the learner. It judges against
// the history the binding kept, not the leader's history now: the leader may have applied more
// since, or died, or been restarted and elected again, while its NEWLEADER was on the way.
func (c *Checker) checkLeaderHistoryDurable(s *server, epoch int64, when string) {
	leaderSid := s.leader.sid
	cursor := s.durabilityCursor()
	promised := s.leader.promised()
	// What the snapshot a restart would load holds at the same place is durable: skip that common
	// prefix (usually nearly all of the history), then walk the rest.
	skip := commonPrefix(promised, cursor.snap.sequence)
	cursor.snap.next = skip
	for _, t := range promised[skip:] {
		if cursor.durable(t) {
			continue
		}
		c.report(ProcessConsistency, finding{servers: []int64{s.sid, leaderSid}, zxids: []int64{t.zxid},
			epoch: epoch},
			"Server %d %s for epoch %d (its epoch files: accepted %d, current %d) while leader %d's "+
				"transaction %s (hash %#x) is not durable on its disk (fsynced log: %d of %d records, up "+
				"to %s). Acknowledging NEWLEADER or "+
				"persisting the new currentEpoch promises that the leader's history is on disk; a crash "+
				"now loses a transaction the leader counts as held by this server (ZOOKEEPER-3911, "+
				"ZOOKEEPER-4646, ZOOKEEPER-4643).",
			s.sid, when, epoch, s.acceptedEpoch, s.currentEpoch, leaderSid, zx(t.zxid), t.hash, s.synced, len(s.log),
			zx(lastZxid(s.log[:s.synced])))
		return
	}
}

// onServing checks PrefixConsistency (every committed transaction the server applied is the
// committed one) and, for a learner, ProcessConsistency against its leader.
func (c *Checker) onServing(s *server, e zabmodel.Event) {
	s.syncing = false
	c.checkAppliedAgainstCommitted(s, e.Epoch)
	if s.leader.sid == s.sid {
		return
	}
	if leader, ok := c.boundLeader(s, s.leader.sid); ok {
		c.checkLearnerPrefix(s, leader, e.Epoch, "started serving")
	}
}

// checkAppliedAgainstCommitted walks the applied history and the committed transactions together
// and reports the first applied transaction whose zxid is committed with another hash.
func (c *Checker) checkAppliedAgainstCommitted(s *server, epoch int64) {
	next := 0
	for _, t := range s.applied {
		for next < len(c.committedOrder) && c.committedOrder[next].zxid < t.zxid {
			next++
		}
		if next == len(c.committedOrder) {
			return
		}
		committed := c.committedOrder[next]
		if committed.zxid != t.zxid || committed.hash == t.hash {
			continue
		}
		c.report(PrefixConsistency, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid}, epoch: epoch},
			"Server %d started serving in epoch %d with %s (hash %#x) in its tree, but the transaction "+
				"committed at that zxid has hash %#x. Clients of this server read state that never "+
				"existed in the committed history; its synchronization kept a transaction the leader "+
				"discarded.",
			s.sid, epoch, zx(t.zxid), t.hash, committed.hash)
		return
	}
}
