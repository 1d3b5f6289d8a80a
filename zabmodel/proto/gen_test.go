package proto_test

import (
	"reflect"
	"unicode"

	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// This file holds the rapid generators for every record type, shared by the
// round-trip, truncation and fuzz tests.

// bmp is every character a Java string can carry through jute unchanged:
// the Basic Multilingual Plane without the surrogate range. Supplementary
// characters are exercised separately, because jute does not round-trip them.
var bmp = &unicode.RangeTable{R16: []unicode.Range16{{Lo: 0, Hi: 0xd7ff, Stride: 1}, {Lo: 0xe000, Hi: 0xffff, Stride: 1}}}

// javaString favours path-like characters so that paths look like paths,
// and mixes in the rest of the BMP.
var javaString = rapid.StringOfN(rapid.OneOf(
	rapid.RuneFrom([]rune("/abc.-_0")),
	rapid.RuneFrom(nil, bmp),
), 0, 12, -1)

// nilOr draws nil or a value of g, so that jute's -1 (null) and 0 (empty)
// lengths are both exercised.
func nilOr[S ~[]E, E any](g *rapid.Generator[S]) *rapid.Generator[S] {
	return rapid.Custom(func(t *rapid.T) S {
		if rapid.Bool().Draw(t, "nil") {
			return nil
		}
		return g.Draw(t, "slice")
	})
}

var (
	bytesGen   = nilOr(rapid.SliceOfN(rapid.Byte(), 0, 16))
	stringsGen = nilOr(rapid.SliceOfN(javaString, 0, 4))

	// leafConfig covers records made of ints, strings and buffers.
	leafConfig = rapid.MakeConfig{Types: map[reflect.Type]*rapid.Generator[any]{
		reflect.TypeFor[string]():   javaString.AsAny(),
		reflect.TypeFor[[]byte]():   bytesGen.AsAny(),
		reflect.TypeFor[[]string](): stringsGen.AsAny(),
	}}

	aclsGen        = nilOr(rapid.SliceOfN(rapid.MakeCustom[proto.ACL](leafConfig), 0, 3))
	idsGen         = nilOr(rapid.SliceOfN(rapid.MakeCustom[proto.ID](leafConfig), 0, 3))
	clientInfosGen = nilOr(rapid.SliceOfN(rapid.MakeCustom[proto.ClientInfo](leafConfig), 0, 3))
	txnsGen        = nilOr(rapid.SliceOfN(rapid.MakeCustom[proto.Txn](leafConfig), 0, 3))

	// recordConfig covers every record without an interface field.
	recordConfig = rapid.MakeConfig{Types: map[reflect.Type]*rapid.Generator[any]{
		reflect.TypeFor[string]():             javaString.AsAny(),
		reflect.TypeFor[[]byte]():             bytesGen.AsAny(),
		reflect.TypeFor[[]string]():           stringsGen.AsAny(),
		reflect.TypeFor[[]proto.ACL]():        aclsGen.AsAny(),
		reflect.TypeFor[[]proto.ID]():         idsGen.AsAny(),
		reflect.TypeFor[[]proto.ClientInfo](): clientInfosGen.AsAny(),
		reflect.TypeFor[[]proto.Txn]():        txnsGen.AsAny(),
	}}
)

// recordCase is one record type under test.
type recordCase struct {
	name string
	new  func() proto.Record
	gen  *rapid.Generator[proto.Record]
	// lenient marks records whose decoder accepts some prefixes of a valid
	// encoding, because Java tolerates a missing trailing field.
	lenient bool
}

// made is the case for a record type that rapid.Make can build.
func made[T any, P proto.RecordPointer[T]]() recordCase {
	g := rapid.MakeCustom[T](recordConfig)
	return custom[T, P](func(t *rapid.T) P {
		v := g.Draw(t, "record")
		return &v
	})
}

// custom is the case for a record type with its own generator.
func custom[T any, P proto.RecordPointer[T]](draw func(*rapid.T) P) recordCase {
	var zero T
	return recordCase{
		name: reflect.TypeOf(zero).Name(),
		new:  func() proto.Record { return P(new(T)) },
		gen:  rapid.Custom(func(t *rapid.T) proto.Record { return draw(t) }),
	}
}

func lenient(c recordCase) recordCase {
	c.lenient = true
	return c
}

// drawRecord draws a record of type T.
func drawRecord[T any, P proto.RecordPointer[T]](t *rapid.T, label string) P {
	v := rapid.MakeCustom[T](recordConfig).Draw(t, label)
	return &v
}

// drawMultiRequest draws ops of the types MultiOperationRecord accepts, all
// reads or all writes.
func drawMultiRequest(t *rapid.T) *proto.MultiRequest {
	read := rapid.Bool().Draw(t, "read")
	n := rapid.IntRange(0, 4).Draw(t, "ops")
	var r proto.MultiRequest
	for i := 0; i < n; i++ {
		var op proto.MultiOp
		if read {
			op.Type = rapid.SampledFrom([]proto.OpCode{proto.OpGetChildren, proto.OpGetData}).Draw(t, "type")
		} else {
			op.Type = rapid.SampledFrom([]proto.OpCode{
				proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer, proto.OpCreateTTL,
				proto.OpDelete, proto.OpSetData, proto.OpCheck,
			}).Draw(t, "type")
		}
		switch op.Type {
		case proto.OpCreate, proto.OpCreate2, proto.OpCreateContainer:
			op.Request = drawRecord[proto.CreateRequest](t, "create")
		case proto.OpCreateTTL:
			op.Request = drawRecord[proto.CreateTTLRequest](t, "createTTL")
		case proto.OpDelete:
			op.Request = drawRecord[proto.DeleteRequest](t, "delete")
		case proto.OpSetData:
			op.Request = drawRecord[proto.SetDataRequest](t, "setData")
		case proto.OpCheck:
			op.Request = drawRecord[proto.CheckVersionRequest](t, "check")
		case proto.OpGetChildren:
			op.Request = drawRecord[proto.GetChildrenRequest](t, "getChildren")
		case proto.OpGetData:
			op.Request = drawRecord[proto.GetDataRequest](t, "getData")
		}
		r.Ops = append(r.Ops, op)
	}
	return &r
}

func drawMultiResponse(t *rapid.T) *proto.MultiResponse {
	n := rapid.IntRange(0, 4).Draw(t, "results")
	var r proto.MultiResponse
	for i := 0; i < n; i++ {
		res := proto.MultiResult{Type: rapid.SampledFrom([]proto.OpCode{
			proto.OpCreate, proto.OpCreate2, proto.OpDelete, proto.OpCheck, proto.OpSetData,
			proto.OpGetChildren, proto.OpGetData, proto.OpError,
		}).Draw(t, "type")}
		switch res.Type {
		case proto.OpCreate:
			res.Response = drawRecord[proto.CreateResponse](t, "create")
		case proto.OpCreate2:
			res.Response = drawRecord[proto.Create2Response](t, "create2")
		case proto.OpSetData:
			res.Response = drawRecord[proto.SetDataResponse](t, "setData")
		case proto.OpGetChildren:
			res.Response = drawRecord[proto.GetChildrenResponse](t, "getChildren")
		case proto.OpGetData:
			res.Response = drawRecord[proto.GetDataResponse](t, "getData")
		case proto.OpError:
			res.Err = proto.Code(rapid.Int32().Draw(t, "err"))
		}
		r.Results = append(r.Results, res)
	}
	return &r
}

// txnTypes are the TxnHeader types SerializeUtils.deserializeTxn accepts.
var txnTypes = []proto.OpCode{
	proto.OpCreateSession, proto.OpCloseSession, proto.OpCreate, proto.OpCreate2,
	proto.OpCreateTTL, proto.OpCreateContainer, proto.OpDelete, proto.OpDeleteContainer,
	proto.OpReconfig, proto.OpSetData, proto.OpSetACL, proto.OpError, proto.OpMulti,
}

func drawTxnBody(t *rapid.T, op proto.OpCode) proto.Record {
	switch op {
	case proto.OpCreateSession:
		return drawRecord[proto.CreateSessionTxn](t, "body")
	case proto.OpCloseSession:
		return drawRecord[proto.CloseSessionTxn](t, "body")
	case proto.OpCreate, proto.OpCreate2:
		return drawRecord[proto.CreateTxn](t, "body")
	case proto.OpCreateTTL:
		return drawRecord[proto.CreateTTLTxn](t, "body")
	case proto.OpCreateContainer:
		return drawRecord[proto.CreateContainerTxn](t, "body")
	case proto.OpDelete, proto.OpDeleteContainer:
		return drawRecord[proto.DeleteTxn](t, "body")
	case proto.OpReconfig, proto.OpSetData:
		return drawRecord[proto.SetDataTxn](t, "body")
	case proto.OpSetACL:
		return drawRecord[proto.SetACLTxn](t, "body")
	case proto.OpError:
		return drawRecord[proto.ErrorTxn](t, "body")
	default:
		return drawRecord[proto.MultiTxn](t, "body")
	}
}

func drawTxnEntry(t *rapid.T) *proto.TxnEntry {
	var e proto.TxnEntry
	e.Header = *drawRecord[proto.TxnHeader](t, "header")
	e.Header.Type = rapid.SampledFrom(txnTypes).Draw(t, "type")
	if e.Header.Type == proto.OpCloseSession && rapid.Bool().Draw(t, "pre-3.6") {
		// A closeSession logged before 3.6 has no body and no digest.
		return &e
	}
	e.Txn = drawTxnBody(t, e.Header.Type)
	if rapid.Bool().Draw(t, "digest") {
		e.Digest = drawRecord[proto.TxnDigest](t, "digest")
	}
	return &e
}

// recordCases lists every record type of the package; TestRecordCasesComplete
// checks that none is missing.
var recordCases = []recordCase{
	made[proto.ID](), made[proto.ACL](), made[proto.Stat](), made[proto.StatPersisted](),
	made[proto.ClientInfo](),
	lenient(custom(func(t *rapid.T) *proto.ConnectRequest {
		r := drawRecord[proto.ConnectRequest](t, "record")
		r.ReadOnly = r.ReadOnly && !r.OmitReadOnly
		return r
	})),
	lenient(custom(func(t *rapid.T) *proto.ConnectResponse {
		r := drawRecord[proto.ConnectResponse](t, "record")
		r.ReadOnly = r.ReadOnly && !r.OmitReadOnly
		return r
	})),
	made[proto.RequestHeader](), made[proto.ReplyHeader](), made[proto.WatcherEvent](),
	made[proto.AuthPacket](), made[proto.SetWatches](), made[proto.SetWatches2](),
	made[proto.MultiHeader](),
	custom(drawMultiRequest), custom(drawMultiResponse),
	made[proto.CreateRequest](), made[proto.CreateTTLRequest](), made[proto.CreateResponse](),
	made[proto.Create2Response](), made[proto.DeleteRequest](), made[proto.ExistsRequest](),
	made[proto.ExistsResponse](), made[proto.GetDataRequest](), made[proto.GetDataResponse](),
	made[proto.SetDataRequest](), made[proto.SetDataResponse](), made[proto.GetACLRequest](),
	made[proto.GetACLResponse](), made[proto.SetACLRequest](), made[proto.SetACLResponse](),
	made[proto.GetChildrenRequest](), made[proto.GetChildrenResponse](),
	made[proto.GetChildren2Request](), made[proto.GetChildren2Response](),
	made[proto.GetAllChildrenNumberRequest](), made[proto.GetAllChildrenNumberResponse](),
	made[proto.SyncRequest](), made[proto.SyncResponse](), made[proto.CheckVersionRequest](),
	made[proto.ReconfigRequest](), made[proto.AddWatchRequest](), made[proto.CheckWatchesRequest](),
	made[proto.RemoveWatchesRequest](), made[proto.GetEphemeralsRequest](),
	made[proto.GetEphemeralsResponse](), made[proto.WhoAmIResponse](), made[proto.ErrorResponse](),
	made[proto.GetSASLRequest](), made[proto.SetSASLResponse](),
	made[proto.TxnHeader](), made[proto.CreateTxn](), made[proto.CreateTxnV0](),
	made[proto.CreateTTLTxn](), made[proto.CreateContainerTxn](), made[proto.DeleteTxn](),
	made[proto.SetDataTxn](), made[proto.CheckVersionTxn](), made[proto.SetACLTxn](),
	made[proto.CreateSessionTxn](), made[proto.CloseSessionTxn](), made[proto.ErrorTxn](),
	made[proto.Txn](), made[proto.MultiTxn](), made[proto.TxnDigest](),
	lenient(custom(drawTxnEntry)),
	made[proto.LearnerInfo](), made[proto.QuorumPacket](), made[proto.FileHeader](),
}
