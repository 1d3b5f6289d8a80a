package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/datatree"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// snapStream is the SNAP branch of LearnerHandler.run, after syncFollower has decided on a SNAP
// and Leader.startForwarding has queued the proposals in the pipeline (so that the commits made
// from now on are queued behind the snapshot too). Java then releases the log lock, reads
// zxidToSend = getDataTreeLastProcessedZxid(), writes SNAP with it, and serializes the live tree
// onto the socket (ZKDatabase.serializeSnapshot, DataTree.serialize) while the leader's commit
// processor goes on applying transactions. The snapshot a learner receives is therefore fuzzy: it
// is named by zxidToSend but may hold changes of transactions applied during the walk, which the
// learner then applies again when their forwarded COMMITs (or INFORMs) arrive after it. Java
// tolerates that: the replay is idempotent (DataTree.processTxn) and the learner, which gets no
// digest with a SNAP, at worst logs digest mismatches until it has applied every transaction of
// the walk. Each step here is an event, so commits land between any two nodes.
//
// The stream is part of the handler's core (handlercore.go): its state is the walk, its inputs
// the stream's timer (handlerSnapStep: its first firing begins the stream, the later ones step
// the walk) and the continue inputs after its writes and its draw. Its effects: the SNAP's note
// and write (effectHandlerWrite, after which the core resumes), the draw of how many nodes a step
// writes (effectDraw, snapshotStepNodes), the walk's next step after a latency the driver draws
// (effectWalkNext, the stream itself being the timer), the EventLearnerSync that bounds the fuzzy
// part, the snapshot's write, and NEWLEADER with the sender's start (sendNewLeader).
//
// Ordering contract: SNAP is written before the walk starts; the snapshot is written only once
// the walk is over, after the EventLearnerSync; NEWLEADER is queued and the sender started after
// the snapshot's write, unless the handler ended meanwhile.
type snapStream struct {
	h      *learnerHandler
	writer *datatree.SnapshotWriter
	// begun says that SNAP is written: the timer steps the walk.
	begun bool
}

// snapLive reports whether the handler still streams: its connection and its leader are up.
// Java's handler thread writes the snapshot itself, so it learns of a connection the learner
// ended (see learnerHandler.Closed) from its own next write, which fails with an IOException (the
// learner's kernel answered the first write after the end with a reset): run() ends, and its
// finally shuts the handler down without reading what is still buffered.
func (c *handlerCore) snapLive(out *ready, v handlerView) bool {
	if c.state != hsAwaitEpochQuorum || v.leaderStopped() {
		return false
	}
	if c.closedErr != nil {
		c.shutdown(out, fmt.Sprintf("writing the snapshot: connection closed: %v", c.closedErr))
		return false
	}
	return true
}

// snapStep is the stream's timer: SNAP with the zxid the tree has now (the session table and ACL
// cache follow with the walk), or the walk's next step.
func (c *handlerCore) snapStep(out *ready, v handlerView) handlerInput {
	if c.snap.begun {
		return c.snapWalk(out, v)
	}
	if !c.snapLive(out, v) {
		return handlerInput{}
	}
	zxid := v.syncSource().lastProcessedZxid()
	out.note("sync", fmt.Sprintf("sending SNAP at %s to %d", FormatZxid(zxid), c.sid))
	out.add(effect{kind: effectHandlerWrite, zxid: int64(pktSnap), packet: c.mem.encodePacket(&proto.QuorumPacket{Type: pktSnap, Zxid: zxid})})
	out.resume = true
	return handlerInput{kind: handlerAfterSnap}
}

// snapBegun starts the walk once SNAP is written, unless a boundary of the write ended the
// connection or the process.
func (c *handlerCore) snapBegun(out *ready, v handlerView) handlerInput {
	if !c.snapLive(out, v) {
		return handlerInput{}
	}
	c.snap.writer = v.snapshotWriter()
	c.snap.begun = true
	return c.snapWalk(out, v)
}

// snapWalk asks how many nodes the walk's next step writes.
func (c *handlerCore) snapWalk(out *ready, v handlerView) handlerInput {
	if !c.snapLive(out, v) {
		return handlerInput{}
	}
	out.add(effect{kind: effectDraw, zxid: snapshotStepNodes})
	out.resume = true
	return handlerInput{kind: handlerSnapDrawn}
}

// snapDrawn writes the next draw+1 nodes, or, with the walk over, the rest of the stream.
func (c *handlerCore) snapDrawn(out *ready, draw int, v handlerView) handlerInput {
	s := c.snap
	if !s.writer.Step(1 + draw) {
		out.add(effect{kind: effectWalkNext})
		return handlerInput{}
	}
	// The leader's applied history now bounds what the snapshot holds: the checker learns where
	// the fuzzy part ends (a learner may apply again, and mismatch digests on, what lies between
	// the SNAP's zxid and here).
	out.observe(Event{Kind: EventLearnerSync, Learner: c.sid, Zxid: v.syncSource().lastProcessedZxid(), Source: SourceSnap})
	out.add(effect{kind: effectHandlerWrite, zxid: int64(snapshotPayload), packet: s.writer.Finish()})
	out.resume = true
	return handlerInput{kind: handlerAfterSnapshot}
}
