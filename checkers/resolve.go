package checkers

import (
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The resolver settles unknown outcomes from the committed log, as etcd's robustness tests do: a
// write whose transaction is in the log happened, with the outcome the transaction records; a
// write that is missing from a complete log did not. It finds a write's transaction by the
// request's (session, xid), which the leader copies into the TxnHeader (ClientID, Cxid).
//
// It refuses to decide when it cannot be sure: an operation without a session or xid, a (session,
// xid) pair that two operations or two transactions share (a client that resumed a session with a
// new handle restarts its xids), or a transaction whose type does not fit the operation.

type sessionXid struct {
	session int64
	xid     int32
}

// resolver indexes the committed log and the history's operations by (session, xid). A session
// numbers its requests 1, 2, 3, ..., so the keys it needs are kept per session in slices indexed
// by xid rather than in one map over all keys: a million-operation history asks the index once per
// operation and once per committed transaction, and a map of 16-byte keys made that a tenth of the
// zxid-order checker's time.
type resolver struct {
	log      []CommittedTxn
	sessions map[int64]*sessionKeys
	// last is the session looked up last, and lastSession its id.
	last        *sessionKeys
	lastSession int64
}

// sessionKeys holds one session's wanted keys: the xids of its writes without a reply of their
// own, from base on. ops[i] counts the operations with xid base+i (-1 when that xid is not
// wanted); txn[i] is the index of the committed transaction with that key, -1 when two share it,
// or noTxn. A session whose wanted xids spread too far for a slice (more than sparseGap beyond
// their count) maps them to their slots instead.
type sessionKeys struct {
	base  int32
	ops   []int32
	txn   []int
	slots map[int32]int32 // for a sparse session, xid -> slot; nil for a dense one
	// filter, for a sparse session, has bit i set when xid base+i is wanted. Most xids a sparse
	// session is asked about are not wanted (one write in ten or fewer goes without a reply), and
	// the bit answers them at the cost of a map lookup's fraction. Nil when the wanted xids spread
	// too far for it (see newResolver); every xid then goes to the map.
	filter []uint64
}

const (
	noTxn     = -2
	sparseGap = 1 << 12
)

// slot returns the slot of xid, or -1 when the session does not want it.
func (k *sessionKeys) slot(xid int32) int {
	if k.slots != nil {
		if k.filter != nil {
			bit := uint64(int64(xid) - int64(k.base))
			if bit >= uint64(len(k.filter))*64 || k.filter[bit/64]&(1<<(bit%64)) == 0 {
				return -1
			}
		}
		if i, ok := k.slots[xid]; ok {
			return int(i)
		}
		return -1
	}
	i := int64(xid) - int64(k.base)
	if i < 0 || i >= int64(len(k.ops)) || k.ops[i] < 0 {
		return -1
	}
	return int(i)
}

// keys returns the wanted keys of a session, or nil.
func (r *resolver) keys(session int64) *sessionKeys {
	if r.last != nil && r.lastSession == session {
		return r.last
	}
	k := r.sessions[session]
	if k != nil {
		r.last, r.lastSession = k, session
	}
	return k
}

func newResolver(h *History, killers killerCloses) *resolver {
	r := &resolver{log: h.Committed, sessions: map[int64]*sessionKeys{}}
	// Only the writes without a reply of their own are ever resolved: index their keys alone, so
	// that a large history with few of them costs one scan of the log and of the operations.
	type bounds struct{ low, high, count int32 }
	wanted := map[int64]*bounds{}
	var order []int64           // the sessions in the order first seen, for a deterministic layout
	var unanswered []sessionXid // the wanted keys
	for ci := range h.Clients {
		for oi := range h.Clients[ci].Ops {
			op := &h.Clients[ci].Ops[oi]
			if op.Session == 0 || op.Xid == 0 || !op.Kind.IsWrite() || !(op.Outcome.Indeterminate() || killers.answered(op)) {
				continue
			}
			unanswered = append(unanswered, sessionXid{op.Session, op.Xid})
			b := wanted[op.Session]
			if b == nil {
				b = &bounds{low: op.Xid, high: op.Xid}
				wanted[op.Session] = b
				order = append(order, op.Session)
			}
			b.low, b.high, b.count = min(b.low, op.Xid), max(b.high, op.Xid), b.count+1
		}
	}
	if len(order) == 0 {
		return r
	}
	for _, session := range order {
		b := wanted[session]
		k := &sessionKeys{base: b.low}
		size := int64(b.high) - int64(b.low) + 1
		if size > int64(b.count)+sparseGap {
			k.slots = map[int32]int32{}
			if size <= 64*(int64(b.count)+sparseGap) {
				// At most 8 bytes of filter per wanted xid (and sparseGap's worth).
				k.filter = make([]uint64, (size+63)/64)
			}
			size = 0
		}
		k.ops, k.txn = make([]int32, size), make([]int, size)
		for i := range k.ops {
			k.ops[i], k.txn[i] = -1, noTxn
		}
		r.sessions[session] = k
	}
	// Mark the wanted xids: no operation counted yet.
	for _, key := range unanswered {
		k := r.keys(key.session)
		if k.slots == nil {
			k.ops[key.xid-k.base] = 0
		} else if _, ok := k.slots[key.xid]; !ok {
			if k.filter != nil {
				bit := key.xid - k.base
				k.filter[bit/64] |= 1 << (bit % 64)
			}
			k.slots[key.xid] = int32(len(k.ops))
			k.ops, k.txn = append(k.ops, 0), append(k.txn, noTxn)
		}
	}
	for i := range h.Committed {
		hdr := &h.Committed[i].Entry.Header
		k := r.keys(hdr.ClientID)
		if k == nil {
			continue
		}
		if j := k.slot(hdr.Cxid); j >= 0 {
			if k.txn[j] == noTxn {
				k.txn[j] = i
			} else {
				k.txn[j] = -1
			}
		}
	}
	for ci := range h.Clients {
		for oi := range h.Clients[ci].Ops {
			op := &h.Clients[ci].Ops[oi]
			if k := r.keys(op.Session); k != nil {
				if j := k.slot(op.Xid); j >= 0 {
					k.ops[j]++
				}
			}
		}
	}
	return r
}

// verdict is what the log says about an indeterminate operation.
type verdict uint8

const (
	undecided verdict = iota
	happened
	didNotHappen
)

// resolve returns whether the operation's transaction is in the log, and its index if so. It
// answers only for writes without a reply of their own (unknown outcomes, writes answered by a
// killer); for any other operation it says undecided.
func (r *resolver) resolve(op *Operation) (verdict, int) {
	if op.Session == 0 || op.Xid == 0 || !op.Kind.IsWrite() {
		return undecided, -1
	}
	k := r.keys(op.Session)
	if k == nil {
		return undecided, -1
	}
	j := k.slot(op.Xid)
	if j < 0 || k.ops[j] != 1 {
		return undecided, -1
	}
	idx := k.txn[j]
	switch {
	case idx == noTxn:
		return didNotHappen, -1
	case idx < 0 || !txnFits(op, r.log[idx].Entry.Header.Type):
		return undecided, -1
	default:
		return happened, idx
	}
}

// txnFits reports whether a transaction of type txn can be the one the request op produced: its
// own type (createContainer for the create of a container, which the client sends as
// createContainer), or error for a write the leader rejected.
func txnFits(op *Operation, txn proto.OpCode) bool {
	if txn == proto.OpError {
		return op.Kind != proto.OpCloseSession
	}
	switch op.Kind {
	case proto.OpCreate, proto.OpCreate2:
		if op.Mode.IsContainer() {
			return txn == proto.OpCreateContainer
		}
		return txn == proto.OpCreate || txn == proto.OpCreate2
	default:
		return txn == op.Kind
	}
}

// txnOutcome is the result a transaction records for the request that produced it, in the terms
// of the models: the code, the created path, the new data version, and a multi's per-op results.
type txnOutcome struct {
	err     proto.Code
	path    string
	version int32
	subs    []SubResult
}

// outcomeOf reads the outcome out of a committed transaction.
func outcomeOf(entry *proto.TxnEntry) txnOutcome {
	out := txnOutcome{version: -1}
	switch txn := entry.Txn.(type) {
	case *proto.ErrorTxn:
		out.err = txn.Err
	case *proto.CreateTxn:
		out.path = txn.Path
		out.version = 0
	case *proto.CreateContainerTxn:
		out.path = txn.Path
		out.version = 0
	case *proto.SetDataTxn:
		out.version = txn.Version
	case *proto.MultiTxn:
		out.subs = make([]SubResult, len(txn.Txns))
		for i := range txn.Txns {
			out.subs[i] = subOutcome(&txn.Txns[i])
			if out.err == proto.OK && out.subs[i].Err != proto.OK {
				out.err = out.subs[i].Err
			}
		}
	}
	return out
}

// subOutcome reads one sub-transaction of a multi as the result the client would have received.
// In a failed multi every sub-transaction from the failing one on is an error txn; the ones before
// it become results with code OK (DataTree rewrites them), which a zero SubResult expresses.
func subOutcome(t *proto.Txn) SubResult {
	body, err := t.Body()
	if err != nil {
		return SubResult{Err: proto.MarshallingError}
	}
	switch txn := body.(type) {
	case *proto.ErrorTxn:
		return SubResult{Err: txn.Err}
	case *proto.CreateTxn:
		return SubResult{Path: txn.Path}
	case *proto.SetDataTxn:
		return SubResult{Stat: &proto.Stat{Version: txn.Version}}
	default:
		return SubResult{}
	}
}
