package checkers

import (
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// killerCloses finds the closeSessions that forced expiries sent, and the replies they answered in
// the victim's stead.
//
// A killer shares its victim's session: its closeSession carries the victim's session id and the
// killer's own cxid, which may equal the cxid of a write the victim has pending on another server.
// A follower's CommitProcessor matches a commit to its oldest pending local write by session id and
// cxid alone, so that server takes the killer's closeSession for the victim's write: it answers the
// victim's write with the closeSession's zxid and result, and, as the request has a connection, it
// does not close the victim's connection either (FinalRequestProcessor closes only for a request
// without one). The victim's own write then commits, or fails, as a transaction of its own. The
// reply the victim saw is ZooKeeper's, but it is not about the write: a session used by two client
// handles is outside what ZooKeeper promises its clients, and the checkers treat such a reply as if
// the client had given up on the write (outcome unknown), as they would after an expiry.
type killerCloses struct {
	// zxids maps a session closed by force to the zxid of the closeSession its killer sent.
	zxids map[int64]int64
	// cxids maps the same sessions to that closeSession's cxid.
	cxids map[int64]int32
}

// newKillerCloses reads, for every session with a forced expiry, the first committed closeSession
// that a killer sent: a closeSession with a non-zero cxid (the leader's expiry has cxid 0),
// committed no earlier than the first forced expiry of the session, for a session whose recorded
// clients never issued one.
func newKillerCloses(h *History) killerCloses {
	k := killerCloses{zxids: map[int64]int64{}, cxids: map[int64]int32{}}
	if len(h.ForcedExpiries) == 0 {
		return k
	}
	forced, requested := forcedExpiryTimes(h), requestedCloses(h)
	for i := range h.Committed {
		t := &h.Committed[i]
		hdr := &t.Entry.Header
		if hdr.Type != proto.OpCloseSession || hdr.Cxid == 0 || requested[hdr.ClientID] {
			continue
		}
		at, isForced := forced[hdr.ClientID]
		if _, seen := k.zxids[hdr.ClientID]; seen || !isForced || (t.Time > 0 && t.Time < at) {
			continue
		}
		k.zxids[hdr.ClientID], k.cxids[hdr.ClientID] = hdr.Zxid, hdr.Cxid
	}
	return k
}

// answered reports whether op's reply was the killer's closeSession, taken for op by the server
// that held op: a write of the victim's session, other than a closeSession, replied at the killer's
// zxid with the killer's cxid (when op's xid is known).
func (k killerCloses) answered(op *Operation) bool {
	if len(k.zxids) == 0 || op.Outcome != OutcomeReplied || op.Kind == proto.OpCloseSession || !op.Kind.IsWrite() {
		return false
	}
	zxid, ok := k.zxids[op.Session]
	return ok && op.Zxid == zxid && (op.Xid == 0 || op.Xid == k.cxids[op.Session])
}
