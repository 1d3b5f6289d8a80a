package zabmodel

import "fmt"

// The leader's establishment and its tick as steps of its core (see ready.go and leadercore.go).
//
// Establishment is Leader.startZkServer, which lead() calls once waitForNewLeaderAck returned: a
// quorum acknowledged NEWLEADER, so everything the leader's database holds is committed (Java sets
// lastCommitted to zk.getZxid(), the new epoch's zxid, above every transaction it holds). The step
// reports what that commits as the checkers' EventEstablished with Through, the last zxid of the
// database's history (its tree's last processed zxid, or its txn log's last record if that is
// higher), then starts the server (ZooKeeperServer.startup, with LeaderZooKeeperServer's container
// manager), updates the election's vote (QuorumPeer.updateElectionVote), sets the tree's last
// processed zxid to the new epoch's (setlastProcessedZxid), applies the testing-only initial
// counter (zookeeper.testingonly.initialZxid), starts serving and arms the first tick.
//
// The tick is one turn of lead()'s loop ("while (true) { ... wait(self.tickTime / 2) ... }"): every
// other half tick the tick advances and the leader checks that a quorum of voters is still synced
// with it (SyncedLearnerTracker over LearnerHandler.synced, which holds while the learner's last
// packet came within syncLimit ticks); without one it gives up leadership ("Not sufficient
// followers synced"). Every half tick it pings each learner handler (LearnerHandler.ping) and arms
// its next turn.
//
// Ordering contract: EventEstablished precedes everything establishment starts (no proposal, and
// no serving, before the checkers know the history is committed); the server's start precedes its
// serving, and serving precedes the first tick. In a tick, the check of the synced quorum precedes
// the pings (a leader that gives up pings no one), the pings go out in the order the handlers
// connected, and the next turn is armed last.

// heldHistory is what the leader's database holds when it is established, as the driver reads it
// (read-only) from the tree and the txn log: the core needs nothing else of the database.
type heldHistory struct {
	// applied is the tree's last processed zxid, logged the txn log's last record's (0 if empty).
	applied, logged int64
}

// through is the last zxid of the history: the log may hold records the tree does not reflect
// yet (a learner that left with its sync processor still writing, ZK-4712), and they are part of
// the history a restart replays, so they are committed too.
func (h heldHistory) through() int64 { return max(h.applied, h.logged) }

// establish is Leader.startZkServer and the rest of lead() before its loop: zxid is the new epoch's
// zxid (zk.getZxid()), held what the database holds.
func (c *leaderCore) establish(out *ready, zxid int64, held heldHistory) {
	if c.stopped {
		return
	}
	c.lastCommitted = zxid
	c.established = true
	out.observe(Event{Kind: EventEstablished, Epoch: c.epoch, Zxid: zxid, Through: held.through()})
	out.add(effect{kind: effectStartup})
	out.add(effect{kind: effectElectionVote, zxid: c.epoch})
	out.add(effect{kind: effectClaimZxid, zxid: zxid})
	if counter := c.cfg.InitialZxidCounter; counter > 0 {
		out.add(effect{kind: effectSetZxid, zxid: MakeZxid(c.epoch, counter)})
	}
	out.add(effect{kind: effectStartServing})
	out.add(effect{kind: effectTimer, zxid: int64(c.cfg.TickTime / 2)})
}

// onTick is one turn of lead()'s loop (see the comment at the top of the file).
func (c *leaderCore) onTick(out *ready) {
	if c.stopped {
		return
	}
	if !c.tickSkip {
		c.tick++
		synced := []int64{c.self}
		for _, h := range c.handlers {
			// SyncedLearnerTracker.addAck counts only voting members: observers keep no leader.
			if h.handlerCore.synced(c.tick) && c.cfg.IsVoter(h.sid) {
				synced = append(synced, h.sid)
			}
		}
		if !c.cfg.Quorum(synced) {
			out.add(effect{kind: effectLeave, text: fmt.Sprintf("not sufficient followers synced, only synced with sids %v", synced)})
			return
		}
	}
	c.tickSkip = !c.tickSkip
	for _, h := range c.handlers { // The ready is the list's copy: a ping may end a handler.
		out.add(effect{kind: effectPing, handler: h})
	}
	out.add(effect{kind: effectTimer, zxid: int64(c.cfg.TickTime / 2)})
}

// lead is Leader.lead up to its first wait, once the driver has loaded the database
// (ZooKeeperServer.loadData) and the leader's state summary: the quorum port opens
// (LearnerCnxAcceptor), and the leader's own thread calls getEpochToPropose with the server's
// acceptedEpoch, as the first member of the connecting set.
//
// Ordering contract: the port opens before the leader's own call of getEpochToPropose, so that a
// learner's FOLLOWERINFO can only come after it (the accepts are later steps of the world).
func (c *leaderCore) lead(out *ready, acceptedEpoch int64) {
	out.add(effect{kind: effectListen})
	c.epoch = -1
	out.add(effect{kind: effectWaitCall, event: int32(waitEpoch), zxid: acceptedEpoch})
}

// shutdown is Leader.shutdown: the loop's next turn is cancelled, the quorum port closes (the
// LearnerCnxAcceptor stops accepting), every learner handler shuts down in the order they
// connected, and every thread still waiting in a quorum wait has its wait ended and its deadline
// cancelled (the leader's own thread, whose wait Java's shutdown interrupts, included).
//
// Ordering contract: the port closes before the handlers shut down, so that no new handler joins
// the ones being shut down; the waits end last, after every handler that could have called one.
func (c *leaderCore) shutdown(out *ready) {
	if c.stopped {
		return
	}
	c.stopped = true
	out.add(effect{kind: effectTimerCancel})
	out.add(effect{kind: effectUnlisten})
	for _, h := range c.handlers {
		out.add(effect{kind: effectHandlerShutdown, handler: h, text: "leader shutting down"})
	}
	for _, ws := range [][]*quorumWaiter{c.epochWaiters, c.ackEpochWaiters, c.newLeaderWaiters} {
		for _, w := range ws {
			w.done = true
			out.waiters = append(out.waiters, w)
			out.add(effect{kind: effectWaitCancel, event: int32(len(out.waiters) - 1)})
		}
	}
}
