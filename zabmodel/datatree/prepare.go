package datatree

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// pending mirrors the fields of Java's Request that preparation fills in.
type pending struct {
	req       Request
	header    *proto.TxnHeader
	txn       proto.Record
	digest    *proto.TxnDigest
	exception proto.Code
}

// contractError reports a caller that broke the API's contract (a body of
// the wrong Go type, a session tracker error that is no ZooKeeper code).
// Java has no counterpart: its request bodies are decoded by type.
type contractError struct{ err error }

func (e *contractError) Error() string { return e.err.Error() }
func (e *contractError) Unwrap() error { return e.err }

func contractf(format string, args ...any) error {
	return &contractError{fmt.Errorf("datatree: "+format, args...)}
}

// keeperCode reports whether err is a KeeperException, and its code.
func keeperCode(err error) (proto.Code, bool) {
	var code proto.Code
	if errors.As(err, &code) && code != proto.OK {
		return code, true
	}
	return proto.OK, false
}

// Prepare is PrepRequestProcessor.pRequest for one request. The error is for
// a broken contract only (see Request); every outcome Java has, failures
// included, is in the Prepared value.
func (p *Preparer) Prepare(req Request) (Prepared, error) {
	if len(p.changes) >= MaxOutstandingChanges {
		return Prepared{}, fmt.Errorf("datatree: %d outstanding change records; is Applied being called?", len(p.changes))
	}
	r := &pending{req: req}
	if err := p.prepare(r); err != nil {
		var contract *contractError
		if errors.As(err, &contract) {
			return Prepared{}, err
		}
		if code, ok := keeperCode(err); ok {
			r.exception = code
			if r.header != nil {
				r.header.Type = proto.OpError
				r.txn = &proto.ErrorTxn{Err: code}
			}
		} else if r.header != nil {
			// Any other exception: Java logs it and records MarshallingError.
			r.header.Type = proto.OpError
			r.txn = &proto.ErrorTxn{Err: proto.MarshallingError}
		} else {
			r.exception = proto.MarshallingError
		}
	}
	out := Prepared{Err: r.exception}
	if r.header != nil {
		out.Txn = &proto.TxnEntry{Header: *r.header, Txn: r.txn, Digest: r.digest}
	}
	return out, nil
}

// prepare is pRequestHelper's switch.
func (p *Preparer) prepare(r *pending) error {
	op := r.req.Type
	switch op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL,
		proto.OpDelete, proto.OpDeleteContainer, proto.OpSetData, proto.OpSetACL, proto.OpCheck,
		proto.OpCreateSession, proto.OpCloseSession:
		return p.request2Txn(r, op, r.req.Body)
	case proto.OpReconfig:
		if r.req.Body == nil {
			return fmt.Errorf("%w: undecodable reconfig request", errJavaRuntime)
		}
		return p.request2Txn(r, op, r.req.Body)
	case proto.OpMulti:
		return p.prepareMulti(r)
	case proto.OpSync, proto.OpExists, proto.OpGetData, proto.OpGetACL, proto.OpGetChildren,
		proto.OpGetAllChildrenNumber, proto.OpGetChildren2, proto.OpPing, proto.OpSetWatches,
		proto.OpSetWatches2, proto.OpCheckWatches, proto.OpRemoveWatches, proto.OpGetEphemerals,
		proto.OpMultiRead, proto.OpAddWatch, proto.OpWhoAmI:
		return p.checkSession(r)
	default:
		return nil
	}
}

// request2Txn is pRequest2Txn: it makes the header if there is none yet (a
// multi's ops share the multi's), prepares the op, and gives a txn that did
// not set its own digest the current one.
func (p *Preparer) request2Txn(r *pending, op proto.OpCode, body proto.Record) error {
	if r.header == nil {
		r.header = &proto.TxnHeader{ClientID: r.req.SessionID, Cxid: r.req.Cxid, Zxid: r.req.Zxid,
			Time: r.req.TimeMilliseconds, Type: op}
	}
	var err error
	switch op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateTTL, proto.OpCreateContainer:
		err = p.prepareCreate(r, op, body)
	case proto.OpDeleteContainer:
		err = p.prepareDeleteContainer(r, body)
	case proto.OpDelete:
		err = p.prepareDelete(r, body)
	case proto.OpSetData:
		err = p.prepareSetData(r, body)
	case proto.OpReconfig:
		err = proto.ReconfigDisabled
	case proto.OpSetACL:
		err = p.prepareSetACL(r, body)
	case proto.OpCreateSession:
		err = p.prepareCreateSession(r)
	case proto.OpCloseSession:
		err = p.prepareCloseSession(r)
	case proto.OpCheck:
		err = p.prepareCheck(r, body)
	}
	if err != nil {
		return err
	}
	if r.digest == nil {
		r.digest = txnDigest(p.currentTreeDigest())
	}
	return nil
}

// sessionError sorts a session tracker's error into a KeeperException or a
// broken contract.
func sessionError(method string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := keeperCode(err); ok {
		return err
	}
	return contractf("Sessions.%s returned %v, which is no ZooKeeper code", method, err)
}

func (p *Preparer) checkSession(r *pending) error {
	return sessionError("CheckSession", p.sessions.CheckSession(r.req.SessionID, r.req.Owner))
}

// bodyAs returns the body as T. A nil body is Java's failed
// deserialization; a body of another type is a broken contract.
func bodyAs[T proto.Record](body proto.Record, op proto.OpCode) (T, error) {
	var zero T
	if body == nil {
		return zero, fmt.Errorf("%w: undecodable %v request", errJavaRuntime, op)
	}
	b, ok := body.(T)
	if !ok {
		return zero, contractf("a %v request carries %T, want %T", op, body, zero)
	}
	return b, nil
}

// checkAndIncVersion is PrepRequestProcessor.checkAndIncVersion.
func checkAndIncVersion(current, expected int32) (int32, error) {
	if expected != -1 && expected != current {
		return 0, proto.BadVersion
	}
	return current + 1, nil
}

// validatePath is PrepRequestProcessor.validatePath: PathUtils's rules,
// failing with BadArguments.
func validatePath(path string) error {
	if proto.ValidatePath(path) != nil {
		return proto.BadArguments
	}
	return nil
}

// parentPathAndValidate is getParentPathAndValidate, used by deletes: no
// '/', a NUL, or one of the special paths is BadArguments; no other path
// rule is checked.
func parentPathAndValidate(path string) (string, error) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 || containsNUL(path) || isSpecialPath(path) {
		return "", proto.BadArguments
	}
	return path[:i], nil
}

func containsNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }
