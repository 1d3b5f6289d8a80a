package zabmodel

import "github.com/zabsim/zabsim/clock"

// A learner handler's sender as a core (see ready.go): senderCore is LearnerHandler's queuedPackets
// and its sender thread (LearnerHandler.sendPackets). Packets wait in the queue until the sender
// starts (after the sync's packets, and the snapshot of a SNAP, are queued); from then on each write
// occupies the sender for writeCost, so a burst goes out one write per event, in order, and a
// pause or a crash of the leader can fall between two of its packets. Its effects are the writes
// (effectSend: the driver asks the before-send: and after-send: boundaries of the packet's type
// around it) and the sender's next turn (effectTimer, a delay: the timer is data, the driver arms
// it). The time of the step is an input, as etcd raft's ticks are. The learner handler embeds it and
// is its driver (senderRun).
//
// Ordering contract: packets are written in the order they were queued or written; nothing is
// written before the sender starts, and nothing after the handler closed.

// senderInputKind names what a step of the sender's core is about.
type senderInputKind uint8

const (
	// senderQueue is LearnerHandler.queuePacket of packet.
	senderQueue senderInputKind = iota + 1
	// senderWrite is a write of the handler's own thread (LEADERINFO, SNAP and its snapshot), not
	// through the queue; kind is the packet's type, or snapshotPayload.
	senderWrite
	// senderStart starts the sender: the queued packets go out.
	senderStart
	// senderTurn is the sender's timer: its current write is done, the next may start.
	senderTurn
	// senderClose: the handler is done; nothing more is queued or written.
	senderClose
)

// pendingWrite is one write waiting for the sender thread: the bytes and the packet type they
// encode (snapshotPayload for the serialized tree).
type pendingWrite struct {
	b    []byte
	kind int32
}

// senderCore is the state of a handler's queue and sender.
type senderCore struct {
	closed bool
	// queued holds packets until the sender starts.
	queued         [][]byte
	sendingStarted bool
	// backlog[backlogHead:] holds what the sender has still to write, busy until writingUntil;
	// writeStepSet says that its turn is armed.
	backlog      []pendingWrite
	backlogHead  int
	writingUntil clock.Time
	writeStepSet bool

	senderReadies readyPool
}

func (c *senderCore) senderStep(kind senderInputKind, packet []byte, packetKind int32, now clock.Time) *ready {
	out := c.senderReadies.get()
	switch kind {
	case senderQueue:
		if c.closed {
			break
		}
		if c.sendingStarted {
			c.write(out, packet, packetType(packet), now)
			break
		}
		c.queued = append(c.queued, packet)
	case senderWrite:
		c.write(out, packet, packetKind, now)
	case senderStart:
		c.sendingStarted = true
		for _, b := range c.queued {
			c.write(out, b, packetType(b), now)
		}
		c.queued = nil
	case senderTurn:
		c.writeStepSet = false
		if c.closed || c.backlogHead == len(c.backlog) {
			break
		}
		w := c.backlog[c.backlogHead]
		c.backlog[c.backlogHead] = pendingWrite{}
		c.backlogHead++
		if c.backlogHead == len(c.backlog) {
			c.backlog, c.backlogHead = c.backlog[:0], 0
		}
		c.transmit(out, w.b, w.kind, now)
		if c.backlogHead < len(c.backlog) {
			c.schedule(out, now)
		}
	case senderClose:
		c.closed = true
	}
	return out
}

// write hands b to the sender: at once if it is idle, else behind what it is still writing, so
// that the connection keeps the order of the queue.
func (c *senderCore) write(out *ready, b []byte, kind int32, now clock.Time) {
	if c.backlogHead == len(c.backlog) && now >= c.writingUntil {
		c.transmit(out, b, kind, now)
		return
	}
	c.backlog = append(c.backlog, pendingWrite{b: b, kind: kind})
	c.schedule(out, now)
}

// schedule arms the sender's next turn for when the current write is done.
func (c *senderCore) schedule(out *ready, now clock.Time) {
	if c.writeStepSet {
		return
	}
	c.writeStepSet = true
	out.add(effect{kind: effectTimer, zxid: int64(max(c.writingUntil.Sub(now), 0))})
}

// transmit writes one packet; the write occupies the sender for writeCost.
func (c *senderCore) transmit(out *ready, b []byte, kind int32, now clock.Time) {
	out.add(effect{kind: effectSend, packet: b, zxid: int64(kind)})
	c.writingUntil = now.Add(writeCost(len(b)))
}

// senderRun is the driver of the handler's sender: it steps the core at the current time and
// applies the writes between their boundaries and the timer of the next turn.
func (h *learnerHandler) senderRun(kind senderInputKind, packet []byte, packetKind int32) {
	p := h.p()
	out := h.senderStep(kind, packet, packetKind, p.h.elapsed())
	for i := range out.effects {
		e := &out.effects[i]
		switch e.kind {
		case effectSend:
			p.applySend(h.conn, int32(e.zxid), e.packet, nil)
		case effectTimer:
			p.h.setTimer(clock.Duration(e.zxid), (*senderTurnTimer)(h))
		default:
			panic("zabmodel: the sender's core asked for " + e.kind.String())
		}
	}
	h.senderReadies.put(out)
}
