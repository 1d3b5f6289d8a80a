package datatree

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// javaTreeTxns are the txns testdata/TreeRef.java applies to a real 3.8.0
// DataTree (from the zookeeper jar, in a JDK 17); testdata/java_tree.txt
// holds what it printed: the tree digest after each txn, and the tree.
func javaTreeTxns() []*proto.TxnEntry {
	digest := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "digest", ID: "u:p3Ghf6M1l4ZGMzsY7O7Ge+3XGmg="}}}
	h := func(session, zxid int64, op proto.OpCode) proto.TxnHeader {
		return proto.TxnHeader{ClientID: session, Cxid: int32(zxid), Zxid: zxid, Time: 1000 + zxid, Type: op}
	}
	create := func(path, data string, acl []proto.ACL, ephemeral bool, cversion int32) *proto.CreateTxn {
		return &proto.CreateTxn{Path: path, Data: []byte(data), ACL: acl, Ephemeral: ephemeral, ParentCVersion: cversion}
	}
	open := proto.OpenACLUnsafe
	return []*proto.TxnEntry{
		{Header: h(0x11, 1, proto.OpCreateSession), Txn: &proto.CreateSessionTxn{TimeoutMilliseconds: 3000}},
		{Header: h(0x11, 2, proto.OpCreate), Txn: create("/a", "hello", open, false, 1)},
		{Header: h(0x11, 3, proto.OpCreate), Txn: create("/a/b", "", open, true, 1)},
		{Header: h(0x11, 4, proto.OpSetData), Txn: &proto.SetDataTxn{Path: "/a", Data: []byte("world"), Version: 1}},
		{Header: h(0x11, 5, proto.OpSetACL), Txn: &proto.SetACLTxn{Path: "/a", ACL: digest, Version: 1}},
		{Header: h(0x11, 6, proto.OpCreate2), Txn: &proto.CreateTxn{Path: "/c", ACL: proto.ReadACLUnsafe, ParentCVersion: 2}},
		{Header: h(0x11, 7, proto.OpCreateContainer), Txn: &proto.CreateContainerTxn{Path: "/box", Data: []byte("x"), ACL: open, ParentCVersion: 3}},
		{Header: h(0x11, 8, proto.OpMulti), Txn: &proto.MultiTxn{Txns: []proto.Txn{
			proto.MakeTxn(proto.OpCreate, create("/box/i", "", open, false, 1)),
			proto.MakeTxn(proto.OpSetData, &proto.SetDataTxn{Path: "/c", Data: []byte("d"), Version: 1}),
			proto.MakeTxn(proto.OpDelete, &proto.DeleteTxn{Path: "/a/b"})}}},
		{Header: h(0x11, 9, proto.OpMulti), Txn: &proto.MultiTxn{Txns: []proto.Txn{
			proto.MakeTxn(proto.OpCreate, create("/zz", "", open, false, 4)),
			proto.MakeTxn(proto.OpError, &proto.ErrorTxn{Err: proto.BadVersion}),
			proto.MakeTxn(proto.OpError, &proto.ErrorTxn{Err: proto.RuntimeInconsistency})}}},
		{Header: h(0x11, 10, proto.OpCreate), Txn: create("/zookeeper/quota/a", "", open, false, 1)},
		{Header: h(0x11, 11, proto.OpCreate), Txn: create("/zookeeper/quota/a/zookeeper_limits", "count=5,bytes=100", open, false, 1)},
		{Header: h(0x11, 12, proto.OpCreate), Txn: create("/zookeeper/quota/a/zookeeper_stats", "", open, false, 2)},
		{Header: h(0x11, 13, proto.OpCreate), Txn: create("/a/q", "12345", open, false, 3)},
		{Header: h(0x11, 14, proto.OpDelete), Txn: &proto.DeleteTxn{Path: "/box/i"}},
		{Header: h(0x22, 15, proto.OpCreate), Txn: create("/e", "", open, true, 5)},
		{Header: h(0x22, 16, proto.OpCreate), Txn: create("/a/e2", "x", proto.CreatorAllACL, true, 4)},
		{Header: h(0x22, 17, proto.OpCloseSession), Txn: &proto.CloseSessionTxn{PathsToDelete: []string{"/e"}}},
		{Header: h(0x11, 18, proto.OpError), Txn: &proto.ErrorTxn{Err: proto.NoNode}},
		{Header: h(0x11, 19, proto.OpSetData), Txn: &proto.SetDataTxn{Path: "/", Data: []byte("root"), Version: 1}},
	}
}

// javaDump renders the tree as TreeRef.dump prints it: sessions, then each
// indexed path in Java's string order with its client stat, ACL (in jute's
// toString form) and data, then ephemerals and containers.
func javaDump(t *Tree, sessions []Session) []string {
	var lines []string
	var table []string
	for _, s := range sessions {
		table = append(table, fmt.Sprintf("%d=%d", s.ID, s.TimeoutMilliseconds))
	}
	lines = append(lines, "sessions {"+strings.Join(table, ", ")+"}")
	paths := sortedKeys(t.nodes.nodes)
	for _, path := range paths {
		n := t.nodes.nodes[path]
		s, _ := t.clientStat(n)
		acl, _ := t.nodeACL(n)
		var entries []string
		for _, a := range acl {
			entries = append(entries, fmt.Sprintf("%d,s{'%s,'%s}\n", a.Perms, a.ID.Scheme, a.ID.ID))
		}
		data := "null"
		if n.data != nil {
			data = string(n.data)
		}
		lines = append(lines, fmt.Sprintf("node %s %d %d %d %d %d %d %d %d %d [%s] %s", path, s.Czxid, s.Mzxid, s.Pzxid,
			s.Cversion, s.Version, s.Aversion, s.EphemeralOwner, s.DataLength, s.NumChildren, strings.Join(entries, ", "), data))
	}
	var ephemerals []string
	for _, session := range t.EphemeralSessions() {
		ephemerals = append(ephemerals, fmt.Sprintf("%d=[%s]", session, strings.Join(t.Ephemerals(session), ", ")))
	}
	lines = append(lines, fmt.Sprintf("ephemerals {%s} containers [%s]", strings.Join(ephemerals, ", "), strings.Join(t.Containers(), ", ")))
	return strings.Split(strings.Join(lines, "\n"), "\n")
}

func TestTreeMatchesJavasDataTree(t *testing.T) {
	recorded, err := os.ReadFile(filepath.Join("testdata", "java_tree.txt"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(recorded), "\n"), "\n")
	tree := New(Config{})
	require.Equal(t, fmt.Sprintf("digest 0 %d", tree.Digest()), lines[0], "a fresh tree's digest")
	for i, e := range javaTreeTxns() {
		r := tree.Apply(e)
		require.NoError(t, r.Fault)
		assert.Equal(t, lines[i+1], fmt.Sprintf("digest %d %d err %d", e.Header.Zxid, tree.Digest(), r.Err), "after txn %d", e.Header.Zxid)
	}
	sessions := []Session{{ID: 0x11, TimeoutMilliseconds: 3000}, {ID: 0x22, TimeoutMilliseconds: 5000}}
	assert.Equal(t, lines[len(javaTreeTxns())+1:], javaDump(tree, sessions))

	// Java's snapshot of that tree loads into the same tree.
	snapshot, err := os.ReadFile(filepath.Join("testdata", "java_snapshot.13"))
	require.NoError(t, err)
	loaded, loadedSessions, err := Deserialize(snapshot, 0x13, Config{})
	require.NoError(t, err)
	assert.ElementsMatch(t, sessions, loadedSessions)
	assert.False(t, loaded.DigestMismatchOnLoad())
	assert.Empty(t, tree.Diff(loaded))

	// And this package's snapshot of it is the one a 3.8.0 FileSnap was
	// shown to load into that same tree (TreeRef with a second argument);
	// a change to the bytes needs that check again.
	golden, err := os.ReadFile(filepath.Join("testdata", "go_snapshot.13"))
	require.NoError(t, err)
	assert.Equal(t, golden, tree.Serialize(sessions))
}
