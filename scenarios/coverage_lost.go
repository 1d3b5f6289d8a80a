package scenarios

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Lost replies: what became of a recipe's write whose reply was a connection loss after the
// request was sent. The recipe cannot know whether the write happened, and every lock recipe
// answers that the same way: it reconnects (to any server) and looks (a protected-mode create
// searches its parent for its own node, a retried delete checks that the node is still its own,
// a failed acquisition looks whether it owns the lock node), then acts on what it saw. What it saw
// is only right if the server it asked already holds the write or the write can never happen, and
// the write can happen late: the server the session left may forward it to the leader after the
// disconnect, and a leader that lost its quorum commits it only when the quorum comes back. The
// coverage follows each session's last lost write (by its session and xid) through those steps:
//
//   - the loss itself, with where the write was then (not proposed yet, pending at the leader,
//     committed);
//   - its proposal after the loss (the old server forwarded it late): from then on it counts as
//     a moved session's proposal, so its window (windowMovedSession) opens;
//   - every request of the session after the loss, read or write, with where the write is
//     against the server that gets the request (not proposed, pending, committed but not applied
//     there, applied there): a look that runs before its write is visible where it looks;
//   - the write's commit after such a request.
//
// These are the preconditions of the recipes' lost-reply races (curator-unsynced-search, a
// retried delete that removes the next holder's node), whether or not a bug switch then turns
// them into a failure; the pending-proposal situations (coverage_pending.go) see a session's
// write only once a leader proposed it, and miss the writes that are proposed after the session
// left.

// windowLostWrite: some outstanding proposal is a session's write whose reply was lost before
// it was proposed (a site window, see siteWindow).
const windowLostWrite uint64 = 1 << 6

// lostWrite is a session's last write whose reply was lost.
type lostWrite struct {
	xid       int32
	op        proto.OpCode
	zxid      int64 // 0 until proposed
	requested bool  // the session sent a request since the loss
}

// Where a lost write is, against the server a request goes to.
const (
	lostNotProposed uint64 = iota
	lostPending
	lostCommittedNotApplied
	lostApplied
)

var lostStateNames = [...]string{"not yet proposed", "pending at the leader", "committed, not applied there", "applied there"}

// lostAtLossNames name where a write was when its reply was lost: a proposal no longer pending
// was committed or dropped with its leader.
var lostAtLossNames = [...]string{"not yet proposed", "pending at the leader", "no longer pending"}

// replyLost takes a request whose reply was a connection loss after it was sent (xid is its xid):
// the runner's lock recipes report them.
func (c *Coverage) replyLost(session int64, xid int32, kind proto.OpCode, at clock.Time) {
	if session == 0 || xid == 0 || !isWrite(kind) {
		return
	}
	w := &lostWrite{xid: xid, op: kind}
	state := lostNotProposed
	for _, p := range c.pending {
		if p.session == session && p.xid == xid {
			w.zxid, state = p.zxid, lostPending
		}
	}
	if last, ok := c.sessionWrites[session]; ok && state == lostNotProposed && last.xid == xid {
		w.zxid, state = last.zxid, lostCommittedNotApplied
	}
	c.lostWrites[session] = w
	c.add(mix(0x34, state, uint64(kind)), at, 0, func() string {
		return fmt.Sprintf("reply of a %s lost while it was %s", kind, lostAtLossNames[state])
	})
}

// lostProposed marks a proposal that is a session's lost write, proposed after the loss.
func (c *Coverage) lostProposed(p *pendingProposal, e zabmodel.Event) {
	w, ok := c.lostWrites[p.session]
	if !ok || w.xid != p.xid || w.zxid != 0 {
		return
	}
	w.zxid = p.zxid
	p.moved, p.lost = true, true
	requested := boolBit(w.requested)
	c.add(mix(0x35, uint64(p.op), requested), e.Time, e.Server, func() string {
		return fmt.Sprintf("a %s proposed after its reply was lost (a request of its session since: %d)", p.op, requested)
	})
}

// lostRequest takes a request of a session with a lost write, sent to server.
func (c *Coverage) lostRequest(session int64, kind proto.OpCode, at clock.Time, server int64) {
	w, ok := c.lostWrites[session]
	if !ok || server <= 0 {
		return
	}
	w.requested = true
	state := lostNotProposed
	if w.zxid != 0 {
		state = lostPending
		if c.committedIn[w.zxid>>32] >= w.zxid {
			state = lostCommittedNotApplied
		}
		if c.server(server).lastApplied >= w.zxid {
			state = lostApplied
		}
	}
	for _, p := range c.pending {
		if p.session == session && p.xid == w.xid {
			p.requested = true
		}
	}
	read := boolBit(!isWrite(kind))
	c.add(mix(0x36, read, state), at, server, func() string {
		what := "a write"
		if read == 1 {
			what = "a read"
		}
		return fmt.Sprintf("session sends %s after a lost reply, its write %s", what, lostStateNames[state])
	})
}

// lostCommitted takes the commit of a proposal that is a session's lost write.
func (c *Coverage) lostCommitted(p *pendingProposal, e zabmodel.Event) {
	requested := boolBit(p.requested)
	c.add(mix(0x37, uint64(p.op), requested), e.Time, e.Server, func() string {
		return fmt.Sprintf("commit of a %s proposed after its reply was lost (a request of its session since: %d)", p.op, requested)
	})
}

// isWrite says whether a request kind changes the tree.
func isWrite(kind proto.OpCode) bool {
	switch kind {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL, proto.OpDelete, proto.OpSetData,
		proto.OpMulti, proto.OpCheck:
		return true
	}
	return false
}
