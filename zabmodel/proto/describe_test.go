package proto_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

func TestDescribe(t *testing.T) {
	stat := proto.Stat{Czxid: 0x100000003, Mzxid: 0x100000003, Pzxid: 0x100000003, Ctime: 1000, Mtime: 1000, DataLength: 3}
	statText := "{czxid=0x100000003 mzxid=0x100000003 ctime=1000 mtime=1000 version=0 cversion=0 aversion=0" +
		" ephemeralOwner=0x0 dataLength=3 numChildren=0 pzxid=0x100000003}"
	cases := []struct {
		record proto.Record
		want   string
	}{
		{&proto.CreateRequest{Path: "/a", Data: []byte("abc"), ACL: proto.OpenACLUnsafe, Flags: proto.EphemeralSequential},
			"create /a data=3B mode=EPHEMERAL_SEQUENTIAL acl=[world:anyone:cdrwa]"},
		{&proto.SetDataRequest{Path: "/my node", Version: -1}, `setData "/my node" data=nil version=-1`},
		{&proto.GetChildrenRequest{Path: "/a", Watch: true}, "getChildren /a watch=true"},
		{&proto.MultiRequest{Ops: []proto.MultiOp{
			{Type: proto.OpCreate2, Request: &proto.CreateRequest{Path: "/a", Data: []byte{}, ACL: proto.CreatorAllACL}},
			{Type: proto.OpCheck, Request: &proto.CheckVersionRequest{Path: "/b", Version: 3}},
		}}, "multi [create2 /a data=0B mode=PERSISTENT acl=[auth::cdrwa]; check /b version=3]"},
		{&proto.MultiResponse{Results: []proto.MultiResult{
			{Type: proto.OpCreate, Response: &proto.CreateResponse{Path: "/a"}},
			{Type: proto.OpError, Err: proto.RuntimeInconsistency},
			{Type: proto.OpDelete},
		}}, "results=[create path=/a; error err=RUNTIMEINCONSISTENCY; delete]"},
		{&proto.GetDataResponse{Data: []byte("abc"), Stat: stat}, "data=3B stat=" + statText},
		{&proto.GetChildrenResponse{Children: []string{"b", "a b"}}, `children=[b "a b"]`},
		{&proto.WatcherEvent{Type: proto.EventNodeCreated, State: proto.StateSyncConnected, Path: "/a"},
			"event NodeCreated /a state=SyncConnected"},
		{&proto.ConnectRequest{TimeoutMilliseconds: 30000, Password: make([]byte, 16), OmitReadOnly: true},
			"connect lastZxidSeen=0x0 timeout=30000ms session=0x0 password=16B readOnly=absent protocolVersion=0"},
		{&proto.TxnEntry{
			Header: proto.TxnHeader{ClientID: 0x10000abcd, Cxid: 5, Zxid: 0x100000003, Time: 1000, Type: proto.OpMulti},
			Txn: &proto.MultiTxn{Txns: []proto.Txn{
				proto.MakeTxn(proto.OpCreate, &proto.CreateTxn{Path: "/a", ParentCVersion: 1, ACL: proto.OpenACLUnsafe}),
				proto.MakeTxn(proto.OpError, &proto.ErrorTxn{Err: proto.NoNode}),
				{Type: proto.OpDelete, Data: []byte{1}},
			}},
			Digest: &proto.TxnDigest{Version: 2, TreeDigest: 0xff},
		}, "txn session=0x10000abcd cxid=5 zxid=0x100000003 time=1000 type=multi" +
			" multi [create /a data=nil ephemeral=false parentCVersion=1 acl=[world:anyone:cdrwa];" +
			" error err=NONODE; delete data=1B (undecodable)] digest=2:0xff"},
		{&proto.CloseSessionTxn{PathsToDelete: []string{"/e1", "/e2"}}, "closeSession delete=[/e1 /e2]"},
		{&proto.FileHeader{Magic: proto.SnapshotMagic, Version: 2, DBID: -1}, "magic=0x5a4b534e version=2 dbid=-1"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, proto.Describe(c.record))
	}
}

func TestDescribeHeaders(t *testing.T) {
	assert.Equal(t, "reply xid=5 zxid=0x100000003 err=NONODE",
		proto.DescribeReply(proto.ReplyHeader{Xid: 5, Zxid: 0x100000003, Err: proto.NoNode}, nil))
	assert.Equal(t, "reply xid=5 zxid=0x100000003 err=OK path=/lock/seq-0000000000",
		proto.DescribeReply(proto.ReplyHeader{Xid: 5, Zxid: 0x100000003}, &proto.CreateResponse{Path: "/lock/seq-0000000000"}))
	assert.Equal(t, "reply xid=-1 zxid=-1 err=OK event NodeDeleted /a state=SyncConnected",
		proto.DescribeReply(proto.ReplyHeader{Xid: proto.NotificationXid, Zxid: -1},
			&proto.WatcherEvent{Type: proto.EventNodeDeleted, State: proto.StateSyncConnected, Path: "/a"}))
	assert.Equal(t, "request xid=5 create2 /a data=1B mode=CONTAINER acl=[]",
		proto.DescribeRequest(proto.RequestHeader{Xid: 5, Type: proto.OpCreate2},
			&proto.CreateRequest{Path: "/a", Data: []byte("x"), ACL: []proto.ACL{}, Flags: proto.Container}))
	assert.Equal(t, "request xid=-2 ping", proto.DescribeRequest(proto.RequestHeader{Xid: proto.PingXid, Type: proto.OpPing}, nil))
}

// TestDescribeDeterministic renders every record type twice and requires
// the same single line.
func TestDescribeDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := rapid.SampledFrom(recordCases).Draw(t, "type").gen.Draw(t, "record")
		text := proto.Describe(r)
		assert.Equal(t, text, proto.Describe(r))
		assert.NotContains(t, text, "\n")
		assert.NotEmpty(t, text)
	})
}
