package zabmodel

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// The leader's discovery and synchronization waits as a core (see ready.go): Leader
// .getEpochToPropose, waitForEpochAck and waitForNewLeaderAck, which Java's QuorumPeer thread
// (lead()) and every LearnerHandler thread call and block in until a quorum has arrived or
// initLimit ticks passed. discoveryState is their state (the connecting, electing and acking sets
// and the threads waiting in each), and a thread blocked in a wait is data, a quorumWaiter: which
// wait, and which thread (a learner handler, or nil for the leader's own). The core's step takes
// one call of a wait, or a waiter's deadline, and returns a ready: the acceptedEpoch write, the
// epoch quorum's event, the caller going on at once (effectWaitContinue), the caller starting to
// wait (effectWaitStart: the driver arms its deadline), and the notifyAll that ends a wait
// (effectWaitCancel for each waiter's deadline, then effectWaitWake). The leader (leader.go) is its
// driver: it maps a waiter that goes on to the code after the wait of its thread.
//
// Ordering contract: when a call completes a quorum, the core's state says so before any effect is
// applied (a thread that goes on and calls the next wait sees it); the quorum's persistence (the
// acceptedEpoch) precedes the caller's going on, which precedes the waking of the others: the
// thread that completed the quorum goes on at once, and each other waiting thread wakes as a step
// of its own, in an order the world draws (effectWaitWake), as the JVM's scheduler would pick it.

// discoveryWait names one of the leader's quorum waits.
type discoveryWait uint8

const (
	// waitEpoch is Leader.getEpochToPropose.
	waitEpoch discoveryWait = iota + 1
	// waitEpochAck is Leader.waitForEpochAck.
	waitEpochAck
	// waitNewLeaderAck is Leader.waitForNewLeaderAck.
	waitNewLeaderAck
)

var discoveryWaitNames = [...]string{waitEpoch: "epoch", waitEpochAck: "epoch-ack", waitNewLeaderAck: "newleader-ack"}

func (w discoveryWait) String() string {
	if int(w) < len(discoveryWaitNames) && w != 0 {
		return discoveryWaitNames[w]
	}
	return fmt.Sprintf("wait(%d)", w)
}

// timeoutReason is what a thread that timed out in the wait reports (Leader's exception texts).
func (w discoveryWait) timeoutReason() string {
	switch w {
	case waitEpoch:
		return "timeout while waiting for epoch from quorum"
	case waitEpochAck:
		return "timeout while waiting for epoch to be acked by quorum"
	}
	return "timeout while waiting for NEWLEADER to be acked by quorum"
}

// quorumWaiter is a thread blocked in a quorum wait.
type quorumWaiter struct {
	wait discoveryWait
	// handler is the learner handler whose thread waits; nil is the leader's own QuorumPeer thread.
	handler *learnerHandler
	// done says that the wait ended, by a quorum or by its deadline.
	done bool
	// timer is the deadline's timer, the driver's handle (set when it applies effectWaitStart).
	timer sim.TimerID
}

// discoveryInputKind names what a step of the discovery core is about.
type discoveryInputKind uint8

const (
	// discoveryCall is a call of wait by a thread (handler, or nil for the leader's own) of
	// server sid, with its lastAcceptedEpoch (waitEpoch), its state summary (waitEpochAck) or its
	// ack's zxid (waitNewLeaderAck).
	discoveryCall discoveryInputKind = iota + 1
	// discoveryDeadline is waiter's deadline: initLimit ticks passed.
	discoveryDeadline
)

// discoveryInput is one input of the discovery core.
type discoveryInput struct {
	kind    discoveryInputKind
	wait    discoveryWait
	handler *learnerHandler
	sid     int64
	// lastAcceptedEpoch for waitEpoch, the ACKEPOCH's summary for waitEpochAck, the ACK's zxid
	// for waitNewLeaderAck.
	lastAcceptedEpoch int64
	summary           stateSummary
	zxid              int64
	waiter            *quorumWaiter
}

// discoveryState is the state of the leader's quorum waits for one term. The epoch it decides is
// the leader core's (leaderCore.epoch).
type discoveryState struct {
	// self is the leader's sid.
	self int64

	waitingForNewEpoch bool
	connecting         []int64 // connectingFollowers
	epochWaiters       []*quorumWaiter
	electionFinished   bool
	electing           []int64 // electingFollowers
	ackEpochWaiters    []*quorumWaiter
	leaderSummary      stateSummary

	newLeaderZxid    int64
	quorumFormed     bool
	newLeaderAcks    []int64
	newLeaderWaiters []*quorumWaiter
}

// discover takes one input of the discovery waits and returns what must happen; the ready is the
// driver's until it gives it back with done.
func (c *leaderCore) discover(in discoveryInput) *ready {
	out := c.readies.get()
	switch in.kind {
	case discoveryCall:
		switch in.wait {
		case waitEpoch:
			c.getEpochToPropose(out, in)
		case waitEpochAck:
			c.waitForEpochAck(out, in)
		case waitNewLeaderAck:
			c.waitForNewLeaderAck(out, in)
		}
	case discoveryDeadline:
		w := in.waiter
		if w.done {
			break
		}
		w.done = true
		if w.handler == nil {
			out.add(effect{kind: effectLeave, text: c.selfTimeoutReason(w.wait)})
		} else {
			out.add(effect{kind: effectHandlerShutdown, handler: w.handler, text: w.wait.timeoutReason()})
		}
	}
	return out
}

// selfTimeoutReason is what the leader's own thread reports when its wait times out.
func (c *leaderCore) selfTimeoutReason(w discoveryWait) string {
	if w == waitNewLeaderAck {
		return "waiting for a quorum of followers, only synced with sids " + fmt.Sprint(c.newLeaderAcks)
	}
	return w.timeoutReason()
}

// goOn lets the caller's thread go on at once.
func (c *leaderCore) goOn(out *ready, in discoveryInput) {
	out.add(effect{kind: effectWaitContinue, handler: in.handler, zxid: int64(in.wait)})
}

// block makes the caller wait: its deadline is armed, and a later quorum wakes it.
func (c *leaderCore) block(out *ready, in discoveryInput, list *[]*quorumWaiter) {
	w := &quorumWaiter{wait: in.wait, handler: in.handler}
	*list = append(*list, w)
	out.waiters = append(out.waiters, w)
	out.add(effect{kind: effectWaitStart, event: int32(len(out.waiters) - 1)})
}

// releaseAll is the notifyAll that ends a quorum wait, after the caller went on: each waiter
// whose wait has not ended yet has its deadline cancelled and is woken (effectWaitWake: as a step
// of its own, in an order the world draws).
func (c *leaderCore) releaseAll(out *ready, waiters []*quorumWaiter) {
	first := len(out.waiters)
	for _, w := range waiters {
		if !w.done {
			w.done = true
			out.waiters = append(out.waiters, w)
			out.add(effect{kind: effectWaitCancel, event: int32(len(out.waiters) - 1)})
		}
	}
	if n := len(out.waiters) - first; n > 0 {
		out.add(effect{kind: effectWaitWake, event: int32(first), zxid: int64(n)})
	}
}

// getEpochToPropose: the new epoch is one more than every accepted epoch of the connecting set; once
// the set holds this leader and a quorum, the epoch is fixed and persisted as acceptedEpoch.
func (c *leaderCore) getEpochToPropose(out *ready, in discoveryInput) {
	d := &c.discoveryState
	if !d.waitingForNewEpoch {
		c.goOn(out, in)
		return
	}
	if in.lastAcceptedEpoch >= c.epoch {
		c.epoch = in.lastAcceptedEpoch + 1
	}
	if c.cfg.IsVoter(in.sid) && !slices.Contains(d.connecting, in.sid) {
		d.connecting = append(d.connecting, in.sid)
	}
	quorum := slices.Contains(d.connecting, d.self) && c.cfg.Quorum(d.connecting)
	if c.cfg.Bugs.Has(BugZK335) && in.sid == d.self {
		// Before ZOOKEEPER-335's fix the leader took its new epoch on its own.
		quorum = true
	}
	if quorum {
		d.waitingForNewEpoch = false
		out.add(effect{kind: effectSetEpoch, label: storage.AcceptedEpochFile, zxid: c.epoch})
		waiters := d.epochWaiters
		d.epochWaiters = nil
		c.goOn(out, in)
		c.releaseAll(out, waiters)
		return
	}
	c.block(out, in, &d.epochWaiters)
}

// waitForEpochAck: a follower ahead of the leader makes it abdicate; a quorum of valid ACKEPOCHs
// (this leader included) ends discovery.
func (c *leaderCore) waitForEpochAck(out *ready, in discoveryInput) {
	d := &c.discoveryState
	if d.electionFinished {
		c.goOn(out, in)
		return
	}
	ss := in.summary
	if ss.currentEpoch != -1 {
		if ss.moreRecentThan(d.leaderSummary) {
			out.add(effect{kind: effectLeave, text: fmt.Sprintf("follower %d is ahead of the leader: (%d, %s) > (%d, %s)", in.sid, ss.currentEpoch,
				FormatZxid(ss.lastZxid), d.leaderSummary.currentEpoch, FormatZxid(d.leaderSummary.lastZxid))})
			return
		}
		if ss.lastZxid != -1 && c.cfg.IsVoter(in.sid) && !slices.Contains(d.electing, in.sid) {
			d.electing = append(d.electing, in.sid)
		}
	}
	if slices.Contains(d.electing, d.self) && c.cfg.Quorum(d.electing) {
		d.electionFinished = true
		out.observe(Event{Kind: EventEpochQuorum, Epoch: c.epoch})
		waiters := d.ackEpochWaiters
		d.ackEpochWaiters = nil
		c.goOn(out, in)
		c.releaseAll(out, waiters)
		return
	}
	c.block(out, in, &d.ackEpochWaiters)
}

// waitForNewLeaderAck counts NEWLEADER acks; a quorum (this leader included) establishes the leader.
// An ack with another zxid is not counted, and its learner is released at once, as Leader
// .waitForNewLeaderAck returns without waiting: its LearnerHandler goes on to the syncLimit check,
// waits for the leader's startup and sends UPTODATE, so that the learner serves although its
// NEWLEADER ack never counted.
func (c *leaderCore) waitForNewLeaderAck(out *ready, in discoveryInput) {
	d := &c.discoveryState
	if d.quorumFormed {
		c.goOn(out, in)
		return
	}
	if in.zxid != d.newLeaderZxid {
		c.note(out, "NEWLEADER ACK from %d is from a different epoch: current %s received %s", in.sid,
			FormatZxid(d.newLeaderZxid), FormatZxid(in.zxid))
		c.goOn(out, in)
		return
	}
	if c.cfg.IsVoter(in.sid) && !slices.Contains(d.newLeaderAcks, in.sid) {
		d.newLeaderAcks = append(d.newLeaderAcks, in.sid)
	}
	if slices.Contains(d.newLeaderAcks, d.self) && c.cfg.Quorum(d.newLeaderAcks) {
		d.quorumFormed = true
		waiters := d.newLeaderWaiters
		d.newLeaderWaiters = nil
		c.goOn(out, in)
		c.releaseAll(out, waiters)
		return
	}
	c.block(out, in, &d.newLeaderWaiters)
}
