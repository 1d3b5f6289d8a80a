package zabmodel

import (
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// leader is Leader.java for one term: discovery (the epoch), synchronization (NEWLEADER), and
// broadcast (proposals, acks, commits), with a learnerHandler per connected learner.
//
// Java runs lead() and every LearnerHandler as threads that block in getEpochToPropose,
// waitForEpochAck and waitForNewLeaderAck until a quorum has arrived or initLimit ticks passed. Here
// those waits are a core (discoverycore.go): a blocked thread is a waiter, which the quorum wakes
// and whose own deadline fails it alone, as each Java thread's wait would time out. The leader is
// the driver of that core and of the broadcast core (leadercore.go), and maps a thread that goes on
// after a wait to its code (resumeAfterWait).
type leader struct {
	p  *peer
	zk *zkServer

	// leaderCore is the broadcast phase's state (with the epoch, the learner handlers and whether
	// the leader stopped) and the quorum waits' (discoveryState); the leader is its driver.
	leaderCore

	// tickTimer is the next turn of lead()'s loop, armed by the core's effectTimer.
	tickTimer  sim.TimerID
	generation uint64
}

// leaderProposal is Leader.Proposal: the packet, the request, the acks.
type leaderProposal struct {
	*proposal
	req  *request
	acks []int64
}

// stateSummary is StateSummary: a peer's (currentEpoch, lastZxid).
type stateSummary struct{ currentEpoch, lastZxid int64 }

func (s stateSummary) moreRecentThan(o stateSummary) bool {
	return s.currentEpoch > o.currentEpoch || s.currentEpoch == o.currentEpoch && s.lastZxid > o.lastZxid
}

// discoveryRun steps the quorum waits' core with in and applies what it returns.
func (l *leader) discoveryRun(in discoveryInput) {
	out := l.leaderCore.discover(in)
	p := l.p
	for i := range out.effects {
		e := &out.effects[i]
		if p.applyReport(out, e) {
			continue
		}
		switch e.kind {
		case effectSetEpoch:
			p.setAcceptedEpoch(e.zxid)
		case effectLeave:
			l.fail(e.text)
		case effectHandlerShutdown:
			e.handler.shutdown(e.text)
		case effectWaitContinue:
			l.resumeAfterWait(discoveryWait(e.zxid), e.handler)
		case effectWaitStart:
			w := out.waiters[e.event]
			w.timer = p.h.setTimer(p.cfg.ticks(p.cfg.InitLimit), &waitDeadline{l: l, w: w})
		case effectWaitCancel:
			p.h.cancel(out.waiters[e.event].timer)
		case effectWaitWake:
			wakeAll(p.h, out.waiters[e.event:e.event+int32(e.zxid)], func(w *quorumWaiter) timer { return &waiterWake{l: l, w: w} })
		default:
			panic("zabmodel: the quorum waits' core asked for " + e.kind.String())
		}
	}
	l.leaderCore.done(out)
}

// wakeAll is the driver of the notifyAll that ends a quorum wait. The thread that completed the
// quorum went on at once (effectWaitContinue); each other waiting thread (a LearnerHandler, or the
// leader's own QuorumPeer thread) wakes as its own step, and the order in which they run is the
// run's choice, as the JVM's scheduler's would be: one handler may send LEADERINFO, or its DIFF,
// before another that woke at the same notifyAll.
func wakeAll(h host, waiters []*quorumWaiter, wake func(*quorumWaiter) timer) {
	pending := slices.Clone(waiters)
	for len(pending) > 0 {
		i := 0
		if len(pending) > 1 {
			i = h.choose(len(pending))
		}
		w := pending[i]
		pending = slices.Delete(pending, i, i+1)
		h.setTimer(0, wake(w)) // A post: a step of its own at this instant.
	}
}

// resumeAfterWait runs the code after wait of the thread that waited: the leader's own (handler
// nil) or a learner handler's.
func (l *leader) resumeAfterWait(wait discoveryWait, handler *learnerHandler) {
	if handler != nil {
		switch wait {
		case waitEpoch:
			handler.epochDecided(l.epoch)
		case waitEpochAck:
			handler.synchronize(handler.peerLastZxid)
		case waitNewLeaderAck:
			handler.newLeaderAcked()
		}
		return
	}
	p := l.p
	switch wait {
	case waitEpoch:
		l.zk.hzxid = MakeZxid(l.epoch, 0)
		l.lastProposed = l.zk.hzxid
		l.newLeaderZxid = l.zk.hzxid
		l.discoveryRun(discoveryInput{kind: discoveryCall, wait: waitEpochAck, sid: p.sid, summary: l.leaderSummary})
	case waitEpochAck:
		p.setCurrentEpoch(l.epoch)
		l.discoveryRun(discoveryInput{kind: discoveryCall, wait: waitNewLeaderAck, sid: p.sid, zxid: l.newLeaderZxid})
	case waitNewLeaderAck:
		l.startZkServer()
	}
}

// lead is Leader.lead up to the waits: load the data, start accepting learners, and take part in
// discovery as the first member of the connecting set.
func (p *peer) lead() {
	zk := newZKServer(p, kindLeader)
	l := &leader{p: p, zk: zk, generation: p.roleGeneration,
		leaderCore: leaderCore{cfg: p.cfg, mem: p.mem, tickSkip: true, outstanding: map[int64]*leaderProposal{}, pendingSyncs: map[int64][]*learnerHandler{},
			discoveryState: discoveryState{self: p.sid, waitingForNewEpoch: true}}}
	p.leader, p.zk = l, zk
	zk.hzxid = zk.loadData()
	l.leaderSummary = stateSummary{currentEpoch: p.currentEpoch, lastZxid: p.db.lastProcessedZxid()}
	l.run(leaderInput{kind: leaderLead, zxid: p.acceptedEpoch})
}

func (l *leader) fail(reason string) {
	if l.stopped {
		return
	}
	l.p.endRole(reason)
}

// loadData is ZooKeeperServer.loadData: the database stays as it is in memory (it was loaded before
// the election; one that a full shutdown cleared is loaded from disk), sessions the tree still has
// ephemerals for but the database no longer tracks are killed, and a clean snapshot is taken.
func (zk *zkServer) loadData() int64 {
	db := zk.p.db
	if !db.initialized {
		db.loadDataBase(SourceStartup) // ZooKeeperServer.loadData: "if (!zkDb.isInitialized())".
	}
	for _, session := range db.tree.sessionsWithEphemerals() {
		if _, ok := db.sessions[session]; !ok {
			db.tree.killSession(session, db.lastProcessedZxid())
		}
	}
	db.snapshot()
	return db.lastProcessedZxid()
}

// startZkServer is Leader.startZkServer and the rest of lead(): the establishment is a step of the
// leader's core (leaderloop.go), which reports what it commits; the driver reads what the database
// holds for it.
func (l *leader) startZkServer() {
	db := l.p.db
	l.run(leaderInput{kind: leaderEstablish, zxid: l.zk.hzxid,
		held: heldHistory{applied: db.lastProcessedZxid(), logged: db.disk().LastZxid()}})
}

// onTick is one turn of lead()'s loop, a step of the leader's core (leaderloop.go).
func (l *leader) onTick() { l.run(leaderInput{kind: leaderTick}) }

// shutdown is Leader.shutdown, a step of the leader's core (leaderloop.go): stop accepting,
// close every learner connection, end the quorum waits.
func (l *leader) shutdown() { l.run(leaderInput{kind: leaderShutdown}) }

// Accept implements net.Listener: LearnerCnxAcceptor.
func (l *leader) Accept(c net.ConnID, from sim.NodeID) net.Handler {
	if l.stopped {
		return nil
	}
	h := newLearnerHandler(l, c, from)
	l.handlers = append(l.handlers, h)
	h.handlerRun(handlerInput{kind: handlerAccepted})
	return h
}

func (l *leader) removeHandler(h *learnerHandler) {
	l.handlers = slices.DeleteFunc(l.handlers, func(x *learnerHandler) bool { return x == h })
}

// --- Broadcast ------------------------------------------------------------------------------------

// proposalRequest is ProposalRequestProcessor.
func (l *leader) proposalRequest(r *request) {
	if r.learnerSync != nil {
		l.processSync(r.learnerSync)
		return
	}
	l.zk.commits.processRequest(r)
	if r.entry == nil {
		return
	}
	if !l.p.cfg.Bugs.Has(BugZK1277) && CounterOf(r.zxid()) == 0xffffffff {
		l.fail("zxid lower 32 bits have rolled over, forcing re-election, and therefore new epoch start")
		return
	}
	l.propose(r)
	l.zk.sync.processRequest(r)
}

// propose is Leader.propose: the driver builds the proposal (its encoding and hash), the core
// decides the rest.
func (l *leader) propose(r *request) {
	lp := l.p.mem.leaderProposals.New()
	*lp = leaderProposal{proposal: newProposal(l.p, r.entry), req: r, acks: l.p.mem.acks.Make(l.p.cfg.Voters)}
	l.run(leaderInput{kind: leaderPropose, lp: lp})
}

// processAck is Leader.processAck.
func (l *leader) processAck(sid, zxid int64) {
	l.run(leaderInput{kind: leaderAck, sid: sid, zxid: zxid})
}

// forgetAcks drops a learner's acknowledgements of the outstanding proposals when its connection
// ends. The learner will be synchronized again, and a TRUNC may then remove a proposal it had
// acknowledged (its zxid is above the leader's last commit) before the leader re-sends it: an ack
// kept from before would count a copy that is no longer durable. Its NEWLEADER ack goes too while
// the leader is still waiting for a quorum of them: a learner that left may have accepted a newer
// epoch since, and a leader established on its old ack would lead epoch e after epoch e+1 has
// committed transactions it lacks (LeaderLogCompleteness; a 5-minute sweep found it). A learner
// that comes back acknowledges NEWLEADER again. 3.8.0 keeps both (the stale-ack switch).
func (l *leader) forgetAcks(sid int64) {
	l.forgetProposalAcks(sid)
	if !l.quorumFormed {
		l.newLeaderAcks = slices.DeleteFunc(l.newLeaderAcks, func(s int64) bool { return s == sid })
	}
}

// tryToCommit is Leader.tryToCommit of one proposal (see leaderCore.tryToCommit).
func (l *leader) tryToCommit(lp *leaderProposal, zxid int64) {
	l.run(leaderInput{kind: leaderTryCommit, lp: lp, zxid: zxid})
}

// processSync is Leader.processSync (see leaderCore.processSync).
func (l *leader) processSync(h *learnerHandler) { l.run(leaderInput{kind: leaderSync, h: h}) }

// startForwarding is Leader.startForwarding (see leaderCore.startForwarding): once the packets are
// queued, the handler forwards every new proposal. It returns the last proposed zxid.
func (l *leader) startForwarding(h *learnerHandler, lastSeenZxid int64) int64 {
	l.run(leaderInput{kind: leaderForward, h: h, lastSeen: lastSeenZxid})
	h.forwarding = true
	return l.lastProposed
}

// revalidateSession is LearnerMaster.revalidateSession of session id with its timeout: the
// learner's client reconnected there (the handler's core parsed the REVALIDATE).
func (l *leader) revalidateSession(h *learnerHandler, id int64, timeout int32) {
	valid := l.zk.global != nil && l.zk.global.touch(id, timeout)
	if valid {
		if err := l.zk.global.setOwner(id, h); err != nil {
			valid = false
		}
	}
	h.queuePacket(l.p.mem.encodePacket(&proto.QuorumPacket{Type: pktRevalidate, Zxid: -1, Data: revalidateReplyData(id, valid)}))
}

// touch is LearnerMaster.touch: a learner reported activity of a session.
func (l *leader) touch(id int64, timeoutMs int32) {
	if l.zk.global != nil {
		l.zk.global.touch(id, timeoutMs)
	}
}

func (l *leader) syncTimeout() clock.Duration { return l.p.cfg.ticks(l.p.cfg.SyncLimit) }
