package zabmodel

import (
	"encoding/binary"
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/electionmodel"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// Effects as values. A converted role is a core: state plus a step function that takes one input
// (a request, a timer that fired, a storage completion) and returns a ready, the list of effects
// the input calls for, in the order the Java thread performs them. The core calls nothing outside
// its memory: it may read its durable storage (as etcd raft's core reads its Storage), but every
// write, every packet, every timer and every event for the checkers is an effect in its ready,
// applied by one driver (applyEffect and each core's own driver loop). This is etcd raft's
// RawNode.Ready; see syncproc.go for the first core, SyncRequestProcessor's.
//
// The driver applies a ready's effects strictly in order, and asks the boundary hook between
// effects, from effectBoundaries: a crash between any two persistence effects is the driver's
// decision, not a name placed in the protocol code. Where Java's thread hands a request to the next
// processor (which may feed this one again, as a commit may lead to a proposal) or needs an answer
// of the world to go on (a random draw), the core ends its ready with that effect and sets resume:
// the driver applies the ready, then steps the core again with a continue input, so that the core
// decides what comes next with the world as it is after the effect, as the Java thread would.

// effectKind names one effect a core asks of the world.
type effectKind uint8

const (
	effectNone effectKind = iota
	// effectAppend appends entry to the txn log, unsynced (FileTxnLog.append through
	// ZKDatabase.append), and reports EventLog. appended is the core's expectation that the log
	// takes it (a zxid not above the last logged one is refused, and noted); the driver asserts it.
	effectAppend
	// effectFsyncStart starts an fsync covering every record the log holds when it starts (the
	// driver reads that length then), with a latency the driver draws; the fsync's completion comes
	// back to the core as an input, with that length. It follows the turn's appends: persist before
	// acknowledging, as etcd raft's Ready says "persist Entries before sending Messages".
	effectFsyncStart
	// effectFsyncDone marks the first covered records durable and reports EventFsync; the hand-ons
	// of the requests it covers follow it.
	effectFsyncDone
	// effectFsyncAll makes the whole log durable at once (ZKDatabase.commit called synchronously).
	effectFsyncAll
	// effectSnapshotThread starts the snapshot thread (SyncRequestProcessor.run's "roll the log"
	// branch). The effectDraw of the new snapshot threshold precedes it in the same ready, and the
	// core resumes with that draw.
	effectSnapshotThread
	// effectHandOn passes req to the next request processor; the core resumes after it.
	effectHandOn
	// effectPost runs the core's next turn as a step of its own at this instant: a Java thread's
	// loop coming round to its queue again.
	effectPost
	// effectObserve reports the ready's events[event] to the checkers.
	effectObserve
	// effectNote writes text to the trace, as a line of kind label.
	effectNote
	// effectFail is a broken assertion (label, with text): the driver ends the step and the
	// run there (host.fail), and nothing after it happens.
	effectFail
	// effectQueuePacket puts packet in handler's queue (LearnerHandler.queuePacket): its sender
	// writes it to the learner in queue order.
	effectQueuePacket
	// effectProposalSent tells handler's SyncLimitCheck that zxid was sent.
	effectProposalSent
	// effectCommitRequest hands a committed request to the commit processor
	// (CommitProcessor.commit); the core resumes after it.
	effectCommitRequest
	// effectFinal passes req to FinalRequestProcessor: a txn is applied, a waiting client answered.
	effectFinal
	// effectForward is Leader.startForwarding for handler from zxid: what the leader committed or
	// proposed after it is queued behind the sync's packets, and every new proposal after that.
	effectForward
	// effectExit ends the process on its own (System.exit), with text as the reason.
	effectExit
	// effectSend writes packet to the connection, between the before-send: and after-send:
	// boundaries of its type (zxid holds the type, or snapshotPayload).
	effectSend
	// effectTimer arms the core's next turn after zxid nanoseconds of the monotonic clock.
	effectTimer
	// effectTruncate truncates the txn log after zxid (ZKDatabase.truncateLog), or with legacy as
	// 3.8.0's FileTxnLog.truncate does (keeping one record beyond a missing zxid, failing when no
	// record reaches it), and reports EventTruncate or EventLogDeleted.
	effectTruncate
	// effectSnapshotDelete deletes the snapshots that reach above zxid (a TRUNC's point).
	effectSnapshotDelete
	// effectLogDelete deletes the txn log (after a SNAP's snapshot is durable).
	effectLogDelete
	// effectSnapshotSave writes a snapshot of the tree at its last processed zxid, fsynced if
	// legacy (ZooKeeperServer.takeSnapshot(syncSnap)), and reports EventSnapshot.
	effectSnapshotSave
	// effectEpochFile writes the epoch file label with value zxid through a temporary file that is
	// renamed over it (QuorumPeer.writeLongToFile, AtomicFileOutputStream).
	effectEpochFile
	// effectSnapshotFile writes the snapshot thread's file, named zxid, holding packet (the walk's
	// serialized tree), unsynced, and reports EventSnapshot.
	effectSnapshotFile

	// The learner's effects (learnercore.go). Its appends, fsyncs, snapshots and log deletion are
	// the storage effects above, its NEWLEADER logging effectNewLeaderAppend.

	// effectSetEpoch writes the epoch file label with value zxid and adopts it
	// (QuorumPeer.setAcceptedEpoch or setCurrentEpoch: the file between its three boundaries, then
	// the field, then EventAcceptedEpoch or EventCurrentEpoch).
	effectSetEpoch
	// effectAckEpoch writes ACKEPOCH with the server's last logged zxid, read as it is written
	// (QuorumPeer.getLastLoggedZxid), and zxid as its epoch bytes.
	effectAckEpoch
	// effectSyncMode sets QuorumPeer.syncMode to zxid (a syncMode).
	effectSyncMode
	// effectTruncateLog is ZKDatabase.truncateLog to zxid: the database is cleared, the log
	// truncated (effectTruncate), the snapshots above the point deleted (effectSnapshotDelete,
	// unless trunc-snapshot) and the database reloaded from disk. The core resumes with whether
	// the truncation succeeded and the zxid the reload reached.
	effectTruncateLog
	// effectClaimZxid sets the tree's last processed zxid to zxid (setlastProcessedZxid).
	effectClaimZxid
	// effectSessionTracker creates the learner's session tracker.
	effectSessionTracker
	// effectLoadSnapshot replaces the database by the leader's snapshot in packet, at zxid; the
	// core resumes with the decoding's error, if any.
	effectLoadSnapshot
	// effectApplySync applies entry to the tree during the sync (processTxn with SourceSync; with
	// legacy, ZK-4925's processTxn(hdr, txn), which does not enter the committed log).
	effectApplySync
	// effectThrow is a Java exception that kills the thread and the process (ZOOKEEPER-4394's
	// NullPointerException at a COMMIT of zxid): the driver panics with text and zxid.
	effectThrow
	// effectStartup is ZooKeeperServer.startup (startupWithoutServing): the request chain runs.
	effectStartup
	// effectLogRequest hands entry to the follower's core as a proposal to log
	// (FollowerZooKeeperServer.logRequest).
	effectLogRequest
	// effectPendingTxn files entry as pending in the follower's core, without logging it
	// (FollowerZooKeeperServer.appendRequest's pendingTxns).
	effectPendingTxn
	// effectNewLeaderAppend appends entry to the txn log as the QuorumPeer thread's own logging at
	// NEWLEADER does (Learner.syncWithLeader's NEWLEADER case with ZOOKEEPER-3911's fix, or 3.8.5's
	// FollowerZooKeeperServer.appendRequest), unsynced, like effectAppend; the fsync of them all
	// (effectFsyncAll) follows the last. Its own kind gives it the boundary newleader-appended
	// after the append's own.
	effectNewLeaderAppend
	// effectAskSyncBusy is the QuorumPeer thread done with NEWLEADER's logging (what it logs
	// itself, or hands to the sync thread): the driver answers whether the sync thread has work
	// in hand, which decides whether its writes race the epoch write and the ACK that follow. The
	// core resumes with the answer. Its boundary before it is newleader-before-epoch.
	effectAskSyncBusy
	// effectSyncLog hands entry to the sync processor (SyncRequestProcessor.processRequest).
	effectSyncLog
	// effectDraw asks the world for a choice in [0, zxid); the core resumes with it.
	effectDraw
	// effectHoldReads makes the QuorumPeer thread busy: what arrives is held, in order, until
	// effectReadHeld.
	effectHoldReads
	// effectWhenSyncIdle runs the QuorumPeer thread's next turn (learnerSyncIdle) as a step of its
	// own once the sync thread has appended, fsynced and acknowledged all it holds.
	effectWhenSyncIdle
	// effectEpochWrite starts the QuorumPeer thread's currentEpoch write, which takes an fsync's
	// latency (drawn by the driver); its completion comes back as learnerEpochWritten.
	effectEpochWrite
	// effectLearnerAck writes an ACK of zxid to the leader; with label ackOfNewLeader it is the
	// NEWLEADER ACK, reported as EventNewLeaderAck with the tree's last processed zxid as it is
	// written.
	effectLearnerAck
	// effectReadHeld lets the QuorumPeer thread read again: what it held is handled now, in order.
	effectReadHeld
	// effectServe starts serving in epoch zxid (the learner's startServing and the election's
	// vote update).
	effectServe
	// effectObserverCommit logs and applies entry on an observer (ObserverZooKeeperServer
	// .commitRequest).
	effectObserverCommit
	// effectFollowerCommit commits zxid on a follower (FollowerZooKeeperServer.commit).
	effectFollowerCommit
	// effectSyncAnswered is FollowerZooKeeperServer.sync: the leader answered the oldest forwarded
	// sync.
	effectSyncAnswered
	// effectLeave ends the role with the reason text: the exception that ends
	// Follower.followLeader or Leader.lead, after which the peer looks for a leader again.
	effectLeave

	// The leader's quorum waits (discoverycore.go). A waiter is the ready's waiters[event].

	// effectWaitStart makes a thread wait (the waiter): its deadline, initLimit ticks, is armed.
	effectWaitStart
	// effectWaitCancel cancels a waiter's deadline: its wait ended.
	effectWaitCancel
	// effectWaitWake wakes the zxid waiters from waiters[event] on, each as a step of its own, in
	// an order the world draws (the notifyAll that ends a wait).
	effectWaitWake
	// effectWaitContinue lets the thread that called the wait zxid (handler, or nil for the
	// leader's own) go on at once.
	effectWaitContinue
	// effectHandlerShutdown shuts handler down with the reason text.
	effectHandlerShutdown

	// The snapshot thread's walk (snapthread.go).

	// effectWalkNext arms the walk's next step after a latency the driver draws (0.1 to 1 ms).
	effectWalkNext
	// effectWalkEnd unregisters the snapshot thread: the database runs none.
	effectWalkEnd
	// effectSnapshotOpen is the thread's start of the file of zxid (FileTxnSnapLog.save opening
	// the stream FileSnap.serialize writes to). The model writes nothing yet: a file exists only
	// once the walk is over (a partial one is skipped on load anyway). Its boundary before it is
	// before-snapshot.
	effectSnapshotOpen
	// effectSerializeStep is one step of FileSnap.serialize's walk: the driver draws how many
	// nodes it writes, in [0, zxid), and the core resumes with the draw. Its boundary before it
	// is snapshot-serializing.
	effectSerializeStep

	// The leader's establishment and tick (leaderloop.go). Its start is effectStartup, its claim of
	// the new epoch's zxid effectClaimZxid, its next tick effectTimer, giving up effectLeave.

	// effectElectionVote sets the election's vote to the epoch zxid (QuorumPeer.updateElectionVote).
	effectElectionVote
	// effectSetZxid sets the server's last assigned zxid to zxid (ZooKeeperServer.setZxid).
	effectSetZxid
	// effectStartServing starts serving clients (the leader's QuorumPeer.setZooKeeperServer).
	effectStartServing
	// effectPing is LearnerHandler.ping of handler: a PING, or the handler's end if its learner's
	// oldest unacknowledged proposal is older than syncLimit ticks.
	effectPing

	// The learner's session answers (learnersession.go) write with effectSend.

	// effectSessionValidated tells client, waiting for the leader's verdict on its session zxid,
	// whether it is valid (ServerCnxn's finishSessionInit).
	effectSessionValidated

	// The learner's connection (learnerconn.go). FOLLOWERINFO is written with effectSend, giving up
	// is effectLeave.

	// effectDial connects to the leader's quorum port with a connect timeout of zxid nanoseconds
	// (LeaderConnector's sockConnect); the socket's connection or failure comes back as an input.
	effectDial
	// effectConnectRetry sleeps zxid nanoseconds (leaderConnectDelayDuringRetryMs) before the next
	// try, a timer of the role that armed it.
	effectConnectRetry
	// effectReadTimeout sets the socket's read timeout to zxid nanoseconds from now (setSoTimeout),
	// in place of the one armed before.
	effectReadTimeout
	// effectDisconnect cancels the read timeout and closes the socket (Learner.shutdown).
	effectDisconnect

	// The election transport (election_transport.go).

	// effectElectionDial connects to peer zxid's election port with the 5 s cnxTO timeout; the
	// driver reports the connection's id back at once (cnxDialed).
	effectElectionDial
	// effectElectionWrite writes packet to the election connection zxid.
	effectElectionWrite
	// effectElectionClose closes the election connection zxid.
	effectElectionClose
	// effectElectionDeliver hands packet, read from peer zxid, to the election.
	effectElectionDeliver
	// effectElectionLoopback hands packet, sent by the election to this server itself, to the
	// election as a step of its own at this instant.
	effectElectionLoopback

	// The learner handler's thread (handlercore.go, snapstream.go). Its read timeout is
	// effectReadTimeout, its shutdown's close effectDisconnect (which also cancels the armed read),
	// its packets effectQueuePacket, the SNAP stream's steps effectWalkNext (the stream is the
	// timer) and their draws effectDraw.

	// effectHandlerRead arms the thread's read of the next buffered packet, a step of its own after
	// a delay the driver draws (learnerHandler.readDelay).
	effectHandlerRead
	// effectReadTimeoutCancel cancels the socket's read timeout: the thread waits, it does not read.
	effectReadTimeoutCancel
	// effectStartupPoll arms waitForStartup's next look after a delay the driver draws (0 to 20 ms).
	effectStartupPoll
	// effectHandlerWrite is a write of the handler's own thread (LEADERINFO, SNAP, the snapshot),
	// not through the queue: the sender writes it in turn (senderWrite). zxid holds its type, or
	// snapshotPayload.
	effectHandlerWrite
	// effectSenderStart starts the handler's sender: the queued packets go out.
	effectSenderStart
	// effectSenderClose closes the handler's sender: nothing more is queued or written.
	effectSenderClose
	// effectWaitCall is the thread's call of the leader's quorum wait event (a discoveryWait) with
	// what it read: zxid is the learner's last accepted epoch (getEpochToPropose), its current
	// epoch (waitForEpochAck, with the last zxid of its ACKEPOCH, handlerCore.peerLastZxid) or the
	// zxid of its NEWLEADER ACK (waitForNewLeaderAck). The core resumes after it.
	effectWaitCall
	// effectProcessAck is Leader.processAck of the learner's ACK of zxid; the core resumes after it.
	effectProcessAck
	// effectTouch is LearnerMaster.touch of session zxid with a timeout of event ms (a PING's).
	effectTouch
	// effectRevalidate is LearnerMaster.revalidateSession of session zxid with a timeout of event
	// ms: the leader queues its answer to the handler.
	effectRevalidate
	// effectSubmit submits req, a client request the learner forwarded (REQUEST), to the leader's
	// request processors; the core resumes after it.
	effectSubmit
	// effectRemoveHandler removes the handler from the leader's learners.
	effectRemoveHandler
	// effectForgetAcks drops the learner's acknowledgements (leader.forgetAcks): its connection
	// ended.
	effectForgetAcks

	// The sync processor's stop and its idle waiters (syncproc.go).

	// effectFastForward is the database part of ZooKeeperServer.shutdown: the tree is
	// fast-forwarded to the txn log (or the database cleared, on a full shutdown). It follows the
	// processor's shutdown appends and fsync, or, under ZOOKEEPER-4712, precedes what the
	// processor still appends.
	effectFastForward
	// effectPostIdle posts the ready's posts[event], a step of another thread that waited for the
	// sync thread to be idle, as a step of its own at this instant. These come last in a ready,
	// after every effect that could keep the thread busy, and in the order the steps asked.
	effectPostIdle

	// Leader.lead's start and Leader.shutdown (leaderloop.go). The leader's own getEpochToPropose
	// is effectWaitCall, the handlers' shutdowns effectHandlerShutdown, the waits' ends
	// effectWaitCancel.

	// effectListen opens the leader's quorum port (LearnerCnxAcceptor): learners may connect.
	effectListen
	// effectUnlisten closes the quorum port: no learner connects any more.
	effectUnlisten
	// effectTimerCancel cancels the core's next turn, armed by effectTimer.
	effectTimerCancel

	// QuorumPeer's role loop (peercore.go). Its post of the next election is effectPost (zxid holds
	// the role generation it starts), its notes and events effectNote and effectObserve.

	// effectNotify hands packet, an encoded notification, to the election transport for peer zxid
	// (QuorumCnxManager.toSend).
	effectNotify
	// effectConnectAll connects the election transport to every voter (connectAll).
	effectConnectAll
	// effectElectionTimer cancels the election's timer and, if valid, arms it again to expire
	// after zxid nanoseconds.
	effectElectionTimer
	// effectLead runs the leader's role (QuorumPeer.run's lead()).
	effectLead
	// effectFollow runs a learner's role, following peer zxid (followLeader or observeLeader).
	effectFollow
	// effectRoleShutdown shuts the role down: the leader, the learner, then the role's
	// ZooKeeperServer and client connections.
	effectRoleShutdown
	// effectAskSelf asks for the server's last logged zxid and current epoch, read as the effect
	// is applied (QuorumPeer.getLastLoggedZxid, which loads a cleared database first); the core
	// resumes with them.
	effectAskSelf
	// effectLoadDatabase is ZKDatabase.loadDataBase at startup; the core resumes with the last
	// processed zxid it reached.
	effectLoadDatabase

	// effectKinds counts the kinds above; it is no effect.
	effectKinds
)

var effectNames = [...]string{
	effectNone: "none", effectAppend: "append", effectFsyncStart: "fsync-start", effectFsyncDone: "fsync-done",
	effectFsyncAll: "fsync-all", effectSnapshotThread: "snapshot-thread", effectHandOn: "hand-on", effectPost: "post",
	effectObserve: "event", effectNote: "note", effectFail: "fail", effectQueuePacket: "queue",
	effectProposalSent: "proposal-sent", effectCommitRequest: "commit-request", effectFinal: "final",
	effectForward: "forward", effectExit: "exit", effectSend: "send", effectTimer: "timer",
	effectTruncate: "truncate", effectSnapshotDelete: "snapshot-delete", effectLogDelete: "log-delete",
	effectSnapshotSave: "snapshot", effectEpochFile: "epoch-file", effectSnapshotFile: "snapshot-file",
	effectSetEpoch: "set-epoch", effectAckEpoch: "ackepoch", effectSyncMode: "sync-mode",
	effectTruncateLog: "truncate-log", effectClaimZxid: "claim", effectSessionTracker: "session-tracker",
	effectLoadSnapshot: "load-snapshot", effectApplySync: "apply", effectThrow: "throw", effectStartup: "startup",
	effectLogRequest: "log-request", effectPendingTxn: "pending", effectNewLeaderAppend: "newleader-append",
	effectAskSyncBusy: "ask-sync-busy",
	effectSyncLog:     "sync-log", effectDraw: "draw", effectHoldReads: "hold-reads", effectWhenSyncIdle: "when-sync-idle",
	effectEpochWrite: "epoch-write", effectLearnerAck: "ack", effectReadHeld: "read-held", effectServe: "serve",
	effectObserverCommit: "observer-commit", effectFollowerCommit: "commit",
	effectSyncAnswered: "sync-answered", effectLeave: "leave", effectWaitStart: "wait-start", effectWaitCancel: "wait-cancel", effectWaitWake: "wake",
	effectWaitContinue: "go-on", effectHandlerShutdown: "handler-shutdown",
	effectWalkNext: "walk-next", effectWalkEnd: "walk-end", effectSnapshotOpen: "snapshot-open",
	effectSerializeStep: "serialize",
	effectElectionVote:  "vote", effectSetZxid: "set-zxid", effectStartServing: "serving", effectPing: "ping",
	effectSessionValidated: "session-validated",
	effectDial:             "dial", effectConnectRetry: "connect-retry", effectReadTimeout: "read-timeout",
	effectDisconnect: "disconnect", effectElectionDial: "dial-peer", effectElectionWrite: "write",
	effectElectionClose: "close", effectElectionDeliver: "deliver", effectElectionLoopback: "loopback",
	effectHandlerRead: "read-next", effectReadTimeoutCancel: "read-timeout-cancel", effectStartupPoll: "startup-poll",
	effectHandlerWrite: "handler-write", effectSenderStart: "sender-start", effectSenderClose: "sender-close",
	effectWaitCall: "wait-call", effectProcessAck: "process-ack", effectTouch: "touch", effectRevalidate: "revalidate",
	effectSubmit: "submit", effectRemoveHandler: "remove-handler", effectForgetAcks: "forget-acks",
	effectFastForward: "fast-forward", effectPostIdle: "post-idle",
	effectListen: "listen", effectUnlisten: "unlisten", effectTimerCancel: "timer-cancel",
	effectNotify: "notify", effectConnectAll: "connect-all", effectElectionTimer: "election-timer",
	effectLead: "lead", effectFollow: "follow", effectRoleShutdown: "role-shutdown", effectAskSelf: "ask-self",
	effectLoadDatabase: "load-database",
}

func (k effectKind) String() string {
	if int(k) < len(effectNames) {
		return effectNames[k]
	}
	return fmt.Sprintf("effect(%d)", k)
}

// effect is one effect of a ready: its kind and what it concerns. It is kept small (an event is
// stored beside it, in its ready), because every append and every hand-on copies one.
type effect struct {
	kind effectKind
	// appended is, for an append, whether the core expects the log to take the record.
	appended bool
	// legacy is, for a truncation, 3.8.0's FileTxnLog.truncate; for a snapshot, an fsynced one.
	legacy bool
	// valid is, for effectSessionValidated, the leader's verdict.
	valid bool
	// event is, for effectObserve, the index of its event in the ready's events.
	event int32
	// zxid is the proposal sent (effectProposalSent), the point of effectForward, or for
	// effectFsyncDone how many records the fsync covers.
	zxid int64
	// entry is the txn an append writes.
	entry *proto.TxnEntry
	// req is the request a hand-on passes on.
	req *request
	// label and text are a note's kind and line, or a failed assertion's invariant and detail.
	label, text string
	// handler is the learner handler a queued packet or a sent proposal concerns; packet is the
	// encoded quorum packet.
	handler *learnerHandler
	packet  []byte
	// client is the client connection a session's validation concerns.
	client *clientConn
}

// ready is the output of one step of a core: the effects to apply, in order.
//
// Ordering contract: effects are applied in the order listed, each one complete before the next
// starts, and the process may die between any two (at the boundaries of effectBoundaries). Within
// SyncRequestProcessor's ready, every append precedes the fsync that covers it, and a request is
// handed on (an ACK sent, a proposal acknowledged) only after the effectFsyncDone that covers it:
// nothing is acknowledged before it is durable.
type ready struct {
	effects []effect
	// events are the events of the effectObserve effects, by index.
	events []Event
	// waiters are the waiters of the quorum waits' effects, by index.
	waiters []*quorumWaiter
	// posts are the steps of effectPostIdle, by index.
	posts []timer
	// resume says that the core stopped after the last effect, which the rest of its work depends
	// on: the driver applies the effects, then steps the core again with a continue input.
	resume bool
}

func (r *ready) add(e effect) { r.effects = append(r.effects, e) }

// observe adds an effectObserve of ev.
func (r *ready) observe(ev Event) {
	r.events = append(r.events, ev)
	r.effects = append(r.effects, effect{kind: effectObserve, event: int32(len(r.events) - 1)})
}

// note adds an effectNote: a trace line of kind kind.
func (r *ready) note(kind, text string) { r.add(effect{kind: effectNote, label: kind, text: text}) }

// String renders a ready one effect a line, for the datadriven tests.
func (r *ready) String() string {
	var b []byte
	for _, e := range r.effects {
		b = append(b, e.kind.String()...)
		switch e.kind {
		case effectAppend, effectNewLeaderAppend:
			b = fmt.Appendf(b, " %s", FormatZxid(e.entry.Header.Zxid))
			if !e.appended {
				b = append(b, " (refused)"...)
			}
		case effectApplySync, effectLogRequest, effectPendingTxn, effectSyncLog, effectObserverCommit:
			b = fmt.Appendf(b, " %s", FormatZxid(e.entry.Header.Zxid))
			if e.kind == effectApplySync && e.legacy {
				b = append(b, " (without the committed log)"...)
			}
		case effectSetEpoch:
			b = fmt.Appendf(b, " %s=%d", e.label, e.zxid)
		case effectAckEpoch:
			b = fmt.Appendf(b, " epoch-bytes=%d", e.zxid)
		case effectSyncMode:
			b = fmt.Appendf(b, " %s", syncMode(e.zxid))
		case effectTruncateLog, effectClaimZxid, effectFollowerCommit, effectLearnerAck, effectThrow, effectSetZxid:
			b = fmt.Appendf(b, " %s", FormatZxid(e.zxid))
			if e.label != "" {
				b = fmt.Appendf(b, " (%s)", e.label)
			}
			if e.text != "" {
				b = fmt.Appendf(b, " %s", e.text)
			}
		case effectSnapshotFile:
			b = fmt.Appendf(b, " %s bytes=%d", FormatZxid(e.zxid), len(e.packet))
		case effectLoadSnapshot:
			b = fmt.Appendf(b, " %s bytes=%d", FormatZxid(e.zxid), len(e.packet))
		case effectSnapshotOpen:
			b = fmt.Appendf(b, " %s", FormatZxid(e.zxid))
		case effectDraw, effectSerializeStep:
			b = fmt.Appendf(b, " n=%d", e.zxid)
		case effectServe, effectElectionVote:
			b = fmt.Appendf(b, " epoch=%d", e.zxid)
		case effectPing:
			b = fmt.Appendf(b, " learner=%d", e.handler.sid)
		case effectSessionValidated:
			b = fmt.Appendf(b, " session=%#x valid=%t", e.zxid, e.valid)
		case effectSnapshotSave:
			if e.legacy {
				b = append(b, " fsynced"...)
			}
		case effectLeave:
			b = fmt.Appendf(b, " %s", e.text)
		case effectWaitStart, effectWaitCancel:
			w := r.waiters[e.event]
			b = fmt.Appendf(b, " %v %s", w.wait, waiterThread(w.handler))
		case effectWaitWake:
			for _, w := range r.waiters[e.event : e.event+int32(e.zxid)] {
				b = fmt.Appendf(b, " %v:%s", w.wait, waiterThread(w.handler))
			}
		case effectWaitContinue:
			b = fmt.Appendf(b, " %v %s", discoveryWait(e.zxid), waiterThread(e.handler))
		case effectHandlerShutdown:
			b = fmt.Appendf(b, " %s: %s", waiterThread(e.handler), e.text)
		case effectPostIdle:
			if namer, ok := r.posts[e.event].(interface{ TimerName(uint64) string }); ok {
				b = fmt.Appendf(b, " %s", namer.TimerName(0))
			}
		case effectWaitCall:
			if discoveryWait(e.event) == waitNewLeaderAck {
				b = fmt.Appendf(b, " %v zxid=%s", discoveryWait(e.event), FormatZxid(e.zxid))
			} else {
				b = fmt.Appendf(b, " %v epoch=%d", discoveryWait(e.event), e.zxid)
			}
		case effectProcessAck:
			b = fmt.Appendf(b, " %s", FormatZxid(e.zxid))
		case effectTouch, effectRevalidate:
			b = fmt.Appendf(b, " session=%#x/%dms", e.zxid, e.event)
		case effectHandOn, effectFinal, effectCommitRequest, effectSubmit:
			if e.req.entry != nil {
				b = fmt.Appendf(b, " %s", FormatZxid(e.req.zxid()))
			} else {
				b = fmt.Appendf(b, " %v cxid=%d", e.req.op, e.req.cxid)
			}
		case effectFsyncDone:
			b = fmt.Appendf(b, " covered=%d", e.zxid)
		case effectObserve:
			ev := r.events[e.event]
			b = fmt.Appendf(b, " %s", ev.Kind)
			if ev.Zxid != 0 {
				b = fmt.Appendf(b, " zxid=%s", FormatZxid(ev.Zxid))
			}
			if ev.Kind == EventEstablished {
				b = fmt.Appendf(b, " through=%s", FormatZxid(ev.Through))
			}
			if (ev.Kind == EventTreeLoaded || ev.Kind == EventApply) && ev.Source != SourceNone {
				b = fmt.Appendf(b, " source=%s", ev.Source)
			}
		case effectNote:
			b = fmt.Appendf(b, " %s: %s", e.label, e.text)
		case effectFail:
			b = fmt.Appendf(b, " %s: %s", e.label, e.text)
		case effectExit:
			b = fmt.Appendf(b, " %s", e.text)
		case effectSend, effectHandlerWrite:
			if kind := int32(e.zxid); kind == snapshotPayload {
				b = fmt.Appendf(b, " SNAPSHOT bytes=%d", len(e.packet))
			} else if qp, err := decodePacket(e.packet); err == nil {
				b = fmt.Appendf(b, " %s zxid=%s", packetName(qp.Type), FormatZxid(qp.Zxid))
				if qp.Type == pktPing && len(qp.Data) > 0 {
					for _, touch := range parseTouchData(qp.Data) {
						b = fmt.Appendf(b, " session=%#x/%dms", touch.id, touch.timeoutMs)
					}
				}
				if qp.Type == pktRevalidate && len(qp.Data) >= 8 {
					b = fmt.Appendf(b, " session=%#x", binary.BigEndian.Uint64(qp.Data))
				}
			}
		case effectTimer, effectConnectRetry, effectReadTimeout:
			b = fmt.Appendf(b, " after=%v", clock.Duration(e.zxid))
		case effectDial:
			b = fmt.Appendf(b, " timeout=%v", clock.Duration(e.zxid))
		case effectElectionDial:
			b = fmt.Appendf(b, " sid=%d", e.zxid)
		case effectElectionWrite, effectElectionClose:
			b = fmt.Appendf(b, " conn=%d", e.zxid)
			if e.kind == effectElectionWrite {
				b = fmt.Appendf(b, " %s", electionPayloadText(e.packet))
			}
		case effectElectionDeliver:
			b = fmt.Appendf(b, " from=%d %s", e.zxid, electionPayloadText(e.packet))
		case effectElectionLoopback:
			b = fmt.Appendf(b, " %s", electionPayloadText(e.packet))
		case effectNotify:
			if n, err := electionmodel.Decode(e.zxid, e.packet); err == nil {
				b = fmt.Appendf(b, " to=%d %s leader=%d zxid=%s round=%#x peerEpoch=%d", e.zxid, n.State, n.Leader,
					FormatZxid(n.Zxid), n.ElectionEpoch, n.PeerEpoch)
			}
		case effectElectionTimer:
			if e.valid {
				b = fmt.Appendf(b, " after=%v", clock.Duration(e.zxid))
			} else {
				b = append(b, " cancel"...)
			}
		case effectFollow:
			b = fmt.Appendf(b, " leader=%d", e.zxid)
		case effectEpochFile:
			b = fmt.Appendf(b, " %s=%d", e.label, e.zxid)
		case effectPost:
			if e.zxid != 0 {
				b = fmt.Appendf(b, " generation=%d", e.zxid)
			}
		case effectQueuePacket:
			qp, err := decodePacket(e.packet)
			if err != nil {
				b = fmt.Appendf(b, " learner=%d undecodable: %v", e.handler.sid, err)
				break
			}
			b = fmt.Appendf(b, " learner=%d %s zxid=%s", e.handler.sid, packetName(qp.Type), FormatZxid(qp.Zxid))
		case effectProposalSent, effectForward:
			b = fmt.Appendf(b, " learner=%d zxid=%s", e.handler.sid, FormatZxid(e.zxid))
		}
		b = append(b, '\n')
	}
	if r.resume {
		b = append(b, "resume\n"...)
	}
	return string(b)
}

// waiterThread names a waiting thread for the datadriven tests: a learner handler's, or the
// leader's own.
func waiterThread(h *learnerHandler) string {
	if h == nil {
		return "leader"
	}
	return fmt.Sprintf("learner=%d", h.sid)
}

// readyPool keeps a core's ready values for reuse. A ready is in use from the step that fills it
// until its driver has applied it; an effect may lead to another input of the same core (a hand-on
// that comes back as a request) while the ready is being applied, so that step takes another.
type readyPool struct{ free []*ready }

func (rp *readyPool) get() *ready {
	if n := len(rp.free); n > 0 {
		r := rp.free[n-1]
		rp.free = rp.free[:n-1]
		return r
	}
	return &ready{}
}

func (rp *readyPool) put(r *ready) {
	clear(r.effects)
	clear(r.events)
	clear(r.waiters)
	clear(r.posts)
	r.effects, r.events, r.waiters, r.posts, r.resume = r.effects[:0], r.events[:0], r.waiters[:0], r.posts[:0], false
	rp.free = append(rp.free, r)
}

// effectBoundaries are the boundaries the driver asks the hook about before and after each kind
// of effect; every boundary a server asks is one of this table's, asked by a driver around the
// effect of its kind, except an epoch file's (named by the file, epochFilePoints) and a quorum
// packet's send (named by its type, sendBoundary). The historical names keep their meaning:
// "log-appended" is the boundary between a turn's appends and the fsync that covers them (the
// fsync follows every turn that appended), "fsynced-before-ack" the one between an fsync's
// completion and the acknowledgements it releases, "newleader-appended" the one after each record
// the QuorumPeer thread appends itself at NEWLEADER, "newleader-before-epoch" the one between
// NEWLEADER's logging and the currentEpoch write and ACK that follow it, "before-snapshot" the one
// before a snapshot (the snapshot thread's at its start) and "snapshot-serializing" the one
// before each step of the snapshot thread's walk.
var effectBoundaries = [effectKinds][2][]string{
	effectAppend:          {{"before-append"}, {"after-append"}},
	effectNewLeaderAppend: {{"before-append"}, {"after-append", "newleader-appended"}},
	effectFsyncStart:      {{"log-appended", "before-fsync"}, nil},
	effectFsyncDone:       {nil, {"fsynced-before-ack"}},
	effectFsyncAll:        {{"before-fsync"}, {"after-fsync"}},
	effectTruncate:        {{"before-truncate"}, {"after-truncate"}},
	effectSnapshotDelete:  {{"before-snapshot-delete"}, {"after-snapshot-delete"}},
	effectLogDelete:       {{"before-log-delete"}, {"after-log-delete"}},
	effectSnapshotSave:    {{"before-snapshot"}, {"after-snapshot"}},
	// The snapshot thread's file: before-snapshot when the thread opens it, snapshot-serializing
	// before each step of its walk, after-snapshot once it is written at the walk's end.
	effectSnapshotOpen:  {{"before-snapshot"}, nil},
	effectSerializeStep: {{"snapshot-serializing"}, nil},
	effectSnapshotFile:  {nil, {"after-snapshot"}},
	effectAskSyncBusy:   {{"newleader-before-epoch"}, nil},
	// An epoch file's three boundaries are named by the file (epochFilePoints): before its write,
	// between the temporary file and the rename, and after it. A queued packet's write asks its
	// own boundaries (before-send: and after-send: of its type), in the learner handler's sender,
	// which writes it when its turn comes.
}

// refusedBoundaries are the boundaries asked after an append the log refused (a zxid not above its
// last one), in place of the effect's after-boundaries: a refused append changed nothing, but the
// QuorumPeer thread's NEWLEADER logging goes on to its next record all the same.
var refusedBoundaries = [effectKinds][]string{
	effectNewLeaderAppend: {"newleader-appended"},
}

// askBoundaries asks the hook about the boundaries of an effect of kind k: before it (which 0) or
// after it (which 1).
func (p *peer) askBoundaries(k effectKind, which int) {
	for _, name := range effectBoundaries[k][which] {
		p.crashPoint(name)
	}
}

// applyStorageEffect is the driver of the storage effects: it applies one append or fsync to the
// durable storage between its boundaries. Code not yet converted to a core (ZKDatabase's
// truncation, reload and shutdown flush, QuorumPeer's epoch files) applies its storage effects
// through it too, so that every persistence boundary is asked in one place. It returns whether an
// append was taken.
func (p *peer) applyStorageEffect(e effect) bool {
	p.askBoundaries(e.kind, 0)
	ok := true
	switch e.kind {
	case effectAppend, effectNewLeaderAppend:
		ok = p.db.appendRecord(e.entry)
	case effectFsyncDone:
		d := p.h.disk()
		d.Synced(int(e.zxid))
		p.observe(Event{Kind: EventFsync, Zxid: d.SyncedZxid(), Count: d.SyncedLen()})
	case effectFsyncAll:
		d := p.h.disk()
		d.Synced(d.Len())
		p.observe(Event{Kind: EventFsync, Zxid: d.LastZxid(), Count: d.SyncedLen()})
	case effectTruncate:
		ok = p.db.truncateRecords(e.zxid, e.legacy)
	case effectSnapshotDelete:
		db := p.db
		if n := db.disk().DeleteSnapshots(func(s storage.Snapshot) bool { return snapshotReach(s) > e.zxid }); n > 0 {
			p.note("sync", "deleted %d snapshot(s) reaching above the truncation point %s", n, FormatZxid(e.zxid))
		}
	case effectLogDelete:
		p.h.disk().ClearLog()
		p.observe(Event{Kind: EventLogDeleted})
		p.note("sync", "deleted the txn log: the SNAP's snapshot covers it")
	case effectSnapshotSave:
		db := p.db
		zxid := db.tree.lastProcessedZxid()
		db.disk().SaveSnapshot(storage.Snapshot{Zxid: zxid, Data: serializeTree(db.tree, db.sessions)}, e.legacy)
		db.txnsSinceSnapshot = 0
		p.observe(Event{Kind: EventSnapshot, Zxid: zxid, Digest: db.tree.digest()})
	case effectSnapshotFile:
		db := p.db
		db.disk().SaveSnapshot(storage.Snapshot{Zxid: e.zxid, Data: e.packet}, false)
		p.observe(Event{Kind: EventSnapshot, Zxid: e.zxid, Digest: db.tree.digest()})
		p.note("snapshot", "snapshot at %s written; the tree was at %s when the walk ended",
			FormatZxid(e.zxid), FormatZxid(db.tree.lastProcessedZxid()))
	case effectEpochFile:
		points := epochFilePoints[e.label]
		p.crashPoint(points[0])
		tmp := e.label + ".tmp"
		p.h.disk().WriteFile(tmp, []byte(fmt.Sprint(e.zxid)))
		p.crashPoint(points[1])
		p.h.disk().WriteFile(e.label, []byte(fmt.Sprint(e.zxid)))
		p.h.disk().DeleteFile(tmp)
		p.crashPoint(points[2])
	default:
		panic(fmt.Sprintf("zabmodel: %v is not a storage effect", e.kind))
	}
	if !ok {
		for _, name := range refusedBoundaries[e.kind] {
			p.crashPoint(name)
		}
		return false
	}
	p.askBoundaries(e.kind, 1)
	return ok
}

// fsyncLatency draws how long an fsync takes.
func (p *peer) fsyncLatency() clock.Duration {
	return p.h.between(p.cfg.FsyncLatencyMin, p.cfg.FsyncLatencyMax, 100*clock.Microsecond)
}

// applySend is the driver of a write to a quorum connection: the packet (of type kind, or the
// snapshot payload) is written between the before-send: and after-send: boundaries of its type,
// and ev, if any, is reported once it is written, before the boundary after it (a crash there comes
// after an acknowledgement the peer will receive).
func (p *peer) applySend(conn net.ConnID, kind int32, packet []byte, ev *Event) {
	p.boundary(sendBoundary(kind, 0), conn)
	p.h.send(conn, packet)
	if ev != nil {
		p.observe(*ev)
	}
	p.boundary(sendBoundary(kind, 1), conn)
}

// electionPayloadText renders an election transport's message for the datadriven tests: an
// initial message as the identity it carries, anything else as its bytes, quoted.
func electionPayloadText(b []byte) string {
	if len(b) == 16 && int64(binary.BigEndian.Uint64(b)) == electionProtocolVersion {
		return fmt.Sprintf("identity=%d", int64(binary.BigEndian.Uint64(b[8:])))
	}
	return fmt.Sprintf("%q", b)
}

// applyReport applies the effects that every driver applies the same way: an event for the
// checkers, a note for the trace, a broken assertion and the process's exit. It reports whether e
// was one of them, so that a driver handles only the effects of its own core after it.
func (p *peer) applyReport(out *ready, e *effect) bool {
	switch e.kind {
	case effectObserve:
		p.observe(out.events[e.event])
	case effectNote:
		p.h.note(e.label, "%s", e.text)
	case effectFail:
		p.h.fail(&AssertionError{Server: p.sid, Invariant: e.label, Detail: e.text})
	case effectExit:
		p.exit("%s", e.text)
	default:
		return false
	}
	return true
}
