package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/electionmodel"
	"github.com/zabsim/zabsim/zabmodel/storage"
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
	// peerLoadStart is QuorumPeer.loadDataBase: the database, then the epoch files (stepLoad).
	peerLoadStart
	// peerLoadContinue resumes a load; zxid is the answer of an effectLoadDatabase.
	peerLoadContinue
)

// peerInput is one input of QuorumPeer's core.
type peerInput struct {
	kind         peerInputKind
	self         electionmodel.Self
	notification electionmodel.Notification
	delivered    bool
	reason       string
	generation   uint64
	zxid         int64
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

// peerCore is QuorumPeer's memory for its role loop and its load of the database.
type peerCore struct {
	cfg *Config

	// acceptedEpoch and currentEpoch are QuorumPeer's, as the epoch files hold them.
	acceptedEpoch, currentEpoch int64
	// load is where a load of the database stands.
	load peerLoad

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

// QuorumPeer.loadDataBase as steps of the same core: the database loads (effectLoadDatabase, whose
// answer is the last processed zxid it reached), then the epoch files are read through the view
// and checked. Each write of an epoch file (effectEpochFile, or effectSetEpoch where the current
// epoch is repaired) ends its ready, and the load goes on with the next read as a step of its own
// (peerLoadContinue), so that every read follows the writes before it, as in Java. A failed check
// ends the load with effectExit (the RuntimeException that stops the process) and loadFailed.

// peerView is what QuorumPeer's core reads of the disk (it never writes it).
type peerView interface {
	ReadFile(name string) ([]byte, bool)
}

// peerLoadPhase is where a load of the database stands between its steps.
type peerLoadPhase uint8

const (
	peerLoadNone peerLoadPhase = iota
	// peerLoadLoaded reads the epoch files once the database is loaded (the input's zxid).
	peerLoadLoaded
	// peerLoadCurrentWritten goes on once the missing currentEpoch file is written.
	peerLoadCurrentWritten
	// peerLoadCurrentSet goes on once the current epoch was repaired.
	peerLoadCurrentSet
	// peerLoadAcceptedWritten ends the load once the missing acceptedEpoch file is written.
	peerLoadAcceptedWritten
)

// peerLoad is the state of a load of the database between its steps.
type peerLoad struct {
	phase      peerLoadPhase
	zxid       int64 // the last processed zxid the database reached
	current    int64
	accepted   int64
	acceptedOK bool
	// failed is whether the last load failed a startup check.
	failed bool
}

// stepLoad takes one input of a load of the database (peerLoadStart or peerLoadContinue) and
// returns what must happen.
func (c *peerCore) stepLoad(in peerInput, view peerView) *ready {
	out := c.readies.get()
	if in.kind == peerLoadStart {
		c.load = peerLoad{phase: peerLoadLoaded}
		out.add(effect{kind: effectLoadDatabase})
		out.resume = true
		return out
	}
	phase := c.load.phase
	c.load.phase = peerLoadNone
	switch phase {
	case peerLoadLoaded:
		c.load.zxid = in.zxid
		current, ok := readEpoch(view, storage.CurrentEpochFile)
		if !ok {
			c.load.current = EpochOf(c.load.zxid)
			out.add(effect{kind: effectEpochFile, label: storage.CurrentEpochFile, zxid: c.load.current})
			c.load.phase = peerLoadCurrentWritten
			out.resume = true
			return out
		}
		c.load.current = current
		c.loadCurrent(out, view)
	case peerLoadCurrentWritten:
		c.loadCurrent(out, view)
	case peerLoadCurrentSet:
		c.loadAccepted(out)
	case peerLoadAcceptedWritten:
		c.loadChecked(out)
	}
	return out
}

// loadCurrent adopts the current epoch read or written, reads the accepted one and checks the
// current epoch against the last zxid.
func (c *peerCore) loadCurrent(out *ready, view peerView) {
	c.currentEpoch = c.load.current
	c.load.accepted, c.load.acceptedOK = readEpoch(view, storage.AcceptedEpochFile)
	epochOfZxid := EpochOf(c.load.zxid)
	if epochOfZxid <= c.load.current {
		c.loadAccepted(out)
		return
	}
	tmp, ok := readEpoch(view, storage.CurrentEpochTmpFile)
	switch {
	case ok && !c.cfg.Bugs.Has(BugZK1653):
		out.note("peer", fmt.Sprintf("%s found: setting the current epoch to %d", storage.CurrentEpochTmpFile, tmp))
		out.add(effect{kind: effectSetEpoch, label: storage.CurrentEpochFile, zxid: tmp})
	case c.load.acceptedOK && c.load.accepted >= epochOfZxid && !c.cfg.Bugs.Has(BugEpochRefusal) && !c.cfg.Bugs.Has(BugZK1653):
		// The server crashed at NEWLEADER after persisting the synced txns of the new epoch (a
		// late joiner's DIFF holds them) and before persisting currentEpoch, the order that
		// ZOOKEEPER-4643's fix prescribes. It had accepted that epoch, and every txn of it in its
		// log was committed: the epoch of its last txn is its current epoch.
		out.note("peer", fmt.Sprintf("current epoch %d is older than the last zxid %s of an accepted epoch: setting it to %d",
			c.load.current, FormatZxid(c.load.zxid), epochOfZxid))
		out.add(effect{kind: effectSetEpoch, label: storage.CurrentEpochFile, zxid: epochOfZxid})
	default:
		c.loadFail(out, fmt.Sprintf("the current epoch, %d, is older than the last zxid, %s", c.load.current, FormatZxid(c.load.zxid)))
		return
	}
	c.load.phase = peerLoadCurrentSet
	out.resume = true
}

// loadAccepted writes the accepted epoch's file if it is missing.
func (c *peerCore) loadAccepted(out *ready) {
	if !c.load.acceptedOK {
		c.load.accepted = EpochOf(c.load.zxid)
		out.add(effect{kind: effectEpochFile, label: storage.AcceptedEpochFile, zxid: c.load.accepted})
		c.load.phase = peerLoadAcceptedWritten
		out.resume = true
		return
	}
	c.loadChecked(out)
}

// loadChecked adopts the accepted epoch and checks it against the current one.
func (c *peerCore) loadChecked(out *ready) {
	c.acceptedEpoch = c.load.accepted
	if c.acceptedEpoch < c.currentEpoch {
		c.loadFail(out, fmt.Sprintf("the accepted epoch, %d, is less than the current epoch, %d", c.acceptedEpoch, c.currentEpoch))
	}
}

// loadFail ends the load: the process stops.
func (c *peerCore) loadFail(out *ready, text string) {
	c.load.failed = true
	out.add(effect{kind: effectExit, text: text})
}

// readEpoch reads the epoch file name through view.
func readEpoch(view peerView, name string) (int64, bool) {
	b, ok := view.ReadFile(name)
	if !ok {
		return 0, false
	}
	var v int64
	if _, err := fmt.Sscan(string(b), &v); err != nil {
		panic(fmt.Sprintf("zabmodel: corrupt epoch file %s: %q", name, b)) // Corrupting synced data is outside the fault model.
	}
	return v, true
}
