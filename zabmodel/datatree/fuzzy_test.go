package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// fuzzySnapshot is a snapshot taken while a workload ran: its bytes, its zxid (the tree's last
// processed zxid when the walk started, the file's name), the txns applied after that zxid, and
// the live tree at the end.
type fuzzySnapshot struct {
	data  []byte
	zxid  int64
	after []*proto.TxnEntry
	live  *Tree
}

// takeFuzzySnapshot runs a random workload and serializes the tree while it runs: the walk starts
// after a drawn txn and writes a drawn number of nodes after each later one, so that transactions
// land between any two nodes of the walk. file selects a snapshot file or a SNAP stream.
func takeFuzzySnapshot(t *rapid.T, file bool) fuzzySnapshot {
	var snap fuzzySnapshot
	var writer *SnapshotWriter
	applied := 0
	// An early start and a slow walk leave most of the workload's txns inside the walk.
	start := rapid.IntRange(0, 6).Draw(t, "start")
	begin := func(srv *server) {
		snap.zxid = srv.tree.LastProcessedZxid() // FileTxnSnapLog.save reads it first.
		var sessions []Session
		for _, r := range srv.results[:2] {
			sessions = append(sessions, Session{ID: r.ClientID, TimeoutMilliseconds: 1000})
		}
		writer = srv.tree.NewSnapshotWriter(sessions, file)
	}
	srv := runWorkload(t, func(srv *server, _ Prepared, original *proto.TxnEntry, _ Result) {
		applied++
		if writer != nil {
			snap.after = append(snap.after, original)
			writer.Step(rapid.IntRange(0, 2).Draw(t, "nodes"))
		} else if applied >= start {
			begin(srv)
		}
	})
	if writer == nil {
		begin(srv) // The workload ended before the drawn start.
	}
	snap.data = writer.Finish()
	snap.live = srv.tree
	return snap
}

// javaThrowsOnDanglingACL accepts the one failure Java has here too and reports whether the
// replay met it (see TestFuzzySnapshotWithARecycledACLThrowsOnReplay); any other fault fails.
func javaThrowsOnDanglingACL(t *rapid.T, r Result) bool {
	if r.Fault == nil {
		return false
	}
	require.ErrorContains(t, r.Fault, "failed to fetch acls", "the only exception a fuzzy replay may meet")
	return true
}

// requireSameTree requires the replayed tree to be the live one, but for the ACL of a node whose
// index the replayed cache lacks: the limit of Java's tolerance that
// TestFuzzySnapshotWithARecycledACLThrowsOnReplay is ZOOKEEPER-4689's case, which master still
// has (the ZK-4689 switch): the walk writes the ACL cache first; if the last node using an ACL list
// is deleted during the walk (ReferenceCountedACLCache.removeUsage drops the list) and created
// again (the list comes back under a new index), the snapshot holds the node with an index its
// cache lacks. Java loads it ("Ignoring acl"); replaying its delete reads the node's ACL for the
// watch check (DataTree.deleteNode's getACL, since ZOOKEEPER-4799) and convertLong throws "Failed
// to fetch acls": a RuntimeException out of FileTxnSnapLog.restore (seed 4025232 of the sweep from
// 4000001), or out of a learner's processTxn after a SNAP. ZOOKEEPER-4846's repair comes too late,
// with the create that follows. With the fix, the fixed model's, the watch check fails closed, the
// create repairs the node, and the replay ends with the tree that was walked.
func TestFuzzySnapshotWithARecycledACLThrowsOnReplay(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config Config
	}{{"ZOOKEEPER-4689 fixed", Config{}}, {"master", Config{ThrowingWatchACL: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			tree := New(tc.config)
			require.Equal(t, proto.OK, tree.Apply(createEntry(1, 9, "/a", "", false, 1)).Err)
			writer := tree.NewSnapshotWriter(nil, true)
			later := []*proto.TxnEntry{deleteEntry(2, 9, "/a"), createEntry(3, 9, "/a", "", false, 2), setDataEntry(4, "/a", "x", 1)}
			for _, e := range later {
				require.Equal(t, proto.OK, tree.Apply(cloneEntry(e)).Err)
			}
			restored, _, err := Deserialize(writer.Finish(), 1, tc.config)
			require.NoError(t, err, "Java loads the node with the index its cache lacks")
			r := restored.Apply(cloneEntry(later[0]))
			if tc.config.ThrowingWatchACL {
				assert.ErrorContains(t, r.Fault, "failed to fetch acls")
				return
			}
			require.NoError(t, r.Fault)
			for _, e := range later[1:] {
				r := restored.Apply(cloneEntry(e))
				require.NoError(t, r.Fault)
				require.Equal(t, proto.OK, r.Err)
			}
			assert.True(t, tree.Equal(restored), "%v", tree.Diff(restored))
			// Indexes are local to a server; the counts per list are not.
			assert.Len(t, restored.acls.references, len(tree.acls.references))
			for index, count := range restored.acls.references {
				assert.Equal(t, tree.acls.references[tree.acls.indexByKey[aclKey(restored.acls.lists[index])]], count,
					"each node counts once")
			}
		})
	}
}

// TestReplayedCreateRepairsTheACLOfAFuzzySnapshotsNode is ZOOKEEPER-4846 (simrun's seed 2226): the
// walk writes the ACL cache, then a node is created with a list the cache no longer holds (the last
// node using it was deleted before the walk, so the live server interns it under a fresh index),
// and the walk writes that node. Loaded, the snapshot's cache starts its indexes lower, so the
// node's index names nothing. Master's replay of the create gives the node the index it interned
// for the txn's list, and a later setData applies; the releases before the fix keep the stale index
// and the setData throws "Failed to fetch acls" before changing anything.
func TestReplayedCreateRepairsTheACLOfAFuzzySnapshotsNode(t *testing.T) {
	acl := []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "digest", ID: "owner:x"}}}
	create := func(zxid int64, path string, parentCVersion int32) *proto.TxnEntry {
		return &proto.TxnEntry{Header: header(proto.OpCreate, 9, zxid),
			Txn: &proto.CreateTxn{Path: path, ACL: acl, ParentCVersion: parentCVersion}}
	}
	for _, tc := range []struct {
		name   string
		config Config
	}{{"master", Config{}}, {"before ZOOKEEPER-4846", Config{StaleACLOnReplay: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			tree := New(tc.config)
			require.Equal(t, proto.OK, tree.Apply(create(1, "/a", 1)).Err)
			require.Equal(t, proto.OK, tree.Apply(deleteEntry(2, 9, "/a")).Err)
			writer := tree.NewSnapshotWriter(nil, true)
			later := []*proto.TxnEntry{create(3, "/b", 3), setDataEntry(4, "/b", "x", 1)}
			for _, e := range later {
				require.Equal(t, proto.OK, tree.Apply(cloneEntry(e)).Err)
			}
			restored, _, err := Deserialize(writer.Finish(), 2, tc.config)
			require.NoError(t, err, "Java loads the node with the index its cache lacks")
			r := restored.Apply(cloneEntry(later[0]))
			require.NoError(t, r.Fault)
			assert.Equal(t, proto.NodeExists, r.Err, "the walk wrote /b")
			r = restored.Apply(cloneEntry(later[1]))
			if tc.config.StaleACLOnReplay {
				assert.ErrorContains(t, r.Fault, "failed to fetch acls")
				assert.False(t, tree.Equal(restored), "the setData was not applied")
				return
			}
			require.NoError(t, r.Fault)
			assert.True(t, tree.Equal(restored), "%v", tree.Diff(restored))
			got, _, err := restored.GetACL("/b", []proto.ID{acl[0].ID})
			require.NoError(t, err)
			assert.Equal(t, acl, got)
		})
	}
}
