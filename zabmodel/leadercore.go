package zabmodel

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The leader's broadcast phase as a core (see ready.go): leaderCore holds what Leader.java keeps
// for broadcast (the outstanding proposals and their acks, the committed frontier, the proposals
// to be applied, the syncs waiting for a commit) and decides, input by input, what must happen:
// packets queued to learner handlers, events for the checkers, committed requests handed to the
// commit processor. leader (leader.go) embeds it and is its driver: run applies each ready.
//
// Ordering contract of its readies: a proposal's EventPropose precedes its PROPOSAL packets (the
// checkers see a proposal before any learner can acknowledge it); a commit's EventCommit precedes
// its COMMIT and INFORM packets, which precede the committed request's hand-on to the commit
// processor (Leader.commit before CommitProcessor.commit, as in tryToCommit); the SYNC answers a
// commit releases come after that hand-on. The ready ends (resume) after the hand-on, which may
// lead to a new proposal of this leader; the core takes up the rest of the commit after it.

// leaderInputKind names what a step of the leader's core is about.
type leaderInputKind uint8

const (
	// leaderPropose is Leader.propose of proposal lp (built by the driver: its encoding and hash).
	leaderPropose leaderInputKind = iota + 1
	// leaderAck is Leader.processAck: sid acknowledges zxid.
	leaderAck
	// leaderTryCommit is Leader.tryToCommit of lp on its own (a test's way in; acks come through
	// leaderAck).
	leaderTryCommit
	// leaderSync is Leader.processSync: learner handler h forwarded a sync.
	leaderSync
	// leaderForward is Leader.startForwarding: handler h is synced to lastSeen.
	leaderForward
	// leaderContinue resumes the core after a ready that ended with resume.
	leaderContinue
	// leaderEstablish is Leader.startZkServer (leaderloop.go): zxid is the new epoch's, held what
	// the database holds.
	leaderEstablish
	// leaderTick is one turn of lead()'s loop (leaderloop.go).
	leaderTick
	// leaderLead is Leader.lead up to its first wait (leaderloop.go): zxid is the server's
	// acceptedEpoch, which the leader's own getEpochToPropose takes.
	leaderLead
	// leaderShutdown is Leader.shutdown (leaderloop.go).
	leaderShutdown
)

// leaderInput is one input of the leader's core.
type leaderInput struct {
	kind     leaderInputKind
	lp       *leaderProposal
	sid      int64
	zxid     int64
	h        *learnerHandler
	lastSeen int64
	held     heldHistory
}

// leaderCore is the broadcast state of Leader.java for one term. Its step reads only its memory
// and the configuration; the learner handlers it knows are references to their own state (what
// they do with a queued packet is their business, applied by the driver).
type leaderCore struct {
	cfg *Config
	mem *memory

	epoch    int64
	handlers []*learnerHandler
	stopped  bool

	// established says that a quorum acknowledged NEWLEADER and the leader serves; tick is
	// Leader.tick, the ticks since then, and tickSkip whether the next turn of the loop is the half
	// tick that only pings (leaderloop.go).
	established bool
	tick        int
	tickSkip    bool

	lastProposed  int64
	lastCommitted int64
	outstanding   map[int64]*leaderProposal
	toBeApplied   []*leaderProposal
	pendingSyncs  map[int64][]*learnerHandler

	// committing holds the proposals whose commits the core resumes after their hand-ons, the
	// innermost last: a hand-on may lead to another commit at once.
	committing []*leaderProposal

	// discoveryState is the state of the quorum waits before broadcast (discoverycore.go).
	discoveryState

	readies readyPool
}

// step takes one input and returns what must happen; the ready is the driver's until it gives it
// back with done.
func (c *leaderCore) step(in leaderInput) *ready {
	out := c.readies.get()
	switch in.kind {
	case leaderPropose:
		c.propose(out, in.lp)
	case leaderAck:
		c.processAck(out, in.sid, in.zxid)
	case leaderTryCommit:
		c.tryToCommit(out, in.lp, in.zxid)
	case leaderSync:
		c.processSync(out, in.h)
	case leaderForward:
		c.startForwarding(out, in.h, in.lastSeen)
	case leaderEstablish:
		c.establish(out, in.zxid, in.held)
	case leaderTick:
		c.onTick(out)
	case leaderLead:
		c.lead(out, in.zxid)
	case leaderShutdown:
		c.shutdown(out)
	case leaderContinue:
		if n := len(c.committing); n > 0 {
			lp := c.committing[n-1]
			c.committing[n-1] = nil
			c.committing = c.committing[:n-1]
			c.finishCommit(out, lp)
		}
	}
	return out
}

func (c *leaderCore) done(r *ready) { c.readies.put(r) }

// failed adds a broken assertion: the driver ends the step there.
func (c *leaderCore) failed(out *ready, invariant, format string, args ...any) {
	out.add(effect{kind: effectFail, label: invariant, text: fmt.Sprintf(format, args...)})
}

func (c *leaderCore) note(out *ready, format string, args ...any) {
	out.note("leader", fmt.Sprintf(format, args...))
}

func (c *leaderCore) queue(out *ready, h *learnerHandler, packet []byte) {
	out.add(effect{kind: effectQueuePacket, handler: h, packet: packet})
}

// propose is Leader.propose.
func (c *leaderCore) propose(out *ready, lp *leaderProposal) {
	if lp.zxid <= c.lastProposed {
		c.failed(out, InvariantProposalOrder, "proposing %s after %s", FormatZxid(lp.zxid), FormatZxid(c.lastProposed))
		return
	}
	c.lastProposed = lp.zxid
	c.outstanding[lp.zxid] = lp
	out.observe(Event{Kind: EventPropose, Zxid: lp.zxid, Hash: lp.hash, Epoch: c.epoch, Txn: lp.entry, TxnData: lp.data})
	pkt := c.mem.encodePacket(&proto.QuorumPacket{Type: pktProposal, Zxid: lp.zxid, Data: lp.data})
	for _, h := range c.handlers {
		if h.forwarding && !h.observer {
			c.queue(out, h, pkt)
			out.add(effect{kind: effectProposalSent, handler: h, zxid: lp.zxid})
		}
	}
}

// processAck is Leader.processAck.
func (c *leaderCore) processAck(out *ready, sid, zxid int64) {
	if c.stopped || CounterOf(zxid) == 0 || len(c.outstanding) == 0 || c.lastCommitted >= zxid {
		return
	}
	lp, ok := c.outstanding[zxid]
	if !ok {
		c.note(out, "trying to commit future proposal %s from %d", FormatZxid(zxid), sid)
		return
	}
	if c.cfg.IsVoter(sid) && !slices.Contains(lp.acks, sid) {
		lp.acks = append(lp.acks, sid)
	}
	c.tryToCommit(out, lp, zxid)
}

// forgetProposalAcks drops a learner's acknowledgements of the outstanding proposals when its
// connection ends (see leader.forgetAcks). It changes the core's state only: no effect.
func (c *leaderCore) forgetProposalAcks(sid int64) {
	for _, zxid := range sortedKeys(c.outstanding) {
		lp := c.outstanding[zxid]
		lp.acks = slices.DeleteFunc(lp.acks, func(s int64) bool { return s == sid })
	}
}

// tryToCommit is Leader.tryToCommit: in zxid order, with a quorum of acks.
func (c *leaderCore) tryToCommit(out *ready, lp *leaderProposal, zxid int64) {
	if _, earlier := c.outstanding[zxid-1]; earlier {
		return
	}
	if !c.cfg.Quorum(lp.acks) {
		return
	}
	if zxid != c.lastCommitted+1 {
		c.note(out, "committing %s, not first: first is %s", FormatZxid(zxid), FormatZxid(c.lastCommitted+1))
	}
	if zxid <= c.lastCommitted {
		c.failed(out, InvariantCommitFrontier, "committing %s after %s", FormatZxid(zxid), FormatZxid(c.lastCommitted))
		return
	}
	delete(c.outstanding, zxid)
	c.toBeApplied = append(c.toBeApplied, lp)
	c.lastCommitted = zxid
	out.observe(Event{Kind: EventCommit, Zxid: zxid, Hash: lp.hash, Epoch: c.epoch, Txn: lp.entry})
	commit := c.mem.encodePacket(&proto.QuorumPacket{Type: pktCommit, Zxid: zxid})
	var inform []byte // Encoded for the first observer, if there is one.
	for _, h := range c.handlers {
		if !h.forwarding {
			continue
		}
		if h.observer {
			if inform == nil {
				inform = c.mem.encodePacket(&proto.QuorumPacket{Type: pktInform, Zxid: zxid, Data: lp.data})
			}
			c.queue(out, h, inform)
		} else {
			c.queue(out, h, commit)
		}
	}
	out.add(effect{kind: effectCommitRequest, req: lp.req})
	out.resume = true
	c.committing = append(c.committing, lp)
}

// finishCommit is the rest of tryToCommit, after the commit processor has the request.
func (c *leaderCore) finishCommit(out *ready, lp *leaderProposal) {
	c.toBeApplied = slices.DeleteFunc(c.toBeApplied, func(x *leaderProposal) bool { return x == lp })
	if syncs, ok := c.pendingSyncs[lp.zxid]; ok {
		delete(c.pendingSyncs, lp.zxid)
		for _, h := range syncs {
			c.queue(out, h, c.mem.encodePacket(&proto.QuorumPacket{Type: pktSync, Zxid: 0}))
		}
	}
}

// processSync is Leader.processSync: answer at once if nothing is outstanding, else after the last
// proposal commits. No quorum is consulted: this is ZOOKEEPER-1675.
func (c *leaderCore) processSync(out *ready, h *learnerHandler) {
	if len(c.outstanding) == 0 {
		c.queue(out, h, c.mem.encodePacket(&proto.QuorumPacket{Type: pktSync, Zxid: 0}))
		return
	}
	c.pendingSyncs[c.lastProposed] = append(c.pendingSyncs[c.lastProposed], h)
}

// startForwarding is Leader.startForwarding: a synced learner gets what was committed or proposed
// after its point, and from now on every new proposal (the handler's forwarding flag, which the
// driver sets once the packets are queued).
func (c *leaderCore) startForwarding(out *ready, h *learnerHandler, lastSeenZxid int64) {
	if c.lastProposed <= lastSeenZxid {
		return
	}
	for _, lp := range c.toBeApplied {
		if lp.zxid <= lastSeenZxid {
			continue
		}
		c.queue(out, h, c.mem.encodePacket(&proto.QuorumPacket{Type: pktProposal, Zxid: lp.zxid, Data: lp.data}))
		c.queue(out, h, c.mem.encodePacket(&proto.QuorumPacket{Type: pktCommit, Zxid: lp.zxid}))
	}
	if h.observer {
		return
	}
	for _, zxid := range sortedKeys(c.outstanding) {
		if zxid <= lastSeenZxid {
			continue
		}
		c.queue(out, h, c.mem.encodePacket(&proto.QuorumPacket{Type: pktProposal, Zxid: zxid, Data: c.outstanding[zxid].data}))
		out.add(effect{kind: effectProposalSent, handler: h, zxid: zxid})
	}
}

// run is the driver of the leader's core: it steps the core with in and applies what it returns,
// stepping it again as long as a ready asks to resume.
func (l *leader) run(in leaderInput) {
	for {
		out := l.step(in)
		resume := out.resume
		for i := range out.effects {
			l.apply(out, &out.effects[i])
		}
		l.done(out)
		if !resume {
			return
		}
		in = leaderInput{kind: leaderContinue}
	}
}

// apply is the driver of one effect of the leader's core.
func (l *leader) apply(out *ready, e *effect) {
	p := l.p
	if p.applyReport(out, e) {
		return
	}
	switch e.kind {
	case effectQueuePacket:
		e.handler.queuePacket(e.packet)
	case effectProposalSent:
		e.handler.proposalSent(e.zxid)
	case effectCommitRequest:
		l.zk.commits.commit(e.req)
	case effectStartup:
		l.zk.startup()
		l.zk.startContainerManager() // LeaderZooKeeperServer.startup
	case effectElectionVote:
		p.election.UpdateElectionVote(e.zxid)
	case effectClaimZxid:
		p.db.tree.setLastProcessedZxid(e.zxid)
	case effectSetZxid:
		l.zk.hzxid = e.zxid
	case effectStartServing:
		p.startServing()
	case effectTimer:
		l.tickTimer = p.h.setTimer(clock.Duration(e.zxid), (*leaderTickTimer)(l))
	case effectPing:
		e.handler.ping()
	case effectLeave:
		l.fail(e.text)
	case effectListen:
		if err := p.h.listen(QuorumPort, l); err != nil {
			panic("zabmodel: " + err.Error()) // The port is the process's own: a bug.
		}
	case effectWaitCall:
		l.discoveryRun(discoveryInput{kind: discoveryCall, wait: discoveryWait(e.event), sid: p.sid, lastAcceptedEpoch: e.zxid})
	case effectTimerCancel:
		p.h.cancel(l.tickTimer)
	case effectUnlisten:
		p.h.unlisten(QuorumPort)
	case effectHandlerShutdown:
		e.handler.shutdown(e.text)
	case effectWaitCancel:
		p.h.cancel(out.waiters[e.event].timer)
	default:
		panic("zabmodel: the leader's core asked for " + e.kind.String())
	}
}
