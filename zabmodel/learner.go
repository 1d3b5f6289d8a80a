package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

type learnerState uint8

const (
	lsConnecting learnerState = iota
	lsAwaitLeaderInfo
	lsAwaitSyncMode
	lsAwaitSnapshot
	lsSyncing
	lsBroadcast
	lsDead
)

// leaderConnectDelayDuringRetry is Learner.leaderConnectDelayDuringRetryMs.
const leaderConnectDelayDuringRetry = 100 * clock.Millisecond

// learner is Learner with Follower and Observer: the connection to the leader, discovery,
// synchronization (syncWithLeader) and broadcast (processPacket).
type learner struct {
	p         *peer
	zk        *zkServer
	leaderSid int64
	observer  bool
	state     learnerState

	conn         net.ConnID
	tries        int
	connectStart clock.Time
	readTimer    sim.TimerID
	// readTimedOut is the read timer's callback, made once: the timer is re-armed for every packet.
	readTimedOut func()

	newEpoch, newLeaderZxid int64

	// syncWithLeader's locals.
	snapshotNeeded, syncSnapshot bool
	writeToTxnLog, preZab1       bool
	snapZxid                     int64
	notLogged                    []*proto.TxnEntry // packetsNotLogged
	committed                    []int64           // packetsCommitted
	lastQueued                   int64

	// requestsToAck are the zxids 3.8.5's NEWLEADER appended, acknowledged after UPTODATE
	// (learner_releases.go).
	requestsToAck []int64

	pendingRevalidations map[int64]*clientConn

	// busy says that the QuorumPeer thread is in a step that takes time (writing currentEpoch at
	// NEWLEADER) and reads nothing; held keeps, in order, what arrives meanwhile.
	busy bool
	held [][]byte
}

// follow is Follower.followLeader and Observer.observeLeader up to the connection.
func (p *peer) follow(leaderSid int64) {
	kind := kindFollower
	if p.role == Observing {
		kind = kindObserver
	}
	l := &learner{p: p, leaderSid: leaderSid, observer: kind == kindObserver, pendingRevalidations: map[int64]*clientConn{}}
	l.zk = newZKServer(p, kind)
	p.learner, p.zk = l, l.zk
	l.connectStart = p.h.elapsed()
	l.connect()
}

func (l *learner) connectTimeout() clock.Duration { return l.p.cfg.ticks(l.p.cfg.InitLimit) }

// connect is one try of LeaderConnector.connectToLeader.
func (l *learner) connect() {
	remaining := l.connectTimeout() - l.p.h.elapsed().Sub(l.connectStart)
	if remaining <= 0 {
		l.fail("connectToLeader exceeded on retries")
		return
	}
	node, ok := l.p.nodes[l.leaderSid]
	if !ok {
		l.fail(fmt.Sprintf("no server %d to follow", l.leaderSid))
		return
	}
	l.state = lsConnecting
	l.conn = l.p.h.dial(node, QuorumPort, min(l.connectTimeout(), remaining), l)
}

// Connected implements net.Handler: send FOLLOWERINFO or OBSERVERINFO (registerWithLeader).
func (l *learner) Connected(net.ConnID) {
	if l.state != lsConnecting {
		return
	}
	l.state = lsAwaitLeaderInfo
	t := pktFollowerInfo
	if l.observer {
		t = pktObserverInfo
	}
	l.send(&proto.QuorumPacket{Type: t, Zxid: MakeZxid(l.p.acceptedEpoch, 0), Data: learnerInfoData(l.p.sid)})
	l.resetReadTimer(l.p.cfg.ticks(l.p.cfg.InitLimit))
}

// Closed implements net.Handler.
func (l *learner) Closed(_ net.ConnID, err error) {
	if l.state == lsDead {
		return
	}
	if l.state == lsConnecting {
		l.retryConnect(err)
		return
	}
	l.fail(fmt.Sprintf("connection to leader closed: %v", err))
}

func (l *learner) retryConnect(err error) {
	l.tries++
	remaining := l.connectTimeout() - l.p.h.elapsed().Sub(l.connectStart)
	if remaining <= leaderConnectDelayDuringRetry || l.tries >= 5 {
		l.fail(fmt.Sprintf("could not connect to leader %d after %d tries: %v", l.leaderSid, l.tries, err))
		return
	}
	generation := l.p.roleGeneration
	l.p.h.after(leaderConnectDelayDuringRetry, func() {
		if l.state == lsConnecting && l.p.roleGeneration == generation {
			l.connect()
		}
	})
}

// send writes a packet to the leader, between the boundaries before and after the write.
func (l *learner) send(qp *proto.QuorumPacket) { l.sendObserved(qp, Event{}, false) }

// sendObserved is send that also tells the observer of ev once the packet is written, before the
// boundary after the write: a crash there comes after an acknowledgement the leader will receive.
func (l *learner) sendObserved(qp *proto.QuorumPacket, ev Event, observed bool) {
	var report *Event
	if observed {
		report = &ev
	}
	l.p.applySend(l.conn, qp.Type, l.p.mem.encodePacketScratch(qp), report)
}

func (l *learner) resetReadTimer(d clock.Duration) {
	l.p.h.cancel(l.readTimer)
	if l.readTimedOut == nil {
		l.readTimedOut = func() { l.fail("read timed out") }
	}
	l.readTimer = l.p.h.after(d, l.readTimedOut)
}

func (l *learner) fail(reason string) {
	if l.state == lsDead {
		return
	}
	l.p.endRole(reason)
}

// shutdown is Learner.shutdown: the socket is closed, pending revalidations are dropped.
func (l *learner) shutdown() {
	if l.state == lsDead {
		return
	}
	l.state = lsDead
	l.p.h.cancel(l.readTimer)
	l.p.h.close(l.conn)
	clear(l.pendingRevalidations)
	// "If we haven't finished SNAP sync, force fully shutdown to avoid potential inconsistency":
	// the database is cleared rather than fast-forwarded, and reloaded from disk by the next role.
	l.zk.fullyShutDown = l.p.syncMode == syncModeSnap
}

// Received implements net.Handler: one packet from the leader.
func (l *learner) Received(_ net.ConnID, payload []byte) {
	if l.state == lsDead {
		return
	}
	if l.busy {
		l.held = append(l.held, payload)
		return
	}
	timeout := l.p.cfg.ticks(l.p.cfg.InitLimit)
	if l.state == lsBroadcast || (l.state == lsSyncing && !l.preZab1) {
		timeout = l.p.cfg.ticks(l.p.cfg.SyncLimit)
	}
	l.resetReadTimer(timeout)
	var err error
	if l.state == lsAwaitSnapshot {
		err = l.snapshotArrived(payload)
	} else {
		var qp proto.QuorumPacket
		if qp, err = l.p.mem.decodePacket(payload); err == nil {
			err = l.handle(qp)
		}
	}
	if err != nil {
		l.fail(err.Error())
	}
}

func (l *learner) handle(qp proto.QuorumPacket) error {
	switch l.state {
	case lsAwaitLeaderInfo:
		return l.leaderInfo(qp)
	case lsAwaitSyncMode:
		return l.syncMode(qp)
	case lsSyncing:
		return l.syncPacket(qp)
	case lsBroadcast:
		if l.observer {
			return l.observerPacket(qp)
		}
		return l.followerPacket(qp)
	}
	return nil
}

// leaderInfo is the rest of registerWithLeader: accept the new epoch and answer ACKEPOCH.
func (l *learner) leaderInfo(qp proto.QuorumPacket) error {
	p := l.p
	if qp.Type != pktLeaderInfo {
		return fmt.Errorf("first packet should have been LEADERINFO, got %s", packetName(qp.Type))
	}
	newEpoch := EpochOf(qp.Zxid)
	var epochBytes int32
	switch {
	case newEpoch > p.acceptedEpoch:
		epochBytes = int32(p.currentEpoch)
		p.setAcceptedEpoch(newEpoch)
	case newEpoch == p.acceptedEpoch && !p.cfg.Bugs.Has(BugZK335):
		epochBytes = -1
	case newEpoch == p.acceptedEpoch:
		epochBytes = int32(p.currentEpoch) // Counted again: the epoch was never a quorum's decision.
	default:
		return fmt.Errorf("leader's epoch, %d, is less than accepted epoch, %d", newEpoch, p.acceptedEpoch)
	}
	l.send(&proto.QuorumPacket{Type: pktAckEpoch, Zxid: p.lastLoggedZxid(), Data: int32Data(epochBytes)})
	l.newEpoch, l.newLeaderZxid = newEpoch, MakeZxid(newEpoch, 0)
	l.state = lsAwaitSyncMode
	return nil
}

// syncMode handles the first packet of syncWithLeader: DIFF, SNAP or TRUNC.
func (l *learner) syncMode(qp proto.QuorumPacket) error {
	p := l.p
	l.snapshotNeeded = true
	switch qp.Type {
	case pktDiff:
		p.syncMode = syncModeDiff
		p.note("sync", "getting a DIFF from the leader %s", FormatZxid(qp.Zxid))
		l.snapshotNeeded = false
	case pktSnap:
		p.syncMode = syncModeSnap
		p.note("sync", "getting a snapshot from the leader %s", FormatZxid(qp.Zxid))
		l.snapZxid = qp.Zxid
		l.state = lsAwaitSnapshot
		return nil
	case pktTrunc:
		p.syncMode = syncModeTrunc
		p.note("sync", "truncating the log to %s", FormatZxid(qp.Zxid))
		if !p.db.truncateLog(qp.Zxid) {
			p.exit("not able to truncate the log to %s", FormatZxid(qp.Zxid))
			return nil
		}
		if reached := p.db.lastProcessedZxid(); reached != qp.Zxid {
			if !p.cfg.Bugs.Has(BugTruncSnapshot) && !p.cfg.Bugs.Has(BugSnapLogGap) {
				// zabsim's fixes of trunc-snapshot and snap-log-gap leave a disk that Java never
				// has: the snapshot that held the point (a SNAP's, named by its epoch's first
				// zxid) was deleted as newer than the point, and the log it replaced is gone.
				// Claiming the point, as Java does on its own disk, would put the next commits
				// on a tree that lacks transactions (seed 1002382 of the 100,000-seed sweep from
				// 1000001, once resets could land after a send: PrimaryIntegrity). The sync
				// ends here instead, and the next one starts from the state the learner has.
				return fmt.Errorf("truncated to %s, but the durable state only rebuilds %s", FormatZxid(qp.Zxid), FormatZxid(reached))
			}
			p.note("sync", "truncated to %s, but the durable state rebuilds %s: claiming %s", FormatZxid(qp.Zxid), FormatZxid(reached), FormatZxid(qp.Zxid))
		}
		// Learner.syncWithLeader claims the truncation point whatever state the reload rebuilt
		// (zk.getZKDatabase().setlastProcessedZxid(qp.getZxid())), in every release; with 3.8.0's
		// snapshots and logs kept, its disk rebuilds the point.
		p.db.tree.setLastProcessedZxid(qp.Zxid)
	default:
		p.exit("got unexpected packet from leader: %s, exiting", packetName(qp.Type))
		return nil
	}
	l.startSync()
	return nil
}

func (l *learner) snapshotArrived(payload []byte) error {
	if err := l.p.db.deserializeSnapshot(payload, l.snapZxid); err != nil {
		return fmt.Errorf("%w: snapshot from leader: %v", errPacket, err)
	}
	l.syncSnapshot = true
	l.startSync()
	return nil
}

func (l *learner) startSync() {
	l.zk.createSessionTracker()
	l.writeToTxnLog = !l.snapshotNeeded
	l.preZab1 = true
	l.lastQueued = 0
	l.state = lsSyncing
}

// syncPacket is the loop of syncWithLeader.
func (l *learner) syncPacket(qp proto.QuorumPacket) error {
	p := l.p
	switch qp.Type {
	case pktProposal, pktInform:
		entry, err := l.p.mem.decodeTxnEntry(qp.Data)
		if err != nil {
			return err
		}
		if entry.Header.Zxid != l.lastQueued+1 {
			p.note("sync", "got zxid %s, expected %s", FormatZxid(entry.Header.Zxid), FormatZxid(l.lastQueued+1))
		}
		l.lastQueued = entry.Header.Zxid
		if qp.Type == pktInform {
			if !l.writeToTxnLog {
				l.applyDuringSync(entry)
				return nil
			}
			l.committed = append(l.committed, qp.Zxid)
		}
		l.notLogged = append(l.notLogged, entry)
	case pktCommit:
		l.syncCommit(qp.Zxid)
	case pktNewLeader:
		l.newLeader()
	case pktUpToDate:
		l.upToDate()
	default:
		p.note("sync", "ignoring %s during sync", packetName(qp.Type))
	}
	return nil
}

// syncCommit is the COMMIT case of syncWithLeader.
func (l *learner) syncCommit(zxid int64) {
	p := l.p
	if len(l.notLogged) == 0 {
		if p.cfg.Bugs.Has(BugZK4394) || p.cfg.Bugs.Has(BugZK4394Sync) {
			// packetsNotCommitted.peekFirst() returned null and pif.hdr threw.
			panic(fmt.Sprintf("NullPointerException: server %d got COMMIT %s between NEWLEADER and UPTODATE with no pending proposal", p.sid, FormatZxid(zxid)))
		}
		p.note("sync", "committing %s, but got no proposal", FormatZxid(zxid))
		return
	}
	if l.writeToTxnLog {
		l.committed = append(l.committed, zxid)
		return
	}
	head := l.notLogged[0]
	if head.Header.Zxid != zxid {
		p.note("sync", "committing %s, but next proposal is %s", FormatZxid(zxid), FormatZxid(head.Header.Zxid))
		return
	}
	l.applyDuringSync(head)
	l.notLogged = l.notLogged[1:]
}

// applyDuringSync applies a committed txn straight to the tree, before NEWLEADER after a SNAP or
// TRUNC. It goes through processTxn(Request), so that it also enters the committed log
// (ZOOKEEPER-4925's fix): a hole there would be sent to stale learners once this server leads.
func (l *learner) applyDuringSync(entry *proto.TxnEntry) {
	if l.p.cfg.Bugs.Has(BugZK4925) {
		// ZooKeeperServer.processTxn(hdr, txn): session events and the tree; the committed log is
		// not told.
		l.zk.processTxnForSessionEvents(entry)
		l.p.db.applyTxn(entry, SourceSync)
		return
	}
	l.zk.processTxn(l.p.mem.requestFromTxn(entry), SourceSync)
}

// newLeader is the NEWLEADER case: persist what was committed, then the epoch, then ACK. The order
// is the fix of ZOOKEEPER-3911, -4646, -4643 and -4785; the bug switches restore the old orders.
func (l *learner) newLeader() {
	p := l.p
	bugs := p.cfg.Bugs
	if l.snapshotNeeded {
		p.db.takeSnapshot(l.syncSnapshot) // zk.takeSnapshot(syncSnapshot): fsynced after a SNAP only.
		if l.syncSnapshot && !bugs.Has(BugSnapLogGap) {
			// The snapshot now covers everything before it; the old log, which may end in another
			// history and jumps to this one, must not serve a later DIFF.
			p.db.clearLog()
		}
	}
	l.writeToTxnLog = true
	l.preZab1 = false
	p.syncMode = syncModeNone
	if bugs.Has(BugZK4643) {
		p.setCurrentEpoch(l.newEpoch)
	}
	switch {
	case bugs.Has(BugZK4394) && !l.observer:
		// 3.8.0: a follower hands everything pending to the asynchronous sync processor, and the
		// list is cleared, so that a COMMIT before UPTODATE finds nothing. Only a follower
		// (zk instanceof FollowerZooKeeperServer): an observer keeps its pending packets and
		// commits them after UPTODATE.
		l.zk.startup()
		for _, entry := range l.notLogged {
			l.zk.logRequest(entry)
		}
		l.notLogged = nil
	case bugs.Has(BugZK4394Sync) && !l.observer:
		l.appendPendingAtNewLeader()
	case bugs.Has(BugZK3911):
		// Nothing is logged before the ACK: the proposals wait for UPTODATE.
	case !l.observer:
		l.persistCommitted(bugs.Has(BugZK4646))
	}
	p.crashPoint("newleader-before-epoch")
	if bugs.Has(BugZK4643) {
		// 3.8.0 wrote currentEpoch first, so the QuorumPeer thread only queues the synced proposals
		// to the SyncRequestProcessor thread (logRequest) and writes the ACK. The two threads run
		// concurrently, and which of them writes to the leader first is the scheduler's choice:
		// the ACK, or the sync thread's appends, fsync and ACKs of the proposals (then the
		// LearnerHandler takes a proposal's ACK for the NEWLEADER ACK, as Leader
		// .waitForNewLeaderAck allows with its "different epoch" message).
		if l.syncThreadBusy() && p.h.choose(2) == 1 {
			p.note("sync", "the sync thread runs before the NEWLEADER ACK")
			l.busy = true
			l.zk.sync.whenIdle(func() {
				if l.state != lsSyncing {
					return
				}
				l.ackNewLeader()
				l.readHeld()
			})
			return
		}
		l.ackNewLeader()
		return
	}
	if !l.syncThreadBusy() {
		p.setCurrentEpoch(l.newEpoch)
		l.ackNewLeader()
		return
	}
	// QuorumPeer.setCurrentEpoch writes and fsyncs the file (AtomicFileOutputStream), which takes
	// as long as an fsync does. The QuorumPeer thread is busy with it and reads nothing; the
	// SyncRequestProcessor thread meanwhile goes on with its own queue, so that with 3.8.0's
	// asynchronous logging (ZOOKEEPER-4646, -4394) its ACKs of the synced proposals race the
	// NEWLEADER ACK, as in Java.
	l.busy = true
	latency := p.h.between(p.cfg.FsyncLatencyMin, p.cfg.FsyncLatencyMax, 100*clock.Microsecond)
	p.h.after(latency, func() {
		if l.state != lsSyncing {
			return
		}
		p.setCurrentEpoch(l.newEpoch)
		l.ackNewLeader()
		l.readHeld()
	})
}

// syncThreadBusy reports whether the sync processor has work that races the QuorumPeer thread's
// epoch write: the synced proposals that 3.8.0's asynchronous logging handed it. Only then is the
// write a step of its own (it takes an fsync's time in any case, but with nothing to race it, it
// would only shift the run's timing: with it in every sync, the 600 first seeds of the snap-log-gap
// switch found the bug in none, against 4 without it).
func (l *learner) syncThreadBusy() bool {
	return l.zk != nil && l.zk.sync != nil && l.zk.sync.busy()
}

// ackNewLeader is the end of the NEWLEADER case: the ACK, once the epoch is written.
func (l *learner) ackNewLeader() {
	p := l.p
	l.sendObserved(&proto.QuorumPacket{Type: pktAck, Zxid: l.newLeaderZxid},
		Event{Kind: EventNewLeaderAck, Epoch: l.newEpoch, Leader: l.leaderSid, Zxid: p.db.lastProcessedZxid()}, true)
}

// readHeld lets the QuorumPeer thread read again: what arrived while it was busy is handled now,
// in order, as it was waiting in the socket.
func (l *learner) readHeld() {
	l.busy = false
	for len(l.held) > 0 && !l.busy && l.state != lsDead {
		payload := l.held[0]
		l.held[0] = nil
		l.held = l.held[1:]
		l.Received(l.conn, payload)
	}
}

// persistCommitted appends and applies the committed packets, then fsyncs them before the ACK. With
// async (ZOOKEEPER-4646) they are handed to the sync processor instead, which fsyncs whenever it
// gets to it.
func (l *learner) persistCommitted(async bool) {
	p := l.p
	for len(l.committed) > 0 {
		zxid := l.committed[0]
		l.committed = l.committed[1:]
		if len(l.notLogged) == 0 {
			p.note("sync", "committing %s, but got no proposal", FormatZxid(zxid))
			continue
		}
		head := l.notLogged[0]
		if head.Header.Zxid != zxid {
			p.note("sync", "committing %s, but next proposal is %s", FormatZxid(zxid), FormatZxid(head.Header.Zxid))
			continue
		}
		l.notLogged = l.notLogged[1:]
		if async {
			l.zk.sync.processRequest(l.p.mem.requestFromTxn(head))
		} else {
			p.db.append(head)
			p.crashPoint("newleader-appended")
		}
		if p.cfg.Bugs.Has(BugZK4925) {
			l.zk.processTxnForSessionEvents(head)
			p.db.applyTxn(head, SourceSync)
		} else {
			l.zk.processTxn(l.p.mem.requestFromTxn(head), SourceSync)
		}
	}
	if !async {
		p.db.fsyncNow()
	}
}

// upToDate ends the sync: ACK, serve, and hand what is left to the broadcast machinery.
func (l *learner) upToDate() {
	p := l.p
	if l.preZab1 {
		p.db.takeSnapshot(l.syncSnapshot)
		p.setCurrentEpoch(l.newEpoch)
	}
	l.send(&proto.QuorumPacket{Type: pktAck, Zxid: l.newLeaderZxid})
	l.zk.startup()
	l.state = lsBroadcast
	p.startServing()
	p.election.UpdateElectionVote(l.newEpoch)
	if l.observer {
		for _, entry := range l.notLogged {
			if len(l.committed) == 0 || l.committed[0] != entry.Header.Zxid {
				continue
			}
			l.committed = l.committed[1:]
			l.zk.commitRequest(entry)
		}
	} else {
		l.ackAppended()
		for _, entry := range l.notLogged {
			l.zk.logRequest(entry)
		}
		for _, zxid := range l.committed {
			l.zk.commit(zxid)
		}
	}
	l.notLogged, l.committed = nil, nil
}

// --- Broadcast ------------------------------------------------------------------------------------

// followerPacket is Follower.processPacket.
func (l *learner) followerPacket(qp proto.QuorumPacket) error {
	switch qp.Type {
	case pktPing:
		l.ping(qp)
	case pktProposal:
		entry, err := l.p.mem.decodeTxnEntry(qp.Data)
		if err != nil {
			return err
		}
		if entry.Header.Zxid != l.lastQueued+1 {
			l.p.note("follower", "got zxid %s, expected %s", FormatZxid(entry.Header.Zxid), FormatZxid(l.lastQueued+1))
		}
		l.lastQueued = entry.Header.Zxid
		l.zk.logRequest(entry)
	case pktCommit:
		l.zk.commit(qp.Zxid)
	case pktUpToDate:
		l.p.note("follower", "received an UPTODATE message after the follower started")
	case pktRevalidate:
		l.revalidated(qp)
	case pktSync:
		l.zk.syncArrived()
	default:
		l.p.note("follower", "unknown packet type %s", packetName(qp.Type))
	}
	return nil
}

// observerPacket is Observer.processPacket.
func (l *learner) observerPacket(qp proto.QuorumPacket) error {
	switch qp.Type {
	case pktPing:
		l.ping(qp)
	case pktInform:
		entry, err := l.p.mem.decodeTxnEntry(qp.Data)
		if err != nil {
			return err
		}
		l.zk.commitRequest(entry)
	case pktRevalidate:
		l.revalidated(qp)
	case pktSync:
		l.zk.syncArrived()
	case pktProposal, pktCommit:
		l.p.note("observer", "ignoring %s", packetName(qp.Type))
	default:
		l.p.note("observer", "unknown packet type %s", packetName(qp.Type))
	}
	return nil
}

// ping is Learner.ping: answer with the sessions touched since the last ping.
func (l *learner) ping(qp proto.QuorumPacket) {
	var touched []sessionTouch
	if l.zk.learned != nil {
		touched = l.zk.learned.snapshot()
	}
	l.send(&proto.QuorumPacket{Type: pktPing, Zxid: qp.Zxid, Data: touchData(touched), AuthInfo: qp.AuthInfo})
}

// sendAck is SendAckRequestProcessor's write.
func (l *learner) sendAck(zxid int64) {
	if l.state != lsBroadcast && l.state != lsSyncing {
		return
	}
	synced := l.p.h.disk().SyncedZxid()
	l.p.assert(zxid <= synced, InvariantAckDurable, "acknowledging %s with the log durable to %s", FormatZxid(zxid), FormatZxid(synced))
	l.sendObserved(&proto.QuorumPacket{Type: pktAck, Zxid: zxid}, Event{Kind: EventAck, Zxid: zxid}, true)
}

// forward is Learner.request: a local client's write (or sync) goes to the leader.
func (l *learner) forward(r *request) {
	l.send(&proto.QuorumPacket{Type: pktRequest, Zxid: -1, Data: requestData(r.sessionID, r.cxid, r.op, r.body), AuthInfo: r.auth})
}

// revalidate is Learner.validateSession: ask the leader whether a reconnecting session is alive.
func (l *learner) revalidate(c *clientConn, id int64, timeoutMs int32) {
	l.pendingRevalidations[id] = c
	l.send(&proto.QuorumPacket{Type: pktRevalidate, Zxid: -1, Data: revalidateRequestData(id, timeoutMs)})
}

// revalidated is Learner.revalidate: the leader's answer.
func (l *learner) revalidated(qp proto.QuorumPacket) {
	if len(qp.Data) < 9 {
		return
	}
	id := int64(uint64(qp.Data[0])<<56 | uint64(qp.Data[1])<<48 | uint64(qp.Data[2])<<40 | uint64(qp.Data[3])<<32 |
		uint64(qp.Data[4])<<24 | uint64(qp.Data[5])<<16 | uint64(qp.Data[6])<<8 | uint64(qp.Data[7]))
	c, ok := l.pendingRevalidations[id]
	if !ok {
		l.p.note("learner", "missing session %#x for validation", id)
		return
	}
	delete(l.pendingRevalidations, id)
	c.finishSessionInit(qp.Data[8] != 0)
}

// commitRequest is ObserverZooKeeperServer.commitRequest: log it (asynchronously) and apply it.
func (zk *zkServer) commitRequest(entry *proto.TxnEntry) {
	r := zk.p.mem.requestFromTxn(entry)
	zk.sync.processRequest(r)
	zk.commits.commit(r)
}

func (m *memory) decodeTxnEntry(b []byte) (*proto.TxnEntry, error) {
	entry := m.entries.New()
	if err := m.decodeLenient(b, entry); err != nil {
		return nil, fmt.Errorf("%w: txn: %v", errPacket, err)
	}
	return entry, nil
}
