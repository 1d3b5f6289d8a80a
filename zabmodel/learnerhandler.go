package zabmodel

import (
	"encoding/binary"
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

type handlerState uint8

const (
	hsAwaitInfo handlerState = iota
	hsAwaitEpoch
	hsAwaitAckEpoch
	hsAwaitEpochQuorum
	hsAwaitNewLeaderAck
	hsAwaitNewLeaderQuorum
	hsBroadcast
	hsDead
)

// learnerHandler is LearnerHandler: the leader's side of one learner's connection, with its sender
// queue. Its run() method is a sequence of blocking reads and quorum waits; here each read is a
// state and each wait a quorumWaiter of the leader's quorum waits (discoverycore.go).
type learnerHandler struct {
	l        *leader
	conn     net.ConnID
	node     sim.NodeID
	state    handlerState
	sid      int64
	observer bool

	// senderCore is the queue and the sender thread (sendercore.go); its turns are senderTurnTimer.
	senderCore
	// unread holds packets that arrived while the Java thread would be blocked in a wait, not reading.
	unread     []proto.QuorumPacket
	forwarding bool

	tickOfNextAckDeadline int
	readTimer             sim.TimerID

	// The syncLimit check: the oldest proposal sent and not yet acked (SyncLimitCheck).
	syncCheckStarted        bool
	currentZxid, nextZxid   int64
	currentTime, nextTime   clock.Time
	newEpoch, newLeaderZxid int64
	// peerLastZxid is the learner's last zxid from its ACKEPOCH, which its sync starts from.
	peerLastZxid int64
}

func (h *learnerHandler) p() *peer { return h.l.p }

// Connected implements net.Handler; the leader never dials learners.
func (h *learnerHandler) Connected(net.ConnID) {}

// Closed implements net.Handler.
func (h *learnerHandler) Closed(_ net.ConnID, err error) {
	h.shutdown(fmt.Sprintf("connection closed: %v", err))
}

// resetReadTimer arms the socket read timeout (setSoTimeout).
func (h *learnerHandler) resetReadTimer(d clock.Duration) {
	p := h.p()
	p.h.cancel(h.readTimer)
	h.readTimer = p.h.setTimer(d, (*handlerReadTimer)(h))
}

// expectRead arms the read timeout for the state the handler is in, if it is one where the Java
// thread blocks in a read (a thread blocked in a quorum wait reads nothing, so no timeout applies).
func (h *learnerHandler) expectRead() {
	cfg := h.p().cfg
	switch h.state {
	case hsAwaitInfo, hsAwaitAckEpoch, hsAwaitNewLeaderAck:
		h.resetReadTimer(cfg.ticks(cfg.InitLimit))
	case hsBroadcast:
		h.resetReadTimer(cfg.ticks(cfg.SyncLimit))
	default:
		h.p().h.cancel(h.readTimer)
	}
}

// Received implements net.Handler: one packet from the learner.
func (h *learnerHandler) Received(_ net.ConnID, payload []byte) {
	if h.state == hsDead || h.l.stopped {
		return
	}
	qp, err := h.p().mem.decodePacket(payload)
	if err == nil {
		err = h.handle(qp)
	}
	if err != nil {
		h.shutdown(err.Error())
		return
	}
	h.expectRead()
}

func (h *learnerHandler) handle(qp proto.QuorumPacket) error {
	switch h.state {
	case hsAwaitInfo:
		return h.learnerInfo(qp)
	case hsAwaitAckEpoch:
		return h.ackEpoch(qp)
	case hsAwaitNewLeaderAck:
		if qp.Type != pktAck {
			return fmt.Errorf("next packet was supposed to be an ACK, but received %s", packetName(qp.Type))
		}
		h.state = hsAwaitNewLeaderQuorum
		h.l.discoveryRun(discoveryInput{kind: discoveryCall, wait: waitNewLeaderAck, handler: h, sid: h.sid, zxid: qp.Zxid})
		return nil
	case hsBroadcast:
		return h.broadcastPacket(qp)
	}
	// A packet while the handler's thread is blocked in a wait: TCP keeps it in the socket buffer and
	// Java reads it only once the wait is over. A learner normally sends nothing here, but one that
	// acknowledges its sync txns from its sync processor (3.8.0's NEWLEADER order, ZOOKEEPER-4646)
	// does, right after its NEWLEADER ACK.
	h.unread = append(h.unread, qp)
	return nil
}

// learnerInfo handles FOLLOWERINFO / OBSERVERINFO and starts discovery for this learner.
func (h *learnerHandler) learnerInfo(qp proto.QuorumPacket) error {
	if qp.Type != pktFollowerInfo && qp.Type != pktObserverInfo {
		return fmt.Errorf("first packet %s is not FOLLOWERINFO or OBSERVERINFO", packetName(qp.Type))
	}
	var li proto.LearnerInfo
	if err := h.p().mem.decodeLenient(qp.Data, &li); err != nil {
		return fmt.Errorf("%w: learner info: %v", errPacket, err)
	}
	h.sid = li.ServerID
	h.observer = qp.Type == pktObserverInfo
	h.state = hsAwaitEpoch
	h.l.discoveryRun(discoveryInput{kind: discoveryCall, wait: waitEpoch, handler: h, sid: h.sid, lastAcceptedEpoch: EpochOf(qp.Zxid)})
	return nil
}

// epochDecided is the rest of run() once getEpochToPropose returned the new epoch: LEADERINFO.
func (h *learnerHandler) epochDecided(epoch int64) {
	if h.state != hsAwaitEpoch {
		return
	}
	h.newEpoch, h.newLeaderZxid = epoch, MakeZxid(epoch, 0)
	h.state = hsAwaitAckEpoch
	h.write(h.p().mem.encodePacket(&proto.QuorumPacket{Type: pktLeaderInfo, Zxid: h.newLeaderZxid, Data: int32Data(protocolVersion)}), pktLeaderInfo)
	h.expectRead()
}

// ackEpoch handles ACKEPOCH, then waits for the epoch quorum and synchronizes the learner.
func (h *learnerHandler) ackEpoch(qp proto.QuorumPacket) error {
	if qp.Type != pktAckEpoch {
		return fmt.Errorf("%s is not ACKEPOCH", packetName(qp.Type))
	}
	if len(qp.Data) < 4 {
		return fmt.Errorf("%w: ACKEPOCH data of %d bytes", errPacket, len(qp.Data))
	}
	ss := stateSummary{currentEpoch: int64(int32(binary.BigEndian.Uint32(qp.Data))), lastZxid: qp.Zxid}
	h.state = hsAwaitEpochQuorum
	h.peerLastZxid = ss.lastZxid
	h.l.discoveryRun(discoveryInput{kind: discoveryCall, wait: waitEpochAck, handler: h, sid: h.sid, summary: ss})
	return nil
}

// synchronize is the part of run() from syncFollower to queueing NEWLEADER.
func (h *learnerHandler) synchronize(peerLastZxid int64) {
	if h.state != hsAwaitEpochQuorum {
		return
	}
	p := h.p()
	if h.syncFollower(peerLastZxid) {
		// The handler thread writes SNAP and streams the live tree itself, over several steps,
		// before the sender thread starts (snapstream.go).
		p.note("sync", "SNAP for %d (peer at %s)", h.sid, FormatZxid(peerLastZxid))
		h.streamSnap()
		return
	}
	h.sendNewLeader()
}

// sendNewLeader queues NEWLEADER behind the synchronization and starts the sender thread.
func (h *learnerHandler) sendNewLeader() {
	h.queuePacket(h.p().mem.encodePacket(&proto.QuorumPacket{Type: pktNewLeader, Zxid: h.newLeaderZxid}))
	h.state = hsAwaitNewLeaderAck
	h.startSending()
	h.expectRead()
}

// syncFollower is LearnerHandler.syncFollower: the decision is a core (learnersync.go), whose
// ready the handler applies. It returns whether a snapshot is needed.
func (h *learnerHandler) syncFollower(peerLastZxid int64) bool {
	p := h.p()
	out := &ready{} // A sync is rare: its ready is not pooled.
	needSnap := decideSync(p.db, p.mem, h, peerLastZxid, out)
	for i := range out.effects {
		e := &out.effects[i]
		switch e.kind {
		case effectNote:
			p.h.note(e.label, "%s", e.text)
		case effectObserve:
			p.observe(out.events[e.event])
		case effectQueuePacket:
			h.queuePacket(e.packet)
		case effectForward:
			h.l.startForwarding(h, e.zxid)
		default:
			panic("zabmodel: the sync decision asked for " + e.kind.String())
		}
	}
	return needSnap
}

func (h *learnerHandler) queueOp(t int32, zxid int64) {
	h.queuePacket(h.p().mem.encodePacket(&proto.QuorumPacket{Type: t, Zxid: zxid}))
}

// queuePacket is LearnerHandler.queuePacket: into the sender's queue, sent once the sender runs
// (sendercore.go).
func (h *learnerHandler) queuePacket(b []byte) { h.senderRun(senderQueue, b, 0) }

func (h *learnerHandler) startSending() { h.senderRun(senderStart, nil, 0) }

// write is a write of the handler's own thread, not through the queue (sendercore.go).
func (h *learnerHandler) write(b []byte, kind int32) { h.senderRun(senderWrite, b, kind) }

// newLeaderAcked continues after the NEWLEADER quorum: the syncLimit check starts, the read timeout
// becomes syncLimit ticks, and UPTODATE follows once the leader's server runs (waitForStartup polls
// every 20 ms, so proposals of the new epoch may reach the learner before UPTODATE does).
func (h *learnerHandler) newLeaderAcked() {
	if h.state != hsAwaitNewLeaderQuorum {
		return
	}
	h.syncCheckStarted = true
	if h.p().cfg.SelfTests.Has(SelfTestHoldLearners) {
		h.p().note("leader", "holding learner %d: the hold-learners self-test", h.sid)
		return
	}
	h.waitForStartup()
}

func (h *learnerHandler) waitForStartup() {
	if h.state == hsDead || h.l.stopped {
		return
	}
	if h.l.zk.running {
		h.queueOp(pktUpToDate, -1)
		h.state = hsBroadcast
		unread := h.unread
		h.unread = nil
		for _, qp := range unread {
			if err := h.broadcastPacket(qp); err != nil {
				h.shutdown(err.Error())
				return
			}
		}
		h.expectRead()
		return
	}
	delay := h.p().h.between(0, 20*clock.Millisecond, clock.Millisecond)
	h.p().h.setTimer(delay, (*startupPollTimer)(h))
}

// broadcastPacket is the loop at the end of LearnerHandler.run.
func (h *learnerHandler) broadcastPacket(qp proto.QuorumPacket) error {
	h.tickOfNextAckDeadline = h.l.tick + h.p().cfg.SyncLimit
	switch qp.Type {
	case pktAck:
		h.ackReceived(qp.Zxid)
		h.l.processAck(h.sid, qp.Zxid)
	case pktPing:
		for _, t := range parseTouchData(qp.Data) {
			h.l.touch(t.id, t.timeoutMs)
		}
	case pktRevalidate:
		return h.l.revalidateSession(h, qp)
	case pktRequest:
		return h.l.learnerRequest(h, qp)
	default:
		h.p().note("leader", "unexpected quorum packet %s from %d", packetName(qp.Type), h.sid)
	}
	return nil
}

// proposalSent and ackReceived are SyncLimitCheck.updateProposal and updateAck.
func (h *learnerHandler) proposalSent(zxid int64) {
	if !h.syncCheckStarted {
		return
	}
	now := h.p().h.elapsed()
	if h.currentTime == 0 {
		h.currentTime, h.currentZxid = now, zxid
	} else {
		h.nextTime, h.nextZxid = now, zxid
	}
}

func (h *learnerHandler) ackReceived(zxid int64) {
	switch zxid {
	case h.currentZxid:
		h.currentTime, h.currentZxid = h.nextTime, h.nextZxid
		h.nextTime, h.nextZxid = 0, 0
	case h.nextZxid:
		h.nextTime, h.nextZxid = 0, 0
	}
}

// ping is LearnerHandler.ping: a PING if the learner keeps up, or the end of the handler if its
// oldest unacknowledged proposal is older than syncLimit ticks.
func (h *learnerHandler) ping() {
	if !h.sendingStarted || h.state == hsDead {
		return
	}
	if h.currentTime != 0 && h.p().h.elapsed().Sub(h.currentTime) >= h.l.syncTimeout() {
		h.shutdown("closing connection to peer due to transaction timeout")
		return
	}
	h.queueOp(pktPing, h.l.lastProposed)
}

// synced is LearnerHandler.synced.
func (h *learnerHandler) synced() bool {
	return h.state != hsDead && h.l.tick <= h.tickOfNextAckDeadline
}

func (h *learnerHandler) sendSync() { h.queueOp(pktSync, 0) }

// shutdown ends the handler and closes its connection.
func (h *learnerHandler) shutdown(reason string) {
	if h.state == hsDead {
		return
	}
	h.state = hsDead
	h.senderRun(senderClose, nil, 0)
	p := h.p()
	p.note("leader", "learner handler for %d done: %s", h.sid, reason)
	p.h.cancel(h.readTimer)
	p.h.close(h.conn)
	h.l.removeHandler(h)
	if !p.cfg.Bugs.Has(BugStaleAck) {
		h.l.forgetAcks(h.sid)
	}
}
