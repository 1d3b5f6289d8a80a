package checkers

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// judgeWrite checks an acknowledged write against the committed transaction at its reply zxid.
func judgeWrite(h *History, tree *refTree, p probe, idx int, col *collector) {
	op := p.op
	reported := replyOutput(op).err
	if idx < 0 {
		if reported == proto.OK {
			col.add(probeFinding(p, "write-committed", fmt.Sprintf("%s was acknowledged, but no committed transaction has zxid %s: the write was lost",
				describeOperation(p.ref, op), hexID(op.Zxid))))
		}
		return
	}
	entry := &h.Committed[idx].Entry
	hdr := &entry.Header
	if hdr.ClientID != op.Session || (op.Xid != 0 && hdr.Cxid != op.Xid) {
		if reported == proto.OK {
			col.add(probeFinding(p, "write-committed", fmt.Sprintf("%s was acknowledged, but the committed transaction at zxid %s is %v of session %s xid %d",
				describeOperation(p.ref, op), hexID(op.Zxid), hdr.Type, hexID(hdr.ClientID), hdr.Cxid)))
		}
		return
	}
	if !txnFits(op, hdr.Type) {
		col.add(probeFinding(p, "write-committed", fmt.Sprintf("%s was answered with its own zxid, but was committed as %v",
			describeOperation(p.ref, op), describeTxnBody(hdr.Type, entry.Txn))))
		return
	}
	logged := outcomeOf(entry)
	if why := writeMismatch(tree, op, reported, logged); why != "" {
		col.add(probeFinding(p, "write-committed", fmt.Sprintf("%s, but its committed transaction %s records %s",
			describeOperation(p.ref, op), hexID(op.Zxid), why)))
	}
}

// writeMismatch returns how a write's reply differs from its committed outcome and from the state
// right after it, or "".
func writeMismatch(tree *refTree, op *Operation, reported proto.Code, logged txnOutcome) string {
	if reported != logged.err {
		return "result " + logged.err.String()
	}
	if reported != proto.OK {
		return ""
	}
	if op.CreatedPath != "" && op.CreatedPath != logged.path {
		return "the path " + logged.path
	}
	if op.Kind == proto.OpMulti && op.MultiResults != nil && !subResultsMatch(logged.subs, op.MultiResults, true) {
		return "other per-operation results"
	}
	if op.Stat == nil {
		return ""
	}
	path := op.Path
	if op.Kind == proto.OpCreate || op.Kind == proto.OpCreate2 {
		path = logged.path // A sequential create's path has its suffix only in the txn.
	}
	node := tree.nodes[path]
	if node == nil {
		return path + " absent after it"
	}
	if diff := statDiff(*op.Stat, node.clientStat()); diff != "" {
		return "a different stat: " + diff
	}
	return ""
}

// replyOrder returns the indices of a client's replied operations in the order their replies
// arrived: from the arrival stream, or by return time if there is none.
func replyOrder(c *ClientHistory) []int {
	var order []int
	if len(c.Arrivals) > 0 {
		for _, a := range c.Arrivals {
			if a.Kind == ArrivalReply {
				order = append(order, a.Op)
			}
		}
		return order
	}
	for i := range c.Ops {
		if c.Ops[i].Outcome == OutcomeReplied {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return compareInt64(int64(c.Ops[a].Return), int64(c.Ops[b].Return)) })
	return order
}

// sessionOrder is what the order checks remember about one session.
type sessionOrder struct {
	lastZxid      int64
	lastZxidOp    int
	lastIssued    int
	hasLastIssued bool
}

// checkSessionOrder checks, per session, that replies arrive in issue order (fifo-order) and that
// their zxids never go backwards (monotonic-zxid). It returns the number of replies examined.
func checkSessionOrder(c *ClientHistory, col *collector) int {
	sessions := map[int64]*sessionOrder{}
	order := replyOrder(c)
	for _, i := range order {
		op := &c.Ops[i]
		st := sessions[op.Session]
		if st == nil {
			st = &sessionOrder{}
			sessions[op.Session] = st
		}
		ref := OpRef{Client: c.Name, Index: i}
		if st.hasLastIssued && i < st.lastIssued {
			earlier := OpRef{Client: c.Name, Index: st.lastIssued}
			col.add(orderFinding("fifo-order", fmt.Sprintf("the reply to %s arrived after the reply to %s, which was issued later",
				describeOperation(ref, op), describeOperation(earlier, &c.Ops[st.lastIssued])), ref, earlier, op, &c.Ops[st.lastIssued]))
		}
		st.lastIssued, st.hasLastIssued = max(st.lastIssued, i), true
		if op.Zxid <= 0 {
			continue
		}
		if op.Zxid < st.lastZxid {
			earlier := OpRef{Client: c.Name, Index: st.lastZxidOp}
			col.add(orderFinding("monotonic-zxid", fmt.Sprintf("session %s went back in time: %s came after %s",
				hexID(op.Session), describeOperation(ref, op), describeOperation(earlier, &c.Ops[st.lastZxidOp])), ref, earlier, op, &c.Ops[st.lastZxidOp]))
			continue
		}
		st.lastZxid, st.lastZxidOp = op.Zxid, i
	}
	return len(order)
}

func orderFinding(rule, message string, ref, earlier OpRef, op, other *Operation) Finding {
	return Finding{
		Rule: rule, Message: message, Clients: []string{ref.Client}, Sessions: []int64{op.Session},
		Ops: []OpRef{earlier, ref}, Zxids: []int64{other.Zxid, op.Zxid}, Times: []clock.Time{other.Return, op.Return},
	}
}

// floor is a lower bound on the zxid of a session's later reads, and the operation that set it.
type floor struct {
	zxid int64
	op   int
	set  bool
}

func (f *floor) raise(zxid int64, op int) {
	if !f.set || zxid > f.zxid {
		f.zxid, f.op, f.set = zxid, op, true
	}
}

type sessionFloors struct {
	ownWrite, sync floor
}

// checkSessionFloors walks a client's operations in issue order and checks read-your-writes and
// read-after-sync for every replied read.
func checkSessionFloors(c *ClientHistory, killers killerCloses, col *collector) {
	sessions := map[int64]*sessionFloors{}
	for i := range c.Ops {
		op := &c.Ops[i]
		st := sessions[op.Session]
		if st == nil {
			st = &sessionFloors{}
			sessions[op.Session] = st
		}
		if op.Outcome != OutcomeReplied || op.Zxid <= 0 {
			continue
		}
		ref := OpRef{Client: c.Name, Index: i}
		switch {
		case isRead(op.Kind) && (op.Err == proto.OK || op.Err == proto.NoNode):
			checkFloor(c, ref, op, &st.ownWrite, "read-your-writes", "does not see the session's own earlier write", col)
			checkFloor(c, ref, op, &st.sync, "read-after-sync", "is older than the leader's state when the session's earlier sync was called", col)
		case op.Kind == proto.OpSync && op.Err == proto.OK:
			if op.SyncLeaderZxid > 0 && op.Zxid < op.SyncLeaderZxid {
				col.add(probeFinding(probe{ref: ref, op: op}, "read-after-sync", fmt.Sprintf(
					"%s completed, yet the server it answered from was behind the leader's committed zxid %s when the sync was called",
					describeOperation(ref, op), hexID(op.SyncLeaderZxid))))
			}
			if op.SyncLeaderZxid > 0 {
				st.sync.raise(op.SyncLeaderZxid, i)
			}
		case op.Kind.IsWrite() && op.Err == proto.OK && !killers.answered(op):
			st.ownWrite.raise(op.Zxid, i)
		}
	}
}

func checkFloor(c *ClientHistory, ref OpRef, op *Operation, f *floor, rule, what string, col *collector) {
	if !f.set || op.Zxid >= f.zxid {
		return
	}
	earlier := OpRef{Client: c.Name, Index: f.op}
	other := &c.Ops[f.op]
	col.add(Finding{
		Rule: rule,
		Message: fmt.Sprintf("%s %s: it was issued after %s and must be at zxid %s or later",
			describeOperation(ref, op), what, describeOperation(earlier, other), hexID(f.zxid)),
		Clients: []string{c.Name}, Sessions: []int64{op.Session}, Ops: []OpRef{earlier, ref},
		Zxids: []int64{f.zxid, op.Zxid}, Times: []clock.Time{other.Call, op.Call},
	})
}
