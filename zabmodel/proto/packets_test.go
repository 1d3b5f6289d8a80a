package proto_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

func TestCheckPacketLength(t *testing.T) {
	require.NoError(t, proto.CheckPacketLength(0))
	require.NoError(t, proto.CheckPacketLength(0xfffff))
	require.ErrorIs(t, proto.CheckPacketLength(0x100000), proto.ErrPacketLength)
	require.ErrorIs(t, proto.CheckPacketLength(-1), proto.ErrPacketLength)

	// The largest setData that fits: header, path, data and version.
	path := "/a"
	room := proto.MaxBufferBytes - 8 - (4 + len(path)) - 4 - 4
	msg := proto.Marshal(&proto.RequestHeader{Xid: 1, Type: proto.OpSetData},
		&proto.SetDataRequest{Path: path, Data: make([]byte, room), Version: -1})
	require.NoError(t, proto.CheckPacketLength(len(msg)))
	msg = proto.Marshal(&proto.RequestHeader{Xid: 1, Type: proto.OpSetData},
		&proto.SetDataRequest{Path: path, Data: make([]byte, room+1), Version: -1})
	require.ErrorIs(t, proto.CheckPacketLength(len(msg)), proto.ErrPacketLength)
}

func TestDecodeRequest(t *testing.T) {
	create := &proto.CreateRequest{Path: "/a", Data: []byte("x"), ACL: proto.OpenACLUnsafe}
	h, body, err := proto.DecodeRequest(proto.Marshal(&proto.RequestHeader{Xid: 7, Type: proto.OpCreate2}, create))
	require.NoError(t, err)
	assert.Equal(t, proto.RequestHeader{Xid: 7, Type: proto.OpCreate2}, h)
	assert.Equal(t, create, body)

	// Ops without a body.
	for _, op := range []proto.OpCode{proto.OpPing, proto.OpCloseSession, proto.OpWhoAmI} {
		h, body, err = proto.DecodeRequest(proto.Marshal(&proto.RequestHeader{Xid: 1, Type: op}))
		require.NoError(t, err)
		assert.Equal(t, op, h.Type)
		assert.Nil(t, body)
	}

	// A body that does not decode still yields the header, so that the
	// server can answer MarshallingError to the right xid.
	h, body, err = proto.DecodeRequest(proto.Marshal(&proto.RequestHeader{Xid: 9, Type: proto.OpGetData}))
	require.ErrorIs(t, err, proto.ErrTruncated)
	assert.Equal(t, int32(9), h.Xid)
	assert.Nil(t, body)

	_, _, err = proto.DecodeRequest([]byte{0, 0})
	require.ErrorIs(t, err, proto.ErrTruncated)

	// Trailing bytes are ignored, as by the server.
	_, body, err = proto.DecodeRequest(append(proto.Marshal(&proto.RequestHeader{Type: proto.OpSync},
		&proto.SyncRequest{Path: "/"}), 1, 2, 3))
	require.NoError(t, err)
	assert.Equal(t, &proto.SyncRequest{Path: "/"}, body)
}

func TestDecodeReply(t *testing.T) {
	ok := proto.ReplyHeader{Xid: 5, Zxid: 0x100000003}
	h, body, err := proto.DecodeReply(proto.OpCreate, proto.Marshal(&ok, &proto.CreateResponse{Path: "/a"}))
	require.NoError(t, err)
	assert.Equal(t, ok, h)
	assert.Equal(t, &proto.CreateResponse{Path: "/a"}, body)

	// An error reply is the header alone.
	failed := proto.ReplyHeader{Xid: 5, Zxid: 0x100000003, Err: proto.NodeExists}
	h, body, err = proto.DecodeReply(proto.OpCreate, proto.Marshal(&failed))
	require.NoError(t, err)
	assert.Equal(t, failed, h)
	assert.Nil(t, body)

	// A notification carries a WatcherEvent whatever op the caller names.
	note := proto.ReplyHeader{Xid: proto.NotificationXid, Zxid: -1}
	event := &proto.WatcherEvent{Type: proto.EventNodeDeleted, State: proto.StateSyncConnected, Path: "/a"}
	_, body, err = proto.DecodeReply(proto.OpGetData, proto.Marshal(&note, event))
	require.NoError(t, err)
	assert.Equal(t, event, body)

	// Ping and auth replies have no body.
	for _, xid := range []int32{proto.PingXid, proto.AuthXid} {
		_, body, err = proto.DecodeReply(proto.OpGetData, proto.Marshal(&proto.ReplyHeader{Xid: xid}))
		require.NoError(t, err)
		assert.Nil(t, body)
	}

	_, _, err = proto.DecodeReply(proto.OpGetData, proto.Marshal(&ok))
	require.ErrorIs(t, err, proto.ErrTruncated)
}

// TestRequestResponseRecords checks the op-to-record tables for every valid
// op, and that each record decodes what it encodes.
func TestRequestResponseRecords(t *testing.T) {
	noRequest := map[proto.OpCode]bool{
		proto.OpPing: true, proto.OpCloseSession: true, proto.OpWhoAmI: true,
		proto.OpCreateSession: true, proto.OpDeleteContainer: true,
	}
	noResponse := map[proto.OpCode]bool{
		proto.OpDelete: true, proto.OpDeleteContainer: true, proto.OpCloseSession: true,
		proto.OpSetWatches: true, proto.OpSetWatches2: true, proto.OpCheckWatches: true,
		proto.OpRemoveWatches: true, proto.OpPing: true, proto.OpAuth: true, proto.OpCreateSession: true,
	}
	for _, java := range javaOpCodes {
		op := proto.OpCode(java.value)
		if !op.IsValid() && op != proto.OpAuth && op != proto.OpSASL {
			assert.Nil(t, proto.NewRequest(op), "%v", op)
			continue
		}
		assert.Equal(t, noRequest[op], proto.NewRequest(op) == nil, "request of %v", op)
		assert.Equal(t, noResponse[op], proto.NewResponse(op) == nil, "response of %v", op)
	}
	assert.IsType(t, &proto.SetDataResponse{}, proto.NewResponse(proto.OpCheck))
	assert.IsType(t, &proto.GetDataResponse{}, proto.NewResponse(proto.OpReconfig))
	assert.IsType(t, &proto.ErrorResponse{}, proto.NewResponse(proto.OpAddWatch))
	assert.IsType(t, &proto.Create2Response{}, proto.NewResponse(proto.OpCreateContainer))
}

func TestConnectReadOnlyFlag(t *testing.T) {
	modern := &proto.ConnectRequest{TimeoutMilliseconds: 30000, Password: make([]byte, 16), ReadOnly: true}
	old := &proto.ConnectRequest{TimeoutMilliseconds: 30000, Password: make([]byte, 16), OmitReadOnly: true}
	assert.Len(t, proto.Marshal(modern), len(proto.Marshal(old))+1)

	var got proto.ConnectRequest
	require.NoError(t, proto.Unmarshal(proto.Marshal(old), &got))
	assert.True(t, got.OmitReadOnly, "no flag byte means an old client")
	require.NoError(t, proto.Unmarshal(proto.Marshal(modern), &got))
	assert.False(t, got.OmitReadOnly)
	assert.True(t, got.ReadOnly)

	// Only a complete record is an old client; a cut inside it is an error.
	b := proto.Marshal(old)
	require.ErrorIs(t, proto.Unmarshal(b[:len(b)-1], &got), proto.ErrTruncated)

	var resp proto.ConnectResponse
	require.NoError(t, proto.Unmarshal(proto.Marshal(&proto.ConnectResponse{SessionID: 1, OmitReadOnly: true}), &resp))
	assert.True(t, resp.OmitReadOnly)
}

func TestMultiRequestRules(t *testing.T) {
	header := func(op proto.OpCode) *proto.MultiHeader { return &proto.MultiHeader{Type: op, Err: -1} }
	end := &proto.MultiHeader{Type: -1, Done: true, Err: -1}

	var m proto.MultiRequest
	require.NoError(t, proto.Unmarshal(proto.Marshal(end), &m))
	assert.Empty(t, m.Ops)

	err := proto.Unmarshal(proto.Marshal(header(proto.OpSetACL), &proto.SetACLRequest{Path: "/a"}, end), &m)
	require.ErrorIs(t, err, proto.ErrInvalidRecord)
	assert.ErrorContains(t, err, "invalid type of op setACL")

	err = proto.Unmarshal(proto.Marshal(
		header(proto.OpGetData), &proto.GetDataRequest{Path: "/a"},
		header(proto.OpDelete), &proto.DeleteRequest{Path: "/a"}, end), &m)
	require.ErrorIs(t, err, proto.ErrInvalidRecord)
	assert.ErrorContains(t, err, "mixes read and write")

	// The err field of an op header is ignored, as in Java.
	require.NoError(t, proto.Unmarshal(proto.Marshal(
		&proto.MultiHeader{Type: proto.OpCheck, Err: 5}, &proto.CheckVersionRequest{Path: "/a"}, end), &m))
	assert.Equal(t, []proto.MultiOp{{Type: proto.OpCheck, Request: &proto.CheckVersionRequest{Path: "/a"}}}, m.Ops)

	var r proto.MultiResponse
	err = proto.Unmarshal(proto.Marshal(&proto.MultiHeader{Type: proto.OpSetACL}, end), &r)
	require.ErrorIs(t, err, proto.ErrInvalidRecord)
	// An error result takes its code from the ErrorResponse body.
	require.NoError(t, proto.Unmarshal(proto.Marshal(
		&proto.MultiHeader{Type: proto.OpError, Err: proto.NoNode}, &proto.ErrorResponse{Err: proto.BadVersion}, end), &r))
	assert.Equal(t, []proto.MultiResult{{Type: proto.OpError, Err: proto.BadVersion}}, r.Results)
}

// TestTxnEntryOldFormats follows SerializeUtils.deserializeTxn's tolerance of
// logs written by older servers.
func TestTxnEntryOldFormats(t *testing.T) {
	hdr := proto.TxnHeader{ClientID: 1, Cxid: 2, Zxid: 0x100000001, Time: 3, Type: proto.OpCreate}
	v0 := proto.CreateTxnV0{Path: "/a", Data: []byte("x"), ACL: proto.OpenACLUnsafe, Ephemeral: true}
	var e proto.TxnEntry
	require.NoError(t, proto.Unmarshal(proto.Marshal(&hdr, &v0), &e))
	assert.Equal(t, &proto.CreateTxn{Path: "/a", Data: []byte("x"), ACL: proto.OpenACLUnsafe, Ephemeral: true, ParentCVersion: -1}, e.Txn)
	assert.Nil(t, e.Digest)

	// A create2 has no such fallback.
	hdr.Type = proto.OpCreate2
	require.ErrorIs(t, proto.Unmarshal(proto.Marshal(&hdr, &v0), &e), proto.ErrTruncated)

	// A closeSession from before 3.6 has no body.
	hdr.Type = proto.OpCloseSession
	require.NoError(t, proto.Unmarshal(proto.Marshal(&hdr), &e))
	assert.Nil(t, e.Txn)

	// A digest cut short is dropped.
	hdr.Type = proto.OpDelete
	b := proto.Marshal(&hdr, &proto.DeleteTxn{Path: "/a"}, &proto.TxnDigest{Version: 2, TreeDigest: 7})
	require.NoError(t, proto.Unmarshal(b[:len(b)-3], &e))
	assert.Equal(t, &proto.DeleteTxn{Path: "/a"}, e.Txn)
	assert.Nil(t, e.Digest)

	// Types SerializeUtils does not know are errors.
	for _, op := range []proto.OpCode{proto.OpCheck, proto.OpGetData, proto.OpPing} {
		hdr.Type = op
		require.ErrorIs(t, proto.Unmarshal(proto.Marshal(&hdr), &e), proto.ErrInvalidRecord, "%v", op)
	}
}

func TestSubTxns(t *testing.T) {
	body := &proto.SetDataTxn{Path: "/a", Data: []byte("x"), Version: 3}
	sub := proto.MakeTxn(proto.OpSetData, body)
	got, err := sub.Body()
	require.NoError(t, err)
	assert.Equal(t, body, got)

	// DataTree rejects types a multi cannot hold.
	for _, op := range []proto.OpCode{proto.OpSetACL, proto.OpCreate2, proto.OpMulti, proto.OpCreateSession} {
		sub := proto.Txn{Type: op, Data: sub.Data}
		_, err := sub.Body()
		require.ErrorIs(t, err, proto.ErrInvalidRecord, "%v", op)
	}
	_, err = (&proto.Txn{Type: proto.OpDelete, Data: []byte{0}}).Body()
	require.ErrorIs(t, err, proto.ErrTruncated)
}
