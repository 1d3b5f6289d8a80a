package zabmodel

import (
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/datatree"
)

// learnerHandler is LearnerHandler: the leader's side of one learner's connection, with its sender
// queue. Its run() method is a sequence of blocking reads and quorum waits; here each read is a
// state of its core (handlercore.go) and each wait a quorumWaiter of the leader's quorum waits
// (discoverycore.go). The learner handler is the driver of its two cores, the thread's
// (handlerCore) and the sender's (senderCore): it applies their effects to the host and calls the
// leader where they say so.
type learnerHandler struct {
	l    *leader
	conn net.ConnID
	node sim.NodeID
	// wakesLate says that this handler's thread runs on a busy core (readDelay).
	wakesLate bool

	// handlerCore is the handler's thread; its reads are handlerReadStep, its read timeout
	// handlerReadTimer, its startup poll startupPollTimer and its SNAP stream's steps the stream.
	handlerCore
	// senderCore is the queue and the sender thread (sendercore.go); its turns are senderTurnTimer.
	senderCore

	forwarding bool

	// readTimer is the armed read timeout, readStepID the armed read.
	readTimer  sim.TimerID
	readStepID sim.TimerID
}

func (h *learnerHandler) p() *peer { return h.l.p }

// newLearnerHandler is a handler of the connection c that the leader accepted from node.
func newLearnerHandler(l *leader, c net.ConnID, from sim.NodeID) *learnerHandler {
	h := &learnerHandler{l: l, conn: c, node: from}
	// A quarter of the handler threads wake late (see readDelay), drawn once per connection as
	// FoundationDB's BUGGIFY enables a site once per run.
	h.wakesLate = l.p.h.choose(4) == 0
	h.handlerCore = handlerCore{self: h, cfg: l.p.cfg, mem: l.p.mem}
	return h
}

// The handler's thread and its socket. In Java each LearnerHandler is a thread that reads its
// socket (LearnerHandler.run: ia.readRecord in a loop, through a BufferedInputStream) and calls
// into the Leader with what it read; the kernel buffers what arrives until the thread reads it. So
// a delivery here only puts the packet into the handler's receive buffer (Received), and the
// thread reads it as a step of its own (handlerReadStep, handlerRead), at a moment the run draws
// (readDelay): two handlers' reads, and a read against the leader's own thread (its tick, its
// quorum waits' continuations), may run in either order, as the JVM's scheduler may run them,
// while each connection's packets are still read in the order they came. A thread blocked in a
// quorum wait (getEpochToPropose, waitForEpochAck, waitForNewLeaderAck, waitForStartup) or writing
// the snapshot does not read: its packets wait in the buffer until run() reaches its next
// readRecord (handlerCore.reading).

// Connected implements net.Handler; the leader never dials learners.
func (h *learnerHandler) Connected(net.ConnID) {}

// Received implements net.Handler: one packet from the learner reaches the socket's receive
// buffer; the handler's thread reads it in a step of its own. The receiver owns payload.
func (h *learnerHandler) Received(_ net.ConnID, payload []byte) {
	h.handlerRun(handlerInput{kind: handlerReceived, payload: payload})
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
	h.handlerRun(handlerInput{kind: handlerClosed, err: err})
}

// The leader's entries into the handler's thread: a quorum wait that returned (resumeAfterWait),
// LearnerHandler.ping, SyncLimitCheck.updateProposal, LearnerHandler.shutdown.

func (h *learnerHandler) epochDecided(epoch int64) {
	h.handlerRun(handlerInput{kind: handlerEpochDecided, zxid: epoch})
}

func (h *learnerHandler) synchronize(peerLastZxid int64) {
	h.handlerRun(handlerInput{kind: handlerSynchronize, zxid: peerLastZxid})
}

func (h *learnerHandler) newLeaderAcked() { h.handlerRun(handlerInput{kind: handlerNewLeaderAcked}) }

func (h *learnerHandler) ping() {
	h.handlerRun(handlerInput{kind: handlerPing, now: h.p().h.elapsed()})
}

func (h *learnerHandler) proposalSent(zxid int64) {
	h.handlerRun(handlerInput{kind: handlerProposalSent, zxid: zxid, now: h.p().h.elapsed()})
}

func (h *learnerHandler) shutdown(reason string) {
	h.handlerRun(handlerInput{kind: handlerShutdown, reason: reason})
}

// handlerRun is the driver of the handler's core: it steps the core with in and applies what it
// returns, stepping it again with the continue input as long as a ready asks to resume.
func (h *learnerHandler) handlerRun(in handlerInput) {
	for {
		out, next := h.handlerStep(in, h)
		for i := range out.effects {
			h.applyHandlerEffect(out, &out.effects[i], &next)
		}
		resume := out.resume
		h.handlerReadies.put(out)
		if !resume {
			return
		}
		in = next
	}
}

// applyHandlerEffect is the driver of one effect of the handler's core; next is the continue
// input, which gathers the world's answer to a draw.
func (h *learnerHandler) applyHandlerEffect(out *ready, e *effect, next *handlerInput) {
	p := h.p()
	if p.applyReport(out, e) {
		return
	}
	switch e.kind {
	case effectHandlerRead:
		h.readStepID = p.h.setTimer(h.readDelay(), (*handlerReadStep)(h))
	case effectReadTimeout:
		p.h.cancel(h.readTimer)
		h.readTimer = p.h.setTimer(clock.Duration(e.zxid), (*handlerReadTimer)(h))
	case effectReadTimeoutCancel:
		p.h.cancel(h.readTimer)
	case effectStartupPoll:
		delay := p.h.between(0, 20*clock.Millisecond, clock.Millisecond)
		p.h.setTimer(delay, (*startupPollTimer)(h))
	case effectWalkNext:
		p.h.setTimer(walkPause(p.h), h.snap)
	case effectDraw:
		next.draw = p.h.choose(int(e.zxid))
	case effectQueuePacket:
		h.queuePacket(e.packet)
	case effectHandlerWrite:
		h.write(e.packet, int32(e.zxid))
	case effectSenderStart:
		h.startSending()
	case effectSenderClose:
		h.senderRun(senderClose, nil, 0)
	case effectForward:
		h.l.startForwarding(h, e.zxid)
	case effectWaitCall:
		in := discoveryInput{kind: discoveryCall, wait: discoveryWait(e.event), handler: h, sid: h.sid}
		switch in.wait {
		case waitEpoch:
			in.lastAcceptedEpoch = e.zxid
		case waitEpochAck:
			in.summary = stateSummary{currentEpoch: e.zxid, lastZxid: h.peerLastZxid}
		default:
			in.zxid = e.zxid
		}
		h.l.discoveryRun(in)
	case effectProcessAck:
		h.l.processAck(h.sid, e.zxid)
	case effectTouch:
		h.l.touch(e.zxid, e.event)
	case effectRevalidate:
		h.l.revalidateSession(h, e.zxid, e.event)
	case effectSubmit:
		h.l.zk.submit(e.req)
	case effectDisconnect:
		p.h.cancel(h.readTimer)
		p.h.cancel(h.readStepID)
		p.h.close(h.conn)
	case effectRemoveHandler:
		h.l.removeHandler(h)
	case effectForgetAcks:
		h.l.forgetAcks(h.sid)
	default:
		panic("zabmodel: the learner handler's core asked for " + e.kind.String())
	}
}

// readDelay draws how long after the packet is there (or after the thread's previous read, or the
// end of its wait) the handler's thread reads it. Most handler threads run at once: in a step of
// their own after the steps already due at this instant (the thread was blocked in read() and the
// scheduler picks it next), so that two handlers' reads, or a read and the leader's tick, due at
// the same instant still run as separate steps. A quarter of them (wakesLate, drawn when the
// connection is accepted, as BUGGIFY enables a site per run) run on a busy core: half of their reads
// at once, a quarter after 10 to 200 µs (a wake-up on a busy core), a quarter after 0.2 to 2 ms
// (another thread held the core, a safepoint). The network's latencies are 0.1 to 1 ms, so two
// learners' ACKs that arrive close together are then often read in the other order, and a packet
// that arrives just before the leader's tick or before a waiter's wake-up is sometimes read after
// it. Delaying every handler's reads instead cost reach (over seeds 1 to 4,000 of the default
// swarm, trunc-snapshot failed 6 seeds with every thread delayed, 13 with a quarter, against 16
// before the reads were steps of their own). The model checker's chooser answers 0 to every draw:
// there each handler wakes late, and each read is a step due at once, which the checker orders
// against every other enabled event.
func (h *learnerHandler) readDelay() clock.Duration {
	hst := h.p().h
	if !h.wakesLate {
		return 0
	}
	switch hst.choose(4) {
	case 0, 1:
		return 0
	case 2:
		return hst.between(10*clock.Microsecond, 200*clock.Microsecond, 10*clock.Microsecond)
	default:
		return hst.between(200*clock.Microsecond, 2*clock.Millisecond, 100*clock.Microsecond)
	}
}

// The handler as its core's view of the leader (handlerView).

func (h *learnerHandler) leaderStopped() bool     { return h.l.stopped }
func (h *learnerHandler) serverRunning() bool     { return h.l.zk.running }
func (h *learnerHandler) leaderTick() int         { return h.l.tick }
func (h *learnerHandler) lastProposedZxid() int64 { return h.l.lastProposed }
func (h *learnerHandler) senderStarted() bool     { return h.sendingStarted }
func (h *learnerHandler) syncSource() syncSource  { return h.p().db }

func (h *learnerHandler) snapshotWriter() *datatree.SnapshotWriter {
	db := h.p().db
	return db.tree.t.NewSnapshotWriter(sessionList(db.sessions), false)
}

// queuePacket is LearnerHandler.queuePacket: into the sender's queue, sent once the sender runs
// (sendercore.go).
func (h *learnerHandler) queuePacket(b []byte) { h.senderRun(senderQueue, b, 0) }

func (h *learnerHandler) startSending() { h.senderRun(senderStart, nil, 0) }

// write is a write of the handler's own thread, not through the queue (sendercore.go).
func (h *learnerHandler) write(b []byte, kind int32) { h.senderRun(senderWrite, b, kind) }
