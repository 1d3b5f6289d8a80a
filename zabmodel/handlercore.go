package zabmodel

import (
	"encoding/binary"
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/zabmodel/datatree"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The learner handler's thread as a core (see ready.go): handlerCore is LearnerHandler.run's state
// (which read or wait it is in), the socket's receive buffer, the read timeout, SyncLimitCheck,
// waitForStartup's poll, LearnerHandler.ping and shutdown, and the SNAP stream (snapstream.go).
// Its step function, handlerStep, takes one input (a packet that reached the buffer, the
// connection's end, the thread's read, the read timeout, a quorum wait that returned, the startup
// poll, the leader's ping, a proposal sent, the shutdown, a step of the SNAP stream) and returns a
// ready; it reads the leader only through handlerView and writes nothing outside its own state.
// The learner handler is its driver (handlerRun, learnerhandler.go), which also drives the
// handler's sender (sendercore.go).
//
// Where run() calls into the leader (a quorum wait, Leader.processAck, submitting a forwarded
// request, LearnerMaster.touch and revalidateSession, Leader.startForwarding through the sync
// decision) or writes to the socket from its own thread (SNAP, the snapshot) or needs a draw of the
// world (how many nodes a SNAP's step writes), the ready ends there with resume, and the driver
// steps the core again with the continue input the step returned: the leader may call back into
// the handler meanwhile (a quorum wait that returns at once, a commit that queues a packet, the
// leader's end that shuts the handler down), and what run() does next (its next read, the read
// timeout of the state it is in now) is decided with the state as the call left it.
//
// Ordering contract: a handler's packets are read in the order they reached the buffer, each in a
// step of its own (effectHandlerRead), the connection's end last; nothing is read while run() is
// in a quorum wait, the SNAP stream or waitForStartup; the read timeout is re-armed after each
// read, for the state run() is then in; at the shutdown the sender closes before the connection
// does, and the handler is removed from the leader before its acknowledgements are forgotten.

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

// handlerInputKind names what a step of the learner handler's core is about.
type handlerInputKind uint8

const (
	// handlerAccepted is LearnerCnxAcceptor's accept: the first read's timeout is armed.
	handlerAccepted handlerInputKind = iota + 1
	// handlerReceived is payload reaching the socket's receive buffer.
	handlerReceived
	// handlerClosed is the connection's end, with err, as the network reported it.
	handlerClosed
	// handlerRead is the thread's read of the next buffered packet (effectHandlerRead's timer).
	handlerRead
	// handlerReadTimeout is the socket's read timeout (effectReadTimeout's timer).
	handlerReadTimeout
	// handlerEpochDecided is getEpochToPropose returning the new epoch zxid.
	handlerEpochDecided
	// handlerSynchronize is waitForEpochAck returning: the sync of a learner at zxid.
	handlerSynchronize
	// handlerNewLeaderAcked is waitForNewLeaderAck returning.
	handlerNewLeaderAcked
	// handlerStartupPoll is waitForStartup's next look (effectStartupPoll's timer).
	handlerStartupPoll
	// handlerPing is LearnerHandler.ping, at the time now.
	handlerPing
	// handlerProposalSent is SyncLimitCheck.updateProposal of zxid, at the time now.
	handlerProposalSent
	// handlerShutdown is LearnerHandler.shutdown, with reason.
	handlerShutdown
	// handlerSnapStep is the SNAP stream's timer (effectWalkNext): it begins the stream, then
	// steps its walk.
	handlerSnapStep

	// The continue inputs, which the step that asked to resume returns to its driver.

	// handlerAfterRead: the call into the leader of a read returned; run() reads on.
	handlerAfterRead
	// handlerAfterSync: the sync decision's packets are queued and forwarding started; needSnap
	// says whether a SNAP follows (for a learner at zxid).
	handlerAfterSync
	// handlerAfterSnap: SNAP is written; the walk starts.
	handlerAfterSnap
	// handlerSnapDrawn: the answer to the walk step's draw.
	handlerSnapDrawn
	// handlerAfterSnapshot: the snapshot is written; NEWLEADER follows.
	handlerAfterSnapshot
)

// handlerInput is one input of the learner handler's core.
type handlerInput struct {
	kind handlerInputKind
	// payload is a received packet; err the connection's end.
	payload []byte
	err     error
	// zxid is the new epoch (handlerEpochDecided), the learner's last zxid (handlerSynchronize,
	// handlerAfterSync) or the proposal sent.
	zxid     int64
	reason   string
	now      clock.Time
	draw     int
	needSnap bool
}

// handlerView is what the handler's core reads of its leader and its database.
type handlerView interface {
	// leaderStopped reports whether Leader.shutdown ran.
	leaderStopped() bool
	// serverRunning reports whether the leader's ZooKeeperServer runs (waitForStartup).
	serverRunning() bool
	// leaderTick is the leader's tick count.
	leaderTick() int
	// lastProposedZxid is the leader's last proposed zxid, which a PING carries.
	lastProposedZxid() int64
	// senderStarted reports whether the handler's sender thread runs.
	senderStarted() bool
	// syncSource is the leader's database as the sync decision and the SNAP read it.
	syncSource() syncSource
	// snapshotWriter starts a walk of the live tree, with the session table, for a SNAP.
	snapshotWriter() *datatree.SnapshotWriter
}

// handlerCore is the state of a learner handler's thread.
type handlerCore struct {
	// self is the handler whose core this is: the effects that concern a handler name it, and a
	// forwarded request is owned by it.
	self *learnerHandler
	cfg  *Config
	mem  *memory

	state    handlerState
	sid      int64
	observer bool

	// inbox[inboxHead:] is the socket's receive buffer: what the network delivered and the
	// handler's thread has not read yet, in the connection's order, ending with the close if the
	// connection is over. readPending says that the thread's next read is armed.
	inbox       []inboxItem
	inboxHead   int
	readPending bool
	// closedErr is the connection's end as the network reported it, nil while it is open.
	closedErr error

	tickOfNextAckDeadline int

	// The syncLimit check: the oldest proposal sent and not yet acked (SyncLimitCheck).
	syncCheckStarted        bool
	currentZxid, nextZxid   int64
	currentTime, nextTime   clock.Time
	newEpoch, newLeaderZxid int64
	// peerLastZxid is the learner's last zxid from its ACKEPOCH, which its sync starts from.
	peerLastZxid int64

	// snap is the SNAP stream, once the sync decided on one (snapstream.go).
	snap *snapStream

	handlerReadies readyPool
}

// inboxItem is one entry of a handler's receive buffer: a packet's bytes, or, last, the error that
// ended the connection.
type inboxItem struct {
	payload []byte
	err     error
}

// handlerStep takes one input and returns what must happen, and the continue input to step the
// core with once the ready is applied if it asks to resume. The ready is the driver's until it
// gives it back to handlerReadies.
func (c *handlerCore) handlerStep(in handlerInput, v handlerView) (*ready, handlerInput) {
	out := c.handlerReadies.get()
	next := handlerInput{}
	switch in.kind {
	case handlerAccepted:
		c.tickOfNextAckDeadline = v.leaderTick() + c.cfg.InitLimit + c.cfg.SyncLimit
		out.add(effect{kind: effectReadTimeout, zxid: int64(c.cfg.ticks(c.cfg.InitLimit))})
	case handlerReceived:
		if c.state == hsDead || v.leaderStopped() {
			break
		}
		c.inbox = append(c.inbox, inboxItem{payload: in.payload})
		c.scheduleRead(out, v)
	case handlerClosed:
		c.closed(out, in.err, v)
	case handlerRead:
		next = c.read(out, v)
	case handlerReadTimeout:
		if c.readPending && c.inboxHead < len(c.inbox) {
			break // The bytes that came before it are read: the blocked read returns them.
		}
		c.shutdown(out, "read timed out")
	case handlerAfterRead:
		c.expectRead(out, v)
	case handlerEpochDecided:
		c.epochDecided(out, in.zxid, v)
	case handlerSynchronize:
		if c.state != hsAwaitEpochQuorum {
			break
		}
		// LearnerHandler.syncFollower: the decision is a core of its own (learnersync.go), whose
		// effects end with Leader.startForwarding.
		next = handlerInput{kind: handlerAfterSync, zxid: in.zxid,
			needSnap: decideSync(v.syncSource(), c.mem, c.self, in.zxid, out)}
		out.resume = true
	case handlerAfterSync:
		if !in.needSnap {
			c.sendNewLeader(out, v)
			break
		}
		// The handler thread writes SNAP and streams the live tree itself, over several steps,
		// before the sender thread starts (snapstream.go).
		out.note("sync", fmt.Sprintf("SNAP for %d (peer at %s)", c.sid, FormatZxid(in.zxid)))
		c.snap = &snapStream{h: c.self}
		out.add(effect{kind: effectWalkNext})
	case handlerSnapStep:
		next = c.snapStep(out, v)
	case handlerAfterSnap:
		next = c.snapBegun(out, v)
	case handlerSnapDrawn:
		next = c.snapDrawn(out, in.draw, v)
	case handlerAfterSnapshot:
		if c.snapLive(out, v) {
			c.sendNewLeader(out, v)
		}
	case handlerNewLeaderAcked:
		c.newLeaderAcked(out, v)
	case handlerStartupPoll:
		c.waitForStartup(out, v)
	case handlerPing:
		c.ping(out, in.now, v)
	case handlerProposalSent:
		c.proposalSent(in.zxid, in.now)
	case handlerShutdown:
		c.shutdown(out, in.reason)
	default:
		panic(fmt.Sprintf("zabmodel: a learner handler's core got input %d", in.kind))
	}
	return out, next
}

// closed is the connection's end (learnerHandler.Closed): it joins the buffer behind the packets
// that came before it, unless the handler or its leader is done, which read nothing more.
func (c *handlerCore) closed(out *ready, err error, v handlerView) {
	if c.state == hsDead || v.leaderStopped() {
		c.shutdown(out, fmt.Sprintf("connection closed: %v", err))
		return
	}
	if err == nil {
		err = net.ErrEOF
	}
	c.closedErr = err
	c.inbox = append(c.inbox, inboxItem{err: err})
	c.scheduleRead(out, v)
}

// reading reports whether the handler's thread is in a readRecord: the states of run() that read,
// as opposed to its quorum waits, the SNAP stream and waitForStartup.
func (c *handlerCore) reading(v handlerView) bool {
	switch c.state {
	case hsAwaitInfo, hsAwaitAckEpoch, hsAwaitNewLeaderAck, hsBroadcast:
		return !v.leaderStopped()
	}
	return false
}

// scheduleRead arms the thread's next read if it reads and something is buffered.
func (c *handlerCore) scheduleRead(out *ready, v handlerView) {
	if c.readPending || c.inboxHead == len(c.inbox) || !c.reading(v) {
		return
	}
	c.readPending = true
	out.add(effect{kind: effectHandlerRead})
}

// expectRead arms the read timeout for the state the handler is in, if it is one where the Java
// thread blocks in a read (a thread blocked in a quorum wait reads nothing, so no timeout applies),
// and the thread's next read if a packet is already buffered.
func (c *handlerCore) expectRead(out *ready, v handlerView) {
	switch c.state {
	case hsAwaitInfo, hsAwaitAckEpoch, hsAwaitNewLeaderAck:
		out.add(effect{kind: effectReadTimeout, zxid: int64(c.cfg.ticks(c.cfg.InitLimit))})
	case hsBroadcast:
		out.add(effect{kind: effectReadTimeout, zxid: int64(c.cfg.ticks(c.cfg.SyncLimit))})
	default:
		out.add(effect{kind: effectReadTimeoutCancel})
	}
	c.scheduleRead(out, v)
}

// read is one readRecord of the handler's thread and what run() does with the packet, up to its
// call into the leader (after which it goes on with handlerAfterRead) or its next read.
func (c *handlerCore) read(out *ready, v handlerView) handlerInput {
	c.readPending = false
	if c.state == hsDead || !c.reading(v) || c.inboxHead == len(c.inbox) {
		return handlerInput{}
	}
	item := c.inbox[c.inboxHead]
	c.inbox[c.inboxHead] = inboxItem{}
	c.inboxHead++
	if c.inboxHead == len(c.inbox) {
		c.inbox, c.inboxHead = c.inbox[:0], 0
	}
	if item.err != nil {
		c.shutdown(out, fmt.Sprintf("connection closed: %v", item.err))
		return handlerInput{}
	}
	qp, err := c.mem.decodePacket(item.payload)
	if err == nil {
		err = c.handle(out, qp, v)
	}
	if err != nil {
		c.shutdown(out, err.Error())
		return handlerInput{}
	}
	out.resume = true
	return handlerInput{kind: handlerAfterRead}
}

func (c *handlerCore) handle(out *ready, qp proto.QuorumPacket, v handlerView) error {
	switch c.state {
	case hsAwaitInfo:
		return c.learnerInfo(out, qp)
	case hsAwaitAckEpoch:
		return c.ackEpoch(out, qp)
	case hsAwaitNewLeaderAck:
		if qp.Type != pktAck {
			return fmt.Errorf("next packet was supposed to be an ACK, but received %s", packetName(qp.Type))
		}
		c.state = hsAwaitNewLeaderQuorum
		out.add(effect{kind: effectWaitCall, event: int32(waitNewLeaderAck), zxid: qp.Zxid})
		return nil
	case hsBroadcast:
		return c.broadcastPacket(out, qp, v)
	}
	// Only a reading thread reads: a packet that comes while it is blocked in a wait stays in the
	// buffer until the wait is over. A learner normally sends nothing then, but one that
	// acknowledges its sync txns from its sync processor (3.8.0's NEWLEADER order,
	// ZOOKEEPER-4646) does, right after its NEWLEADER ACK.
	panic("zabmodel: a learner handler read a packet while not in a read")
}

// learnerInfo handles FOLLOWERINFO / OBSERVERINFO and starts discovery for this learner.
func (c *handlerCore) learnerInfo(out *ready, qp proto.QuorumPacket) error {
	if qp.Type != pktFollowerInfo && qp.Type != pktObserverInfo {
		return fmt.Errorf("first packet %s is not FOLLOWERINFO or OBSERVERINFO", packetName(qp.Type))
	}
	var li proto.LearnerInfo
	if err := c.mem.decodeLenient(qp.Data, &li); err != nil {
		return fmt.Errorf("%w: learner info: %v", errPacket, err)
	}
	c.sid = li.ServerID
	c.observer = qp.Type == pktObserverInfo
	c.state = hsAwaitEpoch
	out.add(effect{kind: effectWaitCall, event: int32(waitEpoch), zxid: EpochOf(qp.Zxid)})
	return nil
}

// epochDecided is the rest of run() once getEpochToPropose returned the new epoch: LEADERINFO.
func (c *handlerCore) epochDecided(out *ready, epoch int64, v handlerView) {
	if c.state != hsAwaitEpoch {
		return
	}
	c.newEpoch, c.newLeaderZxid = epoch, MakeZxid(epoch, 0)
	c.state = hsAwaitAckEpoch
	out.add(effect{kind: effectHandlerWrite, zxid: int64(pktLeaderInfo),
		packet: c.mem.encodePacket(&proto.QuorumPacket{Type: pktLeaderInfo, Zxid: c.newLeaderZxid, Data: int32Data(protocolVersion)})})
	c.expectRead(out, v)
}

// ackEpoch handles ACKEPOCH, then waits for the epoch quorum, after which the learner is
// synchronized (handlerSynchronize).
func (c *handlerCore) ackEpoch(out *ready, qp proto.QuorumPacket) error {
	if qp.Type != pktAckEpoch {
		return fmt.Errorf("%s is not ACKEPOCH", packetName(qp.Type))
	}
	if len(qp.Data) < 4 {
		return fmt.Errorf("%w: ACKEPOCH data of %d bytes", errPacket, len(qp.Data))
	}
	c.state = hsAwaitEpochQuorum
	c.peerLastZxid = qp.Zxid
	out.add(effect{kind: effectWaitCall, event: int32(waitEpochAck), zxid: int64(int32(binary.BigEndian.Uint32(qp.Data)))})
	return nil
}

// sendNewLeader queues NEWLEADER behind the synchronization and starts the sender thread.
func (c *handlerCore) sendNewLeader(out *ready, v handlerView) {
	c.queueOp(out, pktNewLeader, c.newLeaderZxid)
	c.state = hsAwaitNewLeaderAck
	out.add(effect{kind: effectSenderStart})
	c.expectRead(out, v)
}

func (c *handlerCore) queueOp(out *ready, t int32, zxid int64) {
	out.add(effect{kind: effectQueuePacket, handler: c.self, packet: c.mem.encodePacket(&proto.QuorumPacket{Type: t, Zxid: zxid})})
}

// newLeaderAcked continues after the NEWLEADER quorum: the syncLimit check starts, the read timeout
// becomes syncLimit ticks, and UPTODATE follows once the leader's server runs (waitForStartup polls
// every 20 ms, so proposals of the new epoch may reach the learner before UPTODATE does).
func (c *handlerCore) newLeaderAcked(out *ready, v handlerView) {
	if c.state != hsAwaitNewLeaderQuorum {
		return
	}
	c.syncCheckStarted = true
	if c.cfg.SelfTests.Has(SelfTestHoldLearners) {
		out.note("leader", fmt.Sprintf("holding learner %d: the hold-learners self-test", c.sid))
		return
	}
	c.waitForStartup(out, v)
}

func (c *handlerCore) waitForStartup(out *ready, v handlerView) {
	if c.state == hsDead || v.leaderStopped() {
		return
	}
	if v.serverRunning() {
		c.queueOp(out, pktUpToDate, -1)
		c.state = hsBroadcast
		// The packets that came during the waits are read now, one step each, in their order.
		c.expectRead(out, v)
		return
	}
	out.add(effect{kind: effectStartupPoll})
}

// broadcastPacket is the loop at the end of LearnerHandler.run.
func (c *handlerCore) broadcastPacket(out *ready, qp proto.QuorumPacket, v handlerView) error {
	c.tickOfNextAckDeadline = v.leaderTick() + c.cfg.SyncLimit
	switch qp.Type {
	case pktAck:
		c.ackReceived(qp.Zxid)
		out.add(effect{kind: effectProcessAck, zxid: qp.Zxid})
	case pktPing:
		for _, t := range parseTouchData(qp.Data) {
			out.add(effect{kind: effectTouch, zxid: t.id, event: t.timeoutMs})
		}
	case pktRevalidate:
		// LearnerMaster.revalidateSession: the learner's client reconnected there.
		if len(qp.Data) < 12 {
			return fmt.Errorf("%w: REVALIDATE of %d bytes", errPacket, len(qp.Data))
		}
		out.add(effect{kind: effectRevalidate, zxid: int64(binary.BigEndian.Uint64(qp.Data)),
			event: int32(binary.BigEndian.Uint32(qp.Data[8:]))})
	case pktRequest:
		r, err := learnerRequest(c.self, qp)
		if err != nil {
			return err
		}
		out.add(effect{kind: effectSubmit, req: r})
	default:
		out.note("leader", fmt.Sprintf("unexpected quorum packet %s from %d", packetName(qp.Type), c.sid))
	}
	return nil
}

// learnerRequest is LearnerHandler's REQUEST case: the client request a learner forwarded, owned
// by handler h.
func learnerRequest(h *learnerHandler, qp proto.QuorumPacket) (*request, error) {
	session, cxid, op, body, err := parseRequestData(qp.Data)
	if err != nil {
		return nil, err
	}
	r := &request{sessionID: session, cxid: cxid, op: op, body: body, auth: qp.AuthInfo, owner: h}
	if op == proto.OpSync {
		r.learnerSync = h
	}
	if op == proto.OpCreateSession && len(body) >= 4 {
		r.createTimeoutMs = int32(binary.BigEndian.Uint32(body))
	}
	return r, nil
}

// proposalSent and ackReceived are SyncLimitCheck.updateProposal and updateAck.
func (c *handlerCore) proposalSent(zxid int64, now clock.Time) {
	if !c.syncCheckStarted {
		return
	}
	if c.currentTime == 0 {
		c.currentTime, c.currentZxid = now, zxid
	} else {
		c.nextTime, c.nextZxid = now, zxid
	}
}

func (c *handlerCore) ackReceived(zxid int64) {
	switch zxid {
	case c.currentZxid:
		c.currentTime, c.currentZxid = c.nextTime, c.nextZxid
		c.nextTime, c.nextZxid = 0, 0
	case c.nextZxid:
		c.nextTime, c.nextZxid = 0, 0
	}
}

// ping is LearnerHandler.ping: a PING if the learner keeps up, or the end of the handler if its
// oldest unacknowledged proposal is older than syncLimit ticks.
func (c *handlerCore) ping(out *ready, now clock.Time, v handlerView) {
	if !v.senderStarted() || c.state == hsDead {
		return
	}
	if c.currentTime != 0 && now.Sub(c.currentTime) >= c.cfg.ticks(c.cfg.SyncLimit) {
		c.shutdown(out, "closing connection to peer due to transaction timeout")
		return
	}
	c.queueOp(out, pktPing, v.lastProposedZxid())
}

// synced is LearnerHandler.synced.
func (c *handlerCore) synced(tick int) bool {
	return c.state != hsDead && tick <= c.tickOfNextAckDeadline
}

// shutdown ends the handler: its sender closes, the socket closes (a socket closed by its own side
// is read no more, see learnerHandler.Closed), and the leader forgets it and, unless stale-ack,
// its acknowledgements (leader.forgetAcks).
func (c *handlerCore) shutdown(out *ready, reason string) {
	if c.state == hsDead {
		return
	}
	c.state = hsDead
	out.add(effect{kind: effectSenderClose})
	out.note("leader", fmt.Sprintf("learner handler for %d done: %s", c.sid, reason))
	c.readPending = false
	clear(c.inbox)
	c.inbox, c.inboxHead = c.inbox[:0], 0
	out.add(effect{kind: effectDisconnect})
	out.add(effect{kind: effectRemoveHandler})
	if !c.cfg.Bugs.Has(BugStaleAck) {
		out.add(effect{kind: effectForgetAcks})
	}
}
