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

// resolver indexes the committed log and the history's operations by (session, xid).
type resolver struct {
	log       []CommittedTxn
	txnByKey  map[sessionXid]int // index into log; -1 when two txns share the key
	opsPerKey map[sessionXid]int
}

func newResolver(h *History, killers killerCloses) *resolver {
	r := &resolver{log: h.Committed, txnByKey: map[sessionXid]int{}, opsPerKey: map[sessionXid]int{}}
	// Only the writes without a reply of their own are ever resolved: index their keys alone, so
	// that a large history with few of them costs one scan of the log and of the operations.
	for ci := range h.Clients {
		for oi := range h.Clients[ci].Ops {
			op := &h.Clients[ci].Ops[oi]
			if op.Session != 0 && op.Xid != 0 && op.Kind.IsWrite() && (op.Outcome.Indeterminate() || killers.answered(op)) {
				r.opsPerKey[sessionXid{op.Session, op.Xid}] = 0
			}
		}
	}
	if len(r.opsPerKey) == 0 {
		return r
	}
	for i := range h.Committed {
		hdr := &h.Committed[i].Entry.Header
		key := sessionXid{hdr.ClientID, hdr.Cxid}
		if _, wanted := r.opsPerKey[key]; !wanted {
			continue
		}
		if _, dup := r.txnByKey[key]; dup {
			r.txnByKey[key] = -1
		} else {
			r.txnByKey[key] = i
		}
	}
	for ci := range h.Clients {
		for oi := range h.Clients[ci].Ops {
			op := &h.Clients[ci].Ops[oi]
			key := sessionXid{op.Session, op.Xid}
			if n, wanted := r.opsPerKey[key]; wanted {
				r.opsPerKey[key] = n + 1
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
	key := sessionXid{op.Session, op.Xid}
	if r.opsPerKey[key] != 1 {
		return undecided, -1
	}
	idx, found := r.txnByKey[key]
	switch {
	case !found:
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
