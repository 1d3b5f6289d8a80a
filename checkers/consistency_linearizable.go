package checkers

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// completedWrite is an acknowledged write, for the opt-in check.
type completedWrite struct {
	ref OpRef
	op  *Operation
}

// completedWrites returns every successful acknowledged write with its zxid, sorted by return
// time, and for each position the write with the largest zxid among those up to it.
func completedWrites(h *History) (byReturn, maxUpTo []completedWrite) {
	for ci := range h.Clients {
		c := &h.Clients[ci]
		for oi := range c.Ops {
			op := &c.Ops[oi]
			if op.Outcome == OutcomeReplied && op.Kind.IsWrite() && op.Err == proto.OK && op.Zxid > 0 {
				byReturn = append(byReturn, completedWrite{ref: OpRef{Client: c.Name, Index: oi}, op: op})
			}
		}
	}
	slices.SortStableFunc(byReturn, func(a, b completedWrite) int {
		return compareInt64(int64(a.op.Return), int64(b.op.Return))
	})
	maxUpTo = make([]completedWrite, len(byReturn))
	for i, w := range byReturn {
		maxUpTo[i] = w
		if i > 0 && maxUpTo[i-1].op.Zxid > w.op.Zxid {
			maxUpTo[i] = maxUpTo[i-1]
		}
	}
	return byReturn, maxUpTo
}

// newestWriteBefore returns the write with the largest zxid among those that returned strictly
// before t, and whether there is one.
func newestWriteBefore(byReturn, maxUpTo []completedWrite, t clock.Time) (completedWrite, bool) {
	n, _ := slices.BinarySearchFunc(byReturn, t, func(w completedWrite, t clock.Time) int {
		if w.op.Return < t {
			return -1
		}
		return 1
	})
	if n == 0 {
		return completedWrite{}, false
	}
	return maxUpTo[n-1], true
}

// checkLinearizableReadsAfterSync checks the opt-in property: a sync, and every read its session
// issues after it, reflects every write that completed before the sync was called.
func checkLinearizableReadsAfterSync(h *History) Result {
	col := newCollector(CheckerLinearizableReadsAfterSync)
	byReturn, maxUpTo := completedWrites(h)
	checked := 0
	for ci := range h.Clients {
		c := &h.Clients[ci]
		floors := map[int64]*syncFloor{}
		for i := range c.Ops {
			op := &c.Ops[i]
			if op.Outcome != OutcomeReplied || op.Zxid <= 0 {
				continue
			}
			ref := OpRef{Client: c.Name, Index: i}
			f := floors[op.Session]
			switch {
			case op.Kind == proto.OpSync && op.Err == proto.OK:
				w, ok := newestWriteBefore(byReturn, maxUpTo, op.Call)
				if !ok {
					continue
				}
				checked++
				if op.Zxid < w.op.Zxid {
					col.add(linearizableFinding(ref, op, ref, op, w))
				}
				if f == nil || w.op.Zxid > f.write.op.Zxid {
					floors[op.Session] = &syncFloor{sync: ref, syncOp: op, write: w}
				}
			case isRead(op.Kind) && f != nil && (op.Err == proto.OK || op.Err == proto.NoNode):
				checked++
				if op.Zxid < f.write.op.Zxid {
					col.add(linearizableFinding(ref, op, f.sync, f.syncOp, f.write))
				}
			}
		}
	}
	res := col.result(checked, fmt.Sprintf("%d syncs and reads after syncs judged against the writes completed before each sync was called", checked))
	res.BeyondGuarantee = true
	res.Notes = append(res.Notes, "ZooKeeper does not promise linearizable reads after sync (ZOOKEEPER-1675): a violation here is a finding about that stronger property, not a broken guarantee")
	return res
}

type syncFloor struct {
	sync   OpRef
	syncOp *Operation
	write  completedWrite
}

func linearizableFinding(ref OpRef, op *Operation, syncRef OpRef, syncOp *Operation, w completedWrite) Finding {
	return Finding{
		Rule: "linearizable-read-after-sync",
		Message: fmt.Sprintf("%s is at zxid %s, older than %s, which completed before %s was called",
			describeOperation(ref, op), hexID(op.Zxid), describeOperation(w.ref, w.op), describeOperation(syncRef, syncOp)),
		Clients:  []string{ref.Client, w.ref.Client},
		Sessions: []int64{op.Session, w.op.Session},
		Ops:      []OpRef{w.ref, syncRef, ref},
		Zxids:    []int64{w.op.Zxid, op.Zxid},
		Times:    []clock.Time{w.op.Return, syncOp.Call},
	}
}
