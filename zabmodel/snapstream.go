package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
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
// The stream is its own timer (timers.go): its first firing begins the stream (SNAP), the later
// ones step the walk.
type snapStream struct {
	h      *learnerHandler
	writer *datatree.SnapshotWriter
	// begun says that SNAP is written: the timer steps the walk.
	begun bool
}

// streamSnap starts the SNAP for h's learner; NEWLEADER follows once the snapshot is written.
func (h *learnerHandler) streamSnap() {
	s := &snapStream{h: h}
	s.schedule()
}

func (s *snapStream) schedule() {
	p := s.h.p()
	p.h.setTimer(p.h.between(snapshotStepLatency/2, snapshotStepLatency*5, 50*clock.Microsecond), s)
}

// live reports whether the handler still streams: its connection and its leader are up. Java's
// handler thread writes the snapshot itself, so it learns of a connection the learner ended (see
// learnerHandler.Closed) from its own next write, which fails with an IOException (the learner's
// kernel answered the first write after the end with a reset): run() ends, and its finally shuts
// the handler down without reading what is still buffered.
func (s *snapStream) live() bool {
	h := s.h
	if h.state != hsAwaitEpochQuorum || h.l.stopped {
		return false
	}
	if h.closedErr != nil {
		h.shutdown(fmt.Sprintf("writing the snapshot: connection closed: %v", h.closedErr))
		return false
	}
	return true
}

// begin writes SNAP with the zxid the tree has now, and the session table and ACL cache.
func (s *snapStream) begin() {
	if !s.live() {
		return
	}
	h, p := s.h, s.h.p()
	zxid := p.db.lastProcessedZxid()
	p.note("sync", "sending SNAP at %s to %d", FormatZxid(zxid), h.sid)
	h.write(p.mem.encodePacket(&proto.QuorumPacket{Type: pktSnap, Zxid: zxid}), pktSnap)
	if !s.live() {
		return // A boundary of the write ended the connection or the process.
	}
	s.writer = p.db.tree.t.NewSnapshotWriter(sessionList(p.db.sessions), false)
	s.begun = true
	s.step()
}

// step writes the next few nodes, or, with the walk over, the rest of the stream.
func (s *snapStream) step() {
	if !s.live() {
		return
	}
	h, p := s.h, s.h.p()
	if !s.writer.Step(1 + p.h.choose(snapshotStepNodes)) {
		s.schedule()
		return
	}
	// The leader's applied history now bounds what the snapshot holds: the checker learns where
	// the fuzzy part ends (a learner may apply again, and mismatch digests on, what lies between
	// the SNAP's zxid and here).
	p.observe(Event{Kind: EventLearnerSync, Learner: h.sid, Zxid: p.db.lastProcessedZxid(), Source: SourceSnap})
	h.write(s.writer.Finish(), snapshotPayload)
	if !s.live() {
		return
	}
	h.sendNewLeader()
}
