package checkers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// ms returns the virtual time n milliseconds into a run.
func ms(n int) clock.Time { return clock.Time(int64(n) * int64(clock.Millisecond)) }

// fixture drives a Recorder the way a runner would, with a committed log whose zxids it assigns:
// epoch 1, counters from 1.
type fixture struct {
	t    *testing.T
	r    *Recorder
	zxid int64
	xids map[int64]int32
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, r: NewRecorder(), zxid: 1 << 32, xids: map[int64]int32{}}
}

// commit appends a committed txn of session at time at, and returns its zxid.
func (f *fixture) commit(session int64, xid int32, typ proto.OpCode, body proto.Record, at clock.Time) int64 {
	f.zxid++
	require.NoError(f.t, f.r.Commit(proto.TxnEntry{
		Header: proto.TxnHeader{ClientID: session, Cxid: xid, Zxid: f.zxid, Time: int64(at) / int64(clock.Millisecond), Type: typ},
		Txn:    body,
	}, at))
	return f.zxid
}

// session commits a createSession for id with a 6 s timeout and records its facts.
func (f *fixture) session(client string, id int64, at clock.Time) {
	f.commit(id, 0, proto.OpCreateSession, &proto.CreateSessionTxn{TimeoutMilliseconds: 6000}, at)
	f.r.SessionStarted(id, client, 6*clock.Second)
}

func (f *fixture) nextXid(session int64) int32 {
	f.xids[session]++
	return f.xids[session]
}

// txnFor returns the txn a write produces on success, with the given created path for creates.
func txnFor(op Operation, version int32) (proto.OpCode, proto.Record) {
	switch op.Kind {
	case proto.OpCreate, proto.OpCreate2:
		if op.Mode.IsContainer() {
			return proto.OpCreateContainer, &proto.CreateContainerTxn{Path: op.Path, Data: op.Data, ACL: proto.OpenACLUnsafe, ParentCVersion: -1}
		}
		return op.Kind, &proto.CreateTxn{Path: op.Path, Data: op.Data, ACL: proto.OpenACLUnsafe, Ephemeral: op.Mode.IsEphemeral(), ParentCVersion: -1}
	case proto.OpSetData:
		return op.Kind, &proto.SetDataTxn{Path: op.Path, Data: op.Data, Version: version}
	case proto.OpDelete:
		return op.Kind, &proto.DeleteTxn{Path: op.Path}
	case proto.OpCloseSession:
		return op.Kind, &proto.CloseSessionTxn{}
	default:
		panic("txnFor: " + op.Kind.String())
	}
}

// write records a write by client on session that commits at commitAt with result code err
// (an error txn if not OK) and replies at ret. version is the new data version of a setData.
func (f *fixture) write(client string, session int64, op Operation, call, commitAt, ret clock.Time, err proto.Code, version int32) OpRef {
	op.Session, op.Xid = session, f.nextXid(session)
	ref := f.r.Call(client, call, op)
	var zxid int64
	if err == proto.OK {
		typ, body := txnFor(op, version)
		zxid = f.commit(session, op.Xid, typ, body, commitAt)
	} else {
		zxid = f.commit(session, op.Xid, proto.OpError, &proto.ErrorTxn{Err: err}, commitAt)
	}
	// The reply carries no stat: a full one would have to be computed, and every checker takes a
	// missing stat as "not recorded".
	reply := Reply{Err: err, Zxid: zxid}
	if err == proto.OK && op.Kind == proto.OpCreate {
		reply.CreatedPath = op.Path
	}
	require.NoError(f.t, f.r.Reply(ref, ret, reply))
	return ref
}

// lost records a write whose reply never came: if commitAt is non-zero its txn (with code err)
// commits then, otherwise it never commits. The client reports CONNECTIONLOSS at ret, or the op
// stays pending if ret is zero.
func (f *fixture) lost(client string, session int64, op Operation, call, commitAt, ret clock.Time, version int32) OpRef {
	op.Session, op.Xid = session, f.nextXid(session)
	ref := f.r.Call(client, call, op)
	if commitAt != 0 {
		typ, body := txnFor(op, version)
		f.commit(session, op.Xid, typ, body, commitAt)
	}
	if ret != 0 {
		require.NoError(f.t, f.r.Fail(ref, ret, proto.ConnectionLoss, OutcomeUnknown))
	}
	return ref
}

// read records a replied read of the given kind at the current last zxid (or at zxid if non-zero).
func (f *fixture) read(client string, session int64, op Operation, call, ret clock.Time, reply Reply) OpRef {
	op.Session, op.Xid = session, f.nextXid(session)
	ref := f.r.Call(client, call, op)
	if reply.Zxid == 0 {
		reply.Zxid = f.zxid
	}
	require.NoError(f.t, f.r.Reply(ref, ret, reply))
	return ref
}

func (f *fixture) finish(end clock.Time) *History {
	h := f.r.Finish(end, nil)
	require.NoError(f.t, Validate(h))
	return h
}

func create(path, data string) Operation {
	return Operation{Kind: proto.OpCreate, Path: path, Data: []byte(data), Mode: proto.Persistent}
}

func createMode(path, data string, mode proto.CreateMode) Operation {
	return Operation{Kind: proto.OpCreate, Path: path, Data: []byte(data), Mode: mode}
}

func setData(path, data string, version int32) Operation {
	return Operation{Kind: proto.OpSetData, Path: path, Data: []byte(data), Version: version}
}

func deleteOp(path string, version int32) Operation {
	return Operation{Kind: proto.OpDelete, Path: path, Version: version}
}

func getData(path string, watch bool) Operation {
	return Operation{Kind: proto.OpGetData, Path: path, Watch: watch}
}

// setup creates the persistent parent a workload owns, as session 1 of client "setup".
func (f *fixture) setup(parent string) {
	f.session("setup", 1, ms(1))
	f.write("setup", 1, create(parent, ""), ms(2), ms(3), ms(4), proto.OK, 0)
}
