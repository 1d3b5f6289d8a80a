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
//     finds it by session and xid; a write whose xid was never reported, because its client died
//     with it in flight, by its session's transactions no other operation claims), or nowhere if
//     the log shows it never happened;
//   - a read (only with IncludeReads) and a write that failed without a transaction of its own sit
//     just after the transaction at their reply zxid: they saw the state at that zxid;
//   - a session end sits at its closeSession transaction.
//
// Then, after a counting sort on the positions (linear time; each position is found in the log in
// constant time), it checks for each of porcupine's partitions (a znode for the register model,
// the whole prefix for the tree and queue models), in one scan each:
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
//
// WriteOrderModel, for the workloads no state model fits, keeps only what needs no state: every
// write acknowledged with its own transaction and that transaction's result, in real-time and
// session order.

// The names of the zxid-order checks, one per model.
const (
	CheckerZxidRegister = "zxid-order/register"
	CheckerZxidTree     = "zxid-order/tree"
	CheckerZxidQueue    = "zxid-order/queue"
	CheckerZxidWrites   = "zxid-order/writes"
)

func zxidCheckerName(m ModelKind) string {
	switch m {
	case RegisterModel:
		return CheckerZxidRegister
	case TreeModel:
		return CheckerZxidTree
	case QueueModel:
		return CheckerZxidQueue
	case WriteOrderModel:
		return CheckerZxidWrites
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
	return checkZxidOrderWith(h, opts, false)
}

// checkZxidOrderWith is checkZxidOrderModel; byPartition makes it replay the register model one
// partition after the other, as it once did, for the tests that compare the two replays.
func checkZxidOrderWith(h *History, opts LinearizabilityOptions, byPartition bool) (Result, error) {
	if err := opts.validate(); err != nil {
		return Result{}, err
	}
	opts.NoLogResolution = false
	b := newLinearizabilityBuilder(h, opts)
	if opts.Model == RegisterModel {
		b.partitions = map[string]int32{}
	}
	if err := b.collect(); err != nil {
		return Result{}, err
	}
	col := newCollector(zxidCheckerName(opts.Model))
	if len(b.entries) == 0 {
		res := col.result(0, "no operations under "+opts.Prefix)
		if res.Status == Pass {
			res.Status = Skipped
		}
		return res, nil
	}
	z := &zxidChecker{h: h, b: b, col: col, model: b.model(), replayByPartition: byPartition}
	for i := range h.Committed {
		zxid := h.Committed[i].Entry.Header.Zxid
		if i == 0 || zxid != h.Committed[i-1].Entry.Header.Zxid+1 {
			z.runs = append(z.runs, zxidRun{first: zxid, index: i})
		}
		z.runs[len(z.runs)-1].length++
	}
	partitions := z.collect()
	z.place()
	order := z.sortByPosition()
	z.checkWriteRealTime(order)
	z.checkSessions()
	z.checkPartitions(order, partitions)
	z.notes()
	return col.result(len(z.ops), fmt.Sprintf("%d operations under %s in %d partitions, checked in the order of their zxids",
		len(z.ops), opts.Prefix, partitions)), nil
}

// zxidKey is an operation's position: just after the transaction zxid, at it (rank 0, the
// transaction itself) or after it (rank 1, an operation that saw the state at zxid).
type zxidKey struct {
	zxid int64
	rank uint8
}

// zxidRun is a run of consecutive zxids in the committed log, starting at log index index.
type zxidRun struct {
	first         int64
	index, length int
}

// locate returns the number of committed transactions with a zxid up to zxid, and whether one has
// exactly that zxid (it is then the last of them).
func (z *zxidChecker) locate(zxid int64) (int, bool) {
	r, found := slices.BinarySearchFunc(z.runs, zxid, func(run zxidRun, v int64) int { return cmp.Compare(run.first, v) })
	if !found {
		if r == 0 {
			return 0, false
		}
		r--
	}
	run := &z.runs[r]
	if offset := zxid - run.first; offset < int64(run.length) {
		return run.index + int(offset) + 1, true
	}
	return run.index + run.length, false
}

// zxidOp is one operation with its partition and position: the checker orders the builder's
// entries in place (see the fields at the end of linearizabilityEntry) rather than copying a
// million of them into values of its own.
type zxidOp = linearizabilityEntry

// key returns the operation's position.
func (o *zxidOp) key() zxidKey { return zxidKey{zxid: o.zxid, rank: o.rank} }

type zxidChecker struct {
	h     *History
	b     *linearizabilityBuilder
	col   *collector
	model porcupine.Model
	ops   []zxidOp
	// runs holds the committed log's maximal runs of consecutive
	// zxids (an epoch's counter counts up without gaps), so that a zxid's place in the log is found
	// in constant time rather than by a binary search that misses the cache at every step.
	runs []zxidRun
	// Counts for the notes: unknown outcomes taken as never applied, operations whose result the
	// model does not judge and that therefore have no position, unknown outcomes found among their
	// session's transactions, and the log scans spent on misreported zxids.
	unplaced, unjudged, attributed, scans int
	// replayByPartition replays the register model partition by partition instead of in one pass
	// (see checkRegisterPartitions); only tests set it.
	replayByPartition bool
	// stepInput and stepOutput hold the model values of the operation replay is judging.
	stepInput  modelInput
	stepOutput modelOutput
}

// collect lays the builder's entries and session ends out as operations with their partitions (a
// znode for the register model, the prefix for the others, as porcupine partitions them), and
// returns the number of partitions. The builder numbered the register model's znodes as it
// collected (see linearizabilityBuilder.partitions), while each path was still in the cache.
func (z *zxidChecker) collect() int {
	b := z.b
	byPath := b.partitions
	partitions := 1
	if byPath != nil {
		partitions = len(byPath)
	}
	// The checker takes the entries over: they are its operations, and nothing else reads them.
	z.ops, b.entries = b.entries, nil
	for i := range b.closes {
		c := b.closes[i]
		paths := b.ephemeralPaths[b.session(&c)]
		if byPath == nil {
			if len(paths) > 0 {
				z.ops = append(z.ops, c)
			}
			continue
		}
		paths = slices.Clone(paths)
		slices.Sort(paths)
		for _, path := range slices.Compact(paths) {
			if p, ok := byPath[path]; ok {
				c.partition = p
				z.ops = append(z.ops, c)
			}
		}
	}
	return partitions
}

// judges reports whether the model judges the result code of a replied operation; a result it
// does not judge had no effect and showed nothing, so it needs no position.
func (z *zxidChecker) judges(o *zxidOp) bool {
	kind := o.op.Kind
	if kind == proto.OpCloseSession || isRead(kind) {
		return true
	}
	code := replyCode(o.op)
	switch z.b.opts.Model {
	case WriteOrderModel:
		return true
	case RegisterModel:
		return registerJudged(kind, code)
	case TreeModel:
		return treeJudged(kind, code)
	default:
		return queueJudged(kind, code)
	}
}

// place gives each operation its position, and reports replied writes whose zxid is not theirs.
func (z *zxidChecker) place() {
	var undecided []*zxidOp
	var writes []int32 // the replied writes the model judges, placed by placeWrites
	for i := range z.ops {
		o := &z.ops[i]
		switch {
		case o.result == resultUnknown:
			undecided = append(undecided, o)
			continue
		case o.op == nil || o.result == resultLog:
			// A session end or a write the log settled: its key is its transaction's zxid.
			if o.zxid <= 0 {
				z.unplaced++
				continue
			}
		case !z.judges(o):
			z.unjudged++
			continue
		case !isRead(o.op.Kind):
			writes = append(writes, int32(i))
			continue
		default:
			z.placeReply(o)
			continue
		}
		o.placed = true
	}
	z.placeWrites(writes)
	if len(undecided) > 0 {
		z.attribute(undecided)
	}
	for i := range z.ops {
		o := &z.ops[i]
		if !o.placed {
			continue
		}
		n, _ := z.locate(o.zxid)
		o.slot = int32(2*n + int(o.rank))
	}
}

// placeReply places a replied operation at the key replyKey gives it.
func (z *zxidChecker) placeReply(o *zxidOp) {
	key := z.replyKey(o)
	o.zxid, o.rank = key.zxid, key.rank
	if o.rank == 1 && z.b.opts.Model == WriteOrderModel {
		// A write refused without a transaction of its own (SESSIONMOVED, NOAUTH, ...): with no
		// state to judge it against, it has nothing to show.
		z.unjudged++
		return
	}
	o.placed = true
}

// placeWrites places the replied writes (indices into z.ops, in operation order). Nearly every
// one was answered with the zxid of its own transaction and the result that transaction records,
// and sits at that zxid; those are recognized first, in log order: the operations lie client by
// client, so that taking them in their own order sweeps the log's transactions once per client,
// missing the cache at every one, where log order reads them one after the other. The others
// (a misreported zxid, a reply that disagrees with its transaction, two writes claiming one
// transaction) are then placed by replyKey in operation order, as every write once was, so that
// their findings, and the log scans they spend, come in the same order.
func (z *zxidChecker) placeWrites(writes []int32) {
	const (
		unclaimed = -1
		contested = -2
	)
	claims := make([]int32, len(z.h.Committed)) // per transaction, the write claiming it
	for i := range claims {
		claims[i] = unclaimed
	}
	// A replied entry's zxid is its reply's (see linearizabilityBuilder.add): reading it there
	// spares a visit to the operation.
	for w, oi := range writes {
		if n, found := z.locate(z.ops[oi].zxid); found {
			if claims[n-1] == unclaimed {
				claims[n-1] = int32(w)
			} else {
				claims[n-1] = contested
			}
		}
	}
	own := make([]bool, len(writes)) // the writes at their own transactions, with its result
	for idx, w := range claims {
		if w < 0 {
			continue
		}
		o := &z.ops[writes[w]]
		if z.owns(o.op, idx) {
			out := z.b.output(o)
			own[w] = replyDisagrees(&out, outcomeOf(&z.h.Committed[idx].Entry)) == ""
		}
	}
	for w, oi := range writes {
		o := &z.ops[oi]
		if !own[w] {
			z.placeReply(o)
			continue
		}
		o.rank, o.placed = 0, true
	}
}

// attribute finds, for the unknown-outcome writes the resolver could not settle, their
// transactions in the committed log. Such a write has a session but no recorded xid (its client
// process died after sending it, before the library could report the xid it was written with).
// The log is complete, so a transaction of that session whose cxid no operation of the history
// claims can only be one of those writes; the client numbers requests in the order it issues them,
// so they are matched in order. A write left without a transaction did not happen.
func (z *zxidChecker) attribute(undecided []*zxidOp) {
	claimed := map[sessionXid]bool{}
	sessions := map[int64]bool{}
	for _, o := range undecided {
		if src := o.op; src != nil && src.Session != 0 {
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
	for _, o := range undecided {
		src := o.op
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
			o.result, o.txn = resultLog, int32(idx)
			o.zxid, o.rank, o.placed = txn.Entry.Header.Zxid, 0, true
			z.attributed++
			free[src.Session] = slices.Delete(txns, j, j+1)
			break
		}
	}
}

// maxZxidScans bounds the log scans spent looking for the transaction of a write answered with a
// zxid that is not its own: a broken server could misreport every reply.
const maxZxidScans = 32

// replyKey places a replied operation: a write at its own transaction, everything else just after
// the transaction at its reply zxid.
func (z *zxidChecker) replyKey(o *zxidOp) zxidKey {
	src := o.op
	after := zxidKey{zxid: src.Zxid, rank: 1}
	if isRead(src.Kind) {
		return after
	}
	out := z.b.output(o)
	n, found := z.locate(src.Zxid)
	if idx := n - 1; found && z.owns(src, idx) {
		if why := replyDisagrees(&out, outcomeOf(&z.h.Committed[idx].Entry)); why != "" {
			z.col.add(z.finding(o, "reply-transaction", fmt.Sprintf("%s, but its transaction %s records %s: the reply and the write's effect disagree",
				describeOperation(z.b.ref(o), src), hexID(src.Zxid), why), src.Zxid))
		}
		return zxidKey{zxid: src.Zxid}
	}
	if idx := z.findOwn(src); idx >= 0 {
		own := z.h.Committed[idx].Entry.Header.Zxid
		z.col.add(z.finding(o, "reply-zxid", fmt.Sprintf("%s was answered with zxid %s, but its transaction is %s: the server misreported the zxid",
			describeOperation(z.b.ref(o), src), hexID(src.Zxid), hexID(own)), src.Zxid, own))
		return zxidKey{zxid: own}
	}
	if out.err == proto.OK {
		z.col.add(z.finding(o, "reply-zxid", fmt.Sprintf("%s was acknowledged with zxid %s, but the committed log holds no transaction of it: the write was lost or its zxid is false",
			describeOperation(z.b.ref(o), src), hexID(src.Zxid)), src.Zxid))
	}
	return after
}

// findOwn scans the log for op's transaction by session and xid, or returns -1.
func (z *zxidChecker) findOwn(op *Operation) int {
	if op.Session == 0 || op.Xid == 0 || z.scans >= maxZxidScans {
		return -1
	}
	z.scans++
	for i := range z.h.Committed {
		if hdr := &z.h.Committed[i].Entry.Header; hdr.ClientID == op.Session && hdr.Cxid == op.Xid && txnFits(op, hdr.Type) {
			return i
		}
	}
	return -1
}

// sortByPosition returns the indices of the placed operations in position order, operations at
// one position (reads of one state) in call order, which respects real time among themselves. A
// counting sort on the slots makes it linear.
func (z *zxidChecker) sortByPosition() []int32 {
	maxSlot := int32(0)
	for i := range z.ops {
		if z.ops[i].placed {
			maxSlot = max(maxSlot, z.ops[i].slot)
		}
	}
	counts := make([]int32, maxSlot+2)
	for i := range z.ops {
		if z.ops[i].placed {
			counts[z.ops[i].slot+1]++
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	order := make([]int32, counts[len(counts)-1])
	for i := range z.ops {
		if o := &z.ops[i]; o.placed {
			order[counts[o.slot]] = int32(i)
			counts[o.slot]++
		}
	}
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && z.ops[order[end]].slot == z.ops[order[start]].slot {
			end++
		}
		if end-start > 1 {
			slices.SortStableFunc(order[start:end], func(a, b int32) int { return cmp.Compare(z.ops[a].call, z.ops[b].call) })
		}
		start = end
	}
	return order
}

// byPartition splits the position order into one order per partition, keeping position order.
func (z *zxidChecker) byPartition(order []int32, partitions int) [][]int32 {
	sizes := make([]int, partitions)
	for _, i := range order {
		sizes[z.ops[i].partition]++
	}
	out := make([][]int32, partitions)
	for p := range out {
		out[p] = make([]int32, 0, sizes[p])
	}
	for _, i := range order {
		p := z.ops[i].partition
		out[p] = append(out[p], i)
	}
	return out
}

// checkPartitions replays each partition in position order through the model and checks its
// real-time order.
func (z *zxidChecker) checkPartitions(order []int32, partitions int) {
	names := make([]string, partitions)
	for i := range z.ops {
		if o := &z.ops[i]; names[o.partition] == "" && o.op != nil {
			names[o.partition] = z.partitionName(o)
		}
	}
	switch {
	case z.b.opts.Model == WriteOrderModel:
		return // no state to replay; checkWriteRealTime judged the order
	case z.b.opts.Model == RegisterModel && !z.replayByPartition:
		z.checkRegisterPartitions(order, names)
		return
	}
	for p, ops := range z.byPartition(order, partitions) {
		z.replay(ops, names[p])
		z.checkRealTime(ops, names[p])
	}
}

// registerPartition is the state of one znode's replay in checkRegisterPartitions.
type registerPartition struct {
	state registerState
	// last is the last operation that sat at its own transaction, previous the operation before
	// in the partition's order, and latest the one called latest so far (see checkRealTime).
	last, previous, latest *zxidOp
	// stopped says the replay met its first violation: like replay, it judges nothing more.
	stopped bool
	// The findings, held back so that they reach the collector in the order replay and
	// checkRealTime, run partition after partition, give them: the replay's, then real time's.
	// At most maxViolationsPerResult are kept; a collector never keeps more, so the rest are
	// only counted.
	replayFinding   *Finding
	realTime        []Finding
	realTimeDropped int
}

// checkRegisterPartitions is replay and checkRealTime for every znode of the register model at
// once, in one pass over the position order with a state per znode. Replaying znode after znode
// visited the operations of each in position order, which in a history of many znodes jumps
// through memory at every step (the operations lie client by client); one pass in position order
// reads the clients' operations as a few interleaved streams. The findings are the same, in the
// same order.
func (z *zxidChecker) checkRegisterPartitions(order []int32, names []string) {
	parts := make([]registerPartition, len(names))
	for _, oi := range order {
		o := &z.ops[oi]
		p := &parts[o.partition]
		if !p.stopped {
			z.replayRegister(p, o, names[o.partition])
		}
		if latest := p.latest; latest != nil && o.ret < latest.call {
			if len(p.realTime) < maxViolationsPerResult {
				p.realTime = append(p.realTime, z.realTimeFinding(o, latest, names[o.partition]))
			} else {
				p.realTimeDropped++
			}
			continue
		}
		if p.latest == nil || o.call > p.latest.call {
			p.latest = o
		}
	}
	for i := range parts {
		p := &parts[i]
		if p.replayFinding != nil {
			z.col.add(*p.replayFinding)
		}
		for _, f := range p.realTime {
			z.col.add(f)
		}
		// A partition with dropped findings filled the collector with the ones it kept.
		z.col.dropped += p.realTimeDropped
	}
}

// replayRegister is one step of replay for the register model.
func (z *zxidChecker) replayRegister(p *registerPartition, o *zxidOp, partition string) {
	previous := p.previous
	p.previous = o
	if previous != nil && o.rank == 0 && previous.slot == o.slot {
		f := z.pairFinding("one-transaction", previous, o, fmt.Sprintf("%s and %s both claim the transaction %s on %s",
			z.describe(previous), z.describe(o), hexID(o.zxid), partition))
		p.replayFinding, p.stopped = &f, true
		return
	}
	in, out := z.b.registerInput(o), z.b.registerOutput(o)
	ok, next := registerJudge(p.state, &in, &out)
	if !ok {
		before := "at the start of the history"
		if p.last != nil {
			before = "after " + z.describe(p.last)
		}
		f := z.pairFinding("model-order", p.last, o, fmt.Sprintf("in zxid order %s cannot have its result: %s the state of %s is %s",
			z.describe(o), before, partition, z.model.DescribeState(p.state)))
		p.replayFinding, p.stopped = &f, true
		return
	}
	p.state = next
	if o.rank == 0 {
		p.last = o
	}
}

func (z *zxidChecker) partitionName(o *zxidOp) string {
	if z.b.opts.Model == RegisterModel {
		return o.op.Path
	}
	return z.b.opts.Prefix
}

// replay steps the model through one partition's operations in order and explains the first
// result the order cannot produce, with the operation that made the state it met.
func (z *zxidChecker) replay(ops []int32, partition string) {
	var register registerState // the register model's state, kept out of interfaces
	state := z.model.Init()
	var last *zxidOp // the last operation that sat at its own transaction
	for i, oi := range ops {
		o := &z.ops[oi]
		if i > 0 && o.rank == 0 && z.ops[ops[i-1]].slot == o.slot {
			prev := &z.ops[ops[i-1]]
			z.col.add(z.pairFinding("one-transaction", prev, o, fmt.Sprintf("%s and %s both claim the transaction %s on %s",
				z.describe(prev), z.describe(o), hexID(o.zxid), partition)))
			return
		}
		var ok bool
		// The models read their arguments and keep none of them, so one pair on the checker
		// serves every step, where values of the loop's own would be allocated for the interface.
		z.stepInput, z.stepOutput = z.b.input(o), z.b.output(o)
		in, out := &z.stepInput, &z.stepOutput
		if z.b.opts.Model == RegisterModel {
			var next registerState
			if ok, next = registerJudge(register, in, out); ok {
				register = next
			} else {
				state = register
			}
		} else {
			var next any
			if ok, next = z.model.Step(state, in, out); ok {
				state = next
			}
		}
		if !ok {
			before := "at the start of the history"
			if last != nil {
				before = "after " + z.describe(last)
			}
			z.col.add(z.pairFinding("model-order", last, o, fmt.Sprintf("in zxid order %s cannot have its result: %s the state of %s is %s",
				z.describe(o), before, partition, z.model.DescribeState(state))))
			return
		}
		if o.rank == 0 {
			last = o
		}
	}
}

// checkRealTime checks that no operation returned before an operation ahead of it in position
// order was called. Scanning in position order with the latest call seen so far makes it linear:
// an operation that returned before that call closes a cycle of real time and zxid order.
func (z *zxidChecker) checkRealTime(ops []int32, partition string) {
	var latest *zxidOp
	for _, oi := range ops {
		o := &z.ops[oi]
		if latest != nil && o.ret < latest.call {
			if z.col.full() {
				z.col.dropped++
			} else {
				z.col.add(z.realTimeFinding(o, latest, partition))
			}
			continue
		}
		if latest == nil || o.call > latest.call {
			latest = o
		}
	}
}

// realTimeFinding explains that o returned before latest, which sits before it, was called.
func (z *zxidChecker) realTimeFinding(o, latest *zxidOp, partition string) Finding {
	return z.pairFinding("real-time-order", o, latest, fmt.Sprintf(
		"cycle on %s: %s returned at %s, before %s was called at %s (real time), yet its position %s is after %s (zxid order)",
		partition, z.describe(o), timeString(clock.Time(o.ret)), z.describe(latest), timeString(clock.Time(latest.call)),
		describeKey(o.key()), describeKey(latest.key())))
}

// checkWriteRealTime applies the same scan to the replied writes of every partition together:
// writes are committed in real-time order across znodes too (porcupine's result checks it with
// the reply zxids, as rule zxid-real-time-order).
func (z *zxidChecker) checkWriteRealTime(order []int32) {
	var latest *zxidOp
	for _, oi := range order {
		o := &z.ops[oi]
		if o.op == nil || o.result == resultLog || o.rank != 0 || !o.op.Kind.IsWrite() || o.op.Kind == proto.OpCloseSession {
			continue
		}
		if latest != nil && o.ret < latest.call {
			if z.col.full() {
				z.col.dropped++
				continue
			}
			z.col.add(z.pairFinding("zxid-real-time-order", o, latest, fmt.Sprintf(
				"%s returned at %s, before %s was called at %s, yet its zxid %s is above %s: writes are not committed in real-time order",
				z.describe(o), timeString(clock.Time(o.ret)), z.describe(latest), timeString(clock.Time(latest.call)),
				hexID(o.zxid), hexID(latest.zxid))))
			continue
		}
		if latest == nil || o.call > latest.call {
			latest = o
		}
	}
}

// checkSessions checks that each session's replied operations, in the order it issued them, never
// go back in position order, and that its writes advance it. The operations are laid out client
// by client in issue order.
func (z *zxidChecker) checkSessions() {
	var prev *zxidOp
	for i := range z.ops {
		o := &z.ops[i]
		if !o.placed || o.op == nil || o.result == resultLog || o.op.Outcome != OutcomeReplied {
			continue
		}
		// One client and index are one operation (a client close stands in several partitions).
		backwards := prev != nil && prev.client == o.client && prev.op.Session == o.op.Session && prev.index != o.index &&
			(prev.slot > o.slot || (prev.slot == o.slot && o.rank == 0))
		switch {
		case backwards && z.col.full():
			z.col.dropped++
		case backwards:
			z.col.add(z.pairFinding("session-order", prev, o, fmt.Sprintf("session %s issued %s before %s, yet its position %s is not before %s",
				hexID(o.op.Session), z.describe(prev), z.describe(o), describeKey(prev.key()), describeKey(o.key()))))
		}
		prev = o
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

// owns reports whether the committed transaction at idx is the one op's request produced.
func (z *zxidChecker) owns(op *Operation, idx int) bool {
	hdr := &z.h.Committed[idx].Entry.Header
	return hdr.ClientID == op.Session && (op.Xid == 0 || hdr.Cxid == op.Xid) && txnFits(op, hdr.Type)
}

func (z *zxidChecker) finding(o *zxidOp, rule, message string, zxids ...int64) Finding {
	ref := z.b.ref(o)
	f := Finding{Rule: rule, Message: message, Ops: []OpRef{ref}, Sessions: []int64{z.b.session(o)}, Zxids: zxids}
	if o.op != nil {
		f.Clients = []string{ref.Client}
		f.Times = []clock.Time{o.op.Call, o.op.Return}
	}
	return f
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

// describe names an operation with its position and times.
func (z *zxidChecker) describe(o *zxidOp) string {
	if o.op != nil && o.result != resultLog {
		return describeOperation(z.b.ref(o), o.op) + " at " + describeKey(o.key())
	}
	in, out := z.b.input(o), z.b.output(o)
	return describeModelOperation(&in, &out) + " at " + describeKey(o.key())
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
		ref := z.b.ref(o)
		f.Ops = append(f.Ops, ref)
		f.Sessions = append(f.Sessions, z.b.session(o))
		f.Zxids = append(f.Zxids, o.zxid)
		f.Times = append(f.Times, clock.Time(o.call), clock.Time(o.ret))
		if o.op != nil {
			f.Clients = append(f.Clients, ref.Client)
		}
	}
	return f
}
