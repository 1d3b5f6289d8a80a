package zabmodel

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/datatree"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// truncAfterFuzzySnapshot follows zk4 of seed 3071591 (the sweep from 3000001): a follower's sync
// processor logs a proposal and starts the snapshot thread, which names the file by the zxid
// before it; the follower then leaves its role, and ZooKeeperServer.shutdown fast-forwards the tree
// to the log (ZKDatabase.fastForwardDataBase) before the walk reaches the proposal's node, so
// that the file holds the proposal, which was never committed. The next leader tells the server to
// TRUNC to the zxid before the proposal. It returns what the TRUNC left.
type truncAfterFuzzySnapshot struct {
	point, proposal int64 // the truncation point, and the truncated proposal's zxid
	digestAtPoint   int64 // the tree's digest when it had applied the point
	walkEnded       int64 // the zxid of the digest the snapshot file stored
	digest          int64 // the tree's digest after the TRUNC
	lastProcessed   int64
	proposalNode    bool // whether the tree has the truncated proposal's node
	snapshotsAbove  int  // snapshot files left that reflect txns above the point
}

func truncateAfterFuzzySnapshot(t *testing.T, bugs Bugs) truncAfterFuzzySnapshot {
	f := newFixture(t, 1, Config{Voters: 1, Bugs: bugs})
	f.run(clock.Second)
	server := f.e.Server(1)
	p := server.p
	require.NotNil(t, p)
	db := p.db
	logTxn := func(path string, parentCVersion int32) int64 {
		zxid := db.disk().LastZxid() + 1
		require.True(t, db.append(&proto.TxnEntry{
			Header: proto.TxnHeader{Zxid: zxid, Type: proto.OpCreate},
			Txn:    &proto.CreateTxn{Path: path, ACL: proto.OpenACLUnsafe, ParentCVersion: parentCVersion},
		}))
		return zxid
	}
	// Enough nodes that the walk takes several steps, /p among the last it reaches.
	for i := range 100 {
		logTxn(fmt.Sprintf("/a%03d", i), int32(i+1))
	}
	logTxn("/p", 101)
	db.fsyncNow()
	db.fastForward()
	var out truncAfterFuzzySnapshot
	out.point, out.digestAtPoint = db.lastProcessedZxid(), db.digest()

	out.proposal = logTxn("/p/proposal", 1)
	db.startSnapshotThread()
	require.NotNil(t, db.snapThread)
	f.run(clock.Millisecond) // A step or two of the walk, which starts at /a000.
	require.NotNil(t, db.snapThread, "the walk is still running")
	db.fsyncNow()
	db.fastForward() // The role ends.
	require.Equal(t, out.proposal, db.lastProcessedZxid())
	f.run(clock.Second)
	require.Nil(t, db.snapThread, "the walk is over")
	snaps := server.Disk().Snapshots()
	require.NotEmpty(t, snaps)
	newest := snaps[len(snaps)-1]
	require.Equal(t, out.point, newest.Zxid, "the file is named by the zxid before the proposal")
	stored, ok := datatree.StoredDigest(newest.Data)
	require.True(t, ok)
	out.walkEnded = stored.Zxid

	require.True(t, db.truncateLog(out.point))
	out.digest, out.lastProcessed = db.digest(), db.lastProcessedZxid()
	_, _, err := db.tree.getData("/p/proposal", nil, nil)
	out.proposalNode = err == nil
	for _, s := range server.Disk().Snapshots() {
		if snapshotReach(s) > out.point {
			out.snapshotsAbove++
		}
	}
	return out
}

// TestATruncDropsAFuzzySnapshotHoldingTruncatedTxns: the TRUNC deletes the snapshot named by its
// point whose walk ended above it, so that the reload rebuilds the point from an older snapshot
// and the log, without the truncated proposal.
func TestATruncDropsAFuzzySnapshotHoldingTruncatedTxns(t *testing.T) {
	got := truncateAfterFuzzySnapshot(t, Bugs{})
	require.Equal(t, got.proposal, got.walkEnded, "the file holds the proposal, past its name")
	assert.False(t, got.proposalNode, "the truncated proposal is not in the tree")
	assert.Equal(t, got.digestAtPoint, got.digest, "the tree is the one the point had")
	assert.Equal(t, FormatZxid(got.point), FormatZxid(got.lastProcessed))
	assert.Zero(t, got.snapshotsAbove)
}

// TestATruncKeepsAFuzzySnapshotWithTheTruncSnapshotSwitch: every release keeps the file
// (FileTxnSnapLog.truncateLog deletes no snapshot), restores from it, and only warns that the log
// does not reach the snapshot's digest (FileTxnSnapLog.restore): the tree keeps a node of a
// transaction that no log holds and no quorum committed, and differs from every other server's.
func TestATruncKeepsAFuzzySnapshotWithTheTruncSnapshotSwitch(t *testing.T) {
	got := truncateAfterFuzzySnapshot(t, Bugs{}.With(BugTruncSnapshot))
	require.Equal(t, got.proposal, got.walkEnded)
	assert.True(t, got.proposalNode, "the truncated proposal stays in the tree")
	assert.NotEqual(t, got.digestAtPoint, got.digest)
	assert.Equal(t, 1, got.snapshotsAbove)
}
