package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
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

// learner is Learner with Follower and Observer: the driver of the core of the connection,
// discovery, synchronization and broadcast (learnerCore: learnerconn.go, learnercore.go), whose
// state it embeds. It owns the socket and the timers, and decodes what it reads.
type learner struct {
	learnerCore
	p  *peer
	zk *zkServer

	conn      net.ConnID
	readTimer sim.TimerID

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
	l := &learner{p: p}
	l.bugs, l.observer, l.mem, l.pendingRevalidations = p.cfg.Bugs, kind == kindObserver, p.mem, map[int64]*clientConn{}
	l.self, l.leaderSid = p.sid, leaderSid
	l.initTimeout, l.syncTimeout = p.cfg.ticks(p.cfg.InitLimit), p.cfg.ticks(p.cfg.SyncLimit)
	l.zk = newZKServer(p, kind)
	p.learner, p.zk = l, l.zk
	l.run(learnerInput{kind: learnerConnect, now: p.h.elapsed()})
}

// knowsServer makes the driver the core's learnerView: the ensemble's configuration.
func (l *learner) knowsServer(sid int64) bool {
	_, ok := l.p.nodes[sid]
	return ok
}

// Connected implements net.Handler: the core writes FOLLOWERINFO or OBSERVERINFO
// (registerWithLeader).
func (l *learner) Connected(net.ConnID) { l.run(learnerInput{kind: learnerConnected}) }

// Closed implements net.Handler: a failed try, or the end of the role.
func (l *learner) Closed(_ net.ConnID, err error) {
	l.run(learnerInput{kind: learnerClosed, now: l.p.h.elapsed(), failure: fmt.Sprint(err)})
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

func (l *learner) fail(reason string) {
	if l.state == lsDead {
		return
	}
	l.p.endRole(reason)
}

// shutdown is Learner.shutdown: the core closes the socket and drops its pending revalidations.
func (l *learner) shutdown() {
	if l.state == lsDead {
		return
	}
	l.run(learnerInput{kind: learnerShutdown})
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
	l.run(learnerInput{kind: learnerRead})
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
	case lsAwaitLeaderInfo, lsAwaitSyncMode:
		l.run(learnerInput{kind: learnerPacket, packetType: qp.Type, zxid: qp.Zxid})
	case lsSyncing:
		in := learnerInput{kind: learnerPacket, packetType: qp.Type, zxid: qp.Zxid}
		if qp.Type == pktProposal || qp.Type == pktInform {
			entry, err := l.p.mem.decodeTxnEntry(qp.Data)
			if err != nil {
				return err
			}
			in.entry = entry
		}
		l.run(in)
	case lsBroadcast:
		return l.broadcastPacket(qp)
	}
	return nil
}

// snapshotArrived hands the leader's snapshot after a SNAP to the core.
func (l *learner) snapshotArrived(payload []byte) error {
	l.run(learnerInput{kind: learnerSnapshot, payload: payload})
	return nil
}

// acceptedEpochValue and currentEpochValue make the driver the core's learnerView.
func (l *learner) acceptedEpochValue() int64 { return l.p.acceptedEpoch }
func (l *learner) currentEpochValue() int64  { return l.p.currentEpoch }

// syncThreadBusy reports whether the sync processor has work that races the QuorumPeer thread's
// epoch write: the synced proposals that 3.8.0's asynchronous logging handed it. Only then is the
// write a step of its own (it takes an fsync's time in any case, but with nothing to race it, it
// would only shift the run's timing: with it in every sync, the 600 first seeds of the snap-log-gap
// switch found the bug in none, against 4 without it).
func (l *learner) syncThreadBusy() bool {
	return l.zk != nil && l.zk.sync != nil && l.zk.sync.busy()
}

// run steps the core with in and applies what it returns, stepping it again with the world's
// answer as long as a ready asks to resume.
func (l *learner) run(in learnerInput) {
	for {
		out := l.learnerCore.step(in, l)
		resume := out.resume
		next := learnerInput{kind: learnerContinue}
		for i := range out.effects {
			l.apply(out, &out.effects[i], &next)
		}
		l.learnerCore.done(out)
		if !resume {
			return
		}
		in = next
	}
}

// apply is the driver of one effect of the learner's core; next gathers the world's answers for
// the continue input.
func (l *learner) apply(out *ready, e *effect, next *learnerInput) {
	p := l.p
	if p.applyReport(out, e) {
		return
	}
	switch e.kind {
	case effectLeave:
		l.fail(e.text)
	case effectThrow:
		panic(fmt.Sprintf("%s: server %d got COMMIT %s between NEWLEADER and UPTODATE with no pending proposal", e.text, p.sid, FormatZxid(e.zxid)))
	case effectSetEpoch:
		if e.label == storage.AcceptedEpochFile {
			p.setAcceptedEpoch(e.zxid)
		} else {
			p.setCurrentEpoch(e.zxid)
		}
	case effectAckEpoch:
		l.send(&proto.QuorumPacket{Type: pktAckEpoch, Zxid: p.lastLoggedZxid(), Data: int32Data(int32(e.zxid))})
	case effectSyncMode:
		p.syncMode = syncMode(e.zxid)
	case effectTruncateLog:
		next.ok = p.db.truncateLog(e.zxid)
		if next.ok {
			next.reached = p.db.lastProcessedZxid()
		}
	case effectClaimZxid:
		p.db.tree.setLastProcessedZxid(e.zxid)
	case effectSessionTracker:
		l.zk.createSessionTracker()
	case effectLoadSnapshot:
		if err := p.db.deserializeSnapshot(e.packet, e.zxid); err != nil {
			next.failure = fmt.Errorf("%w: snapshot from leader: %v", errPacket, err).Error()
		}
	case effectApplySync:
		if e.legacy {
			// ZooKeeperServer.processTxn(hdr, txn): session events and the tree; the committed log
			// is not told.
			l.zk.processTxnForSessionEvents(e.entry)
			p.db.applyTxn(e.entry, SourceSync)
		} else {
			l.zk.processTxn(p.mem.requestFromTxn(e.entry), SourceSync)
		}
	case effectSnapshotSave:
		p.db.takeSnapshot(e.legacy)
	case effectLogDelete:
		p.db.clearLog()
	case effectAppend, effectNewLeaderAppend, effectFsyncAll:
		p.applyStorageEffect(*e)
	case effectAskSyncBusy:
		p.askBoundaries(e.kind, 0)
		next.syncBusy = l.syncThreadBusy()
	case effectStartup:
		l.zk.startup()
	case effectLogRequest:
		l.zk.logRequest(e.entry)
	case effectPendingTxn:
		l.zk.pendingTxns = append(l.zk.pendingTxns, p.mem.requestFromTxn(e.entry))
	case effectSyncLog:
		l.zk.sync.processRequest(p.mem.requestFromTxn(e.entry))
	case effectDraw:
		next.draw = p.h.choose(int(e.zxid))
	case effectHoldReads:
		l.busy = true
	case effectWhenSyncIdle:
		l.zk.sync.whenIdle((*syncIdleTimer)(l))
	case effectEpochWrite:
		latency := p.h.between(p.cfg.FsyncLatencyMin, p.cfg.FsyncLatencyMax, 100*clock.Microsecond)
		p.h.setTimer(latency, (*epochWriteTimer)(l))
	case effectLearnerAck:
		if e.label == ackOfNewLeader {
			l.sendObserved(&proto.QuorumPacket{Type: pktAck, Zxid: e.zxid},
				Event{Kind: EventNewLeaderAck, Epoch: l.newEpoch, Leader: l.leaderSid, Zxid: p.db.lastProcessedZxid()}, true)
		} else {
			l.send(&proto.QuorumPacket{Type: pktAck, Zxid: e.zxid})
		}
	case effectReadHeld:
		l.readHeld()
	case effectServe:
		p.startServing()
		p.election.UpdateElectionVote(e.zxid)
	case effectObserverCommit:
		l.zk.commitRequest(e.entry)
	case effectFollowerCommit:
		l.zk.commit(e.zxid)
	case effectSyncAnswered:
		l.zk.syncArrived()
	case effectSend:
		p.applySend(l.conn, int32(e.zxid), e.packet, nil)
	case effectSessionValidated:
		e.client.finishSessionInit(e.valid)
	case effectDial:
		l.conn = p.h.dial(p.nodes[l.leaderSid], QuorumPort, clock.Duration(e.zxid), l)
	case effectConnectRetry:
		p.h.setTimer(clock.Duration(e.zxid), &connectRetryTimer{l: l, generation: p.roleGeneration})
	case effectReadTimeout:
		p.h.cancel(l.readTimer)
		l.readTimer = p.h.setTimer(clock.Duration(e.zxid), (*learnerReadTimer)(l))
	case effectDisconnect:
		p.h.cancel(l.readTimer)
		p.h.close(l.conn)
	default:
		panic("zabmodel: the learner's core asked for " + e.kind.String())
	}
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

// --- Broadcast ------------------------------------------------------------------------------------

// broadcastPacket is Follower.processPacket and Observer.processPacket: every packet goes to the
// core (learnerCore.broadcast), a PING with the session tracker's touch snapshot
// (ZooKeeperServer.getTouchSnapshot), a PROPOSAL or an INFORM with its txn decoded.
func (l *learner) broadcastPacket(qp proto.QuorumPacket) error {
	in := learnerInput{kind: learnerPacket, packetType: qp.Type, zxid: qp.Zxid}
	switch {
	case qp.Type == pktPing:
		in.auth = qp.AuthInfo
		if l.zk.learned != nil {
			in.touched = l.zk.learned.snapshot()
		}
	case qp.Type == pktRevalidate:
		in.payload = qp.Data
	case (!l.observer && qp.Type == pktProposal) || (l.observer && qp.Type == pktInform):
		entry, err := l.p.mem.decodeTxnEntry(qp.Data)
		if err != nil {
			return err
		}
		in.entry = entry
	}
	l.run(in)
	return nil
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

// revalidate is Learner.validateSession: ask the leader whether a reconnecting session is alive
// (a step of the core, learnersession.go).
func (l *learner) revalidate(c *clientConn, id int64, timeoutMs int32) {
	l.run(learnerInput{kind: learnerValidate, session: id, timeoutMs: timeoutMs, client: c})
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
