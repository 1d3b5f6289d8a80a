package client

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Every result carries Err, the code the request finished with (from the server's ReplyHeader, or
// CONNECTIONLOSS / SESSIONEXPIRED / AUTHFAILED when the client gave up on it: for a write such a code
// means the outcome is unknown), Zxid, the ReplyHeader's zxid (0 when no reply was read), and Xid
// and Session, the xid and the session id the request was written with (both 0 if it was never
// written to a connection). A checker finds a write of unknown outcome in the committed log by
// (Session, Xid): a txn header carries the client's session id and cxid. The other fields are set
// only when Err is OK, as Java passes null otherwise.

// Result is the outcome of a request whose reply has no body: delete, sync, addWatch,
// removeWatches, an auth packet, close.
type Result struct {
	Err     proto.Code
	Zxid    int64
	Xid     int32
	Session int64
}

// CreateResult is the outcome of a create: the path created (with the sequence number of a
// sequential node) and its Stat.
type CreateResult struct {
	Err     proto.Code
	Zxid    int64
	Xid     int32
	Session int64
	Path    string
	Stat    proto.Stat
}

// StatResult is the outcome of exists, setData and setACL. Exists of a missing node has Err NONODE.
type StatResult struct {
	Err     proto.Code
	Zxid    int64
	Xid     int32
	Session int64
	Stat    proto.Stat
}

// DataResult is the outcome of getData. Data is nil for a node created with null data.
type DataResult struct {
	Err     proto.Code
	Zxid    int64
	Xid     int32
	Session int64
	Data    []byte
	Stat    proto.Stat
}

// ChildrenResult is the outcome of getChildren (sent as getChildren2): the children's names in the
// server's order, and the node's Stat.
type ChildrenResult struct {
	Err      proto.Code
	Zxid     int64
	Xid      int32
	Session  int64
	Children []string
	Stat     proto.Stat
}

// ACLResult is the outcome of getACL.
type ACLResult struct {
	Err     proto.Code
	Zxid    int64
	Xid     int32
	Session int64
	ACL     []proto.ACL
	Stat    proto.Stat
}

// MultiResult is the outcome of a multi. Err is the ReplyHeader's code if it is not OK (Results is
// then nil); otherwise, as Java's EventThread computes it, the code of the first error result that
// is not OK, or OK.
type MultiResult struct {
	Err     proto.Code
	Zxid    int64
	Xid     int32
	Session int64
	Results []OpResult
}

// OpResult is one op's result in a multi, Java's OpResult subclasses flattened. Type is create
// (Path), create2 for createContainer and createTTL ops (Path, Stat), delete, setData (Stat), check,
// getData (Data, Stat), getChildren (Children), or error (Err, the op's own code: OK for ops before
// the failing one, its code for it, RUNTIMEINCONSISTENCY after it).
type OpResult struct {
	Type     proto.OpCode
	Err      proto.Code
	Path     string
	Stat     proto.Stat
	Data     []byte
	Children []string
}

// response returns p's response as T, or the zero T when the packet failed.
func response[T any](p *packet) T {
	var zero T
	if p.err != proto.OK || p.response == nil {
		return zero
	}
	r, ok := p.response.(T)
	if !ok {
		panic("client: reply to " + p.op().String() + " decoded as the wrong record")
	}
	return r
}

func resultOf(p *packet) Result {
	xid, session := p.wire()
	return Result{Err: p.err, Zxid: p.zxid, Xid: xid, Session: session}
}

func deliverResult(cb func(Result)) func(*packet) {
	if cb == nil {
		return nil
	}
	return func(p *packet) { cb(resultOf(p)) }
}

// deliverCreate reports a create; withStat is false for go-zookeeper, which decodes only the path.
func deliverCreate(cb func(CreateResult), withStat bool) func(*packet) {
	if cb == nil {
		return nil
	}
	return func(p *packet) { cb(createResultOf(p, withStat)) }
}

func createResultOf(p *packet, withStat bool) CreateResult {
	r := CreateResult{Err: p.err, Zxid: p.zxid}
	r.Xid, r.Session = p.wire()
	if p.err == proto.OK {
		switch resp := p.response.(type) {
		case *proto.Create2Response:
			r.Path, r.Stat = resp.Path, resp.Stat
		case *proto.CreateResponse:
			r.Path = resp.Path
		}
	}
	if !withStat {
		r.Stat = proto.Stat{}
	}
	return r
}

func deliverStat(cb func(StatResult)) func(*packet) {
	if cb == nil {
		return nil
	}
	return func(p *packet) { cb(statResultOf(p)) }
}

func statResultOf(p *packet) StatResult {
	r := StatResult{Err: p.err, Zxid: p.zxid}
	r.Xid, r.Session = p.wire()
	switch resp := p.response.(type) {
	case *proto.ExistsResponse:
		r.Stat = statIfOK(p, resp.Stat)
	case *proto.SetDataResponse:
		r.Stat = statIfOK(p, resp.Stat)
	case *proto.SetACLResponse:
		r.Stat = statIfOK(p, resp.Stat)
	}
	return r
}

// resultSink turns a finished packet into a typed callback's call (packet.sink).
type resultSink interface {
	deliverPacket(p *packet)
}

// CreateCallback is a create's callback as a value with a method (CreateWith).
type CreateCallback interface {
	CreateDone(CreateResult)
}

// StatCallback is a stat callback as a value with a method (ExistsWith).
type StatCallback interface {
	StatDone(StatResult)
}

type createSink struct {
	cb       CreateCallback
	withStat bool
}

func (s createSink) deliverPacket(p *packet) { s.cb.CreateDone(createResultOf(p, s.withStat)) }

type statSink struct{ cb StatCallback }

func (s statSink) deliverPacket(p *packet) { s.cb.StatDone(statResultOf(p)) }

func statIfOK(p *packet, s proto.Stat) proto.Stat {
	if p.err != proto.OK {
		return proto.Stat{}
	}
	return s
}

func deliverData(cb func(DataResult)) func(*packet) {
	if cb == nil {
		return nil
	}
	return func(p *packet) {
		r := DataResult{Err: p.err, Zxid: p.zxid}
		r.Xid, r.Session = p.wire()
		if resp := response[*proto.GetDataResponse](p); resp != nil {
			r.Data, r.Stat = resp.Data, resp.Stat
		}
		cb(r)
	}
}

func deliverChildren(cb func(ChildrenResult)) func(*packet) {
	if cb == nil {
		return nil
	}
	return func(p *packet) {
		r := ChildrenResult{Err: p.err, Zxid: p.zxid}
		r.Xid, r.Session = p.wire()
		if resp := response[*proto.GetChildren2Response](p); resp != nil {
			r.Children, r.Stat = resp.Children, resp.Stat
		}
		cb(r)
	}
}

func deliverACL(cb func(ACLResult)) func(*packet) {
	if cb == nil {
		return nil
	}
	return func(p *packet) {
		r := ACLResult{Err: p.err, Zxid: p.zxid}
		r.Xid, r.Session = p.wire()
		if resp := response[*proto.GetACLResponse](p); resp != nil {
			r.ACL, r.Stat = resp.ACL, resp.Stat
		}
		cb(r)
	}
}

// deliverMulti reports a multi, decoding its results as Java or, with goZookeeper, as go-zookeeper
// does.
func deliverMulti(cb func(MultiResult), goZookeeper bool) func(*packet) {
	if cb == nil {
		return nil
	}
	return func(p *packet) {
		r := MultiResult{Err: p.err, Zxid: p.zxid}
		r.Xid, r.Session = p.wire()
		if resp := response[*proto.MultiResponse](p); resp != nil {
			r.Results = make([]OpResult, 0, len(resp.Results))
			for _, res := range resp.Results {
				r.Results = append(r.Results, opResultOf(res))
			}
			for _, res := range r.Results {
				if res.Type == proto.OpError && res.Err != proto.OK {
					r.Err = res.Err
					break
				}
			}
		}
		if goZookeeper {
			goZookeeperMultiResults(p, &r)
		}
		cb(r)
	}
}

func opResultOf(res proto.MultiResult) OpResult {
	out := OpResult{Type: res.Type, Err: res.Err}
	switch resp := res.Response.(type) {
	case *proto.CreateResponse:
		out.Path = resp.Path
	case *proto.Create2Response:
		out.Path, out.Stat = resp.Path, resp.Stat
	case *proto.SetDataResponse:
		out.Stat = resp.Stat
	case *proto.GetDataResponse:
		out.Data, out.Stat = resp.Data, resp.Stat
	case *proto.GetChildrenResponse:
		out.Children = resp.Children
	}
	return out
}

// Op is one operation of a multi, made by CreateOp, CreateTTLOp, DeleteOp, SetDataOp, CheckOp,
// GetDataOp or GetChildrenOp (org.apache.zookeeper.Op).
type Op struct {
	typ     proto.OpCode
	path    string
	data    []byte
	acl     []proto.ACL
	mode    proto.CreateMode
	ttl     int64
	version int32
}

// CreateOp creates a node (Op.create). Its type is create, or createContainer for a container; a
// TTL mode is refused when the multi is issued, as Java's validate refuses it (use CreateTTLOp).
func CreateOp(path string, data []byte, acl []proto.ACL, mode proto.CreateMode) Op {
	typ := proto.OpCreate
	switch {
	case mode.IsTTL():
		typ = proto.OpCreateTTL
	case mode.IsContainer():
		typ = proto.OpCreateContainer
	}
	return Op{typ: typ, path: path, data: slices.Clone(data), acl: slices.Clone(acl), mode: mode, ttl: -1}
}

// CreateTTLOp creates a node with a time to live in milliseconds (Op.create with a ttl).
func CreateTTLOp(path string, data []byte, acl []proto.ACL, mode proto.CreateMode, ttl int64) Op {
	op := CreateOp(path, data, acl, mode)
	if mode.IsTTL() {
		// Op.create ignores the ttl of a mode without one.
		op.ttl = ttl
	}
	return op
}

// DeleteOp deletes a node if its version matches (-1: any).
func DeleteOp(path string, version int32) Op {
	return Op{typ: proto.OpDelete, path: path, version: version}
}

// SetDataOp sets a node's data if its version matches (-1: any).
func SetDataOp(path string, data []byte, version int32) Op {
	return Op{typ: proto.OpSetData, path: path, data: slices.Clone(data), version: version}
}

// CheckOp checks a node's version (-1: only that it exists).
func CheckOp(path string, version int32) Op {
	return Op{typ: proto.OpCheck, path: path, version: version}
}

// GetDataOp reads a node's data; a multi of reads is sent as multiRead.
func GetDataOp(path string) Op { return Op{typ: proto.OpGetData, path: path} }

// GetChildrenOp reads a node's children; a multi of reads is sent as multiRead.
func GetChildrenOp(path string) Op { return Op{typ: proto.OpGetChildren, path: path} }

func (o Op) isRead() bool { return o.typ == proto.OpGetData || o.typ == proto.OpGetChildren }

// validate is Op.validate.
func (o Op) validate() error {
	switch o.typ {
	case proto.OpCreate, proto.OpCreateContainer, proto.OpCreateTTL:
		return validateCreate(o.path, o.mode, o.ttl)
	case proto.OpDelete, proto.OpSetData, proto.OpCheck, proto.OpGetData, proto.OpGetChildren:
		return validatePath(o.path)
	default:
		return fmt.Errorf("%w: an Op must be made by one of the Op constructors", ErrInvalidArgument)
	}
}

// record is Op.toRequestRecord.
func (o Op) record() proto.MultiOp {
	var r proto.Record
	switch o.typ {
	case proto.OpCreate, proto.OpCreateContainer:
		r = &proto.CreateRequest{Path: o.path, Data: o.data, ACL: o.acl, Flags: o.mode}
	case proto.OpCreateTTL:
		r = &proto.CreateTTLRequest{Path: o.path, Data: o.data, ACL: o.acl, Flags: o.mode, TTL: o.ttl}
	case proto.OpDelete:
		r = &proto.DeleteRequest{Path: o.path, Version: o.version}
	case proto.OpSetData:
		r = &proto.SetDataRequest{Path: o.path, Data: o.data, Version: o.version}
	case proto.OpCheck:
		r = &proto.CheckVersionRequest{Path: o.path, Version: o.version}
	case proto.OpGetData:
		r = &proto.GetDataRequest{Path: o.path}
	case proto.OpGetChildren:
		r = &proto.GetChildrenRequest{Path: o.path}
	default:
		panic("client: op of unknown type " + o.typ.String())
	}
	return proto.MultiOp{Type: o.typ, Request: r}
}
