package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

func TestNewTreeIsAFreshServersTree(t *testing.T) {
	tree := New(Config{})
	children, stat, err := tree.GetChildren("/", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"zookeeper"}, children)
	assert.Equal(t, proto.Stat{Cversion: -1, NumChildren: 1}, stat, "the real server shows cversion -1 for /")
	children, stat, err = tree.GetChildren("/zookeeper", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"config", "quota"}, children)
	assert.Equal(t, int32(-2), stat.Cversion)
	acl, stat, err := tree.GetACL("/zookeeper/config", nil)
	require.NoError(t, err)
	assert.Equal(t, proto.ReadACLUnsafe, acl)
	assert.Equal(t, int32(-1), stat.Aversion, "DataTree sets the config ACL with version -1")
	acl, _, err = tree.GetACL("/zookeeper/quota", nil)
	require.NoError(t, err)
	assert.Equal(t, proto.OpenACLUnsafe, acl)
	data, _, err := tree.GetData("/", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []byte{}, data)
	assert.Equal(t, 5, tree.NodeCount(), "the root counts twice, as \"\" and \"/\"")
	assert.Equal(t, recomputeDigest(tree), tree.Digest())
	root := tree.nodes.get("")
	proc := tree.nodes.get("/zookeeper")
	assert.Equal(t, nodeDigest("", root.data, &root.stat)+nodeDigest("/zookeeper", proc.data, &proc.stat), tree.Digest(),
		"only the root and /zookeeper count; /zookeeper/ children are left out")
	assert.Zero(t, tree.LastProcessedZxid())
}

func TestReadsCheckExistenceThenACL(t *testing.T) {
	tree := New(Config{})
	tree.Apply(&proto.TxnEntry{Header: header(proto.OpCreate, 1, 1), Txn: &proto.CreateTxn{
		Path: "/secret", Data: []byte("x"), ParentCVersion: 1,
		ACL: []proto.ACL{{Perms: proto.PermWrite, ID: proto.AnyoneID}, {Perms: proto.PermAll, ID: proto.ID{Scheme: "digest", ID: "bob:hash"}}}}})
	_, _, err := tree.GetData("/missing", nil, nil)
	assert.Equal(t, proto.NoNode, err)
	_, _, err = tree.GetData("/secret", nil, nil)
	assert.Equal(t, proto.NoAuth, err)
	_, _, err = tree.GetChildren("/secret", nil, nil)
	assert.Equal(t, proto.NoAuth, err)
	_, err = tree.GetAllChildrenNumber("/secret", nil)
	assert.Equal(t, proto.NoAuth, err)
	_, err = tree.Exists("/secret", nil)
	assert.NoError(t, err, "exists needs no permission")
	_, err = tree.Exists("/se\x00cret", nil)
	assert.Equal(t, proto.BadArguments, err)
	_, _, err = tree.GetACL("/secret", nil)
	assert.Equal(t, proto.NoAuth, err, "getACL needs READ or ADMIN")
	bob := []proto.ID{{Scheme: "digest", ID: "bob:hash"}}
	acl, _, err := tree.GetACL("/secret", bob)
	require.NoError(t, err)
	assert.Equal(t, "bob:hash", acl[1].ID.ID)
	data, _, err := tree.GetData("/secret", bob, nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("x"), data)
	data[0] = 'y'
	again, _, _ := tree.GetData("/secret", bob, nil)
	assert.Equal(t, []byte("x"), again, "GetData returns a copy")
}

func TestGetACLMasksDigestsWithoutAdmin(t *testing.T) {
	tree := New(Config{})
	acl := []proto.ACL{{Perms: proto.PermRead, ID: proto.ID{Scheme: "digest", ID: "bob:abc:def\nline2:x"}},
		{Perms: proto.PermRead, ID: proto.AnyoneID}}
	tree.Apply(&proto.TxnEntry{Header: header(proto.OpCreate, 1, 1), Txn: &proto.CreateTxn{Path: "/m", ACL: acl, ParentCVersion: 1}})
	got, _, err := tree.GetACL("/m", nil)
	require.NoError(t, err)
	assert.Equal(t, "bob:x\nline2:x", got[0].ID.ID, "replaceAll(\":.*\", \":x\") stops at a line terminator")
	assert.Equal(t, proto.AnyoneID, got[1].ID)
}

func TestGetAllChildrenNumberAndEphemerals(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 7, "/a", "", false, 1))
	tree.Apply(createEntry(2, 7, "/a/b", "", true, 1))
	tree.Apply(createEntry(3, 7, "/a/c", "", true, 2))
	tree.Apply(createEntry(4, 7, "/ab", "", true, 2))
	n, err := tree.GetAllChildrenNumber("/", nil)
	require.NoError(t, err)
	assert.Equal(t, int32(tree.NodeCount()-2), n)
	n, err = tree.GetAllChildrenNumber("/a", nil)
	require.NoError(t, err)
	assert.Equal(t, int32(2), n, "/ab is not under /a")
	assert.Equal(t, []string{"/a/b", "/a/c", "/ab"}, tree.Ephemerals(7))
	assert.ElementsMatch(t, []string{"/a/b", "/a/c", "/ab"}, tree.GetEphemerals(7, " / "))
	assert.ElementsMatch(t, []string{"/a/b", "/a/c", "/ab"}, tree.GetEphemerals(7, "/a"), "a plain prefix, not a path")
	assert.Equal(t, []string{"/a/b"}, tree.GetEphemerals(7, "/a/b"))
	assert.Empty(t, tree.GetEphemerals(8, ""))
	assert.Equal(t, []int64{7}, tree.EphemeralSessions())
}

func TestInitConfigSetsTheConfigNode(t *testing.T) {
	tree := New(Config{})
	w := &recorder{}
	_, err := tree.Exists("/zookeeper/config", w)
	require.NoError(t, err)
	require.NoError(t, tree.InitConfig([]byte("server.1=a:1:2"), 0x100000000, 55))
	data, stat, err := tree.GetData("/zookeeper/config", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "server.1=a:1:2", string(data))
	assert.Equal(t, int32(-1), stat.Version)
	assert.Equal(t, int64(0x100000000), stat.Mzxid)
	assert.Equal(t, []proto.WatcherEvent{{Type: proto.EventNodeDataChanged, State: proto.StateSyncConnected, Path: "/zookeeper/config"}}, w.events)
}
