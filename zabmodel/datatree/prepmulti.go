package datatree

import (
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// multiOp is one op of a multi as the 3.8.0 server sees it after
// MultiOperationRecord.deserialize rebuilt it with Op.create, Op.delete, ...:
// its type and its request record.
type multiOp struct {
	op     proto.OpCode
	record proto.Record
	path   string
}

// createOpCode is Op.Create.getOpcode: a create op's type comes from its
// flags (unknown flags count as persistent), whatever type it was sent as.
func createOpCode(flags proto.CreateMode) proto.OpCode {
	mode, err := proto.CreateModeFromFlag(int32(flags))
	switch {
	case err != nil:
		return proto.OpCreate
	case mode.IsTTL():
		return proto.OpCreateTTL
	case mode.IsContainer():
		return proto.OpCreateContainer
	default:
		return proto.OpCreate
	}
}

// rebuildMultiOp turns a decoded op into the op the server prepares. So a
// create2 op runs as create, a create op with TTL flags becomes a createTTL
// op that still carries a CreateRequest (which pRequest2TxnCreate cannot
// cast), a createTTL op with other flags loses its TTL, and read ops lose
// their watch flag. A type MultiOperationRecord rejects is a decoding error.
func rebuildMultiOp(op proto.MultiOp) (multiOp, error) {
	switch request := op.Request.(type) {
	case *proto.CreateRequest:
		if op.Type == proto.OpCreate || op.Type == proto.OpCreate2 || op.Type == proto.OpCreateContainer {
			return multiOp{op: createOpCode(request.Flags), record: request, path: request.Path}, nil
		}
	case *proto.CreateTTLRequest:
		if op.Type == proto.OpCreateTTL {
			if code := createOpCode(request.Flags); code != proto.OpCreateTTL {
				plain := &proto.CreateRequest{Path: request.Path, Data: request.Data, ACL: request.ACL, Flags: request.Flags}
				return multiOp{op: code, record: plain, path: request.Path}, nil
			}
			return multiOp{op: proto.OpCreateTTL, record: request, path: request.Path}, nil
		}
	case *proto.DeleteRequest:
		if op.Type == proto.OpDelete {
			return multiOp{op: op.Type, record: request, path: request.Path}, nil
		}
	case *proto.SetDataRequest:
		if op.Type == proto.OpSetData {
			return multiOp{op: op.Type, record: request, path: request.Path}, nil
		}
	case *proto.CheckVersionRequest:
		if op.Type == proto.OpCheck {
			return multiOp{op: op.Type, record: request, path: request.Path}, nil
		}
	case *proto.GetChildrenRequest:
		if op.Type == proto.OpGetChildren {
			return multiOp{op: op.Type, record: &proto.GetChildrenRequest{Path: request.Path}, path: request.Path}, nil
		}
	case *proto.GetDataRequest:
		if op.Type == proto.OpGetData {
			return multiOp{op: op.Type, record: &proto.GetDataRequest{Path: request.Path}, path: request.Path}, nil
		}
	}
	return multiOp{}, fmt.Errorf("%w: invalid type of op %v (%T) in a multi", errJavaRuntime, op.Type, op.Request)
}

// prepareMulti is pRequestHelper's multi case. Every op shares the multi's
// zxid and header. The ops are prepared in order against the changes of the
// ops before them; on the first failure the multi's change records are
// rolled back (and the records they replaced restored), the failing op gets
// an error sub-txn with its code and every later op one with
// RuntimeInconsistency, while the earlier ops keep their txns (Apply turns
// them into OK results). The multi's digest is the tree's once every
// remaining outstanding change applies.
func (p *Preparer) prepareMulti(r *pending) error {
	ops, err := p.multiOps(r)
	if err != nil {
		r.header = &proto.TxnHeader{ClientID: r.req.SessionID, Cxid: r.req.Cxid, Zxid: r.req.Zxid,
			Time: r.req.TimeMilliseconds, Type: proto.OpMulti}
		return err
	}
	zxid := r.req.Zxid
	saved := p.pendingChanges(ops)
	r.header = &proto.TxnHeader{ClientID: r.req.SessionID, Cxid: r.req.Cxid, Zxid: zxid,
		Time: r.req.TimeMilliseconds, Type: proto.OpMulti}
	txns := make([]proto.Txn, 0, len(ops))
	failed := false
	for _, op := range ops {
		typ, txn := proto.OpError, proto.Record(&proto.ErrorTxn{Err: proto.RuntimeInconsistency})
		if !failed {
			err := p.request2Txn(r, op.op, op.record)
			code, keeper := keeperCode(err)
			switch {
			case err == nil:
				typ, txn = op.op, r.txn
			case keeper:
				failed = true
				txn = &proto.ErrorTxn{Err: code}
				r.exception = code
				p.rollback(zxid, saved)
			default:
				return err
			}
		}
		if txn == nil {
			// A read op first in the list reuses the request's (null) txn.
			return fmt.Errorf("%w: multi op %v has no txn to serialize", errJavaRuntime, typ)
		}
		txns = append(txns, proto.MakeTxn(typ, txn))
	}
	r.txn = &proto.MultiTxn{Txns: txns}
	r.digest = txnDigest(p.currentTreeDigest())
	return nil
}

func (p *Preparer) multiOps(r *pending) ([]multiOp, error) {
	body, err := bodyAs[*proto.MultiRequest](r.req.Body, proto.OpMulti)
	if err != nil {
		return nil, err
	}
	ops := make([]multiOp, 0, len(body.Ops))
	for _, op := range body.Ops {
		rebuilt, err := rebuildMultiOp(op)
		if err != nil {
			return nil, err
		}
		ops = append(ops, rebuilt)
	}
	return ops, nil
}

// pendingChanges is getPendingChanges: the outstanding change records of the
// ops' paths and of their parents (ZOOKEEPER-1624: a rolled-back sequential
// create must not change the next sequence number), to restore on rollback.
func (p *Preparer) pendingChanges(ops []multiOp) map[string]*changeRecord {
	saved := make(map[string]*changeRecord)
	for _, op := range ops {
		if c := p.byPath[op.path]; c != nil {
			saved[op.path] = c
		}
		i := strings.LastIndexByte(op.path, '/')
		if i < 0 || containsNUL(op.path) {
			continue
		}
		if c := p.byPath[op.path[:i]]; c != nil {
			saved[op.path[:i]] = c
		}
	}
	return saved
}

// rollback is rollbackPendingChanges: drop the multi's records (the newest
// ones, carrying its zxid) and their paths' entries, then restore the saved
// records that are still outstanding.
func (p *Preparer) rollback(zxid int64, saved map[string]*changeRecord) {
	for len(p.changes) > 0 && p.changes[len(p.changes)-1].zxid == zxid {
		last := p.changes[len(p.changes)-1]
		p.changes = p.changes[:len(p.changes)-1]
		delete(p.byPath, last.path)
	}
	if len(p.changes) == 0 {
		return
	}
	first := p.changes[0].zxid
	for path, c := range saved { // determinism:ok one put per distinct path, order-free
		if c.zxid >= first {
			p.byPath[path] = c
		}
	}
}
