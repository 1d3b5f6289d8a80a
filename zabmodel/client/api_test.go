package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

func TestMultiSendsOpsAndReportsPerOpResults(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	stat := proto.Stat{Czxid: 7, Version: 2}
	s.onRequest = func(fc *fakeConn, h proto.RequestHeader, body proto.Record) {
		var resp proto.MultiResponse
		switch h.Type {
		case proto.OpMulti:
			if len(body.(*proto.MultiRequest).Ops) == 3 {
				resp.Results = []proto.MultiResult{{Type: proto.OpError, Err: proto.OK},
					{Type: proto.OpError, Err: proto.NodeExists}, {Type: proto.OpError, Err: proto.RuntimeInconsistency}}
			} else {
				resp.Results = []proto.MultiResult{{Type: proto.OpCreate, Response: &proto.CreateResponse{Path: "/q-0000000001"}},
					{Type: proto.OpSetData, Response: &proto.SetDataResponse{Stat: stat}}}
			}
		case proto.OpMultiRead:
			resp.Results = []proto.MultiResult{{Type: proto.OpGetData, Response: &proto.GetDataResponse{Data: []byte("d"), Stat: stat}},
				{Type: proto.OpError, Err: proto.NoNode}}
		}
		fc.reply(proto.ReplyHeader{Xid: h.Xid, Zxid: 0x200000001}, &resp)
	}
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	var results []MultiResult
	record := func(r MultiResult) { results = append(results, r) }
	require.NoError(t, c.Multi([]Op{CreateOp("/q-", []byte("x"), proto.OpenACLUnsafe, proto.PersistentSequential),
		SetDataOp("/a", []byte("y"), 1)}, record))
	require.NoError(t, c.Multi([]Op{CheckOp("/a", 1), CreateOp("/b", nil, proto.OpenACLUnsafe, proto.Persistent),
		DeleteOp("/c", -1)}, record))
	require.NoError(t, c.Multi([]Op{GetDataOp("/a"), GetChildrenOp("/missing")}, record))
	require.NoError(t, c.Multi(nil, record))
	bed.run(10 * ms)

	got := s.last().nonPing()
	require.Len(t, got, 3, "an empty multi sends nothing")
	assert.Equal(t, &proto.MultiRequest{Ops: []proto.MultiOp{
		{Type: proto.OpCheck, Request: &proto.CheckVersionRequest{Path: "/a", Version: 1}},
		{Type: proto.OpCreate, Request: &proto.CreateRequest{Path: "/b", ACL: proto.OpenACLUnsafe, Flags: proto.Persistent}},
		{Type: proto.OpDelete, Request: &proto.DeleteRequest{Path: "/c", Version: -1}},
	}}, got[1].body)
	assert.Equal(t, proto.OpMultiRead, got[2].header.Type)
	require.Len(t, results, 4)
	// The empty multi's callback is local: it runs before the replies to the others arrive, and it
	// was never written, so it has no xid and no session.
	assert.Equal(t, MultiResult{Err: proto.OK, Results: []OpResult{}}, results[0])
	assert.Equal(t, MultiResult{Err: proto.OK, Zxid: 0x200000001, Xid: 1, Session: 0x101, Results: []OpResult{
		{Type: proto.OpCreate, Path: "/q-0000000001"}, {Type: proto.OpSetData, Stat: stat}}}, results[1])
	assert.Equal(t, proto.NodeExists, results[2].Err, "the first error result that is not OK")
	assert.Len(t, results[2].Results, 3)
	assert.Equal(t, MultiResult{Err: proto.NoNode, Zxid: 0x200000001, Xid: 3, Session: 0x101, Results: []OpResult{
		{Type: proto.OpGetData, Data: []byte("d"), Stat: stat}, {Type: proto.OpError, Err: proto.NoNode}}}, results[3])
}

func TestResultsCarryTheReplyBodies(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	stat := proto.Stat{Czxid: 0x100000003, Mzxid: 0x100000004, Version: 3, NumChildren: 2}
	acl := []proto.ACL{{Perms: proto.PermRead, ID: proto.AnyoneID}}
	s.onRequest = func(fc *fakeConn, h proto.RequestHeader, body proto.Record) {
		var resp proto.Record
		switch h.Type {
		case proto.OpExists:
			resp = &proto.ExistsResponse{Stat: stat}
		case proto.OpGetChildren2:
			resp = &proto.GetChildren2Response{Children: []string{"b", "a"}, Stat: stat}
		case proto.OpGetACL:
			resp = &proto.GetACLResponse{ACL: acl, Stat: stat}
		case proto.OpSetACL:
			resp = &proto.SetACLResponse{Stat: stat}
		case proto.OpCreateTTL:
			resp = &proto.Create2Response{Path: "/t", Stat: stat}
		case proto.OpDelete:
			fc.reply(proto.ReplyHeader{Xid: h.Xid, Zxid: 9, Err: proto.NotEmpty}, nil)
			return
		}
		fc.reply(proto.ReplyHeader{Xid: h.Xid, Zxid: 8}, resp)
	}
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	var exists, setACL StatResult
	var children ChildrenResult
	var acls ACLResult
	var created CreateResult
	var deleted Result
	require.NoError(t, c.Exists("/a", nil, func(r StatResult) { exists = r }))
	require.NoError(t, c.GetChildren("/a", nil, func(r ChildrenResult) { children = r }))
	require.NoError(t, c.GetACL("/a", func(r ACLResult) { acls = r }))
	require.NoError(t, c.SetACL("/a", acl, 0, func(r StatResult) { setACL = r }))
	require.NoError(t, c.CreateTTL("/t", nil, proto.OpenACLUnsafe, proto.PersistentWithTTL, 5000, func(r CreateResult) { created = r }))
	require.NoError(t, c.Delete("/a", 3, func(r Result) { deleted = r }))
	bed.run(10 * ms)
	// Every result names the xid and the session it was written with.
	assert.Equal(t, StatResult{Zxid: 8, Xid: 1, Session: 0x101, Stat: stat}, exists)
	assert.Equal(t, ChildrenResult{Zxid: 8, Xid: 2, Session: 0x101, Children: []string{"b", "a"}, Stat: stat}, children)
	assert.Equal(t, ACLResult{Zxid: 8, Xid: 3, Session: 0x101, ACL: acl, Stat: stat}, acls)
	assert.Equal(t, StatResult{Zxid: 8, Xid: 4, Session: 0x101, Stat: stat}, setACL)
	assert.Equal(t, CreateResult{Zxid: 8, Xid: 5, Session: 0x101, Path: "/t", Stat: stat}, created)
	assert.Equal(t, Result{Err: proto.NotEmpty, Zxid: 9, Xid: 6, Session: 0x101}, deleted)
	got := s.last().nonPing()
	assert.Equal(t, &proto.CreateTTLRequest{Path: "/t", ACL: proto.OpenACLUnsafe, Flags: proto.PersistentWithTTL, TTL: 5000}, got[4].body)
}

func TestCreateOfAContainerIsSentAsCreateContainer(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	data := []byte("abc")
	require.NoError(t, c.Create("/box", data, proto.OpenACLUnsafe, proto.Container, nil))
	data[0] = 'X' // the client copied the data when the call was made
	bed.run(10 * ms)
	got := bed.servers[0].last().nonPing()
	require.Len(t, got, 1)
	assert.Equal(t, proto.OpCreateContainer, got[0].header.Type)
	assert.Equal(t, []byte("abc"), got[0].body.(*proto.CreateRequest).Data)
}

func TestDescribePacketRendersBothDirections(t *testing.T) {
	cases := map[string]struct {
		records []proto.Record
		want    string
	}{
		"connect request": {[]proto.Record{&proto.ConnectRequest{TimeoutMilliseconds: 4000, Password: make([]byte, 16)}},
			"request connect"},
		"connect response": {[]proto.Record{&proto.ConnectResponse{TimeoutMilliseconds: 4000, SessionID: 5, Password: make([]byte, 16)}},
			"reply connected"},
		"ping":   {[]proto.Record{&proto.RequestHeader{Xid: proto.PingXid, Type: proto.OpPing}}, "request xid=-2 ping"},
		"create": {[]proto.Record{&proto.RequestHeader{Xid: 3, Type: proto.OpCreate2}, &proto.CreateRequest{Path: "/a", ACL: proto.OpenACLUnsafe}}, "request xid=3 create2 /a"},
		"reply": {[]proto.Record{&proto.ReplyHeader{Xid: 3, Zxid: 0x100000002}, &proto.Create2Response{Path: "/a"}},
			"reply xid=3 zxid=0x100000002 err=OK body="},
		"notification": {[]proto.Record{&proto.ReplyHeader{Xid: -1, Zxid: -1}, &proto.WatcherEvent{Type: proto.EventNodeCreated, State: proto.StateSyncConnected, Path: "/a"}},
			"reply xid=-1"},
	}
	for name, tc := range cases {
		assert.Contains(t, DescribePacket(proto.Marshal(tc.records...)), tc.want, name)
	}
	assert.Equal(t, "? 3B", DescribePacket([]byte{1, 2, 3}))
}
