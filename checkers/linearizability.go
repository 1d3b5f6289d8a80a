package checkers

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// DefaultTimeLimit bounds porcupine's search when the options give no limit. Past it the verdict
// is Unknown, never a pass.
const DefaultTimeLimit = 10 * time.Second

// LinearizabilityOptions configure one linearizability check.
type LinearizabilityOptions struct {
	Model ModelKind
	// Prefix is the namespace the workload owns: the register and tree models judge the znodes
	// strictly under it, the queue model the children of the queue node Prefix. "/" means the
	// whole tree except /zookeeper.
	Prefix string
	// IncludeReads also judges getData, exists and getChildren replies as linearizable. ZooKeeper
	// does not promise this (reads are served from a possibly stale server); it is opt-in, for
	// workloads that read only through the leader or in tests.
	IncludeReads bool
	// QueueAnyOrder lets a queue consumer delete any item, not only the head.
	QueueAnyOrder bool
	// TimeLimit bounds the search; 0 means DefaultTimeLimit.
	TimeLimit time.Duration
	// NoLogResolution leaves unknown outcomes to porcupine alone instead of settling them from the
	// committed log first.
	NoLogResolution bool
	// Visualization, if set, receives porcupine's self-contained HTML visualization of the history
	// and of the linearizations found. Run draws it with porcupine whichever checker decides.
	Visualization io.Writer
	// Annotations are drawn in the visualization beside the clients' operations: the run's faults
	// and leader changes, so that a reader sees what the cluster went through while the clients
	// waited. They change no verdict.
	Annotations []Annotation
}

// Annotation is one labelled span of virtual time in a visualization (Start == End for an
// instant), on a lane of its own named by Tag ("faults", "leaders").
type Annotation struct {
	Tag         string
	Start, End  clock.Time
	Description string
	Details     string
	Color       string // a CSS background colour, or "" for porcupine's default
}

func (o LinearizabilityOptions) validate() error {
	switch o.Model {
	case RegisterModel, TreeModel, QueueModel, WriteOrderModel:
	default:
		return fmt.Errorf("checkers: linearizability model %d does not exist", o.Model)
	}
	if err := proto.ValidatePath(o.Prefix); err != nil {
		return fmt.Errorf("checkers: linearizability prefix %q: %w", o.Prefix, err)
	}
	if o.Model == QueueModel && o.Prefix == "/" {
		return fmt.Errorf("checkers: the queue model needs a queue node, not the root")
	}
	if o.TimeLimit < 0 {
		return fmt.Errorf("checkers: negative time limit %v", o.TimeLimit)
	}
	return nil
}

// CheckLinearizability checks with porcupine that the writes (and, on request, the reads) under
// opts.Prefix are linearizable in the chosen model. Unknown-outcome operations may or may not have
// taken effect: first the committed log settles what it can (see resolver), then porcupine treats
// the rest as returning at the end of time, so that it may place them anywhere after their call or
// nowhere. A write whose reply arrived before another write was called must also have the smaller
// zxid. The verdict is Unknown if the search runs out of time.
func CheckLinearizability(h *History, opts LinearizabilityOptions) (Result, error) {
	if err := Validate(h); err != nil {
		return Result{}, err
	}
	return checkLinearizability(h, opts)
}

func checkLinearizability(h *History, opts LinearizabilityOptions) (Result, error) {
	if err := opts.validate(); err != nil {
		return Result{}, err
	}
	if opts.Model == WriteOrderModel {
		return Result{Checker: opts.Model.checkerName(), Status: Skipped,
			Summary: "porcupine needs a state model; the write order is for the zxid-order checker"}, nil
	}
	b := newLinearizabilityBuilder(h, opts)
	if err := b.collect(); err != nil {
		return Result{}, err
	}
	col := newCollector(opts.Model.checkerName())
	b.checkZxidOrder(col)
	b.addNotes(col)
	if len(b.entries) == 0 {
		res := col.result(0, "no operations under "+opts.Prefix)
		if res.Status == Pass {
			res.Status = Skipped
		}
		return res, nil
	}
	model := b.model()
	history, partitions := b.porcupineHistory()
	limit := opts.TimeLimit
	if limit == 0 {
		limit = DefaultTimeLimit
	}
	var outcome porcupine.CheckResult
	var info porcupine.LinearizationInfo
	if opts.Visualization != nil {
		outcome, info = porcupine.CheckOperationsVerbose(model, history, limit)
	} else {
		outcome = porcupine.CheckOperationsTimeout(model, history, limit)
	}
	res := b.verdict(col, model, history, partitions, outcome, info, limit)
	if opts.Visualization != nil {
		var annotations []porcupine.Annotation
		for _, a := range opts.Annotations {
			annotations = append(annotations, porcupine.Annotation{Tag: a.Tag, Start: int64(a.Start), End: int64(a.End),
				Description: a.Description, Details: a.Details, BackgroundColor: a.Color})
		}
		info.AddAnnotations(annotations)
		if err := porcupine.Visualize(model, info, opts.Visualization); err != nil {
			return res, fmt.Errorf("checkers: writing the porcupine visualization: %w", err)
		}
	}
	return res, nil
}

// linearizabilityEntry is one operation as porcupine will see it. Its model values are made when
// they are needed (see linearizabilityBuilder.input and output), from the operation, the builder's
// data text and the committed log, rather than held: a million-operation history would otherwise
// hold 230 MB of them, allocated, cleared and marked by the collector at every check.
type linearizabilityEntry struct {
	op        *Operation // nil for a session end recorded by the runner or taken from the log
	call, ret int64
	// text is where op.Data starts in the builder's data text; op.ResultData follows it. For a
	// session end (op is nil) it is the index of its model input in the builder's ends.
	text int
	// zxid is the zxid of the operation's committed transaction (the reply header's for a replied
	// operation, the log's for one the log settled or a session end), or 0 where none is known.
	// Porcupine ignores it; the zxid-order checker orders the history by it.
	zxid int64
	// client is the index of op's client (len(h.Clients) for a session end), index op's index
	// among the client's operations.
	client, index int32
	// txn is the index of the operation's committed transaction when result says its result
	// comes from the committed log.
	txn    int32
	result entryResult
	// The zxid-order checker's fields: it orders the entries in place (see zxidOp). partition
	// is the index of the entry's znode for the register model (0 for the others); rank, with
	// zxid, is its position (a zxidKey); slot is that position as an integer for the counting
	// sort (2 * the number of committed transactions up to zxid, plus rank: below 2^24 with
	// MaxCommitted); placed says it has a position. (The small fields come last, so that an
	// entry takes 64 bytes, one cache line: the zxid-order checker visits a million of them in
	// zxid order, which jumps from client to client.)
	rank      uint8
	placed    bool
	partition int32
	slot      int32
}

// entryResult says where an entry's result comes from.
type entryResult uint8

const (
	resultReply   entryResult = iota // the operation's reply
	resultLog                        // the committed transaction at txn: an unknown outcome the log settled
	resultUnknown                    // nowhere: an unknown outcome the log could not settle
	resultEnd                        // a session end, which always succeeds
)

// session is the session that issued the entry's operation, or that a session end closes.
func (b *linearizabilityBuilder) session(e *linearizabilityEntry) int64 {
	if e.op == nil {
		return b.ends[e.text].session
	}
	return e.op.Session
}

// ref names the entry's operation.
func (b *linearizabilityBuilder) ref(e *linearizabilityEntry) OpRef {
	if e.op == nil {
		return b.ends[e.text].ref
	}
	return OpRef{Client: b.h.Clients[e.client].Name, Index: int(e.index)}
}

// input is the model's view of an entry's call.
func (b *linearizabilityBuilder) input(e *linearizabilityEntry) modelInput {
	op := e.op
	if op == nil {
		return b.ends[e.text]
	}
	return modelInput{
		ref: b.ref(e), kind: op.Kind, path: op.Path, data: b.text[e.text : e.text+len(op.Data)], version: op.Version,
		mode: op.Mode, session: op.Session, multi: op.Multi, source: op,
	}
}

// output is the model's view of an entry's result.
func (b *linearizabilityBuilder) output(e *linearizabilityEntry) modelOutput {
	switch e.result {
	case resultReply:
		start := e.text + len(e.op.Data)
		return replyOutputWith(e.op, b.text[start:start+len(e.op.ResultData)])
	case resultLog:
		o := outcomeOf(&b.h.Committed[e.txn].Entry)
		return modelOutput{err: o.err, path: o.path, version: o.version, subs: o.subs, resolved: true}
	case resultUnknown:
		return modelOutput{unknown: true, version: -1}
	default:
		return modelOutput{err: proto.OK, version: -1}
	}
}

// registerInput is input with only the fields the register model reads (registerJudge), for
// the zxid-order checker's replay, which judges a million of them.
func (b *linearizabilityBuilder) registerInput(e *linearizabilityEntry) modelInput {
	op := e.op
	if op == nil {
		return b.ends[e.text]
	}
	return modelInput{kind: op.Kind, data: b.text[e.text : e.text+len(op.Data)], version: op.Version, mode: op.Mode, session: op.Session}
}

// registerOutput is output with only the fields the register model reads, as registerInput.
func (b *linearizabilityBuilder) registerOutput(e *linearizabilityEntry) modelOutput {
	if e.result != resultReply {
		return b.output(e)
	}
	op := e.op
	start := e.text + len(op.Data)
	out := modelOutput{err: replyCode(op), version: -1, data: b.text[start : start+len(op.ResultData)]}
	if op.Stat != nil {
		out.version = op.Stat.Version
	}
	return out
}

type linearizabilityBuilder struct {
	h        *History
	opts     LinearizabilityOptions
	scope    scoper
	resolver *resolver
	horizon  int64
	entries  []linearizabilityEntry
	closes   []linearizabilityEntry
	// ends holds the model inputs of the session ends among closes (see linearizabilityEntry.text).
	ends []modelInput
	// ephemeralPaths lists, per session, the in-scope paths on which it may have created an
	// ephemeral node: the partitions its end must reach.
	ephemeralPaths map[int64][]string
	killers        killerCloses
	// partitions, when not nil, numbers the paths of the entries in the order they first appear
	// and gives each entry its path's number (the register model's partitions, for the zxid-order
	// checker).
	partitions map[string]int32
	// text holds the data and result data of every operation, in order (see collect).
	text string
	// Counts for the notes: unknown outcomes settled by the log, and left to porcupine; session
	// ends the log shows without a time to place them at; writes answered by a killer.
	happened, didNotHappen, undecided, untimedEnds, hijacked int
}

func newLinearizabilityBuilder(h *History, opts LinearizabilityOptions) *linearizabilityBuilder {
	b := &linearizabilityBuilder{
		h: h, opts: opts, scope: scoper{opts: opts}, horizon: int64(h.End) + 1,
		ephemeralPaths: map[int64][]string{}, killers: newKillerCloses(h),
	}
	if !opts.NoLogResolution {
		b.resolver = newResolver(h, b.killers)
	}
	return b
}

// collect turns the in-scope operations, and the ends of the sessions that matter, into entries.
func (b *linearizabilityBuilder) collect() error {
	ended := map[int64]bool{}
	for i := range b.h.Sessions {
		if b.h.Sessions[i].End != nil {
			ended[b.h.Sessions[i].Session] = true
		}
	}
	total, textSize := 0, 0
	for ci := range b.h.Clients {
		ops := b.h.Clients[ci].Ops
		total += len(ops)
		for oi := range ops {
			textSize += len(ops[oi].Data) + len(ops[oi].ResultData)
		}
	}
	b.entries = make([]linearizabilityEntry, 0, total)
	// The data and result data of every operation, in order, as one string: the models compare
	// data as strings, and slicing one string costs no allocation where converting each
	// operation's bytes cost one or two. It is written in this loop, which reads each operation
	// anyway, rather than in passes of its own.
	// Sized up front: growing it by doubling copied the text about twice over and left the
	// collector the discarded halves.
	var text strings.Builder
	text.Grow(textSize)
	for ci := range b.h.Clients {
		c := &b.h.Clients[ci]
		for oi := range c.Ops {
			op := &c.Ops[oi]
			offset := text.Len()
			text.Write(op.Data)
			text.Write(op.ResultData)
			in, err := b.scope.inScope(OpRef{Client: c.Name, Index: oi}, op)
			if err != nil {
				return err
			}
			if !in || (op.Kind == proto.OpCloseSession && ended[op.Session]) {
				continue
			}
			b.add(linearizabilityEntry{op: op, client: int32(ci), index: int32(oi), text: offset, call: int64(op.Call)})
		}
	}
	b.text = text.String()
	b.collectSessionEnds()
	return nil
}

// add records one in-scope operation, given as an entry with its operation and where it lies,
// settling its outcome if it is unknown.
func (b *linearizabilityBuilder) add(entry linearizabilityEntry) {
	op := entry.op
	if op.Outcome == OutcomeNotApplied {
		return
	}
	// A write answered with a killer's closeSession (see killerCloses) had no reply of its own:
	// its fate is for the log to settle, as after an expiry.
	hijacked := b.killers.answered(op)
	switch {
	case op.Outcome == OutcomeReplied && !hijacked:
		entry.result, entry.ret, entry.zxid = resultReply, int64(op.Return), op.Zxid
	default:
		if isRead(op.Kind) {
			return // a read without a reply changed nothing and showed nothing
		}
		if hijacked {
			b.hijacked++
		}
		result, txn, ret, zxid, keep := b.settle(op)
		if !keep {
			return
		}
		entry.result, entry.txn, entry.ret, entry.zxid = result, txn, ret, zxid
	}
	for _, path := range createsEphemeral(op) {
		b.ephemeralPaths[op.Session] = append(b.ephemeralPaths[op.Session], path)
	}
	if op.Kind == proto.OpCloseSession {
		b.closes = append(b.closes, entry)
		return
	}
	if b.partitions != nil {
		p, ok := b.partitions[op.Path]
		if !ok {
			p = int32(len(b.partitions))
			b.partitions[op.Path] = p
		}
		entry.partition = p
	}
	b.entries = append(b.entries, entry)
}

// replyOutput is the model's view of a reply.
func replyOutput(op *Operation) modelOutput { return replyOutputWith(op, string(op.ResultData)) }

// replyOutputWith is replyOutput with op.ResultData given as a string.
func replyOutputWith(op *Operation, resultData string) modelOutput {
	out := modelOutput{
		err: replyCode(op), path: op.CreatedPath, version: -1, data: resultData,
		children: op.Children, subs: op.MultiResults,
	}
	if op.Stat != nil {
		out.version = op.Stat.Version
	}
	return out
}

// replyCode is the result code of a reply as the models see it.
func replyCode(op *Operation) proto.Code {
	if op.Kind == proto.OpMulti && op.Err == proto.OK {
		// The reply header of a failed multi says OK; the client raises the first failing result.
		for _, r := range op.MultiResults {
			if r.Err != proto.OK {
				return r.Err
			}
		}
	}
	return op.Err
}

// settle decides what is known of an indeterminate write: from the committed log if it can (its
// transaction is then at txn), otherwise nothing (porcupine's nondeterministic handling). keep is
// false for a write the log shows never happened; zxid is the zxid of its transaction when the log
// has it.
func (b *linearizabilityBuilder) settle(op *Operation) (result entryResult, txn int32, ret, zxid int64, keep bool) {
	if b.resolver != nil {
		switch v, idx := b.resolver.resolve(op); v {
		case happened:
			b.happened++
			committed := &b.h.Committed[idx]
			ret := b.horizon
			if committed.Time > 0 && committed.Time >= op.Call {
				ret = int64(committed.Time)
			}
			return resultLog, int32(idx), ret, committed.Entry.Header.Zxid, true
		case didNotHappen:
			b.didNotHappen++
			return 0, 0, 0, 0, false
		}
	}
	b.undecided++
	return resultUnknown, 0, b.horizon, 0, true
}

// collectSessionEnds adds the session ends the runner recorded, as instantaneous operations at
// the commit of the closeSession, for the sessions that may own ephemerals in scope. A session
// whose closeSession is in the committed log without a fact or a client close operation is taken
// from the log, at its commit time.
func (b *linearizabilityBuilder) collectSessionEnds() {
	recorded := map[int64]bool{}
	for i := range b.h.Sessions {
		s := &b.h.Sessions[i]
		if s.End == nil {
			continue
		}
		recorded[s.Session] = true
		b.addSessionEnd(s.Session, s.End.Time, s.End.Zxid, OpRef{Client: "runner", Index: i})
	}
	for _, c := range b.closes {
		recorded[b.session(&c)] = true
	}
	for i := range b.h.Committed {
		hdr := &b.h.Committed[i].Entry.Header
		if hdr.Type != proto.OpCloseSession || recorded[hdr.ClientID] || len(b.ephemeralPaths[hdr.ClientID]) == 0 {
			continue
		}
		recorded[hdr.ClientID] = true
		if b.h.Committed[i].Time <= 0 {
			b.untimedEnds++
			continue
		}
		b.addSessionEnd(hdr.ClientID, b.h.Committed[i].Time, hdr.Zxid, OpRef{Client: "log", Index: i})
	}
}

func (b *linearizabilityBuilder) addSessionEnd(session int64, at clock.Time, zxid int64, ref OpRef) {
	if len(b.ephemeralPaths[session]) == 0 {
		return
	}
	b.ends = append(b.ends, modelInput{ref: ref, kind: proto.OpCloseSession, session: session})
	b.closes = append(b.closes, linearizabilityEntry{
		text: len(b.ends) - 1, result: resultEnd,
		call: int64(at), ret: int64(at), client: int32(len(b.h.Clients)), zxid: zxid,
	})
}

func (b *linearizabilityBuilder) addNotes(col *collector) {
	if b.hijacked > 0 {
		col.note("%d writes of sessions closed by force were answered with their killer's closeSession and were judged as writes of unknown outcome", b.hijacked)
	}
	if b.happened+b.didNotHappen > 0 {
		col.note("the committed log settled %d unknown-outcome writes: %d happened, %d did not",
			b.happened+b.didNotHappen, b.happened, b.didNotHappen)
	}
	if b.untimedEnds > 0 {
		col.note("%d sessions that owned ephemerals in scope were closed in the committed log without a recorded commit time, so their ephemerals never vanish in the model",
			b.untimedEnds)
	}
	if b.undecided > 0 {
		col.note("%d unknown-outcome writes were left to porcupine: each may take effect once, anywhere after its call, or never",
			b.undecided)
	}
}

// model returns the porcupine model for the chosen kind.
func (b *linearizabilityBuilder) model() porcupine.Model {
	m := porcupine.Model{DescribeOperation: describeModelOperation}
	switch b.opts.Model {
	case RegisterModel:
		m.Init = func() any { return registerState{} }
		m.Step, m.Hash, m.DescribeState = registerModelStep, hashRegisterState, describeRegisterState
	case TreeModel:
		prefix := b.opts.Prefix
		m.Init = func() any { return newTreeState(prefix) }
		m.Step, m.Equal, m.Hash, m.DescribeState = treeModelStep, treeEqual, hashTreeState, describeTreeState
	default:
		m.Init = func() any { return queueState{} }
		m.Step = queueModelStep(!b.opts.QueueAnyOrder)
		m.Equal, m.Hash, m.DescribeState = queueEqual, hashQueueState, describeQueueState
	}
	m.Partition = func(history []porcupine.Operation) [][]porcupine.Operation {
		var out [][]porcupine.Operation
		for _, op := range history {
			p := op.Input.(*modelInput).partition
			for len(out) <= p {
				out = append(out, nil)
			}
			out[p] = append(out[p], op)
		}
		return out
	}
	return m
}

// porcupineHistory lays the entries out for porcupine, with their partition (the path for the
// register model, one for the others), and returns the partition names in order.
func (b *linearizabilityBuilder) porcupineHistory() ([]porcupine.Operation, []string) {
	keyOf := func(e *linearizabilityEntry) string {
		if b.opts.Model == RegisterModel {
			return e.op.Path
		}
		return b.opts.Prefix
	}
	var keys []string
	for i := range b.entries {
		keys = append(keys, keyOf(&b.entries[i]))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	index := func(key string) int {
		i, found := slices.BinarySearch(keys, key)
		if !found {
			return -1
		}
		return i
	}
	var history []porcupine.Operation
	emit := func(e *linearizabilityEntry, partition int) {
		in, out := b.input(e), b.output(e)
		in.partition, in.zxid = partition, e.zxid
		history = append(history, porcupine.Operation{
			ClientId: int(e.client), Input: &in, Call: e.call, Output: &out, Return: e.ret, Metadata: in.ref.String(),
		})
	}
	for i := range b.entries {
		emit(&b.entries[i], index(keyOf(&b.entries[i])))
	}
	for i := range b.closes {
		c := &b.closes[i]
		for _, p := range b.closePartitions(b.session(c), keys, index) {
			emit(c, p)
		}
	}
	return history, keys
}

// closePartitions returns the partitions a session's end must reach: every partition for the
// single-partition models, and the paths it may own for the register model.
func (b *linearizabilityBuilder) closePartitions(session int64, keys []string, index func(string) int) []int {
	if b.opts.Model != RegisterModel {
		if len(b.ephemeralPaths[session]) == 0 {
			return nil
		}
		return []int{0}
	}
	paths := slices.Clone(b.ephemeralPaths[session])
	slices.Sort(paths)
	var out []int
	for _, p := range slices.Compact(paths) {
		if i := index(p); i >= 0 {
			out = append(out, i)
		}
	}
	return out
}

// checkZxidOrder checks the real-time order of write zxids: a write whose reply arrived before
// another write was called was committed first, so its zxid is smaller. It sorts the replied
// writes by return time and compares each write's zxid with the largest zxid returned before its
// call.
func (b *linearizabilityBuilder) checkZxidOrder(col *collector) {
	var writes []*linearizabilityEntry
	for i := range b.entries {
		e := &b.entries[i]
		if e.op != nil && e.op.Outcome == OutcomeReplied && e.op.Kind.IsWrite() && e.op.Zxid > 0 {
			writes = append(writes, e)
		}
	}
	byReturn := slices.Clone(writes)
	slices.SortStableFunc(byReturn, func(x, y *linearizabilityEntry) int { return compareInt64(x.ret, y.ret) })
	maxBefore := make([]*linearizabilityEntry, len(byReturn)) // the largest zxid among byReturn[:i+1]
	for i, e := range byReturn {
		maxBefore[i] = e
		if i > 0 && maxBefore[i-1].op.Zxid > e.op.Zxid {
			maxBefore[i] = maxBefore[i-1]
		}
	}
	for _, w := range writes {
		n, _ := slices.BinarySearchFunc(byReturn, w.call, func(e *linearizabilityEntry, call int64) int {
			if e.ret < call {
				return -1
			}
			return 1
		})
		if n == 0 || maxBefore[n-1].op.Zxid < w.op.Zxid {
			continue
		}
		earlier := maxBefore[n-1]
		earlierRef, wRef := b.ref(earlier), b.ref(w)
		col.add(Finding{
			Rule: "zxid-real-time-order",
			Message: fmt.Sprintf("%s returned at %s, before %s was called at %s, yet its zxid %s is not below %s: writes are not committed in real-time order",
				describeOperation(earlierRef, earlier.op), timeString(clock.Time(earlier.ret)),
				describeOperation(wRef, w.op), timeString(clock.Time(w.call)), hexID(earlier.op.Zxid), hexID(w.op.Zxid)),
			Clients:  []string{earlierRef.Client, wRef.Client},
			Sessions: []int64{earlier.op.Session, w.op.Session},
			Ops:      []OpRef{earlierRef, wRef},
			Zxids:    []int64{earlier.op.Zxid, w.op.Zxid},
			Times:    []clock.Time{clock.Time(earlier.ret), clock.Time(w.call)},
		})
	}
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
