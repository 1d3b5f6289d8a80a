package checkers

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The zxid-order checker decides linearizability without searching, the way Elle infers a
// version order from the evidence a database hands out instead of trying every order: ZooKeeper
// gives every committed write a zxid, and the committed log is in zxid order. The checker places
// every operation porcupine would judge at a position in that order and verifies the one order
// it builds:
//
//   - a replied write sits at its own transaction: the one at its reply zxid, whose (session,
//     cxid) is the request's (FinalRequestProcessor replies with the zxid of the transaction it
//     just applied); a write acknowledged with a zxid that is not its own is a finding (a lost or
//     misreported write);
//   - an unknown-outcome write sits where the committed log has its transaction (the resolver
//     finds it by session and xid), or nowhere if the log shows it never happened; one the log
//     cannot settle is taken as never applied, and said so in a note;
//   - a read (only with IncludeReads) and a write that failed without a transaction of its own sit
//     just after the transaction at their reply zxid: they saw the state at that zxid;
//   - a session end sits at its closeSession transaction.
//
// Then, for each of porcupine's partitions (a znode for the register model, the whole prefix for
// the tree and queue models), it checks in O(n log n):
//
//   - model-order: replaying the operations in that order through the same model porcupine uses
//     gives every recorded result (a write's effect and its reply agree, a read returns the state
//     at its zxid);
//   - real-time-order: no operation that completed before another was called sits after it;
//   - session-order: each session's replies are in zxid order in the order it issued them.
//
// When every check passes, the order it built is a linearization, so porcupine would find one
// too: a pass is sound whatever the zxids say. A violation relies on the zxids reported to clients
// being truthful: a server that answers with another transaction's zxid, or with a state that is
// not the one at its zxid, is reported as such even where some other order would explain the
// values (porcupine, which ignores zxids, may then pass). The checker never returns Unknown.

// The names of the zxid-order checks, one per model.
const (
	CheckerZxidRegister = "zxid-order/register"
	CheckerZxidTree     = "zxid-order/tree"
	CheckerZxidQueue    = "zxid-order/queue"
)

func zxidCheckerName(m ModelKind) string {
	switch m {
	case RegisterModel:
		return CheckerZxidRegister
	case TreeModel:
		return CheckerZxidTree
	case QueueModel:
		return CheckerZxidQueue
	default:
		return "zxid-order/invalid-model"
	}
}

// CheckZxidOrder checks that the writes (and, on request, the reads) under opts.Prefix are
// linearizable in the chosen model by verifying the order their zxids give, as described above.
// It takes the same options as CheckLinearizability; TimeLimit, NoLogResolution and
// Visualization do not apply (the committed log always settles what it can).
func CheckZxidOrder(h *History, opts LinearizabilityOptions) (Result, error) {
	if err := Validate(h); err != nil {
		return Result{}, err
	}
	return checkZxidOrderModel(h, opts)
}

func checkZxidOrderModel(h *History, opts LinearizabilityOptions) (Result, error) {
	if err := opts.validate(); err != nil {
		return Result{}, err
	}
	opts.NoLogResolution = false
	b := newLinearizabilityBuilder(h, opts)
	if err := b.collect(); err != nil {
		return Result{}, err
	}
	col := newCollector(zxidCheckerName(opts.Model))
	b.checkZxidOrder(col)
	if len(b.entries) == 0 {
		res := col.result(0, "no operations under "+opts.Prefix)
		if res.Status == Pass {
			res.Status = Skipped
		}
		return res, nil
	}
	history, partitions := b.porcupineHistory()
	z := &zxidChecker{h: h, b: b, col: col, model: b.model()}
	placed := z.place(history)
	z.checkPartitions(placed, partitions)
	z.checkSessions(placed)
	z.notes()
	return col.result(len(history), fmt.Sprintf("%d operations under %s in %d partitions, in the order of their %d zxids",
		len(history), opts.Prefix, len(partitions), len(placed))), nil
}

// zxidKey is an operation's position: just after the transaction zxid, at it (rank 0, the
// transaction itself) or after it (rank 1, an operation that saw the state at zxid).
type zxidKey struct {
	zxid int64
	rank uint8
}

func compareKeys(a, b zxidKey) int {
	if c := cmp.Compare(a.zxid, b.zxid); c != 0 {
		return c
	}
	return cmp.Compare(a.rank, b.rank)
}

// zxidOp is one operation with its position.
type zxidOp struct {
	op  *porcupine.Operation
	in  *modelInput
	out *modelOutput
	key zxidKey
}

type zxidChecker struct {
	h     *History
	b     *linearizabilityBuilder
	col   *collector
	model porcupine.Model
	// Counts for the notes: unknown outcomes taken as never applied, operations whose result the
	// model does not judge and that therefore have no position.
	unplaced, unjudged, attributed int
}

// judges reports whether the model judges a result code for an operation kind; a result it does
// not judge had no effect and showed nothing, so it needs no position.
func (z *zxidChecker) judges(kind proto.OpCode, out *modelOutput) bool {
	if kind == proto.OpCloseSession || isRead(kind) {
		return true
	}
	code := out.err
	switch z.b.opts.Model {
	case RegisterModel:
		return registerJudged(kind, code)
	case TreeModel:
		return treeJudged(kind, code)
	default:
		return queueJudged(kind, code)
	}
}

// place gives each operation its position, and reports replied writes whose zxid is not theirs.
func (z *zxidChecker) place(history []porcupine.Operation) []zxidOp {
	placed := make([]zxidOp, 0, len(history))
	var undecided []*porcupine.Operation
	for i := range history {
		op := &history[i]
		in, out := op.Input.(*modelInput), op.Output.(*modelOutput)
		switch {
		case out.unknown:
			undecided = append(undecided, op)
			continue
		case in.source == nil || out.resolved:
			// A session end or a write the log settled: in.zxid is its transaction's.
			if in.zxid <= 0 {
				z.unplaced++
				continue
			}
			placed = append(placed, zxidOp{op: op, in: in, out: out, key: zxidKey{zxid: in.zxid}})
			continue
		case !z.judges(in.kind, out):
			z.unjudged++
			continue
		}
		placed = append(placed, zxidOp{op: op, in: in, out: out, key: z.replyKey(in, out)})
	}
	if len(undecided) > 0 {
		placed = append(placed, z.attribute(undecided)...)
	}
	return placed
}

// attribute finds, for the unknown-outcome writes the resolver could not settle, their
// transactions in the committed log. Such a write has a session but no recorded xid (its client
// process died after sending it, before the library could report the xid it was written with).
// The log is complete, so a transaction of that session whose cxid no operation of the history
// claims can only be one of those writes; the client numbers requests in the order it issues them,
// so they are matched in order. A write left without a transaction did not happen.
func (z *zxidChecker) attribute(undecided []*porcupine.Operation) []zxidOp {
	claimed := map[sessionXid]bool{}
	sessions := map[int64]bool{}
	for _, op := range undecided {
		if src := op.Input.(*modelInput).source; src != nil && src.Session != 0 {
			sessions[src.Session] = true
		}
	}
	for ci := range z.h.Clients {
		for oi := range z.h.Clients[ci].Ops {
			op := &z.h.Clients[ci].Ops[oi]
			if op.Xid != 0 && sessions[op.Session] {
				claimed[sessionXid{op.Session, op.Xid}] = true
			}
		}
	}
	free := map[int64][]int{} // per session, the indices of its unclaimed transactions, in zxid order
	for i := range z.h.Committed {
		hdr := &z.h.Committed[i].Entry.Header
		if sessions[hdr.ClientID] && hdr.Cxid > 0 && !claimed[sessionXid{hdr.ClientID, hdr.Cxid}] {
			free[hdr.ClientID] = append(free[hdr.ClientID], i)
		}
	}
	var out []zxidOp
	for _, op := range undecided {
		in := op.Input.(*modelInput)
		src := in.source
		if src == nil || src.Session == 0 {
			z.unplaced++
			continue
		}
		txns := free[src.Session]
		for j, idx := range txns {
			txn := &z.h.Committed[idx]
			if !txnFits(src, txn.Entry.Header.Type) || (txn.Time != 0 && txn.Time < src.Call) {
				continue
			}
			o := outcomeOf(&txn.Entry)
			resolved := &modelOutput{err: o.err, path: o.path, version: o.version, subs: o.subs, resolved: true}
			out = append(out, zxidOp{op: op, in: in, out: resolved, key: zxidKey{zxid: txn.Entry.Header.Zxid}})
			z.attributed++
			free[src.Session] = slices.Delete(txns, j, j+1)
			break
		}
	}
	return out
}

// replyKey places a replied operation: a write at its own transaction, everything else just after
// the transaction at its reply zxid.
func (z *zxidChecker) replyKey(in *modelInput, out *modelOutput) zxidKey {
	src := in.source
	after := zxidKey{zxid: src.Zxid, rank: 1}
	if isRead(in.kind) {
		return after
	}
	if idx := committedIndex(z.h.Committed, src.Zxid); idx >= 0 && z.owns(src, idx) {
		if why := replyDisagrees(out, outcomeOf(&z.h.Committed[idx].Entry)); why != "" {
			z.col.add(z.finding(in, "reply-transaction", fmt.Sprintf("%s, but its transaction %s records %s: the reply and the write's effect disagree",
				describeOperation(in.ref, src), hexID(src.Zxid), why), src.Zxid))
		}
		return zxidKey{zxid: src.Zxid}
	}
	if z.b.resolver != nil {
		if v, idx := z.b.resolver.resolve(src); v == happened {
			own := z.h.Committed[idx].Entry.Header.Zxid
			z.col.add(z.finding(in, "reply-zxid", fmt.Sprintf("%s was answered with zxid %s, but its transaction is %s: the server misreported the zxid",
				describeOperation(in.ref, src), hexID(src.Zxid), hexID(own)), src.Zxid, own))
			return zxidKey{zxid: own}
		}
	}
	if out.err == proto.OK {
		z.col.add(z.finding(in, "reply-zxid", fmt.Sprintf("%s was acknowledged with zxid %s, but the committed log holds no transaction of it: the write was lost or its zxid is false",
			describeOperation(in.ref, src), hexID(src.Zxid)), src.Zxid))
	}
	return after
}

// replyDisagrees returns how a reply differs from what its committed transaction records, or "".
func replyDisagrees(out *modelOutput, logged txnOutcome) string {
	switch {
	case out.err != logged.err:
		return "the result " + logged.err.String()
	case out.err != proto.OK:
		return ""
	case out.path != "" && logged.path != "" && out.path != logged.path:
		return "the path " + logged.path
	case out.version >= 0 && logged.version >= 0 && out.version != logged.version:
		return fmt.Sprintf("the version %d", logged.version)
	case out.subs != nil && logged.subs != nil && !subResultsMatch(logged.subs, out.subs, true):
		return "other per-operation results"
	}
	return ""
}

// owns reports whether the committed transaction at idx is the one op's request produced.
func (z *zxidChecker) owns(op *Operation, idx int) bool {
	hdr := &z.h.Committed[idx].Entry.Header
	return hdr.ClientID == op.Session && (op.Xid == 0 || hdr.Cxid == op.Xid) && txnFits(op, hdr.Type)
}

func (z *zxidChecker) finding(in *modelInput, rule, message string, zxids ...int64) Finding {
	f := Finding{Rule: rule, Message: message, Ops: []OpRef{in.ref}, Sessions: []int64{in.session}, Zxids: zxids}
	if in.source != nil {
		f.Clients = []string{in.ref.Client}
		f.Times = []clock.Time{in.source.Call, in.source.Return}
	}
	return f
}

// checkPartitions replays each partition in zxid order through the model and checks its real-time
// order.
func (z *zxidChecker) checkPartitions(placed []zxidOp, partitions []string) {
	members := make([][]int, len(partitions))
	for i := range placed {
		p := placed[i].in.partition
		members[p] = append(members[p], i)
	}
	for p, idx := range members {
		ops := make([]*zxidOp, len(idx))
		for i, j := range idx {
			ops[i] = &placed[j]
		}
		// Operations at one position (reads of one state) keep their call order, which respects
		// real time among themselves.
		slices.SortStableFunc(ops, func(a, b *zxidOp) int {
			if c := compareKeys(a.key, b.key); c != 0 {
				return c
			}
			return cmp.Compare(a.op.Call, b.op.Call)
		})
		z.replay(ops, partitions[p])
		z.checkRealTime(ops, partitions[p])
	}
}

// replay steps the model through one partition's operations in order and explains the first
// result the order cannot produce, with the operation that made the state it met.
func (z *zxidChecker) replay(ops []*zxidOp, partition string) {
	state := z.model.Init()
	var last *zxidOp // the last operation that sat at its own transaction
	for i, o := range ops {
		if i > 0 && o.key.rank == 0 && compareKeys(ops[i-1].key, o.key) == 0 {
			prev := ops[i-1]
			z.col.add(z.pairFinding("one-transaction", prev, o, fmt.Sprintf("%s and %s both claim the transaction %s on %s",
				z.describe(prev), z.describe(o), hexID(o.key.zxid), partition)))
			return
		}
		ok, next := z.model.Step(state, o.in, o.out)
		if !ok {
			before := "at the start of the history"
			if last != nil {
				before = "after " + z.describe(last)
			}
			f := z.pairFinding("model-order", last, o, fmt.Sprintf("in zxid order %s cannot have its result: %s the state of %s is %s",
				z.describe(o), before, partition, z.model.DescribeState(state)))
			z.col.add(f)
			return
		}
		state = next
		if o.key.rank == 0 {
			last = o
		}
	}
}

// checkRealTime finds, for each operation, the operation of largest position among those that
// returned before it was called; that one must sit before it. One sort by return time and a
// running maximum make it O(n log n).
func (z *zxidChecker) checkRealTime(ops []*zxidOp, partition string) {
	byReturn := slices.Clone(ops)
	slices.SortStableFunc(byReturn, func(a, b *zxidOp) int { return cmp.Compare(a.op.Return, b.op.Return) })
	maxBefore := make([]*zxidOp, len(byReturn))
	for i, o := range byReturn {
		maxBefore[i] = o
		if i > 0 && compareKeys(maxBefore[i-1].key, o.key) > 0 {
			maxBefore[i] = maxBefore[i-1]
		}
	}
	for _, o := range ops {
		n, _ := slices.BinarySearchFunc(byReturn, o.op.Call, func(e *zxidOp, call int64) int {
			if e.op.Return < call {
				return -1
			}
			return 1
		})
		if n == 0 {
			continue
		}
		earlier := maxBefore[n-1]
		c := compareKeys(earlier.key, o.key)
		if c < 0 || (c == 0 && o.key.rank == 1) {
			continue
		}
		z.col.add(z.pairFinding("real-time-order", earlier, o, fmt.Sprintf(
			"cycle on %s: %s returned at %s, before %s was called at %s (real time), yet its position %s is not before %s (zxid order)",
			partition, z.describe(earlier), timeString(clock.Time(earlier.op.Return)), z.describe(o), timeString(clock.Time(o.op.Call)),
			describeKey(earlier.key), describeKey(o.key))))
	}
}

// checkSessions checks that each session's replied operations, in the order it issued them, never
// go back in zxid order, and that its writes advance it.
func (z *zxidChecker) checkSessions(placed []zxidOp) {
	type session struct {
		client int
		id     int64
	}
	var replied []*zxidOp
	for i := range placed {
		if o := &placed[i]; o.in.source != nil && o.in.source.Outcome == OutcomeReplied && !o.out.resolved {
			replied = append(replied, o)
		}
	}
	slices.SortStableFunc(replied, func(a, b *zxidOp) int {
		if c := cmp.Compare(a.op.ClientId, b.op.ClientId); c != 0 {
			return c
		}
		if c := cmp.Compare(a.in.session, b.in.session); c != 0 {
			return c
		}
		return cmp.Compare(a.in.ref.Index, b.in.ref.Index)
	})
	for i := 1; i < len(replied); i++ {
		prev, o := replied[i-1], replied[i]
		if prev.op.ClientId != o.op.ClientId || prev.in.session != o.in.session || prev.in.ref == o.in.ref {
			continue
		}
		c := compareKeys(prev.key, o.key)
		if c < 0 || (c == 0 && o.key.rank == 1) {
			continue
		}
		z.col.add(z.pairFinding("session-order", prev, o, fmt.Sprintf("session %s issued %s before %s, yet its position %s is not before %s",
			hexID(o.in.session), z.describe(prev), z.describe(o), describeKey(prev.key), describeKey(o.key))))
	}
}

func (z *zxidChecker) notes() {
	b := z.b
	if b.hijacked > 0 {
		z.col.note("%d writes of sessions closed by force were answered with their killer's closeSession and were judged as writes of unknown outcome", b.hijacked)
	}
	if b.happened+b.didNotHappen > 0 {
		z.col.note("the committed log settled %d unknown-outcome writes: %d happened, %d did not",
			b.happened+b.didNotHappen, b.happened, b.didNotHappen)
	}
	if z.attributed > 0 {
		z.col.note("%d unknown-outcome writes without a recorded xid were found in the committed log among their session's transactions", z.attributed)
	}
	if z.unplaced > 0 {
		z.col.note("%d operations had no transaction the committed log could name and were taken as never applied", z.unplaced)
	}
	if z.unjudged > 0 {
		z.col.note("%d replies with a code the model does not judge (no effect) were left out of the order", z.unjudged)
	}
}

// describe names an operation with its position and times.
func (z *zxidChecker) describe(o *zxidOp) string {
	if o.in.source != nil && !o.out.resolved {
		return describeOperation(o.in.ref, o.in.source) + " at " + describeKey(o.key)
	}
	return describeModelOperation(o.in, o.out) + " at " + describeKey(o.key)
}

func describeKey(k zxidKey) string {
	if k.rank == 0 {
		return "zxid " + hexID(k.zxid)
	}
	return "the state of zxid " + hexID(k.zxid)
}

// pairFinding is a finding about two operations (first may be nil).
func (z *zxidChecker) pairFinding(rule string, first, second *zxidOp, message string) Finding {
	f := Finding{Rule: rule, Message: message}
	for _, o := range []*zxidOp{first, second} {
		if o == nil {
			continue
		}
		f.Ops = append(f.Ops, o.in.ref)
		f.Sessions = append(f.Sessions, o.in.session)
		f.Zxids = append(f.Zxids, o.key.zxid)
		f.Times = append(f.Times, clock.Time(o.op.Call), clock.Time(o.op.Return))
		if o.in.source != nil {
			f.Clients = append(f.Clients, o.in.ref.Client)
		}
	}
	return f
}
