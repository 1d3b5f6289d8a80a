package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

func TestApplyCreateAndDelete(t *testing.T) {
	tree := New(Config{})
	r := tree.Apply(createEntry(1, 7, "/a", "x", false, 1))
	require.Equal(t, proto.OK, r.Err)
	assert.Equal(t, "/a", r.Path)
	assert.Nil(t, r.Stat, "create (not create2) returns no stat")
	r = tree.Apply(createEntry(2, 7, "/a/e", "", true, 1))
	require.Equal(t, proto.OK, r.Err)
	parent := statOf(tree, "/a")
	assert.Equal(t, proto.Stat{Czxid: 1, Mzxid: 1, Pzxid: 2, Ctime: 1001, Mtime: 1001, Cversion: 1, DataLength: 1, NumChildren: 1}, parent)
	assert.Equal(t, int64(7), statOf(tree, "/a/e").EphemeralOwner)
	assert.Equal(t, []string{"/a/e"}, tree.Ephemerals(7))

	r = tree.Apply(deleteEntry(3, 7, "/a/e"))
	require.Equal(t, proto.OK, r.Err)
	parent = statOf(tree, "/a")
	assert.Equal(t, int64(3), parent.Pzxid)
	assert.Equal(t, int32(2), parent.Cversion, "the client sees creates plus deletes")
	assert.Equal(t, int32(1), tree.nodes.get("/a").stat.Cversion, "the persisted cversion counts creates only")
	assert.Empty(t, tree.Ephemerals(7))
	assert.Equal(t, []int64{7}, tree.EphemeralSessions(), "Java keeps the emptied set")
	assert.Equal(t, int64(3), tree.LastProcessedZxid())
	assert.Equal(t, recomputeDigest(tree), tree.Digest())
}

func TestApplyCreateParentCVersion(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 1, "/p", "", false, 1))
	tree.Apply(createEntry(2, 1, "/p/a", "", false, -1))
	assert.Equal(t, int32(1), tree.nodes.get("/p").stat.Cversion, "-1 means the parent's cversion plus one")
	tree.Apply(createEntry(3, 1, "/p/b", "", false, 1))
	stat := tree.nodes.get("/p").stat
	assert.Equal(t, int32(1), stat.Cversion, "a replayed create never lowers cversion")
	assert.Equal(t, int64(2), stat.Pzxid, "nor moves pzxid")
	assert.Equal(t, int32(2), tree.nodes.get("/p").numChildren())
}

func TestApplyNodeExistsAdjustsTheParent(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 1, "/p", "", false, 1))
	tree.Apply(createEntry(2, 1, "/p/a", "", false, 1))
	r := tree.Apply(createEntry(5, 1, "/p/a", "", false, 4))
	assert.Equal(t, proto.NodeExists, r.Err)
	stat := tree.nodes.get("/p").stat
	assert.Equal(t, int32(4), stat.Cversion, "the NODEEXISTS fix-up takes the txn's cversion")
	assert.Equal(t, int64(5), stat.Pzxid)
	assert.Equal(t, int64(5), tree.LastProcessedZxid())
	r = tree.Apply(&proto.TxnEntry{Header: header(proto.OpCreate2, 1, 6), Txn: &proto.CreateTxn{Path: "/p/a", ParentCVersion: 9}})
	assert.Equal(t, proto.NodeExists, r.Err)
	assert.Equal(t, int32(4), tree.nodes.get("/p").stat.Cversion, "only create, not create2, is adjusted")
	r = tree.Apply(createEntry(7, 1, "/none/a", "", false, 1))
	assert.Equal(t, proto.NoNode, r.Err)
	assert.Equal(t, recomputeDigest(tree), tree.Digest())
}

func TestApplyDeleteOfMissingChildMovesPzxid(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 1, "/p", "", false, 1))
	r := tree.Apply(deleteEntry(2, 1, "/p/gone"))
	assert.Equal(t, proto.NoNode, r.Err)
	assert.Equal(t, int64(2), tree.nodes.get("/p").stat.Pzxid, "a fuzzy-snapshot replay still moves the parent's pzxid")
	r = tree.Apply(deleteEntry(3, 1, "/none/gone"))
	assert.Equal(t, proto.NoNode, r.Err)
}

func TestApplySetDataSetACLAndErrors(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 1, "/n", "a", false, 1))
	r := tree.Apply(setDataEntry(2, "/n", "bb", 1))
	require.Equal(t, proto.OK, r.Err)
	require.NotNil(t, r.Stat)
	assert.Equal(t, int32(1), r.Stat.Version)
	assert.Equal(t, int64(2), r.Stat.Mzxid)
	assert.Equal(t, int32(2), r.Stat.DataLength)
	assert.Equal(t, proto.NoNode, tree.Apply(setDataEntry(3, "/none", "", 1)).Err)
	acl := []proto.ACL{{Perms: proto.PermRead, ID: proto.AnyoneID}}
	r = tree.Apply(&proto.TxnEntry{Header: header(proto.OpSetACL, 1, 4), Txn: &proto.SetACLTxn{Path: "/n", ACL: acl, Version: 1}})
	require.Equal(t, proto.OK, r.Err)
	assert.Equal(t, int32(1), r.Stat.Aversion)
	got, _, err := tree.GetACL("/n", nil)
	require.NoError(t, err)
	assert.Equal(t, acl, got)
	r = tree.Apply(&proto.TxnEntry{Header: header(proto.OpError, 1, 5), Txn: &proto.ErrorTxn{Err: proto.BadVersion}})
	assert.Equal(t, proto.BadVersion, r.Err)
	assert.Equal(t, int64(5), tree.LastProcessedZxid())
	r = tree.Apply(setDataEntry(3, "/n", "old", 2))
	assert.Equal(t, int64(5), tree.LastProcessedZxid(), "lastProcessedZxid only grows")
	assert.Equal(t, recomputeDigest(tree), tree.Digest())
}

func TestApplySessionsAndCloseSession(t *testing.T) {
	tree := New(Config{})
	tree.Apply(&proto.TxnEntry{Header: header(proto.OpCreateSession, 9, 1), Txn: &proto.CreateSessionTxn{TimeoutMilliseconds: 4000}})
	tree.Apply(&proto.TxnEntry{Header: header(proto.OpCreateSession, 8, 2), Txn: &proto.CreateSessionTxn{TimeoutMilliseconds: 3000}})
	assert.Equal(t, int64(2), tree.LastProcessedZxid(), "createSession only moves lastProcessedZxid: the session table is the database's")
	tree.Apply(createEntry(3, 9, "/a", "", true, 1))
	tree.Apply(createEntry(4, 9, "/b", "", true, 2))
	tree.Apply(createEntry(5, 9, "/c", "", true, 3))
	w := &recorder{}
	for _, p := range []string{"/a", "/b", "/c"} {
		_, err := tree.Exists(p, w)
		require.NoError(t, err)
	}
	// The txn lists /c then /a; /b, which it misses, goes after them.
	r := tree.Apply(&proto.TxnEntry{Header: header(proto.OpCloseSession, 9, 6), Txn: &proto.CloseSessionTxn{PathsToDelete: []string{"/c", "/a"}}})
	require.Equal(t, proto.OK, r.Err)
	var paths []string
	for _, e := range w.events {
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []string{"/c", "/a", "/b"}, paths)
	assert.Empty(t, tree.EphemeralSessions())
	// A closeSession without a body (before 3.6) deletes every ephemeral.
	tree.Apply(createEntry(7, 8, "/d", "", true, 4))
	r = tree.Apply(&proto.TxnEntry{Header: header(proto.OpCloseSession, 8, 8)})
	require.Equal(t, proto.OK, r.Err)
	assert.Nil(t, tree.nodes.get("/d"))
	assert.Equal(t, recomputeDigest(tree), tree.Digest())
}

func TestApplyMulti(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 1, "/m", "", false, 1))
	ok := &proto.TxnEntry{Header: header(proto.OpMulti, 1, 2), Txn: &proto.MultiTxn{Txns: []proto.Txn{
		proto.MakeTxn(proto.OpCreate, &proto.CreateTxn{Path: "/m/a", ACL: proto.OpenACLUnsafe, ParentCVersion: 2}),
		proto.MakeTxn(proto.OpSetData, &proto.SetDataTxn{Path: "/m", Data: []byte("v"), Version: 1}),
		proto.MakeTxn(proto.OpCheck, &proto.CheckVersionTxn{Path: "/m/a", Version: 1}),
	}}}
	r := tree.Apply(ok)
	require.Equal(t, proto.OK, r.Err)
	require.Len(t, r.Multi, 3)
	assert.Equal(t, proto.OpSetData, r.Multi[1].Type)
	assert.Equal(t, int64(2), r.Multi[1].Stat.Mzxid)
	response, moved, err := r.MultiResponse()
	require.NoError(t, err)
	assert.False(t, moved)
	assert.Equal(t, []proto.OpCode{proto.OpCreate, proto.OpSetData, proto.OpCheck},
		[]proto.OpCode{response.Results[0].Type, response.Results[1].Type, response.Results[2].Type})

	failed := &proto.TxnEntry{Header: header(proto.OpMulti, 1, 3), Txn: &proto.MultiTxn{Txns: []proto.Txn{
		proto.MakeTxn(proto.OpCreate, &proto.CreateTxn{Path: "/m/b", ACL: proto.OpenACLUnsafe, ParentCVersion: 3}),
		proto.MakeTxn(proto.OpError, &proto.ErrorTxn{Err: proto.BadVersion}),
		proto.MakeTxn(proto.OpError, &proto.ErrorTxn{Err: proto.RuntimeInconsistency}),
	}}}
	before := tree.Digest()
	r = tree.Apply(failed)
	assert.Equal(t, proto.BadVersion, r.Err)
	require.Len(t, r.Multi, 3)
	assert.Equal(t, []proto.Code{proto.OK, proto.BadVersion, proto.RuntimeInconsistency}, []proto.Code{r.Multi[0].Err, r.Multi[1].Err, r.Multi[2].Err})
	assert.Equal(t, proto.OpError, r.Multi[0].Type)
	assert.Equal(t, proto.OpError, failed.Txn.(*proto.MultiTxn).Txns[0].Type, "Java rewrites the sub-txn's type in place")
	assert.Nil(t, tree.nodes.get("/m/b"))
	assert.Equal(t, before, tree.Digest())
	assert.Equal(t, int64(3), tree.LastProcessedZxid())
}

func TestApplyMultiAbortsOnAnInvalidSubTxn(t *testing.T) {
	tree := New(Config{})
	r := tree.Apply(&proto.TxnEntry{Header: header(proto.OpMulti, 1, 1), Txn: &proto.MultiTxn{Txns: []proto.Txn{
		proto.MakeTxn(proto.OpCreate, &proto.CreateTxn{Path: "/a", ACL: proto.OpenACLUnsafe, ParentCVersion: 1}),
		{Type: proto.OpGetData, Data: []byte{0, 0, 0, 0}},
		proto.MakeTxn(proto.OpCreate, &proto.CreateTxn{Path: "/b", ACL: proto.OpenACLUnsafe, ParentCVersion: 2}),
	}}})
	assert.Error(t, r.Aborted)
	assert.Nil(t, r.Fault)
	assert.NotNil(t, tree.nodes.get("/a"), "the sub-txns before the bad one stay applied")
	assert.Nil(t, tree.nodes.get("/b"))
	assert.Equal(t, int64(1), tree.LastProcessedZxid())
}

func TestApplyFaults(t *testing.T) {
	tree := New(Config{})
	r := tree.Apply(&proto.TxnEntry{Header: header(proto.OpCreate, 1, 1), Txn: &proto.DeleteTxn{Path: "/a"}})
	assert.ErrorIs(t, r.Fault, errJavaRuntime, "a create carrying a DeleteTxn is a ClassCastException")
	assert.Zero(t, tree.LastProcessedZxid(), "a throwing processTxn does not advance lastProcessedZxid")
	r = tree.Apply(&proto.TxnEntry{Header: header(proto.OpCreateTTL, 1, 2), Txn: &proto.CreateTTLTxn{Path: "/t", TTL: -1, ParentCVersion: 1}})
	assert.ErrorIs(t, r.Fault, errJavaRuntime, "TTL.toEphemeralOwner(-1) throws")
	assert.Nil(t, tree.nodes.get("/t"))
	r = tree.Apply(createEntry(3, 1, "nolash", "", false, 1))
	assert.ErrorIs(t, r.Fault, errJavaRuntime)
	assert.Error(t, tree.Apply(nil).Fault)
	// A limits node directly under /zookeeper/quota: the node is created, then
	// PathTrie.addPath("") throws before the watches fire.
	w := &recorder{}
	_, _ = tree.Exists("/zookeeper/quota/zookeeper_limits", w)
	r = tree.Apply(createEntry(4, 1, "/zookeeper/quota/zookeeper_limits", "count=1", false, 1))
	assert.ErrorIs(t, r.Fault, errJavaRuntime)
	assert.NotNil(t, tree.nodes.get("/zookeeper/quota/zookeeper_limits"))
	assert.Empty(t, w.events)
}

func TestApplyComparesTheTxnDigest(t *testing.T) {
	tree := New(Config{})
	shadow := New(Config{})
	shadow.Apply(createEntry(1, 1, "/a", "", false, 1))
	good := createEntry(1, 1, "/a", "", false, 1)
	good.Digest = &proto.TxnDigest{Version: DigestVersion, TreeDigest: shadow.Digest()}
	assert.False(t, tree.Apply(good).DigestMismatch)
	bad := createEntry(2, 1, "/b", "", false, 2)
	bad.Digest = &proto.TxnDigest{Version: DigestVersion, TreeDigest: 12345}
	assert.True(t, tree.Apply(bad).DigestMismatch)
	other := createEntry(3, 1, "/c", "", false, 3)
	other.Digest = &proto.TxnDigest{Version: 1, TreeDigest: 12345}
	assert.False(t, tree.Apply(other).DigestMismatch, "another digest version is not compared")
	digest, ok := tree.LastZxidDigest()
	require.True(t, ok)
	assert.Equal(t, ZxidDigest{Zxid: 3, Version: DigestVersion, Digest: tree.Digest()}, digest)
}

func TestApplyQuotaStats(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 1, "/q", "", false, 1))
	tree.Apply(createEntry(2, 1, "/q/a", "12345", false, 1))
	tree.Apply(createEntry(3, 1, "/zookeeper/quota/q", "", false, 1))
	tree.Apply(createEntry(4, 1, "/zookeeper/quota/q/zookeeper_limits", "count=2,bytes=10", false, 1))
	tree.Apply(createEntry(5, 1, "/zookeeper/quota/q/zookeeper_stats", "count=0,bytes=0", false, 2))
	stats := func() string {
		data, _, err := tree.GetData("/zookeeper/quota/q/zookeeper_stats", nil, nil)
		require.NoError(t, err)
		return string(data)
	}
	assert.Equal(t, "count=2,bytes=5", stats())
	tree.Apply(createEntry(6, 1, "/q/b", "123", false, 2))
	assert.Equal(t, "count=3,bytes=8", stats())
	tree.Apply(setDataEntry(7, "/q/a", "", 1))
	assert.Equal(t, "count=3,bytes=3", stats())
	tree.Apply(deleteEntry(8, 1, "/q/b"))
	assert.Equal(t, "count=2,bytes=0", stats())
	tree.Apply(setDataEntry(9, "/zookeeper/quota/q/zookeeper_stats", "count=", 1))
	r := tree.Apply(createEntry(10, 1, "/q/c", "", false, 3))
	assert.ErrorIs(t, r.Fault, errJavaRuntime, "StatsTrack cannot parse \"count=\"")
	tree.Apply(deleteEntry(11, 1, "/zookeeper/quota/q/zookeeper_limits"))
	assert.Empty(t, tree.quotas.properties())
	assert.Equal(t, recomputeDigest(tree), tree.Digest())
}

func TestApplyContainersAndTTLs(t *testing.T) {
	extended := New(Config{ExtendedTypes: true})
	r := extended.Apply(&proto.TxnEntry{Header: header(proto.OpCreateContainer, 1, 1), Txn: &proto.CreateContainerTxn{Path: "/box", ACL: proto.OpenACLUnsafe, ParentCVersion: 1}})
	require.Equal(t, proto.OK, r.Err)
	assert.Zero(t, r.Stat.EphemeralOwner, "clients see 0 for a container")
	r = extended.Apply(&proto.TxnEntry{Header: header(proto.OpCreateTTL, 1, 2), Txn: &proto.CreateTTLTxn{Path: "/ttl", ACL: proto.OpenACLUnsafe, ParentCVersion: 2, TTL: 500}})
	require.Equal(t, proto.OK, r.Err)
	assert.Zero(t, r.Stat.EphemeralOwner)
	assert.Equal(t, []string{"/box"}, extended.Containers())
	assert.Equal(t, []string{"/ttl"}, extended.TTLs())
	assert.Empty(t, extended.EphemeralSessions())
	assert.Empty(t, extended.ContainerCandidates(1100, 0), "a container that never had a child stays")
	assert.Equal(t, []string{"/box"}, extended.ContainerCandidates(1100, 10), "unless the never-used interval is set")
	assert.Empty(t, extended.ContainerCandidates(1002+500, 0), "a TTL node lives for its TTL after mtime")
	assert.Equal(t, []string{"/ttl"}, extended.ContainerCandidates(1002+501, 0))
	extended.Apply(createEntry(3, 1, "/box/x", "", false, 1))
	extended.Apply(deleteEntry(4, 1, "/box/x"))
	assert.Equal(t, []string{"/box"}, extended.ContainerCandidates(0, 0), "emptied containers go")

	// Without extended types a TTL-shaped owner is a session's.
	stock := New(Config{})
	r = stock.Apply(&proto.TxnEntry{Header: header(proto.OpCreateTTL, 1, 1), Txn: &proto.CreateTTLTxn{Path: "/ttl", ACL: proto.OpenACLUnsafe, ParentCVersion: 1, TTL: 500}})
	require.Equal(t, proto.OK, r.Err)
	owner, _ := TTLOwner(500)
	assert.Equal(t, owner, r.Stat.EphemeralOwner)
	assert.Equal(t, []string{"/ttl"}, stock.Ephemerals(owner))
	assert.Empty(t, stock.TTLs())
}
