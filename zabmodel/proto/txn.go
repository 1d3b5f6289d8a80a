package proto

import "fmt"

// This file holds the transaction records, module org.apache.zookeeper.txn
// of zookeeper.jute: what a leader proposes, a server logs, and DataTree
// applies. TxnEntry puts a header, a body and a digest together as the txn
// log and PROPOSAL packets carry them.

// TxnHeader identifies a transaction. Jute record
// org.apache.zookeeper.txn.TxnHeader. Type says which record follows (see
// NewTxn); a write the leader rejected is logged with Type error and an
// ErrorTxn.
type TxnHeader struct {
	ClientID int64 // the session that issued the request
	Cxid     int32 // the request's xid
	Zxid     int64
	Time     int64 // the leader's clock, milliseconds
	Type     OpCode
}

func (r *TxnHeader) fields(c codec) {
	c.long(&r.ClientID)
	intField(c, &r.Cxid)
	c.long(&r.Zxid)
	c.long(&r.Time)
	intField(c, &r.Type)
}

// Encode implements Record.
func (r *TxnHeader) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *TxnHeader) Decode(d *Decoder) { r.fields(decoding(d)) }

// CreateTxn creates a node: the body of create and create2 txns. Jute record
// org.apache.zookeeper.txn.CreateTxn. Path is final, with any sequential
// counter appended; Ephemeral means the node belongs to the TxnHeader's
// session.
type CreateTxn struct {
	Path           string
	Data           []byte
	ACL            []ACL
	Ephemeral      bool
	ParentCVersion int32 // the parent's persisted cversion after this create
}

func (r *CreateTxn) fields(c codec) {
	c.ustring(&r.Path)
	c.buffer(&r.Data)
	vectorField(c, &r.ACL)
	c.boolean(&r.Ephemeral)
	intField(c, &r.ParentCVersion)
}

// Encode implements Record.
func (r *CreateTxn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CreateTxn) Decode(d *Decoder) { r.fields(decoding(d)) }

// CreateTxnV0 is CreateTxn as logged before ParentCVersion existed (before
// 3.3). Jute record org.apache.zookeeper.txn.CreateTxnV0. TxnEntry.Decode
// falls back to it for a create txn that ends early and returns it as a
// CreateTxn with ParentCVersion -1, as SerializeUtils.deserializeTxn does.
type CreateTxnV0 struct {
	Path      string
	Data      []byte
	ACL       []ACL
	Ephemeral bool
}

func (r *CreateTxnV0) fields(c codec) {
	c.ustring(&r.Path)
	c.buffer(&r.Data)
	vectorField(c, &r.ACL)
	c.boolean(&r.Ephemeral)
}

// Encode implements Record.
func (r *CreateTxnV0) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CreateTxnV0) Decode(d *Decoder) { r.fields(decoding(d)) }

// CreateTTLTxn creates a TTL node: the body of createTTL txns. Jute record
// org.apache.zookeeper.txn.CreateTTLTxn.
type CreateTTLTxn struct {
	Path           string
	Data           []byte
	ACL            []ACL
	ParentCVersion int32 // the parent's persisted cversion after this create
	TTL            int64 // milliseconds
}

func (r *CreateTTLTxn) fields(c codec) {
	c.ustring(&r.Path)
	c.buffer(&r.Data)
	vectorField(c, &r.ACL)
	intField(c, &r.ParentCVersion)
	c.long(&r.TTL)
}

// Encode implements Record.
func (r *CreateTTLTxn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CreateTTLTxn) Decode(d *Decoder) { r.fields(decoding(d)) }

// CreateContainerTxn creates a container: the body of createContainer txns.
// Jute record org.apache.zookeeper.txn.CreateContainerTxn.
type CreateContainerTxn struct {
	Path           string
	Data           []byte
	ACL            []ACL
	ParentCVersion int32 // the parent's persisted cversion after this create
}

func (r *CreateContainerTxn) fields(c codec) {
	c.ustring(&r.Path)
	c.buffer(&r.Data)
	vectorField(c, &r.ACL)
	intField(c, &r.ParentCVersion)
}

// Encode implements Record.
func (r *CreateContainerTxn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CreateContainerTxn) Decode(d *Decoder) { r.fields(decoding(d)) }

// DeleteTxn deletes a node: the body of delete and deleteContainer txns. Jute
// record org.apache.zookeeper.txn.DeleteTxn.
type DeleteTxn struct {
	Path string
}

func (r *DeleteTxn) fields(c codec) {
	c.ustring(&r.Path)
}

// Encode implements Record.
func (r *DeleteTxn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *DeleteTxn) Decode(d *Decoder) { r.fields(decoding(d)) }

// SetDataTxn sets a node's data: the body of setData txns, and of reconfig
// txns (which write the new configuration to /zookeeper/config with version
// -1). Jute record org.apache.zookeeper.txn.SetDataTxn.
type SetDataTxn struct {
	Path    string
	Data    []byte
	Version int32 // the new version: the old one plus 1
}

func (r *SetDataTxn) fields(c codec) {
	c.ustring(&r.Path)
	c.buffer(&r.Data)
	intField(c, &r.Version)
}

// Encode implements Record.
func (r *SetDataTxn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *SetDataTxn) Decode(d *Decoder) { r.fields(decoding(d)) }

// CheckVersionTxn records a passed version check inside a MultiTxn. Jute
// record org.apache.zookeeper.txn.CheckVersionTxn. DataTree does nothing with
// it.
type CheckVersionTxn struct {
	Path    string
	Version int32 // the checked version plus 1, as checkAndIncVersion returns it
}

func (r *CheckVersionTxn) fields(c codec) {
	c.ustring(&r.Path)
	intField(c, &r.Version)
}

// Encode implements Record.
func (r *CheckVersionTxn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CheckVersionTxn) Decode(d *Decoder) { r.fields(decoding(d)) }

// SetACLTxn sets a node's ACL: the body of setACL txns. Jute record
// org.apache.zookeeper.txn.SetACLTxn.
type SetACLTxn struct {
	Path    string
	ACL     []ACL
	Version int32 // the new aversion: the old one plus 1
}

func (r *SetACLTxn) fields(c codec) {
	c.ustring(&r.Path)
	vectorField(c, &r.ACL)
	intField(c, &r.Version)
}

// Encode implements Record.
func (r *SetACLTxn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *SetACLTxn) Decode(d *Decoder) { r.fields(decoding(d)) }

// CreateSessionTxn creates a session: the body of createSession txns, whose
// TxnHeader.ClientID is the new session id. Jute record
// org.apache.zookeeper.txn.CreateSessionTxn.
type CreateSessionTxn struct {
	TimeoutMilliseconds int32 // negotiated session timeout
}

func (r *CreateSessionTxn) fields(c codec) {
	intField(c, &r.TimeoutMilliseconds)
}

// Encode implements Record.
func (r *CreateSessionTxn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CreateSessionTxn) Decode(d *Decoder) { r.fields(decoding(d)) }

// CloseSessionTxn closes a session: the body of closeSession txns since 3.6
// (zookeeper.closeSessionTxn.enabled, default true). It lists the session's
// ephemeral nodes as the leader saw them, which DataTree deletes; Java takes
// them from a HashSet, so their order is unspecified and a simulator must pick
// one (sorted, say). Jute record org.apache.zookeeper.txn.CloseSessionTxn.
type CloseSessionTxn struct {
	PathsToDelete []string
}

func (r *CloseSessionTxn) fields(c codec) {
	c.ustrings(&r.PathsToDelete)
}

// Encode implements Record.
func (r *CloseSessionTxn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CloseSessionTxn) Decode(d *Decoder) { r.fields(decoding(d)) }

// ErrorTxn records a write that failed: the body of error txns, and the
// sub-txn of a failed multi's ops. Jute record
// org.apache.zookeeper.txn.ErrorTxn.
type ErrorTxn struct {
	Err Code
}

func (r *ErrorTxn) fields(c codec) {
	intField(c, &r.Err)
}

// Encode implements Record.
func (r *ErrorTxn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *ErrorTxn) Decode(d *Decoder) { r.fields(decoding(d)) }

// Txn is one sub-transaction of a MultiTxn: a type and that type's txn record,
// already encoded (see MakeTxn and Txn.Body). Jute record
// org.apache.zookeeper.txn.Txn.
type Txn struct {
	Type OpCode
	Data []byte
}

func (r *Txn) fields(c codec) {
	intField(c, &r.Type)
	c.buffer(&r.Data)
}

// Encode implements Record.
func (r *Txn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *Txn) Decode(d *Decoder) { r.fields(decoding(d)) }

// MultiTxn is the body of multi txns, all sharing the TxnHeader's zxid. Jute
// record org.apache.zookeeper.txn.MultiTxn. The sub-txn types are create,
// createTTL, createContainer, delete, setData, check and error; a failed multi
// has an error sub-txn for the failing op (its code) and for every later op
// (RuntimeInconsistency), while the ops before it keep their txns and
// DataTree turns them into error results with code OK.
type MultiTxn struct {
	Txns []Txn
}

func (r *MultiTxn) fields(c codec) {
	vectorField(c, &r.Txns)
}

// Encode implements Record.
func (r *MultiTxn) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *MultiTxn) Decode(d *Decoder) { r.fields(decoding(d)) }

// TxnDigest is the data tree digest a 3.6+ leader appends to each txn when
// zookeeper.digest.enabled is true (the default). Jute record
// org.apache.zookeeper.txn.TxnDigest.
type TxnDigest struct {
	Version    int32
	TreeDigest int64
}

func (r *TxnDigest) fields(c codec) {
	intField(c, &r.Version)
	c.long(&r.TreeDigest)
}

// Encode implements Record.
func (r *TxnDigest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *TxnDigest) Decode(d *Decoder) { r.fields(decoding(d)) }

// NewTxn returns an empty txn record for a TxnHeader or Txn type, mapped as
// SerializeUtils.deserializeTxn maps them (create2 carries a CreateTxn,
// deleteContainer a DeleteTxn, reconfig a SetDataTxn), plus check, which only
// occurs inside a MultiTxn. It returns nil for any other type.
func NewTxn(op OpCode) Record {
	switch op {
	case OpCreateSession:
		return new(CreateSessionTxn)
	case OpCloseSession:
		return new(CloseSessionTxn)
	case OpCreate, OpCreate2:
		return new(CreateTxn)
	case OpCreateTTL:
		return new(CreateTTLTxn)
	case OpCreateContainer:
		return new(CreateContainerTxn)
	case OpDelete, OpDeleteContainer:
		return new(DeleteTxn)
	case OpReconfig, OpSetData:
		return new(SetDataTxn)
	case OpSetACL:
		return new(SetACLTxn)
	case OpError:
		return new(ErrorTxn)
	case OpMulti:
		return new(MultiTxn)
	case OpCheck:
		return new(CheckVersionTxn)
	default:
		return nil
	}
}

// MakeTxn returns the sub-txn of a MultiTxn for an op of type op with txn
// record body, encoding the body as PrepRequestProcessor does.
func MakeTxn(op OpCode, body Record) Txn {
	return Txn{Type: op, Data: Marshal(body)}
}

// Body decodes the sub-txn's record. Like DataTree.processTxn it accepts only
// the types create, createTTL, createContainer, delete, deleteContainer,
// setData, error and check, and like ByteBufferInputStream.byteBuffer2Record
// it ignores bytes after the record.
func (t *Txn) Body() (Record, error) {
	switch t.Type {
	case OpCreate, OpCreateTTL, OpCreateContainer, OpDelete, OpDeleteContainer,
		OpSetData, OpError, OpCheck:
	default:
		return nil, fmt.Errorf("%w: invalid type of op %v in a multi txn", ErrInvalidRecord, t.Type)
	}
	body := NewTxn(t.Type)
	d := NewDecoder(t.Data)
	body.Decode(d)
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("multi sub-txn %v: %w", t.Type, err)
	}
	return body, nil
}

// TxnEntry is one transaction as a txn log record, and a PROPOSAL or INFORM
// packet's data, holds it: the header, the record for its type, and the
// digest if one was appended. Encode is Util.marshallTxnEntry and Decode is
// SerializeUtils.deserializeTxn, including its tolerance of old formats: a
// create txn that ends early is re-read as a CreateTxnV0, a closeSession with
// no (or a short) body yields a nil Txn, and a missing or short digest yields
// a nil Digest. Bytes after the digest are ignored, as in Java.
type TxnEntry struct {
	Header TxnHeader
	Txn    Record     // see NewTxn; never a *CheckVersionTxn at top level
	Digest *TxnDigest // nil when absent
}

// Encode implements Record.
func (r *TxnEntry) Encode(e *Encoder) {
	r.Header.Encode(e)
	if r.Txn != nil {
		r.Txn.Encode(e)
	}
	if r.Digest != nil {
		r.Digest.Encode(e)
	}
}

// Decode implements Record.
func (r *TxnEntry) Decode(d *Decoder) {
	r.Header.Decode(d)
	r.Txn, r.Digest = nil, nil
	if d.Err() != nil {
		return
	}
	body := NewTxn(r.Header.Type)
	if body == nil || r.Header.Type == OpCheck {
		d.Fail(fmt.Errorf("%w: unsupported txn type %v", ErrInvalidRecord, r.Header.Type))
		return
	}
	start := d.Offset()
	body.Decode(d)
	if d.truncated() {
		switch r.Header.Type {
		case OpCreate:
			d.restart(start)
			var v0 CreateTxnV0
			v0.Decode(d)
			body = &CreateTxn{Path: v0.Path, Data: v0.Data, ACL: v0.ACL, Ephemeral: v0.Ephemeral, ParentCVersion: -1}
		case OpCloseSession:
			// Java's failed read has consumed the input, so no digest follows.
			d.restart(len(d.buf))
			return
		}
	}
	if d.Err() != nil {
		return
	}
	r.Txn = body
	if d.Remaining() > 0 {
		digest := new(TxnDigest)
		digest.Decode(d)
		if d.truncated() {
			d.restart(len(d.buf))
			return
		}
		r.Digest = digest
	}
}
