package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/electionmodel"
)

// QuorumPeer's role loop as a core (see ready.go). peerCore is what QuorumPeer.run decides with:
// the election (electionmodel's pure FastLeaderElection), the role it is in, the vote it decided
// and the last proposal reported. Its steps turn the election's output into effects (the
// notifications to send, the transport's connections to every voter, the election's timer), leave
// LOOKING for the role decided, and end a role (the shutdown, then the post that starts the next
// election). peer (server.go) embeds it and is its driver (runPeer); the driver keeps what only the
// world can answer: the timer's id, and the server's last logged zxid and current epoch (self),
// which may load a cleared database from disk.
//
// Ordering contract: a ready lists its effects in the order QuorumPeer's thread performs them. An
// election step's EventVote (the proposal changed while LOOKING) precedes its notifications, which
// precede the connections to every voter, which precede the election's timer (cancelled, then
// re-armed); a decision comes after all of them, as a step of its own (resume, then peerContinue):
// the role changes only once the election's effects are applied, so the events they report carry
// LOOKING. The decision's note and EventElected precede effectLead or effectFollow. A role's end
// notes the reason, then shuts the role down (effectRoleShutdown) with the role still set, as
// Leader.shutdown and Learner.shutdown run inside lead() and followLeader(); only then, a step of
// its own, the election leaves the old round, the role becomes LOOKING and effectPost starts the
// next election as a step of its own (the loop's next iteration). Entering LOOKING notes it and
// ends with effectAskSelf: the core resumes with the server's last logged zxid and current epoch,
// read after the note, and starts the round with them.

// peerInputKind names what a step of QuorumPeer's core is about.
type peerInputKind uint8

const (
	// peerLook enters LOOKING and starts a round (QuorumPeer.start, or the loop's next iteration).
	peerLook peerInputKind = iota + 1
	// peerNotification is a notification the election transport delivered.
	peerNotification
	// peerElectionTimeout is the election's timer expiring; delivered is whether the transport
	// delivered every queued notification (QuorumCnxManager.haveDelivered).
	peerElectionTimeout
	// peerRoleEnd is lead() or followLeader() returning, for reason.
	peerRoleEnd
	// peerStartPosted is the post of a role's end: the election of generation starts, unless
	// another role began meanwhile.
	peerStartPosted
	// peerContinue resumes the core after a ready that set resume; self is the answer of an
	// effectAskSelf.
	peerContinue
)

// peerInput is one input of QuorumPeer's core.
type peerInput struct {
	kind         peerInputKind
	self         electionmodel.Self
	notification electionmodel.Notification
	delivered    bool
	reason       string
	generation   uint64
}

// peerPending is what a resumed step of QuorumPeer's core goes on with.
type peerPending uint8

const (
	peerPendingNone peerPending = iota
	// peerPendingStart starts the round with the self the driver answered.
	peerPendingStart
	// peerPendingDecide leaves LOOKING for the vote decided.
	peerPendingDecide
	// peerPendingLeave goes back to LOOKING once the role is shut down.
	peerPendingLeave
)

// peerCore is QuorumPeer's memory for its role loop.
type peerCore struct {
	election *electionmodel.Election
	lastVote electionmodel.Vote // the last proposal reported as EventVote

	role Role
	vote electionmodel.Vote // QuorumPeer.currentVote once decided

	// roleGeneration increases with every role change, so that callbacks of an earlier role can
	// tell they are stale.
	roleGeneration uint64

	// pending is what the next peerContinue goes on with; decision is the vote it decides.
	pending  peerPending
	decision electionmodel.Vote
	readies  readyPool
}

// step takes one input and returns what must happen; the ready is the driver's until it gives it
// back with done.
func (c *peerCore) step(in peerInput) *ready {
	out := c.readies.get()
	switch in.kind {
	case peerLook:
		c.look(out)
	case peerStartPosted:
		if c.role == Looking && c.roleGeneration == in.generation {
			c.look(out)
		}
	case peerNotification:
		c.electionOutput(out, c.election.Receive(in.notification, in.self))
	case peerElectionTimeout:
		c.electionOutput(out, c.election.Timeout(in.delivered, in.self))
	case peerRoleEnd:
		if c.role == Looking {
			break
		}
		out.note("peer", fmt.Sprintf("leaving %s: %s", c.role, in.reason))
		out.add(effect{kind: effectRoleShutdown})
		c.pending = peerPendingLeave
		out.resume = true
	case peerContinue:
		pending := c.pending
		c.pending = peerPendingNone
		switch pending {
		case peerPendingStart:
			c.electionOutput(out, c.election.Start(in.self))
		case peerPendingDecide:
			c.decide(out, c.decision)
		case peerPendingLeave:
			c.election.Leave()
			c.role = Looking
			c.roleGeneration++
			out.add(effect{kind: effectPost, zxid: int64(c.roleGeneration)})
		}
	}
	return out
}

func (c *peerCore) done(r *ready) { c.readies.put(r) }

// look enters LOOKING (QuorumPeer's loop reaching lookForLeader) and asks for what the round
// starts with.
func (c *peerCore) look(out *ready) {
	c.role = Looking
	c.roleGeneration++
	out.note("peer", "LOOKING")
	out.add(effect{kind: effectAskSelf})
	c.pending = peerPendingStart
	out.resume = true
}

// electionOutput turns one output of the election into effects (see the ordering contract).
func (c *peerCore) electionOutput(out *ready, eo electionmodel.Output) {
	if c.role == Looking {
		if v := c.election.Proposal(); v.Leader != c.lastVote.Leader || v.Zxid != c.lastVote.Zxid ||
			v.PeerEpoch != c.lastVote.PeerEpoch || c.election.LogicalClock() != c.lastVote.ElectionEpoch {
			c.lastVote = v
			c.lastVote.ElectionEpoch = c.election.LogicalClock()
			out.observe(Event{Kind: EventVote, Leader: v.Leader, Zxid: v.Zxid, Epoch: v.PeerEpoch, Round: c.election.LogicalClock()})
		}
	}
	for _, s := range eo.Send {
		out.add(effect{kind: effectNotify, zxid: s.To, packet: s.Notification.Encode()})
	}
	if eo.ConnectAll {
		out.add(effect{kind: effectConnectAll})
	}
	if eo.Timer.Set || eo.Timer.Cancel {
		out.add(effect{kind: effectElectionTimer, valid: eo.Timer.Set, zxid: int64(eo.Timer.After)})
	}
	if eo.Decided != nil {
		c.decision = *eo.Decided
		c.pending = peerPendingDecide
		out.resume = true
	}
}

// decide leaves LOOKING for the role the election chose.
func (c *peerCore) decide(out *ready, v electionmodel.Vote) {
	c.vote = v
	c.roleGeneration++
	switch v.State {
	case electionmodel.Leading:
		c.role = Leading
	case electionmodel.Following:
		c.role = Following
	default:
		c.role = Observing
	}
	out.note("peer", fmt.Sprintf("%s (leader %d, round %#x, peerEpoch %d)", c.role, v.Leader, v.ElectionEpoch, v.PeerEpoch))
	out.observe(Event{Kind: EventElected, Leader: v.Leader, Epoch: v.PeerEpoch, Round: v.ElectionEpoch})
	if c.role == Leading {
		out.add(effect{kind: effectLead})
		return
	}
	out.add(effect{kind: effectFollow, zxid: v.Leader})
}
