package checkers

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// ReadOptions configure the sequential-consistency checker.
type ReadOptions struct {
	// LinearizableReadsAfterSync also checks, as a separate result, that a read issued after a
	// completed sync reflects every write that completed (in real time) before the sync was
	// called. ZooKeeper does not promise this: sync only makes the server catch up with the
	// leader as the leader was when it processed the sync, and a deposed leader may not know of
	// newer writes (ZOOKEEPER-1675). The result is marked BeyondGuarantee.
	LinearizableReadsAfterSync bool
}

// CheckReads checks ZooKeeper's sequential consistency for what clients saw:
//   - read-state: every read returns exactly the state at its reply zxid, computed by replaying
//     the committed log, and that zxid is one the log knows;
//   - write-committed: every acknowledged write is the committed transaction at its reply zxid,
//     with the result that transaction records (an acknowledged write missing from the log is a
//     lost write);
//   - monotonic-zxid: per session, reply zxids never go backwards, across reconnects too;
//   - fifo-order: per session, replies arrive in the order the requests were issued;
//   - read-your-writes: a read issued after the session's own write was acknowledged sees it;
//   - read-after-sync: a sync, and every read the session issues after it, is at least as new as
//     the leader's committed state when the sync was called.
//
// With opts.LinearizableReadsAfterSync it returns a second result for that opt-in property.
func CheckReads(h *History, opts ReadOptions) ([]Result, error) {
	if err := Validate(h); err != nil {
		return nil, err
	}
	return checkReads(h, opts), nil
}

func checkReads(h *History, opts ReadOptions) []Result {
	results := []Result{checkSequentialConsistency(h)}
	if opts.LinearizableReadsAfterSync {
		results = append(results, checkLinearizableReadsAfterSync(h))
	}
	return results
}

func checkSequentialConsistency(h *History) Result {
	col := newCollector(CheckerSequentialConsistency)
	killers := newKillerCloses(h)
	probes, hijacked := collectProbes(h, killers)
	if hijacked > 0 {
		col.note("%d writes of sessions closed by force were answered with their killer's closeSession, which the server took for them (same session and cxid): they are judged as writes whose outcome is unknown", hijacked)
	}
	checkProbes(h, probes, col)
	ordered := 0
	for ci := range h.Clients {
		ordered += checkSessionOrder(&h.Clients[ci], col)
		checkSessionFloors(&h.Clients[ci], killers, col)
	}
	return col.result(ordered, fmt.Sprintf("%d replies judged in session order, %d of them against the committed log of %d transactions",
		ordered, len(probes), len(h.Committed)))
}

// probe is one replied operation to compare with the state at its reply zxid.
type probe struct {
	ref OpRef
	op  *Operation
}

// collectProbes returns the replies worth comparing with the log, sorted by zxid. A reply with
// zxid 0 carries no zxid (the Java client ignores it too), and reads under /zookeeper see
// configuration the server writes without a transaction. A write answered with a killer's
// closeSession (see killerCloses) is not about the write; hijacked counts them.
func collectProbes(h *History, killers killerCloses) (out []probe, hijacked int) {
	total := 0
	for ci := range h.Clients {
		total += len(h.Clients[ci].Ops)
	}
	out = make([]probe, 0, total)
	for ci := range h.Clients {
		c := &h.Clients[ci]
		for oi := range c.Ops {
			op := &c.Ops[oi]
			if op.Outcome != OutcomeReplied || op.Zxid <= 0 || (isRead(op.Kind) && isReserved(op.Path)) {
				continue
			}
			if killers.answered(op) {
				hijacked++
				continue
			}
			if isRead(op.Kind) || op.Kind.IsWrite() {
				out = append(out, probe{ref: OpRef{Client: c.Name, Index: oi}, op: op})
			}
		}
	}
	return sortProbes(out), hijacked
}

// sortProbes sorts probes by zxid, keeping the order of equal zxids (a stable sort). The probes
// come client by client, and each client's replies mostly ascend in zxid already (a session never
// sees the state go back), so a merge sort of those ascending runs is nearly linear: the stable
// sort of the library, which merges in place, took a quarter of the client-visible checkers' time.
func sortProbes(probes []probe) []probe {
	starts := []int{0} // where each ascending run begins
	for i := 1; i < len(probes); i++ {
		if probes[i].op.Zxid < probes[i-1].op.Zxid {
			starts = append(starts, i)
		}
	}
	if len(starts) == 1 {
		return probes
	}
	src, dst := probes, make([]probe, len(probes))
	for len(starts) > 1 {
		merged := starts[:0]
		for r := 0; r < len(starts); r += 2 {
			lo, mid, hi := starts[r], len(src), len(src)
			if r+1 < len(starts) {
				mid = starts[r+1]
			}
			if r+2 < len(starts) {
				hi = starts[r+2]
			}
			mergeProbes(dst[lo:hi], src[lo:mid], src[mid:hi])
			merged = append(merged, lo)
		}
		starts = merged
		src, dst = dst, src
	}
	return src
}

// mergeProbes merges two runs sorted by zxid into out, taking from left first among equal zxids.
func mergeProbes(out, left, right []probe) {
	i, j, k := 0, 0, 0
	for i < len(left) && j < len(right) {
		if right[j].op.Zxid < left[i].op.Zxid {
			out[k] = right[j]
			j++
		} else {
			out[k] = left[i]
			i++
		}
		k++
	}
	k += copy(out[k:], left[i:])
	copy(out[k:], right[j:])
}

// checkProbes replays the committed log once and judges each probe when the replay reaches its
// zxid: after applying every transaction up to it and none after.
func checkProbes(h *History, probes []probe, col *collector) {
	tree := newRefTree()
	next := 0
	noEvents := func(change) {}
	for i := range h.Committed {
		zxid := h.Committed[i].Entry.Header.Zxid
		for ; next < len(probes) && probes[next].op.Zxid < zxid; next++ {
			judgeProbe(h, tree, probes[next], col)
		}
		if err := tree.apply(&h.Committed[i].Entry, noEvents); err != nil {
			col.add(Finding{Rule: "committed-log", Message: "the committed log cannot be replayed: " + err.Error(),
				Zxids: []int64{zxid}, Sessions: []int64{h.Committed[i].Entry.Header.ClientID}})
		}
	}
	for ; next < len(probes); next++ {
		judgeProbe(h, tree, probes[next], col)
	}
}

// judgeProbe compares one reply with the tree, which holds the state at the probe's zxid.
func judgeProbe(h *History, tree *refTree, p probe, col *collector) {
	op := p.op
	idx := committedIndex(h.Committed, op.Zxid)
	if isRead(op.Kind) {
		// A new leader answers with its epoch's start zxid (newEpoch << 32) until its first commit:
		// the state of every transaction committed before, which the tree holds.
		if idx < 0 && op.Zxid > tree.lastZxid && op.Zxid&0xffffffff != 0 {
			col.add(probeFinding(p, "read-state", fmt.Sprintf("%s: its reply zxid is beyond the last committed transaction %s",
				describeOperation(p.ref, op), hexID(tree.lastZxid))))
			return
		}
		if idx < 0 && op.Zxid&0xffffffff != 0 {
			col.add(probeFinding(p, "read-state", fmt.Sprintf("%s: its reply zxid is not the zxid of any committed transaction",
				describeOperation(p.ref, op))))
			return
		}
		if why := readMismatch(tree, op); why != "" {
			col.add(probeFinding(p, "read-state", fmt.Sprintf("%s, but at zxid %s the committed log has %s",
				describeOperation(p.ref, op), hexID(op.Zxid), why)))
		}
		return
	}
	judgeWrite(h, tree, p, idx, col)
}

func probeFinding(p probe, rule, message string) Finding {
	return Finding{
		Rule: rule, Message: message, Clients: []string{p.ref.Client}, Sessions: []int64{p.op.Session},
		Ops: []OpRef{p.ref}, Zxids: []int64{p.op.Zxid}, Times: []clock.Time{p.op.Return},
	}
}

// readMismatch returns how the read's reply differs from the tree, or "" if it does not.
func readMismatch(tree *refTree, op *Operation) string {
	node := tree.nodes[op.Path]
	switch op.Err {
	case proto.NoNode:
		if node != nil {
			return op.Path + " present with " + describeNode(node)
		}
		return ""
	case proto.OK:
	default:
		return "" // NOAUTH and other refusals say nothing about the state
	}
	if node == nil {
		return op.Path + " absent"
	}
	if op.Kind == proto.OpGetData && !bytes.Equal(op.ResultData, node.data) {
		return op.Path + " with " + describeNode(node)
	}
	if op.Kind == proto.OpGetChildren || op.Kind == proto.OpGetChildren2 {
		if want := node.sortedChildren(); !slices.Equal(sortedCopy(op.Children), want) {
			return fmt.Sprintf("%s with children %v", op.Path, want)
		}
	}
	if op.Stat != nil {
		if diff := statDiff(*op.Stat, node.clientStat()); diff != "" {
			return op.Path + " with a different stat: " + diff
		}
	}
	return ""
}

func describeNode(n *refNode) string {
	s := n.clientStat()
	return fmt.Sprintf("data %s version %d mzxid %s", quoteData(n.data), s.Version, hexID(s.Mzxid))
}

// statDiff lists the fields in which a replied stat differs from the expected one.
func statDiff(got, want proto.Stat) string {
	var parts []string
	field := func(name string, g, w int64, hex bool) {
		if g == w {
			return
		}
		if hex {
			parts = append(parts, fmt.Sprintf("%s %s in the reply, %s in the log", name, hexID(g), hexID(w)))
		} else {
			parts = append(parts, fmt.Sprintf("%s %d in the reply, %d in the log", name, g, w))
		}
	}
	field("czxid", got.Czxid, want.Czxid, true)
	field("mzxid", got.Mzxid, want.Mzxid, true)
	field("pzxid", got.Pzxid, want.Pzxid, true)
	field("ctime", got.Ctime, want.Ctime, false)
	field("mtime", got.Mtime, want.Mtime, false)
	field("version", int64(got.Version), int64(want.Version), false)
	field("cversion", int64(got.Cversion), int64(want.Cversion), false)
	field("aversion", int64(got.Aversion), int64(want.Aversion), false)
	field("ephemeralOwner", got.EphemeralOwner, want.EphemeralOwner, true)
	field("dataLength", int64(got.DataLength), int64(want.DataLength), false)
	field("numChildren", int64(got.NumChildren), int64(want.NumChildren), false)
	return strings.Join(parts, ", ")
}
