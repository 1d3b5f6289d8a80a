package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

func TestKillSessionDeletesWhatTheSessionOwns(t *testing.T) {
	tree := New(Config{})
	tree.Apply(createEntry(1, 5, "/e1", "", true, 1))
	tree.Apply(createEntry(2, 5, "/e2", "", true, 2))
	w := &recorder{}
	_, _ = tree.Exists("/e2", w)
	require.NoError(t, tree.KillSession(5, 2))
	assert.Empty(t, tree.EphemeralSessions())
	assert.Equal(t, []string{"zookeeper"}, tree.nodes.get("/").sortedChildren())
	assert.Equal(t, []proto.WatcherEvent{event(proto.EventNodeDeleted, "/e2")}, w.events)
	assert.Equal(t, int64(2), tree.LastProcessedZxid(), "outside any txn")
}

// TestSnapshotDropsLeakedACLReferences runs the create that meets NodeExists as the releases before
// ZOOKEEPER-4846 do, leaving the node's ACL alone: the list it interned is used by nothing.
func TestSnapshotDropsLeakedACLReferences(t *testing.T) {
	tree := New(Config{StaleACLOnReplay: true})
	acl := []proto.ACL{{Perms: proto.PermRead, ID: proto.AnyoneID}, {Perms: proto.PermAll, ID: proto.ID{Scheme: "ip", ID: "10.0.0.1"}}}
	tree.Apply(&proto.TxnEntry{Header: header(proto.OpCreate, 1, 1), Txn: &proto.CreateTxn{Path: "/a", ParentCVersion: 1}})
	// A create that meets NodeExists has already counted its ACL, as Java does.
	tree.Apply(&proto.TxnEntry{Header: header(proto.OpCreate, 1, 2), Txn: &proto.CreateTxn{Path: "/a", ACL: acl, ParentCVersion: 2}})
	require.Len(t, tree.acls.lists, 2, "the config node's ACL and the leaked one")
	restored, _, err := Deserialize(tree.Serialize(nil), 2, Config{StaleACLOnReplay: true})
	require.NoError(t, err)
	assert.Len(t, restored.acls.lists, 1, "loading purges lists no node uses")
	assert.True(t, tree.Equal(restored))
	restored.Apply(setDataEntry(3, "/a", "x", 1))
	assert.False(t, tree.Equal(restored))
	assert.NotEmpty(t, tree.Diff(restored))
}

func TestOldSnapshotDigestFormat(t *testing.T) {
	v, ok := parseHexLong("-1f")
	assert.True(t, ok)
	assert.Equal(t, int64(-31), v)
	v, ok = parseHexLong("7fffffffffffffff")
	assert.True(t, ok)
	assert.Equal(t, int64(1<<63-1), v)
	for _, bad := range []string{"", "-", "8000000000000000", "xyz", "12345678901234567"} {
		_, ok := parseHexLong(bad)
		assert.False(t, ok, bad)
	}
	// A version 1 digest is a hex string.
	var e proto.Encoder
	e.WriteInt64(7)
	e.WriteInt32(1)
	e.WriteString("ff")
	digest, present, err := readZxidDigest(proto.NewDecoder(e.Bytes()))
	require.NoError(t, err)
	assert.True(t, present)
	assert.Equal(t, ZxidDigest{Zxid: 7, Version: 1, Digest: 255}, digest)
	e.Reset()
	e.WriteInt64(7)
	e.WriteInt32(1)
	e.WriteString("zz")
	_, _, err = readZxidDigest(proto.NewDecoder(e.Bytes()))
	assert.ErrorIs(t, err, ErrCorruptSnapshot)
}

func TestEphemeralKinds(t *testing.T) {
	ttl, err := TTLOwner(MaxTTLMilliseconds)
	require.NoError(t, err)
	assert.Equal(t, MaxTTLMilliseconds, TTLOf(ttl))
	_, err = TTLOwner(MaxTTLMilliseconds + 1)
	assert.Error(t, err)
	kinds := map[int64]EphemeralKind{0: KindVoid, 5: KindNormal, proto.ContainerEphemeralOwner: KindContainer, ttl: KindTTL}
	for owner, want := range kinds {
		got, err := KindOf(owner, true)
		require.NoError(t, err)
		assert.Equal(t, want, got, want.String())
	}
	got, err := KindOf(ttl, false)
	require.NoError(t, err)
	assert.Equal(t, KindNormal, got, "TTL owners need extended types")
	_, err = KindOf(ttl|1<<40, true)
	assert.ErrorIs(t, err, ErrInvalidOwner, "an unknown extended feature")
	assert.Equal(t, "EphemeralKind(9)", EphemeralKind(9).String())
	assert.Error(t, validateTTL(proto.Persistent, 0))
	assert.NoError(t, validateTTL(proto.Persistent, -1))
	assert.Error(t, validateTTL(proto.PersistentWithTTL, -1))
}

func TestInitConfigRecreatesAMissingConfigNode(t *testing.T) {
	tree := New(Config{ExtendedTypes: true})
	assert.True(t, tree.Config().ExtendedTypes)
	tree.nodes.remove("/zookeeper/config")
	tree.nodes.get("/zookeeper").removeChild("config")
	require.NoError(t, tree.InitConfig([]byte("v"), 9, 1))
	acl, stat, err := tree.GetACL("/zookeeper/config", nil)
	require.NoError(t, err)
	assert.Equal(t, proto.ReadACLUnsafe, acl)
	assert.Equal(t, int64(9), stat.Mzxid)
}

func TestMultiTTLOps(t *testing.T) {
	s := newServer(Config{ExtendedTypes: true})
	s.submit(Request{SessionID: 0x77, Type: proto.OpCreateSession, SessionTimeoutMilliseconds: 4000, Owner: "conn"})
	rep := s.submit(s.req(proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{
		{Type: proto.OpCreateTTL, Request: &proto.CreateTTLRequest{Path: "/t", ACL: proto.OpenACLUnsafe, Flags: proto.PersistentWithTTL, TTL: 100}},
		{Type: proto.OpCreateTTL, Request: &proto.CreateTTLRequest{Path: "/p", ACL: proto.OpenACLUnsafe, Flags: proto.Persistent, TTL: 100}},
		{Type: proto.OpCreate, Request: createReq("/c", proto.Container)},
	}}))
	require.Equal(t, proto.OK, rep.err)
	assert.Equal(t, []proto.OpCode{proto.OpCreateTTL, proto.OpCreate, proto.OpCreateContainer},
		[]proto.OpCode{rep.result.Multi[0].Type, rep.result.Multi[1].Type, rep.result.Multi[2].Type},
		"a createTTL op with plain flags loses its TTL; a create op with container flags makes a container")
	assert.Equal(t, []string{"/t"}, s.tree.TTLs())
	assert.Equal(t, []string{"/c"}, s.tree.Containers())
	assert.False(t, rep.result.DigestMismatch)
	rep = s.submit(s.req(proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{{Type: proto.OpSetACL, Request: &proto.SetACLRequest{Path: "/t"}}}}))
	assert.Equal(t, proto.MarshallingError, rep.err, "an op type MultiOperationRecord rejects")
	response, moved, err := Result{Multi: []Result{{Type: proto.OpError, Err: proto.SessionMoved}}}.MultiResponse()
	assert.Nil(t, response)
	assert.True(t, moved)
	assert.NoError(t, err)
	_, _, err = Result{Multi: []Result{{Type: proto.OpGetData}}}.MultiResponse()
	assert.Error(t, err)
}
