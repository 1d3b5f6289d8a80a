package zabmodel

import (
	"encoding/binary"
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The learner's session answers as steps of its core (see learnercore.go): Learner.ping, which
// answers the leader's PING with the sessions touched since the last one, Learner.validateSession,
// which asks the leader whether a client's reconnecting session is still alive, and
// Learner.revalidate, which takes the leader's answer back to the waiting client connection: the
// session part of Follower.processPacket and Observer.processPacket. pendingRevalidations is their
// state (Learner.pendingRevalidations). The touch table itself is the session tracker's
// (LearnerSessionTracker, shared with the request pipeline, which touches sessions): the driver
// takes its snapshot (ZooKeeperServer.getTouchSnapshot, the first statement of Learner.ping) into
// the PING's input, as the leader's driver reads the database for its establishment.
//
// Ordering contract: a PING is answered by one write, with the sessions in the order the table
// first saw them; a validation's pending entry is recorded before its REVALIDATE is written (the
// answer may come back at once); an answer removes its entry before the client connection learns
// the verdict (effectSessionValidated), which may end that connection.

// ping is Learner.ping: the reply carries the PING's zxid and auth info back with the touched
// sessions.
func (c *learnerCore) ping(out *ready, in learnerInput) {
	out.add(effect{kind: effectSend, zxid: int64(pktPing),
		packet: c.mem.encodePacket(&proto.QuorumPacket{Type: pktPing, Zxid: in.zxid, Data: touchData(in.touched), AuthInfo: in.auth})})
}

// validateSession is Learner.validateSession: the client connection waits for the leader's answer.
func (c *learnerCore) validateSession(out *ready, in learnerInput) {
	c.pendingRevalidations[in.session] = in.client
	out.add(effect{kind: effectSend, zxid: int64(pktRevalidate),
		packet: c.mem.encodePacket(&proto.QuorumPacket{Type: pktRevalidate, Zxid: -1, Data: revalidateRequestData(in.session, in.timeoutMs)})})
}

// revalidate is Learner.revalidate: the leader's answer (the session id, then whether it is
// valid). A short answer is ignored, as the Java stream's failed reads would end nothing here.
func (c *learnerCore) revalidate(out *ready, in learnerInput) {
	if len(in.payload) < 9 {
		return
	}
	id := int64(binary.BigEndian.Uint64(in.payload))
	client, ok := c.pendingRevalidations[id]
	if !ok {
		out.note("learner", fmt.Sprintf("missing session %#x for validation", id))
		return
	}
	delete(c.pendingRevalidations, id)
	out.add(effect{kind: effectSessionValidated, client: client, zxid: id, valid: in.payload[8] != 0})
}
