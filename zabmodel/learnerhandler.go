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
	// inbox[inboxHead:] is the socket's receive buffer: what the network delivered and the
	// handler's thread has not read yet, in the connection's order, ending with the close if the
	// connection is over (see Received and Closed). readPending says that the thread's next read
	// is armed (handlerReadStep, readTimerID).
	inbox       []inboxItem
	inboxHead   int
	readPending bool
	readStepID  sim.TimerID
	// closedErr is the connection's end as the network reported it, nil while it is open.
	closedErr  error
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

// The handler's thread and its socket. In Java each LearnerHandler is a thread that reads its
// socket (LearnerHandler.run: ia.readRecord in a loop, through a BufferedInputStream) and calls
// into the Leader with what it read; the kernel buffers what arrives until the thread reads it. So
// a delivery here only puts the packet into the handler's receive buffer (Received), and the
// thread reads it as a step of its own (handlerReadStep, readStep), at a moment the run draws
// (readDelay): two handlers' reads, and a read against the leader's own thread (its tick, its
// quorum waits' continuations), may run in either order, as the JVM's scheduler may run them,
// while each connection's packets are still read in the order they came. A thread blocked in a
// quorum wait (getEpochToPropose, waitForEpochAck, waitForNewLeaderAck, waitForStartup) or writing
// the snapshot does not read: its packets wait in the buffer until run() reaches its next
// readRecord (reading).

// inboxItem is one entry of a handler's receive buffer: a packet's bytes, or, last, the error that
// ended the connection.
type inboxItem struct {
	payload []byte
	err     error
}

// Closed implements net.Handler: the connection is over (the learner closed it or crashed, a
// reset, TCP gave up). Java's handler thread learns of it only when it reads: readRecord returns
// the bytes already buffered and then throws (EOFException on a FIN; on Linux a reset, or a
// retransmission timeout, also leaves the received bytes readable, as tcp_recvmsg copies the
// receive queue before it reports sk_err), and run() ends in shutdown(). So the end joins the
// buffer behind the packets that arrived before it, and a thread blocked in a quorum wait goes on
// waiting with its sid counted (as the Java thread does) until its next read. A handler the leader
// itself shut down, or whose leader stopped, reads nothing more: Leader.shutdown and
// LearnerHandler.shutdown close the socket from the leader's side, and a read on a socket closed
// by its own side throws at once, whatever the kernel still buffers.
func (h *learnerHandler) Closed(_ net.ConnID, err error) {
	if h.state == hsDead || h.l.stopped {
		h.shutdown(fmt.Sprintf("connection closed: %v", err))
		return
	}
	if err == nil {
		err = net.ErrEOF
	}
	h.closedErr = err
	h.inbox = append(h.inbox, inboxItem{err: err})
	h.scheduleRead()
}

// reading reports whether the handler's thread is in a readRecord: the states of run() that read,
// as opposed to its quorum waits, the SNAP stream and waitForStartup.
func (h *learnerHandler) reading() bool {
	switch h.state {
	case hsAwaitInfo, hsAwaitAckEpoch, hsAwaitNewLeaderAck, hsBroadcast:
		return !h.l.stopped
	}
	return false
}

// scheduleRead arms the thread's next read if it reads and something is buffered.
func (h *learnerHandler) scheduleRead() {
	if h.readPending || h.inboxHead == len(h.inbox) || !h.reading() {
		return
	}
	h.readPending = true
	h.readStepID = h.p().h.setTimer(h.readDelay(), (*handlerReadStep)(h))
}

// readDelay draws how long after the packet is there (or after the thread's previous read, or the
// end of its wait) the handler's thread reads it. Half of the time the thread runs at once, in a
// step of its own after the steps already due at this instant (it was blocked in read() and the
// scheduler picks it next); a quarter of the time it waits 10 to 200 µs (a wake-up on a busy
// core); a quarter of the time 0.2 to 2 ms (another thread held the core, a safepoint). The
// network's latencies are 0.1 to 1 ms, so two learners' ACKs that arrive close together are often
// read in the other order, and a packet that arrives just before the leader's tick or before a
// waiter's wake-up is sometimes read after it. The model checker's chooser answers 0 to every
// draw: there each read is a step due at once, which the checker orders against every other
// enabled event.
func (h *learnerHandler) readDelay() clock.Duration {
	hst := h.p().h
	switch hst.choose(4) {
	case 0, 1:
		return 0
	case 2:
		return hst.between(10*clock.Microsecond, 200*clock.Microsecond, 10*clock.Microsecond)
	default:
		return hst.between(200*clock.Microsecond, 2*clock.Millisecond, 100*clock.Microsecond)
	}
}

// readStep is one readRecord of the handler's thread and what run() does with the packet, up to
// its next read or wait.
func (h *learnerHandler) readStep() {
	h.readPending = false
	if h.state == hsDead || !h.reading() || h.inboxHead == len(h.inbox) {
		return
	}
	item := h.inbox[h.inboxHead]
	h.inbox[h.inboxHead] = inboxItem{}
	h.inboxHead++
	if h.inboxHead == len(h.inbox) {
		h.inbox, h.inboxHead = h.inbox[:0], 0
	}
	if item.err != nil {
		h.shutdown(fmt.Sprintf("connection closed: %v", item.err))
		return
	}
	qp, err := h.p().mem.decodePacket(item.payload)
	if err == nil {
		err = h.handle(qp)
	}
	if err != nil {
		h.shutdown(err.Error())
		return
	}
	h.expectRead()
}

// readTimedOut is the read timeout's firing: SocketTimeoutException in readRecord, unless bytes
// arrived before it, which the blocked read returns (the thread's read of them is armed).
func (h *learnerHandler) readTimedOut() {
	if h.readPending && h.inboxHead < len(h.inbox) {
		return
	}
	h.shutdown("read timed out")
}

// resetReadTimer arms the socket read timeout (setSoTimeout).
func (h *learnerHandler) resetReadTimer(d clock.Duration) {
	p := h.p()
	p.h.cancel(h.readTimer)
	h.readTimer = p.h.setTimer(d, (*handlerReadTimer)(h))
}

// expectRead arms the read timeout for the state the handler is in, if it is one where the Java
// thread blocks in a read (a thread blocked in a quorum wait reads nothing, so no timeout applies),
// and the thread's next read if a packet is already buffered.
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
	h.scheduleRead()
}

// Received implements net.Handler: one packet from the learner reaches the socket's receive
// buffer; the handler's thread reads it in a step of its own (readStep). The receiver owns payload.
func (h *learnerHandler) Received(_ net.ConnID, payload []byte) {
	if h.state == hsDead || h.l.stopped {
		return
	}
	h.inbox = append(h.inbox, inboxItem{payload: payload})
	h.scheduleRead()
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
	// Only a reading thread reads (readStep): a packet that comes while it is blocked in a wait
	// stays in the buffer until the wait is over. A learner normally sends nothing then, but one
	// that acknowledges its sync txns from its sync processor (3.8.0's NEWLEADER order,
	// ZOOKEEPER-4646) does, right after its NEWLEADER ACK.
	panic("zabmodel: a learner handler read a packet while not in a read")
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
		// The packets that came during the waits are read now, one step each, in their order.
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
	// A socket closed by its own side is read no more (see Closed).
	p.h.cancel(h.readStepID)
	h.readPending = false
	clear(h.inbox)
	h.inbox, h.inboxHead = h.inbox[:0], 0
	p.h.close(h.conn)
	h.l.removeHandler(h)
	if !p.cfg.Bugs.Has(BugStaleAck) {
		h.l.forgetAcks(h.sid)
	}
}
