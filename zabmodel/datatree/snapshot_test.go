package datatree

import (
	"encoding/binary"
	"hash/adler32"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// busyTree is a tree with every kind of node and some history.
func busyTree(t testing.TB, config Config) *Tree {
	tree := New(config)
	entries := []*proto.TxnEntry{
		{Header: header(proto.OpCreateSession, 9, 1), Txn: &proto.CreateSessionTxn{TimeoutMilliseconds: 4000}},
		createEntry(2, 9, "/a", "data", false, 1),
		createEntry(3, 9, "/a/e", "", true, 1),
		{Header: header(proto.OpCreateContainer, 9, 4), Txn: &proto.CreateContainerTxn{Path: "/box", ACL: proto.ReadACLUnsafe, ParentCVersion: 2}},
		{Header: header(proto.OpCreate, 9, 5), Txn: &proto.CreateTxn{Path: "/null", ACL: nil, ParentCVersion: 3}},
		{Header: header(proto.OpSetACL, 9, 6), Txn: &proto.SetACLTxn{Path: "/a", Version: 1,
			ACL: []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "digest", ID: DigestID("u:p")}}}}},
		setDataEntry(7, "/a", "more data", 1),
		createEntry(8, 9, "/zookeeper/quota/a", "", false, 1),
		createEntry(9, 9, "/zookeeper/quota/a/zookeeper_limits", "count=5,bytes=100", false, 1),
		createEntry(10, 9, "/zookeeper/quota/a/zookeeper_stats", "", false, 2),
		deleteEntry(11, 9, "/box"),
	}
	for _, e := range entries {
		r := tree.Apply(e)
		require.NoError(t, r.Fault)
		require.Equal(t, proto.OK, r.Err, "%v", e.Header)
	}
	return tree
}

func TestSnapshotRoundTrip(t *testing.T) {
	tree := busyTree(t, Config{})
	sessions := []Session{{ID: 9, TimeoutMilliseconds: 4000}, {ID: 3, TimeoutMilliseconds: 2000}}
	b := tree.Serialize(sessions)
	assert.Equal(t, []byte("ZKSN"), b[:4])
	restored, gotSessions, err := Deserialize(b, tree.LastProcessedZxid(), Config{})
	require.NoError(t, err)
	assert.Equal(t, []Session{{ID: 3, TimeoutMilliseconds: 2000}, {ID: 9, TimeoutMilliseconds: 4000}}, gotSessions)
	tree.Apply(&proto.TxnEntry{Header: header(proto.OpCreateSession, 3, tree.LastProcessedZxid()), Txn: &proto.CreateSessionTxn{TimeoutMilliseconds: 2000}})
	assert.Empty(t, tree.Diff(restored), "the session table comes from the snapshot")
	assert.False(t, restored.DigestMismatchOnLoad())
	again := restored.Serialize(sessions)
	assert.Equal(t, b[:len(b)-trailerBytes], again[:len(again)-trailerBytes],
		"re-serializing repeats everything before the seals (the digest is empty until a txn applies)")
	data, _, err := restored.GetData("/zookeeper/quota/a/zookeeper_stats", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "count=2,bytes=9", string(data), "loading recounts quota stats")
	_, _, err = restored.GetData("/null", nil, nil)
	assert.NoError(t, err, "a null ACL reads back as the open ACL")

	// A SNAP sync carries the same state without header, seals or digest.
	sync := tree.SerializeSync(sessions)
	fromSync, syncSessions, err := DeserializeSync(sync, 0x55, Config{})
	require.NoError(t, err)
	assert.Equal(t, gotSessions, syncSessions)
	assert.Equal(t, int64(0x55), fromSync.LastProcessedZxid())
	fromSync.SetLastProcessedZxid(tree.LastProcessedZxid())
	assert.Empty(t, tree.Diff(fromSync))
	_, _, err = DeserializeSync(sync[:len(sync)-3], 0, Config{})
	assert.ErrorIs(t, err, ErrCorruptSnapshot)
}

func TestSnapshotDigestIsCheckedOnLoad(t *testing.T) {
	tree := busyTree(t, Config{})
	b := tree.Serialize(nil)
	// The digest section sits between the two seals: zxid, version, digest.
	digestAt := len(b) - sealBytes - digestBytes
	require.Equal(t, tree.LastProcessedZxid(), int64(binary.BigEndian.Uint64(b[digestAt:])))
	binary.BigEndian.PutUint64(b[digestAt+12:], 42)
	reseal(b, len(b)-sealBytes)
	restored, _, err := Deserialize(b, tree.LastProcessedZxid(), Config{})
	require.NoError(t, err)
	assert.True(t, restored.DigestMismatchOnLoad())

	// A digest for a later zxid (a fuzzy snapshot) waits for that zxid.
	clean := tree.Serialize(nil)
	restored, _, err = Deserialize(clean, tree.LastProcessedZxid()-1, Config{})
	require.NoError(t, err)
	assert.False(t, restored.DigestMismatchOnLoad())
	r := restored.Apply(&proto.TxnEntry{Header: header(proto.OpError, 1, tree.LastProcessedZxid()), Txn: &proto.ErrorTxn{Err: proto.NoNode}})
	assert.False(t, r.DigestMismatch, "the tree then matches the snapshot's digest")

	// Without the digest section (a pre-3.6 file) the snapshot still loads.
	firstSeal := len(clean) - sealBytes - digestBytes
	_, _, err = Deserialize(clean[:firstSeal], 5, Config{})
	assert.NoError(t, err)
}

// The sizes of a snapshot's trailer: a seal is a long and the string "/",
// the digest a long, an int and a long; the trailer is seal, digest, seal.
const (
	sealBytes    = 8 + 4 + 1
	digestBytes  = 8 + 4 + 8
	trailerBytes = 2*sealBytes + digestBytes
)

// reseal rewrites the seal at offset to match the bytes before it.
func reseal(b []byte, offset int) {
	binary.BigEndian.PutUint64(b[offset:], uint64(adler32.Checksum(b[:offset])))
}

func TestDeserializeRejectsCorruption(t *testing.T) {
	tree := busyTree(t, Config{})
	good := tree.Serialize([]Session{{ID: 1, TimeoutMilliseconds: 1}})
	flip := func(at int) []byte {
		b := append([]byte(nil), good...)
		b[at] ^= 0x40
		return b
	}
	cases := map[string][]byte{
		"empty":         nil,
		"magic":         flip(0),
		"body bit":      flip(60),
		"truncated":     good[:len(good)/2],
		"first seal":    good[:len(good)-trailerBytes+4],
		"last seal":     flip(len(good) - 9),
		"no terminator": good[:40],
	}
	for name, b := range cases {
		_, _, err := Deserialize(b, 1, Config{})
		assert.ErrorIs(t, err, ErrCorruptSnapshot, name)
	}
}

func TestDeserializeRejectsBadStructure(t *testing.T) {
	write := func(nodes func(e *proto.Encoder)) []byte {
		var e proto.Encoder
		header := proto.FileHeader{Magic: proto.SnapshotMagic, Version: 2, DBID: -1}
		header.Encode(&e)
		e.WriteInt32(0) // sessions
		e.WriteInt32(0) // ACLs
		nodes(&e)
		e.WriteString("/")
		seal(&e)
		return e.Bytes()
	}
	node := func(e *proto.Encoder, path string, acl int64) {
		e.WriteString(path)
		e.WriteBuffer(nil)
		e.WriteInt64(acl)
		(&proto.StatPersisted{}).Encode(e)
	}
	cases := map[string]func(e *proto.Encoder){
		"no root":        func(*proto.Encoder) {},
		"root not first": func(e *proto.Encoder) { node(e, "/a", -1) },
		"orphan":         func(e *proto.Encoder) { node(e, "", -1); node(e, "/a/b", -1) },
		"duplicate":      func(e *proto.Encoder) { node(e, "", -1); node(e, "/a", -1); node(e, "/a", -1) },
		"no slash":       func(e *proto.Encoder) { node(e, "", -1); node(e, "abc", -1) },
	}
	for name, nodes := range cases {
		_, _, err := Deserialize(write(nodes), 1, Config{})
		assert.ErrorIs(t, err, ErrCorruptSnapshot, name)
	}
	minimal, _, err := Deserialize(write(func(e *proto.Encoder) { node(e, "", -1); node(e, "/a", -1) }), 1, Config{})
	require.NoError(t, err)
	children, _, err := minimal.GetChildren("/", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, children)

	// A node whose ACL index the cache lacks loads, as in Java (a fuzzy snapshot's node created
	// with a new ACL after the cache was written); only reading that ACL fails.
	dangling, _, err := Deserialize(write(func(e *proto.Encoder) { node(e, "", -1); node(e, "/a", 7) }), 1, Config{})
	require.NoError(t, err)
	_, _, err = dangling.GetACL("/a", nil)
	assert.Error(t, err)
}

func FuzzDeserialize(f *testing.F) {
	f.Add(busyTree(f, Config{}).Serialize([]Session{{ID: 1, TimeoutMilliseconds: 2}}))
	f.Add(New(Config{}).Serialize(nil))
	f.Add([]byte("ZKSN"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tree, sessions, err := Deserialize(b, 1, Config{ExtendedTypes: true})
		if err != nil {
			return
		}
		// Whatever loads must serialize and load again to the same tree.
		again, _, err := Deserialize(tree.Serialize(sessions), 1, Config{ExtendedTypes: true})
		if err != nil {
			t.Fatalf("a loaded tree does not reload: %v", err)
		}
		if diff := tree.Diff(again); len(diff) > 0 {
			t.Fatalf("reload differs: %v", diff)
		}
	})
}

// TestStoredDigestIsWhereTheWalkEnded: a snapshot file stores, after its nodes, the digest of the
// last transaction applied when the walk ended, which for a fuzzy snapshot is past the zxid the
// file is named by; StoredDigest reads it from the file's end. A file without such a digest, a SNAP
// stream, and a file whose end is damaged tell nothing.
func TestStoredDigestIsWhereTheWalkEnded(t *testing.T) {
	tree := busyTree(t, Config{})
	named := tree.LastProcessedZxid()
	writer := tree.NewSnapshotWriter(nil, true)
	require.False(t, writer.Step(1), "the walk has more than the root to write")
	r := tree.Apply(createEntry(named+1, 9, "/a/zz", "after the name", false, 2))
	require.Equal(t, proto.OK, r.Err)
	file := writer.Finish()

	digest, ok := StoredDigest(file)
	require.True(t, ok)
	assert.Equal(t, named+1, digest.Zxid, "the walk ended after the txn past the file's name")
	assert.Equal(t, tree.Digest(), digest.Digest)
	restored, _, err := Deserialize(file, named, Config{})
	require.NoError(t, err)
	_, _, err = restored.GetData("/a/zz", nil, nil)
	assert.NoError(t, err, "the file named before the create holds its node")

	_, ok = StoredDigest(New(Config{}).Serialize(nil))
	assert.False(t, ok, "no transaction applied: no digest")
	_, ok = StoredDigest(tree.SerializeSync(nil))
	assert.False(t, ok, "a SNAP stream has no digest")
	damaged := append([]byte(nil), file...)
	damaged[len(damaged)-trailerBytes+sealBytes] ^= 0x40 // the digest's zxid
	_, ok = StoredDigest(damaged)
	assert.False(t, ok, "a damaged end tells nothing")
	_, ok = StoredDigest(file[:len(file)-sealBytes])
	assert.False(t, ok, "nor does a file cut after its first seal")
}
