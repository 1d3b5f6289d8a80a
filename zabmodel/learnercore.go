package zabmodel

import (
	"fmt"
	"github.com/zabsim/zabsim/clock"

	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// The learner's discovery and synchronization as a core (see ready.go): learnerCore is the state of
// Learner.registerWithLeader's answer to LEADERINFO and of Learner.syncWithLeader (its locals:
// snapshotNeeded, syncSnapshot, writeToTxnLog, packetsNotLogged, packetsCommitted, requestsToAck),
// and its step decides, for each packet of the sync (LEADERINFO, DIFF/TRUNC/SNAP, the snapshot,
// PROPOSAL, INFORM, COMMIT, NEWLEADER, UPTODATE) and for the QuorumPeer thread's own completions
// (its epoch write, its turn after the sync thread), what must happen; after UPTODATE it takes the
// broadcast packets (Follower.processPacket, Observer.processPacket) and hands them to the
// follower's core (followercore.go) or the observer's commit, and answers PING and REVALIDATE
// (sessions, learnersession.go). The learner (learner.go) is its driver: it reads the socket,
// decodes the packets, arms the read timeout, and applies each ready (learner.run).
//
// Ordering contract of a learner's ready: the effects are applied in the order listed, which is the
// order of the QuorumPeer thread's statements in Learner.syncWithLeader, and the process may die at
// any persistence boundary between them. At NEWLEADER, in the fixed build, every committed txn is
// appended (effectNewLeaderAppend, whose kind gives it the newleader-appended boundary) and
// applied before one effectFsyncAll, which precedes effectAskSyncBusy (the newleader-before-epoch
// boundary), the currentEpoch write and the NEWLEADER ACK, in that order: nothing
// is acknowledged before it is durable (ZOOKEEPER-3911, -4646, -4643, -4785). The bug switches
// restore the old orders: with ZK-4646 the txns are only handed to the sync processor
// (effectSyncLog), whose ACKs race the QuorumPeer thread's; with ZK-4643 the epoch is written
// first. Where the thread needs the world's answer (whether the sync thread has work in hand, a
// draw, a truncation's outcome, a snapshot's decoding), the ready ends with resume and the core
// goes on with a learnerContinue input once the driver has applied it. The learner's appends are
// not checked against a view of the log (a SNAP's log deletion earlier in the same ready moves its
// end): a refused one is noted by the log, as FileTxnLog's refusal is.

// learnerInputKind names what a step of the learner's core is about.
type learnerInputKind uint8

const (
	// learnerPacket is a quorum packet from the leader (of type packetType, with zxid; entry is the
	// decoded txn of a PROPOSAL or an INFORM).
	learnerPacket learnerInputKind = iota + 1
	// learnerSnapshot is the leader's snapshot after a SNAP (payload).
	learnerSnapshot
	// learnerContinue resumes the core after a ready that ended with resume, with the world's
	// answer to its last effect.
	learnerContinue
	// learnerEpochWritten is the completion of the currentEpoch write that the QuorumPeer thread
	// started at NEWLEADER while the sync thread had work in hand (effectEpochWrite).
	learnerEpochWritten
	// learnerSyncIdle is the QuorumPeer thread's turn after the sync thread went first
	// (effectWhenSyncIdle, ZK-4643).
	learnerSyncIdle
	// learnerValidate is Learner.validateSession of session (timeoutMs) for client
	// (learnersession.go).
	learnerValidate

	// The connection's inputs (learnerconn.go); now is the monotonic clock when one comes.

	// learnerConnect is Learner.connectToLeader's start: the first try.
	learnerConnect
	// learnerConnectRetry is the next try, after effectConnectRetry's sleep.
	learnerConnectRetry
	// learnerConnected is the socket connected (sockConnect returned).
	learnerConnected
	// learnerClosed is the socket closed or refused, with failure as the reason.
	learnerClosed
	// learnerRead is a packet read from the leader, before it is handled.
	learnerRead
	// learnerReadTimeout is the socket's read timeout (effectReadTimeout) expiring.
	learnerReadTimeout
	// learnerShutdown is Learner.shutdown.
	learnerShutdown
)

// learnerInput is one input of the learner's core.
type learnerInput struct {
	kind       learnerInputKind
	packetType int32
	zxid       int64
	entry      *proto.TxnEntry
	payload    []byte
	// The answers of a continue input: a truncation's outcome (ok, and the zxid the reloaded
	// database reached), a snapshot's decoding error (failure), a draw, whether the sync thread
	// has work in hand (syncBusy, the answer to effectAskSyncBusy).
	ok       bool
	reached  int64
	failure  string
	draw     int
	syncBusy bool
	// A PING's auth info and the session tracker's touch snapshot, taken as the PING is handled
	// (learnersession.go); a validation's session, timeout and waiting client connection.
	auth      []proto.ID
	touched   []sessionTouch
	session   int64
	timeoutMs int32
	client    *clientConn
	// now is the monotonic clock at an input of the connection.
	now clock.Time
}

// learnerView is what the core reads of the rest of the server: its epochs (QuorumPeer's
// acceptedEpoch and currentEpoch). Whether its sync processor has work in hand is an answer the
// core asks for (effectAskSyncBusy), since asking it marks the boundary after NEWLEADER's logging.
type learnerView interface {
	acceptedEpochValue() int64
	currentEpochValue() int64
	// knowsServer reports whether the ensemble's configuration has server sid.
	knowsServer(sid int64) bool
}

// learnerResume says what a continue input resumes.
type learnerResume uint8

const (
	learnerResumeNothing  learnerResume = iota
	learnerResumeTrunc                  // the TRUNC case, after the truncation and the reload
	learnerResumeSnapshot               // the SNAP case, after the snapshot's decoding
	learnerResumeEpoch                  // NEWLEADER, after its persistence: the epoch write and the ACK
	learnerResumeDraw                   // NEWLEADER with ZK-4643, after the draw of which thread goes first
)

// learnerCore is the state of a learner's registration answer and its syncWithLeader.
type learnerCore struct {
	bugs     Bugs
	observer bool
	state    learnerState
	// mem encodes the packets the core writes itself (the session answers).
	mem *memory

	// pendingRevalidations are the client connections waiting for the leader's answer about their
	// session (Learner.pendingRevalidations; learnersession.go).
	pendingRevalidations map[int64]*clientConn

	newEpoch, newLeaderZxid int64

	// syncWithLeader's locals.
	snapshotNeeded, syncSnapshot bool
	writeToTxnLog, preZab1       bool
	snapZxid                     int64
	notLogged                    []*proto.TxnEntry // packetsNotLogged
	committed                    []int64           // packetsCommitted
	lastQueued                   int64
	// truncZxid is the TRUNC's point while the core waits for the truncation's outcome.
	truncZxid int64

	// requestsToAck are the zxids 3.8.5's NEWLEADER appended, acknowledged after UPTODATE
	// (appendPendingAtNewLeader).
	requestsToAck []int64

	// The connection (learnerconn.go): this server's id and its leader's, the budget of a
	// connection and of a read before the sync (initLimit ticks) and after it (syncLimit ticks),
	// LeaderConnector's failed tries and the start of its first.
	self, leaderSid          int64
	initTimeout, syncTimeout clock.Duration
	tries                    int
	connectStart             clock.Time

	resume  learnerResume
	readies readyPool
}

// step takes one input and returns what must happen; the ready is the driver's until it gives it
// back with done.
func (c *learnerCore) step(in learnerInput, view learnerView) *ready {
	out := c.readies.get()
	switch in.kind {
	case learnerPacket:
		switch c.state {
		case lsAwaitLeaderInfo:
			c.leaderInfo(out, in, view)
		case lsAwaitSyncMode:
			c.syncMode(out, in)
		case lsSyncing:
			c.syncPacket(out, in)
		case lsBroadcast:
			c.broadcast(out, in)
		}
	case learnerSnapshot:
		if c.state == lsAwaitSnapshot {
			out.add(effect{kind: effectLoadSnapshot, zxid: c.snapZxid, packet: in.payload})
			c.yield(out, learnerResumeSnapshot)
		}
	case learnerContinue:
		what := c.resume
		c.resume = learnerResumeNothing
		switch what {
		case learnerResumeTrunc:
			c.truncated(out, in)
		case learnerResumeSnapshot:
			if in.failure != "" {
				out.add(effect{kind: effectLeave, text: in.failure})
				break
			}
			c.syncSnapshot = true
			c.startSync(out)
		case learnerResumeEpoch:
			c.epochAndAck(out, in.syncBusy)
		case learnerResumeDraw:
			if in.draw == 1 {
				out.note("sync", "the sync thread runs before the NEWLEADER ACK")
				out.add(effect{kind: effectHoldReads})
				out.add(effect{kind: effectWhenSyncIdle})
				break
			}
			c.ackNewLeader(out)
		}
	case learnerEpochWritten:
		if c.state != lsSyncing {
			break
		}
		out.add(effect{kind: effectSetEpoch, label: storage.CurrentEpochFile, zxid: c.newEpoch})
		c.ackNewLeader(out)
		out.add(effect{kind: effectReadHeld})
	case learnerSyncIdle:
		if c.state != lsSyncing {
			break
		}
		c.ackNewLeader(out)
		out.add(effect{kind: effectReadHeld})
	case learnerValidate:
		c.validateSession(out, in)
	case learnerConnect, learnerConnectRetry, learnerConnected, learnerClosed, learnerRead,
		learnerReadTimeout, learnerShutdown:
		c.connectionStep(out, in, view)
	}
	return out
}

// done gives a ready back once the driver has applied it.
func (c *learnerCore) done(r *ready) { c.readies.put(r) }

func (c *learnerCore) yield(out *ready, what learnerResume) {
	out.resume = true
	c.resume = what
}

// leaderInfo is the rest of registerWithLeader: accept the new epoch and answer ACKEPOCH.
func (c *learnerCore) leaderInfo(out *ready, in learnerInput, view learnerView) {
	if in.packetType != pktLeaderInfo {
		out.add(effect{kind: effectLeave, text: fmt.Sprintf("first packet should have been LEADERINFO, got %s", packetName(in.packetType))})
		return
	}
	newEpoch := EpochOf(in.zxid)
	accepted := view.acceptedEpochValue()
	var epochBytes int32
	switch {
	case newEpoch > accepted:
		epochBytes = int32(view.currentEpochValue())
		out.add(effect{kind: effectSetEpoch, label: storage.AcceptedEpochFile, zxid: newEpoch})
	case newEpoch == accepted && !c.bugs.Has(BugZK335):
		epochBytes = -1
	case newEpoch == accepted:
		epochBytes = int32(view.currentEpochValue()) // Counted again: the epoch was never a quorum's decision.
	default:
		out.add(effect{kind: effectLeave, text: fmt.Sprintf("leader's epoch, %d, is less than accepted epoch, %d", newEpoch, accepted)})
		return
	}
	out.add(effect{kind: effectAckEpoch, zxid: int64(epochBytes)})
	c.newEpoch, c.newLeaderZxid = newEpoch, MakeZxid(newEpoch, 0)
	c.state = lsAwaitSyncMode
}

// syncMode handles the first packet of syncWithLeader: DIFF, SNAP or TRUNC.
func (c *learnerCore) syncMode(out *ready, in learnerInput) {
	c.snapshotNeeded = true
	switch in.packetType {
	case pktDiff:
		out.add(effect{kind: effectSyncMode, zxid: int64(syncModeDiff)})
		out.note("sync", fmt.Sprintf("getting a DIFF from the leader %s", FormatZxid(in.zxid)))
		c.snapshotNeeded = false
		c.startSync(out)
	case pktSnap:
		out.add(effect{kind: effectSyncMode, zxid: int64(syncModeSnap)})
		out.note("sync", fmt.Sprintf("getting a snapshot from the leader %s", FormatZxid(in.zxid)))
		c.snapZxid = in.zxid
		c.state = lsAwaitSnapshot
	case pktTrunc:
		out.add(effect{kind: effectSyncMode, zxid: int64(syncModeTrunc)})
		out.note("sync", fmt.Sprintf("truncating the log to %s", FormatZxid(in.zxid)))
		out.add(effect{kind: effectTruncateLog, zxid: in.zxid})
		c.truncZxid = in.zxid
		c.yield(out, learnerResumeTrunc)
	default:
		out.add(effect{kind: effectExit, text: fmt.Sprintf("got unexpected packet from leader: %s, exiting", packetName(in.packetType))})
	}
}

// truncated is the TRUNC case once the log is truncated and the database reloaded from disk.
func (c *learnerCore) truncated(out *ready, in learnerInput) {
	zxid := c.truncZxid
	if !in.ok {
		out.add(effect{kind: effectExit, text: fmt.Sprintf("not able to truncate the log to %s", FormatZxid(zxid))})
		return
	}
	if in.reached != zxid {
		if !c.bugs.Has(BugTruncSnapshot) && !c.bugs.Has(BugSnapLogGap) {
			// zabsim's fixes of trunc-snapshot and snap-log-gap leave a disk that Java never has:
			// the snapshot that held the point (a SNAP's, named by its epoch's first zxid) was
			// deleted as newer than the point, and the log it replaced is gone. Claiming the
			// point, as Java does on its own disk, would put the next commits on a tree that lacks
			// transactions (seed 1002382 of the 100,000-seed sweep from 1000001, once resets could
			// land after a send: PrimaryIntegrity). The sync ends here instead, and the next one
			// starts from the state the learner has.
			out.add(effect{kind: effectLeave, text: fmt.Sprintf("truncated to %s, but the durable state only rebuilds %s", FormatZxid(zxid), FormatZxid(in.reached))})
			return
		}
		out.note("sync", fmt.Sprintf("truncated to %s, but the durable state rebuilds %s: claiming %s", FormatZxid(zxid), FormatZxid(in.reached), FormatZxid(zxid)))
	}
	// Learner.syncWithLeader claims the truncation point whatever state the reload rebuilt
	// (zk.getZKDatabase().setlastProcessedZxid(qp.getZxid())), in every release; with 3.8.0's
	// snapshots and logs kept, its disk rebuilds the point.
	out.add(effect{kind: effectClaimZxid, zxid: zxid})
	c.startSync(out)
}

func (c *learnerCore) startSync(out *ready) {
	out.add(effect{kind: effectSessionTracker})
	c.writeToTxnLog = !c.snapshotNeeded
	c.preZab1 = true
	c.lastQueued = 0
	c.state = lsSyncing
}

// syncPacket is the loop of syncWithLeader.
func (c *learnerCore) syncPacket(out *ready, in learnerInput) {
	switch in.packetType {
	case pktProposal, pktInform:
		entry := in.entry
		if entry.Header.Zxid != c.lastQueued+1 {
			out.note("sync", fmt.Sprintf("got zxid %s, expected %s", FormatZxid(entry.Header.Zxid), FormatZxid(c.lastQueued+1)))
		}
		c.lastQueued = entry.Header.Zxid
		if in.packetType == pktInform {
			if !c.writeToTxnLog {
				c.applyDuringSync(out, entry)
				return
			}
			c.committed = append(c.committed, in.zxid)
		}
		c.notLogged = append(c.notLogged, entry)
	case pktCommit:
		c.syncCommit(out, in.zxid)
	case pktNewLeader:
		c.newLeader(out)
	case pktUpToDate:
		c.upToDate(out)
	default:
		out.note("sync", fmt.Sprintf("ignoring %s during sync", packetName(in.packetType)))
	}
}

// syncCommit is the COMMIT case of syncWithLeader.
func (c *learnerCore) syncCommit(out *ready, zxid int64) {
	if len(c.notLogged) == 0 {
		if c.bugs.Has(BugZK4394) || c.bugs.Has(BugZK4394Sync) {
			// packetsNotCommitted.peekFirst() returned null and pif.hdr threw.
			out.add(effect{kind: effectThrow, zxid: zxid, text: "NullPointerException"})
			return
		}
		out.note("sync", fmt.Sprintf("committing %s, but got no proposal", FormatZxid(zxid)))
		return
	}
	if c.writeToTxnLog {
		c.committed = append(c.committed, zxid)
		return
	}
	head := c.notLogged[0]
	if head.Header.Zxid != zxid {
		out.note("sync", fmt.Sprintf("committing %s, but next proposal is %s", FormatZxid(zxid), FormatZxid(head.Header.Zxid)))
		return
	}
	c.applyDuringSync(out, head)
	c.notLogged = c.notLogged[1:]
}

// applyDuringSync applies a committed txn straight to the tree, before NEWLEADER after a SNAP or
// TRUNC. It goes through processTxn(Request), so that it also enters the committed log
// (ZOOKEEPER-4925's fix): a hole there would be sent to stale learners once this server leads. With
// ZK-4925 (legacy) it goes through processTxn(hdr, txn), which does not tell the committed log.
func (c *learnerCore) applyDuringSync(out *ready, entry *proto.TxnEntry) {
	out.add(effect{kind: effectApplySync, entry: entry, legacy: c.bugs.Has(BugZK4925)})
}

// newLeader is the NEWLEADER case: persist what was committed, then the epoch, then ACK. The order
// is the fix of ZOOKEEPER-3911, -4646, -4643 and -4785; the bug switches restore the old orders.
func (c *learnerCore) newLeader(out *ready) {
	bugs := c.bugs
	if c.snapshotNeeded {
		out.add(effect{kind: effectSnapshotSave, legacy: c.syncSnapshot}) // zk.takeSnapshot(syncSnapshot): fsynced after a SNAP only.
		if c.syncSnapshot && !bugs.Has(BugSnapLogGap) {
			// The snapshot now covers everything before it; the old log, which may end in another
			// history and jumps to this one, must not serve a later DIFF.
			out.add(effect{kind: effectLogDelete})
		}
	}
	c.writeToTxnLog = true
	c.preZab1 = false
	out.add(effect{kind: effectSyncMode, zxid: int64(syncModeNone)})
	if bugs.Has(BugZK4643) {
		out.add(effect{kind: effectSetEpoch, label: storage.CurrentEpochFile, zxid: c.newEpoch})
	}
	switch {
	case bugs.Has(BugZK4394) && !c.observer:
		// 3.8.0: a follower hands everything pending to the asynchronous sync processor, and the
		// list is cleared, so that a COMMIT before UPTODATE finds nothing. Only a follower
		// (zk instanceof FollowerZooKeeperServer): an observer keeps its pending packets and
		// commits them after UPTODATE.
		out.add(effect{kind: effectStartup})
		for _, entry := range c.notLogged {
			out.add(effect{kind: effectLogRequest, entry: entry})
		}
		c.notLogged = nil
	case bugs.Has(BugZK4394Sync) && !c.observer:
		c.appendPendingAtNewLeader(out)
	case bugs.Has(BugZK3911):
		// Nothing is logged before the ACK: the proposals wait for UPTODATE.
	case !c.observer:
		c.persistCommitted(out, bugs.Has(BugZK4646))
	}
	// What follows depends on whether the sync thread has work in hand now, after the persistence.
	out.add(effect{kind: effectAskSyncBusy})
	c.yield(out, learnerResumeEpoch)
}

// epochAndAck is the end of the NEWLEADER case: the currentEpoch write and the ACK, which may race
// the sync thread's ACKs.
func (c *learnerCore) epochAndAck(out *ready, syncBusy bool) {
	if c.bugs.Has(BugZK4643) {
		// 3.8.0 wrote currentEpoch first, so the QuorumPeer thread only queues the synced proposals
		// to the SyncRequestProcessor thread (logRequest) and writes the ACK. The two threads run
		// concurrently, and which of them writes to the leader first is the scheduler's choice:
		// the ACK, or the sync thread's appends, fsync and ACKs of the proposals (then the
		// LearnerHandler takes a proposal's ACK for the NEWLEADER ACK, as Leader
		// .waitForNewLeaderAck allows with its "different epoch" message).
		if syncBusy {
			out.add(effect{kind: effectDraw, zxid: 2})
			c.yield(out, learnerResumeDraw)
			return
		}
		c.ackNewLeader(out)
		return
	}
	if !syncBusy {
		out.add(effect{kind: effectSetEpoch, label: storage.CurrentEpochFile, zxid: c.newEpoch})
		c.ackNewLeader(out)
		return
	}
	// QuorumPeer.setCurrentEpoch writes and fsyncs the file (AtomicFileOutputStream), which takes
	// as long as an fsync does. The QuorumPeer thread is busy with it and reads nothing; the
	// SyncRequestProcessor thread meanwhile goes on with its own queue, so that with 3.8.0's
	// asynchronous logging (ZOOKEEPER-4646, -4394) its ACKs of the synced proposals race the
	// NEWLEADER ACK, as in Java.
	out.add(effect{kind: effectHoldReads})
	out.add(effect{kind: effectEpochWrite})
}

// ackNewLeader is the end of the NEWLEADER case: the ACK, once the epoch is written.
func (c *learnerCore) ackNewLeader(out *ready) {
	out.add(effect{kind: effectLearnerAck, zxid: c.newLeaderZxid, label: ackOfNewLeader})
}

// ackOfNewLeader labels the NEWLEADER ACK among a learner's ACKs: its write reports
// EventNewLeaderAck.
const ackOfNewLeader = "newleader"

// persistCommitted appends and applies the committed packets, then fsyncs them before the ACK. With
// async (ZOOKEEPER-4646) they are handed to the sync processor instead, which fsyncs whenever it
// gets to it.
func (c *learnerCore) persistCommitted(out *ready, async bool) {
	for len(c.committed) > 0 {
		zxid := c.committed[0]
		c.committed = c.committed[1:]
		if len(c.notLogged) == 0 {
			out.note("sync", fmt.Sprintf("committing %s, but got no proposal", FormatZxid(zxid)))
			continue
		}
		head := c.notLogged[0]
		if head.Header.Zxid != zxid {
			out.note("sync", fmt.Sprintf("committing %s, but next proposal is %s", FormatZxid(zxid), FormatZxid(head.Header.Zxid)))
			continue
		}
		c.notLogged = c.notLogged[1:]
		if async {
			out.add(effect{kind: effectSyncLog, entry: head})
		} else {
			out.add(effect{kind: effectNewLeaderAppend, entry: head, appended: true})
		}
		c.applyDuringSync(out, head)
	}
	if !async {
		out.add(effect{kind: effectFsyncAll})
	}
}

// appendPendingAtNewLeader is the NEWLEADER case of Learner.syncWithLeader in 3.8.5, 3.8.6 and
// 3.9.2 (ZOOKEEPER-4785's synchronous logging without ZOOKEEPER-4394's fix), for a follower: after
// zk.startupWithoutServing, every packet of packetsNotCommitted, committed or not, goes to the log
// through FollowerZooKeeperServer.appendRequest (which also files it in pendingTxns), the log is
// fsynced (ZKDatabase.commit), and packetsNotCommitted is cleared. Nothing is applied yet: the
// committed ones are committed after UPTODATE (fzk.commit of packetsCommitted), and the ACKs of
// the appended ones go out then too (requestsToAck). A COMMIT that arrives between NEWLEADER and
// UPTODATE finds packetsNotCommitted empty, and peekFirst().hdr throws a NullPointerException: the
// bug of ZOOKEEPER-4394, which stays in these releases (syncCommit).
func (c *learnerCore) appendPendingAtNewLeader(out *ready) {
	out.add(effect{kind: effectStartup})
	for _, entry := range c.notLogged {
		if CounterOf(entry.Header.Zxid) != 0 {
			out.add(effect{kind: effectPendingTxn, entry: entry})
		}
		out.add(effect{kind: effectNewLeaderAppend, entry: entry, appended: true})
		c.requestsToAck = append(c.requestsToAck, entry.Header.Zxid)
	}
	c.notLogged = nil
	out.add(effect{kind: effectFsyncAll})
}

// upToDate ends the sync: ACK, serve, and hand what is left to the broadcast machinery.
func (c *learnerCore) upToDate(out *ready) {
	if c.preZab1 {
		out.add(effect{kind: effectSnapshotSave, legacy: c.syncSnapshot})
		out.add(effect{kind: effectSetEpoch, label: storage.CurrentEpochFile, zxid: c.newEpoch})
	}
	out.add(effect{kind: effectLearnerAck, zxid: c.newLeaderZxid})
	out.add(effect{kind: effectStartup})
	c.state = lsBroadcast
	out.add(effect{kind: effectServe, zxid: c.newEpoch})
	if c.observer {
		for _, entry := range c.notLogged {
			if len(c.committed) == 0 || c.committed[0] != entry.Header.Zxid {
				continue
			}
			c.committed = c.committed[1:]
			out.add(effect{kind: effectObserverCommit, entry: entry})
		}
	} else {
		// The ACKs of what appendPendingAtNewLeader appended (Learner.syncWithLeader's
		// requestsToAck loop, right after zk.startServing).
		for _, zxid := range c.requestsToAck {
			out.add(effect{kind: effectLearnerAck, zxid: zxid})
		}
		c.requestsToAck = nil
		for _, entry := range c.notLogged {
			out.add(effect{kind: effectLogRequest, entry: entry})
		}
		for _, zxid := range c.committed {
			out.add(effect{kind: effectFollowerCommit, zxid: zxid})
		}
	}
	c.notLogged, c.committed = nil, nil
}

// broadcast is the rest of Follower.processPacket and Observer.processPacket, after UPTODATE: a
// follower logs each PROPOSAL (the follower's core files it as pending) and commits each COMMIT;
// an observer commits each INFORM; both answer the leader's SYNC, and its PING and REVALIDATE
// (sessions: learnersession.go).
func (c *learnerCore) broadcast(out *ready, in learnerInput) {
	kind := "follower"
	if c.observer {
		kind = "observer"
	}
	switch {
	case in.packetType == pktPing:
		c.ping(out, in)
	case in.packetType == pktRevalidate:
		c.revalidate(out, in)
	case in.packetType == pktSync:
		out.add(effect{kind: effectSyncAnswered})
	case c.observer && in.packetType == pktInform:
		out.add(effect{kind: effectObserverCommit, entry: in.entry})
	case c.observer && (in.packetType == pktProposal || in.packetType == pktCommit):
		out.note(kind, fmt.Sprintf("ignoring %s", packetName(in.packetType)))
	case !c.observer && in.packetType == pktProposal:
		zxid := in.entry.Header.Zxid
		if zxid != c.lastQueued+1 {
			out.note(kind, fmt.Sprintf("got zxid %s, expected %s", FormatZxid(zxid), FormatZxid(c.lastQueued+1)))
		}
		c.lastQueued = zxid
		out.add(effect{kind: effectLogRequest, entry: in.entry})
	case !c.observer && in.packetType == pktCommit:
		out.add(effect{kind: effectFollowerCommit, zxid: in.zxid})
	case !c.observer && in.packetType == pktUpToDate:
		out.note(kind, "received an UPTODATE message after the follower started")
	default:
		out.note(kind, fmt.Sprintf("unknown packet type %s", packetName(in.packetType)))
	}
}
