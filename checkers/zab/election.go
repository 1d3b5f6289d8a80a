package zab

import (
	"github.com/zabsim/zabsim/zabmodel"
)

// voteKey is a vote as FastLeaderElection compares them: proposed leader, zxid and peer epoch.
type voteKey struct {
	leader, zxid, epoch int64
}

// voteHistory follows the TLA+ FastLeaderElection spec's historyVotes: a server's votes for other
// servers in one round, recorded whenever its vote changes. Votes for itself are not recorded.
type voteHistory struct {
	round        int64
	current      voteKey
	hasCurrent   bool
	lastRecorded voteKey
	recorded     map[voteKey]bool
}

func (h *voteHistory) reset() {
	h.hasCurrent = false
	clear(h.recorded)
}

// onVote checks NoVoteCircle: within one round, returning to a vote for another server that the
// server moved away from means the votes went round a circle, which the total order on votes
// forbids.
func (c *Checker) onVote(s *server, e zabmodel.Event) {
	h := &s.votes
	if h.recorded == nil {
		h.recorded = map[voteKey]bool{}
	}
	if e.Round != h.round {
		h.reset()
		h.round = e.Round
	}
	vote := voteKey{leader: e.Leader, zxid: e.Zxid, epoch: e.Epoch}
	if h.hasCurrent && vote == h.current {
		return
	}
	h.current, h.hasCurrent = vote, true
	if vote.leader == s.sid {
		return
	}
	if len(h.recorded) > 0 && vote != h.lastRecorded && h.recorded[vote] {
		c.report(NoVoteCircle, finding{servers: []int64{s.sid, vote.leader}, zxids: []int64{vote.zxid},
			epoch: vote.epoch},
			"In election round %d, server %d went back to voting for server %d (zxid %s, peer epoch %d) "+
				"after it had moved away from that vote. Within a round FastLeaderElection only ever "+
				"adopts a vote that beats its current one (higher peer epoch, then zxid, then sid), so a "+
				"return means the vote comparison is not a total order or a stale notification was "+
				"taken as current; look at totalOrderPredicate and the round checks in lookForLeader.",
			e.Round, s.sid, vote.leader, zx(vote.zxid), vote.epoch)
	}
	if len(h.recorded) < c.maxHistory {
		h.recorded[vote] = true
	}
	h.lastRecorded = vote
}

// onElected records the server's new role and binds a learner to its leader's current history.
func (c *Checker) onElected(s *server, e zabmodel.Event) {
	s.leaveRole()
	s.role = e.Role
	s.electedEpoch = e.Epoch
	s.votes.reset()
	s.leader = leaderBinding{sid: e.Leader}
	s.syncing = e.Leader != s.sid
	leader, ok := c.server(e.Leader)
	if !ok || e.Leader == s.sid || !leader.up {
		return
	}
	s.leader = leaderBinding{
		sid:         e.Leader,
		incarnation: leader.incarnation,
		generation:  leader.generation,
		floor:       len(leader.applied),
		history:     clip(leader.applied, len(leader.applied)),
		known:       true,
	}
}

// onLearnerSync binds the learner a leader starts synchronizing to that leader's process. The
// learner connects after it elects the leader, so if the process it elected has been replaced (or
// was down), the one that synchronizes it is the one whose history NEWLEADER will carry; everything
// that process has applied now is sent before that NEWLEADER. A learner that meanwhile elected
// another server is not bound: the handler serves a connection the learner has left.
func (c *Checker) onLearnerSync(leader *server, e zabmodel.Event) {
	learner, ok := c.server(e.Learner)
	if !ok || !learner.syncing || learner.leader.sid != leader.sid || !leader.up {
		return
	}
	binding := learner.leader
	sameProcess := binding.known && binding.incarnation == leader.incarnation &&
		binding.generation == leader.generation
	if sameProcess {
		// The floor stays what the learner bound to when it elected the leader (a lower bound of
		// what the synchronization sends); the history grows to what the SNAP, if any, carries.
		binding.history = clip(leader.applied, len(leader.applied))
	} else {
		binding = leaderBinding{sid: leader.sid, incarnation: leader.incarnation,
			generation: leader.generation, floor: len(leader.applied),
			history: clip(leader.applied, len(leader.applied)), known: true}
	}
	// Every proposal above the applied history is still in the leader's pipeline (a proposal
	// leaves outstandingProposals only for toBeApplied, and that only when it is applied), so
	// Leader.startForwarding queues all of them behind this synchronization.
	pipeline := countUpTo(leader.proposed, lastZxid(leader.applied))
	binding.forwarded = leader.proposed[pipeline:len(leader.proposed):len(leader.proposed)]
	binding.snapFrom, binding.snapTo = lastZxid(leader.applied), 0
	learner.leader = binding
}

// onEpochQuorum checks the first half of Leadership: the TLA+ spec records a server as an epoch's
// leader when a quorum acknowledged the epoch, so two such events for one epoch mean two leaders.
func (c *Checker) onEpochQuorum(s *server, e zabmodel.Event) {
	if previous, ok := c.epochQuorumBy[e.Epoch]; ok {
		c.report(Leadership, finding{servers: []int64{s.sid, previous}, epoch: e.Epoch},
			"Server %d (acceptedEpoch %d) received ACKEPOCH from a quorum for epoch %d, but server %d "+
				"(acceptedEpoch %d) already had such a quorum for the same epoch. Two prospective leaders "+
				"in one epoch can propose different transactions with the same zxids. The new epoch must "+
				"exceed every acceptedEpoch of the quorum, and a learner must refuse a LEADERINFO whose "+
				"epoch is not above its own acceptedEpoch (ZOOKEEPER-335).",
			s.sid, s.acceptedEpoch, e.Epoch, previous, c.servers[previous].acceptedEpoch)
	} else {
		c.epochQuorumBy[e.Epoch] = s.sid
	}
	s.leading = e.Epoch
	s.established = false
}

// onCurrentEpoch records the epoch file. A learner that persists the new epoch while it syncs
// promises, as with its NEWLEADER ACK, that it durably holds its leader's history (ZOOKEEPER-4643:
// a newer epoch with a shorter log can win the next election and truncate committed txns).
func (c *Checker) onCurrentEpoch(s *server, e zabmodel.Event) {
	s.currentEpoch = e.Epoch
	if !s.syncing || !s.voter {
		return
	}
	if !s.leader.known || s.leader.sid == s.sid {
		return
	}
	c.checkLeaderHistoryDurable(s, e.Epoch, "persisted currentEpoch")
}

// onEstablished checks Leadership and LeaderLogCompleteness, then commits what the leader reports
// that its establishment commits: a quorum acknowledged NEWLEADER for its history, through
// e.Through (the leader reads the range from its database; the transactions in it are those the
// leader's own events put in its history).
func (c *Checker) onEstablished(s *server, e zabmodel.Event) {
	previous, ok := c.establishedBy[e.Epoch]
	// A standalone server (ZooKeeperServerMain, a single voter) has no epochs to advance: every
	// start of its process establishes the same one again.
	standaloneRestart := ok && previous.sid == s.sid && previous.incarnation < s.incarnation &&
		len(c.voterSids) == 1
	switch {
	case ok && !standaloneRestart:
		c.report(Leadership, finding{servers: []int64{s.sid, previous.sid}, epoch: e.Epoch},
			"Server %d established itself as leader of epoch %d, which server %d had already "+
				"established. Only one server may collect a NEWLEADER quorum per epoch; otherwise two "+
				"leaders broadcast conflicting transactions under the same zxids. Check how the epoch "+
				"was chosen and acknowledged (acceptedEpoch, LEADERINFO, ACKEPOCH).",
			s.sid, e.Epoch, previous.sid)
	default:
		c.establishedBy[e.Epoch] = establishment{sid: s.sid, incarnation: s.incarnation}
	}
	s.leading = e.Epoch
	s.established = true
	history := s.history()
	s.lastCounter = c.config.InitialZxidCounter
	if len(c.voterSids) == 1 {
		// The initial counter is a quorum leader's (Leader.lead sets it); a standalone server
		// counts from its last zxid, or from 1.
		s.lastCounter = 0
	}
	if n := history.length(); n > 0 && zabmodel.EpochOf(history.at(n-1).zxid) == e.Epoch {
		// Only a standalone server holds zxids of the epoch it establishes: it goes on counting.
		s.lastCounter = zabmodel.CounterOf(history.at(n - 1).zxid)
	}
	committed := c.reportedHistory(s, history, e)
	c.checkLeaderComplete(s, committed, e.Epoch)
	c.commitHistory(s, committed, e.Epoch)
}

// reportedHistory is the part of the leader's history that its establishment reports it commits
// (e.Through). A report that stops short of the history the leader's events built is impossible
// for a correct server (establishing commits everything it holds; NEWLEADER promised all of it to
// the quorum): it is an EventStream violation, and only the reported part is committed. A report
// beyond the history is not one: a tree's last processed zxid may be claimed above its last
// transaction (a learner's setlastProcessedZxid at NEWLEADER), and nothing beyond the history
// can be committed anyway.
func (c *Checker) reportedHistory(s *server, history historyView, e zabmodel.Event) historyView {
	committed := history.through(e.Through)
	if n := committed.length(); n < history.length() {
		beyond := history.at(n)
		c.report(EventStream, finding{servers: []int64{s.sid}, zxids: []int64{beyond.zxid}, epoch: e.Epoch},
			"Server %d established epoch %d reporting that it commits its history through %s, but "+
				"its history (applied up to %s, logged up to %s) goes on to %s. Establishing commits "+
				"everything the leader holds, which the quorum's NEWLEADER ACKs promised to keep: the "+
				"leader's report of what it commits (Leader.startZkServer, the Through of its "+
				"EventEstablished) is wrong.",
			s.sid, e.Epoch, zx(e.Through), zx(lastZxid(history.applied)), zx(lastZxid(s.log)), zx(history.at(history.length()-1).zxid))
	}
	return committed
}

// checkLeaderComplete walks the committed transactions and the leader's history together, both
// sorted by zxid, and reports the first committed transaction of an epoch up to the leader's own
// that the leader lacks.
//
// Transactions of later epochs are not owed: a leader paused in synchronization may collect its
// NEWLEADER quorum after a later epoch has been established and has committed. Java counts every
// NEWLEADER ACK that reaches Leader.waitForNewLeaderAck (LearnerHandler.run reads it from the
// socket even if the learner has since left, and the ack set is never pruned), so such a stale
// leader does start serving, only to step down within a tick for want of a synced quorum (the ping
// loop of Leader.lead). It cannot commit anything: a quorum of proposal acks would meet the later
// epoch's quorum, whose members have a higher acceptedEpoch and follow another leader. The system
// spec (ZkV3_7_0.tla) likewise checks LeaderLogCompleteness only for leaderOracle, the newest leader.
func (c *Checker) checkLeaderComplete(s *server, history historyView, epoch int64) {
	next := 0
	for _, committed := range c.committedOrder {
		if zabmodel.EpochOf(committed.zxid) > epoch {
			// Sorted by zxid: every later committed transaction is of a later epoch too.
			return
		}
		for next < history.length() && history.at(next).zxid < committed.zxid {
			next++
		}
		if next < history.length() && history.at(next) == committed {
			continue
		}
		c.report(LeaderLogCompleteness, finding{servers: []int64{s.sid}, zxids: []int64{committed.zxid},
			epoch: epoch},
			"Server %d established itself as leader of epoch %d, but its history (applied up to %s, "+
				"logged up to %s; it was elected with peer epoch %d) lacks the committed transaction %s "+
				"(hash %#x). A new leader must hold every committed transaction, or synchronization "+
				"erases it from the learners: the election chose a server whose log was not the most "+
				"complete in its quorum, or a quorum member acknowledged a transaction it did not "+
				"durably hold.",
			s.sid, epoch, zx(lastZxid(history.applied)), zx(lastZxid(s.log)), s.electedEpoch, zx(committed.zxid),
			committed.hash)
		return
	}
}

// commitHistory commits every transaction of an established leader's history.
func (c *Checker) commitHistory(s *server, history historyView, epoch int64) {
	// next walks the committed order alongside the history, both sorted by zxid: it is the first
	// committed transaction with a zxid at least t's, which is where commit inserts t.
	next := 0
	for i := range history.length() {
		t := history.at(i)
		for next < len(c.committedOrder) && c.committedOrder[next].zxid < t.zxid {
			next++
		}
		var hash uint64
		ok := next < len(c.committedOrder) && c.committedOrder[next].zxid == t.zxid
		if ok {
			hash = c.committedOrder[next].hash
		}
		if ok && hash != t.hash {
			c.report(Agreement, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid}, epoch: epoch},
				"Server %d established itself as leader of epoch %d with transaction %s (hash %#x) in its "+
					"history, but a different transaction (hash %#x) was already committed at that zxid. "+
					"Establishing commits the whole history, so two different transactions are now "+
					"committed under one zxid.",
				s.sid, epoch, zx(t.zxid), t.hash, hash)
			continue
		}
		if !ok {
			c.commit(t, s.sid, epoch)
		}
	}
}

func lastZxid(sequence []txn) int64 {
	if len(sequence) == 0 {
		return 0
	}
	return sequence[len(sequence)-1].zxid
}
