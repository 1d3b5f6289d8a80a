package datatree

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Result is DataTree.ProcessTxnResult: what applying one txn did, which is
// what FinalRequestProcessor builds its reply from.
type Result struct {
	ClientID int64
	Cxid     int32
	Zxid     int64
	// Type is the txn type; for a sub-result of a failed multi every op is
	// of type error (see Multi).
	Type proto.OpCode
	// Err is the outcome: a KeeperException the apply met (NoNode,
	// NodeExists), the code of an error txn, or for a multi the first
	// non-OK code of its sub-results.
	Err proto.Code
	// Path is the txn's path (the created path for creates).
	Path string
	// Stat is set for create2, createTTL, createContainer, setData, reconfig
	// and setACL, and nil otherwise.
	Stat *proto.Stat
	// Multi holds the sub-results of a multi, in op order. When the multi
	// failed, the ops before the failing one appear as type error with
	// code OK, the failing op with its code, and the rest with
	// RuntimeInconsistency.
	Multi []Result
	// DigestMismatch reports that the tree digest after this txn differs
	// from the TxnDigest the txn carried (or from a loaded snapshot's
	// digest for this zxid). Java logs "Digest mismatch", counts it in
	// DIGEST_MISMATCHES_COUNT and carries on.
	DigestMismatch bool
	// Aborted is set when Java's processTxn catches an IOException: a multi
	// sub-txn of an invalid type or with undecodable bytes. The sub-txns
	// before it stay applied, the rest are skipped, and the txn otherwise
	// completes normally.
	Aborted error
	// Fault is set when Java's processTxn throws an unchecked exception (a
	// txn of the wrong record type, an invalid TTL, a malformed quota node,
	// an unclassifiable owner, a path without '/'). The effects made before
	// that point stay, lastProcessedZxid is not advanced, no later watch
	// fires and no digest is compared. What follows in Java is the server's
	// business: on a real standalone 3.8.0 server a createTTL request with
	// persistent flags and TTL -1 (which PrepRequestProcessor lets through,
	// even with extended types off) reached this point and the exception
	// killed SyncThread as a "Severe unrecoverable error"; the txn is
	// already logged by then, so replaying the log meets it again.
	Fault error
}

// MultiResponse builds the reply to a multi from its Result, as
// FinalRequestProcessor maps sub-results: check, create (path),
// create2/createTTL/createContainer (path and stat, as create2), delete,
// setData (stat), and error results with their code. sessionMoved is true
// when a sub-result is SessionMoved, on which Java closes the connection
// instead of replying.
func (r Result) MultiResponse() (response *proto.MultiResponse, sessionMoved bool, err error) {
	response = &proto.MultiResponse{Results: make([]proto.MultiResult, 0, len(r.Multi))}
	for _, sub := range r.Multi {
		var result proto.MultiResult
		switch sub.Type {
		case proto.OpCheck:
			result = proto.MultiResult{Type: proto.OpCheck}
		case proto.OpCreate:
			result = proto.MultiResult{Type: proto.OpCreate, Response: &proto.CreateResponse{Path: sub.Path}}
		case proto.OpCreate2, proto.OpCreateTTL, proto.OpCreateContainer:
			result = proto.MultiResult{Type: proto.OpCreate2, Response: &proto.Create2Response{Path: sub.Path, Stat: statOrZero(sub.Stat)}}
		case proto.OpDelete, proto.OpDeleteContainer:
			result = proto.MultiResult{Type: proto.OpDelete}
		case proto.OpSetData:
			result = proto.MultiResult{Type: proto.OpSetData, Response: &proto.SetDataResponse{Stat: statOrZero(sub.Stat)}}
		case proto.OpError:
			if sub.Err == proto.SessionMoved {
				return nil, true, nil
			}
			result = proto.MultiResult{Type: proto.OpError, Err: sub.Err}
		default:
			return nil, false, fmt.Errorf("datatree: invalid type of op %v in a multi result", sub.Type)
		}
		response.Results = append(response.Results, result)
	}
	return response, false, nil
}

func statOrZero(s *proto.Stat) proto.Stat {
	if s == nil {
		return proto.Stat{}
	}
	return *s
}

// Apply is DataTree.processTxn followed by its digest check, for every txn
// type a server logs. It changes the tree, fires the watches Java fires, in
// Java's order, by calling Watcher.Process before it returns, advances
// lastProcessedZxid (never downwards), and compares the entry's TxnDigest,
// when present, with the tree's digest afterwards. It reads no clock: the
// txn header carries the time.
//
// The session table is not the tree's: as DataTree.processTxn, Apply does
// nothing for a createSession and only deletes a closeSession's ephemerals
// (the server's database keeps the table). Like Java, Apply rewrites in place the type of every
// sub-txn that precedes the failing op of a failed multi to error, so an
// entry serialized after Apply (as ZKDatabase.addCommittedProposal does)
// carries those types.
func (t *Tree) Apply(entry *proto.TxnEntry) Result {
	if entry == nil {
		return Result{Fault: errors.New("datatree: Apply of a nil txn entry")}
	}
	rc := t.processTxn(entry.Header, entry.Txn, false)
	if rc.Fault != nil {
		return rc
	}
	if !t.compareDigest(entry.Digest) {
		rc.DigestMismatch = true
	}
	return rc
}

// castTxn is the cast processTxn makes; a wrong type is Java's
// ClassCastException (or NullPointerException for a missing record).
func castTxn[T proto.Record](txn proto.Record, op proto.OpCode) (T, error) {
	record, ok := txn.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("%w: a %v txn carries %T", errJavaRuntime, op, txn)
	}
	return record, nil
}

func (t *Tree) processTxn(h proto.TxnHeader, txn proto.Record, sub bool) Result {
	rc := Result{ClientID: h.ClientID, Cxid: h.Cxid, Zxid: h.Zxid, Type: h.Type}
	code, err := t.dispatch(h, txn, sub, &rc)
	if err != nil {
		rc.Fault = err
		return rc
	}
	if code != proto.OK {
		rc.Err = code
	}
	if h.Type == proto.OpCreate && rc.Err == proto.NodeExists {
		// Replaying a create whose node a fuzzy snapshot already holds:
		// bring the parent's cversion and pzxid up to this txn anyway.
		create := txn.(*proto.CreateTxn)
		parent := rc.Path[:strings.LastIndexByte(rc.Path, '/')]
		if t.setCversionPzxid(parent, create.ParentCVersion, h.Zxid) != nil {
			rc.Err = proto.NoNode
		}
	}
	if !sub {
		t.finishTxn(rc.Zxid, &rc)
	}
	return rc
}

// finishTxn does what processTxn does once a whole txn is applied: advance
// lastProcessedZxid and record (or, after loading a snapshot whose digest is
// for a later zxid, check) the digest.
func (t *Tree) finishTxn(zxid int64, rc *Result) {
	if zxid > t.lastProcessedZxid {
		t.lastProcessedZxid = zxid
	}
	if t.snapshotDigest != nil {
		if !t.compareSnapshotDigest(zxid) {
			rc.DigestMismatch = true
		}
		return
	}
	t.lastZxidDigest = ZxidDigest{Zxid: zxid, Version: DigestVersion, Digest: t.Digest()}
	t.hasLastZxidDigest = true
}

// compareSnapshotDigest is DataTree.compareSnapshotDigests: once the zxid
// the loaded snapshot's digest was taken at is reached, compare and forget
// it. It reports false on a mismatch.
func (t *Tree) compareSnapshotDigest(zxid int64) bool {
	pending := t.snapshotDigest
	if zxid != pending.Zxid {
		return true
	}
	t.snapshotDigest = nil
	return pending.Version != DigestVersion || pending.Digest == t.Digest()
}

// compareDigest is DataTree.compareDigest; it reports false on a mismatch.
func (t *Tree) compareDigest(digest *proto.TxnDigest) bool {
	if digest == nil || t.snapshotDigest != nil || digest.Version != DigestVersion {
		return true
	}
	return digest.TreeDigest == t.Digest()
}

// dispatch is processTxn's switch. It returns the code of a KeeperException
// the operation threw, or an error for an unchecked exception.
func (t *Tree) dispatch(h proto.TxnHeader, txn proto.Record, sub bool, rc *Result) (proto.Code, error) {
	switch h.Type {
	case proto.OpCreate, proto.OpCreate2:
		return t.applyCreate(h, txn, rc)
	case proto.OpCreateTTL:
		return t.applyCreateTTL(h, txn, rc)
	case proto.OpCreateContainer:
		c, err := castTxn[*proto.CreateContainerTxn](txn, h.Type)
		if err != nil {
			return proto.OK, err
		}
		rc.Path = c.Path
		stat, code, err := t.createNode(c.Path, c.Data, c.ACL, proto.ContainerEphemeralOwner, c.ParentCVersion, h.Zxid, h.Time, true)
		rc.Stat = stat
		return code, err
	case proto.OpDelete, proto.OpDeleteContainer:
		d, err := castTxn[*proto.DeleteTxn](txn, h.Type)
		if err != nil {
			return proto.OK, err
		}
		rc.Path = d.Path
		return t.deleteNode(d.Path, h.Zxid)
	case proto.OpReconfig, proto.OpSetData:
		s, err := castTxn[*proto.SetDataTxn](txn, h.Type)
		if err != nil {
			return proto.OK, err
		}
		rc.Path = s.Path
		stat, code, err := t.setData(s.Path, s.Data, s.Version, h.Zxid, h.Time)
		rc.Stat = stat
		return code, err
	case proto.OpSetACL:
		s, err := castTxn[*proto.SetACLTxn](txn, h.Type)
		if err != nil {
			return proto.OK, err
		}
		rc.Path = s.Path
		stat, code, err := t.setACL(s.Path, s.ACL, s.Version)
		rc.Stat = stat
		return code, err
	default:
		return t.dispatchOther(h, txn, sub, rc)
	}
}

// dispatchOther covers the txn types that do not touch a single node.
func (t *Tree) dispatchOther(h proto.TxnHeader, txn proto.Record, sub bool, rc *Result) (proto.Code, error) {
	switch h.Type {
	case proto.OpCreateSession:
		// DataTree.processTxn does nothing for it: the session table belongs to the
		// database, kept by the session tracker and FileTxnSnapLog.processTransaction.
		return proto.OK, nil
	case proto.OpCloseSession:
		if txn == nil {
			return proto.OK, t.killSession(h.ClientID, h.Zxid, nil, false)
		}
		c, err := castTxn[*proto.CloseSessionTxn](txn, h.Type)
		if err != nil {
			return proto.OK, err
		}
		return proto.OK, t.killSession(h.ClientID, h.Zxid, c.PathsToDelete, c.PathsToDelete != nil)
	case proto.OpError:
		e, err := castTxn[*proto.ErrorTxn](txn, h.Type)
		if err != nil {
			return proto.OK, err
		}
		rc.Err = e.Err
		return proto.OK, nil
	case proto.OpCheck:
		c, err := castTxn[*proto.CheckVersionTxn](txn, h.Type)
		if err != nil {
			return proto.OK, err
		}
		rc.Path = c.Path
		return proto.OK, nil
	case proto.OpMulti:
		m, err := castTxn[*proto.MultiTxn](txn, h.Type)
		if err != nil {
			return proto.OK, err
		}
		return proto.OK, t.applyMulti(h, m, rc)
	default:
		return proto.OK, nil
	}
}

func (t *Tree) applyCreate(h proto.TxnHeader, txn proto.Record, rc *Result) (proto.Code, error) {
	c, err := castTxn[*proto.CreateTxn](txn, h.Type)
	if err != nil {
		return proto.OK, err
	}
	rc.Path = c.Path
	owner := int64(0)
	if c.Ephemeral {
		owner = h.ClientID
	}
	stat, code, err := t.createNode(c.Path, c.Data, c.ACL, owner, c.ParentCVersion, h.Zxid, h.Time, h.Type == proto.OpCreate2)
	rc.Stat = stat
	return code, err
}

func (t *Tree) applyCreateTTL(h proto.TxnHeader, txn proto.Record, rc *Result) (proto.Code, error) {
	c, err := castTxn[*proto.CreateTTLTxn](txn, h.Type)
	if err != nil {
		return proto.OK, err
	}
	rc.Path = c.Path
	owner, err := TTLOwner(c.TTL)
	if err != nil {
		return proto.OK, fmt.Errorf("%w: %v", errJavaRuntime, err)
	}
	stat, code, err := t.createNode(c.Path, c.Data, c.ACL, owner, c.ParentCVersion, h.Zxid, h.Time, true)
	rc.Stat = stat
	return code, err
}

// applyMulti applies a multi's sub-txns in order, each as its own
// processTxn with the multi's header fields. If any sub-txn is an error, the
// multi failed: the sub-txns before the first error are rewritten to error
// txns with code OK (and their type changed in place, as Java does), and any
// later non-error ones to RuntimeInconsistency.
func (t *Tree) applyMulti(h proto.TxnHeader, m *proto.MultiTxn, rc *Result) error {
	failed := false
	for _, sub := range m.Txns {
		if sub.Type == proto.OpError {
			failed = true
			break
		}
	}
	rc.Multi = []Result{}
	postFailed := false
	for i := range m.Txns {
		sub := &m.Txns[i]
		record, err := sub.Body()
		if err != nil {
			rc.Aborted = err
			return nil
		}
		if sub.Type == proto.OpError {
			postFailed = true
		}
		if failed && sub.Type != proto.OpError {
			code := proto.OK
			if postFailed {
				code = proto.RuntimeInconsistency
			}
			sub.Type = proto.OpError
			record = &proto.ErrorTxn{Err: code}
		}
		subHeader := proto.TxnHeader{ClientID: h.ClientID, Cxid: h.Cxid, Zxid: h.Zxid, Time: h.Time, Type: sub.Type}
		subResult := t.processTxn(subHeader, record, true)
		if subResult.Fault != nil {
			return subResult.Fault
		}
		rc.Multi = append(rc.Multi, subResult)
		if subResult.Err != proto.OK && rc.Err == proto.OK {
			rc.Err = subResult.Err
		}
	}
	return nil
}
