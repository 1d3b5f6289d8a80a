package zabmodel_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers/zab"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestSnapshotsAreFuzzyAndRestoreToleratesThem follows SyncRequestProcessor's snapshot thread:
// the snapshot is named by the zxid the tree had when the walk started, commits go on during the
// walk (so the file holds changes past its zxid), and a restart that loads it and replays the log
// from its zxid ends with the tree every other server has, without a digest mismatch. Without
// DataTree.compareDigest's skip of the fuzzy part, the replay reports mismatches and this fails.
func TestSnapshotsAreFuzzyAndRestoreToleratesThem(t *testing.T) {
	w := newWatched(t, 21, zabmodel.Config{Voters: 3, SnapCount: 6})
	leader := w.leader()
	// Children of a node the walk reaches last (/zz000, after /a*** and /zookeeper) created while
	// the walk runs are in the snapshot although their zxids are past its own.
	w.writes(leader, "/a", 200)
	w.writes(leader, "/zz", 1)
	w.writes(leader, "/zz000/c", 400)

	fuzzy := 0
	for _, s := range w.e.Servers() {
		sid := s.State().Sid
		lastApplied := int64(0)
		for _, e := range w.events {
			if e.Server != sid {
				continue
			}
			switch e.Kind {
			case zabmodel.EventApply:
				lastApplied = max(lastApplied, e.Zxid)
			case zabmodel.EventSnapshot:
				if lastApplied > e.Zxid {
					fuzzy++ // Commits landed while the walk ran.
				}
			}
		}
	}
	require.Positive(t, fuzzy, "some snapshot was taken while commits went on")

	for _, s := range w.e.Servers() {
		w.w.Crash(s.Node())
	}
	from := len(w.events)
	for _, s := range w.e.Servers() {
		w.w.Restart(s.Node())
	}
	w.leader()
	w.run(5 * clock.Second)
	loaded := 0
	for _, e := range w.since(from, 0, zabmodel.EventTreeLoaded) {
		if e.Source == zabmodel.SourceStartup && e.Zxid > 0 {
			loaded++
		}
	}
	assert.Positive(t, loaded, "the restarts load snapshots")
	assert.Empty(t, w.since(0, 0, zabmodel.EventDigestMismatch), "replaying over a fuzzy snapshot is no digest mismatch")
	w.converged()
}

// TestASnapIsStreamedFromTheLiveTree follows LearnerHandler.run: the leader decides on a SNAP,
// starts forwarding, and only then serializes its tree while commits go on, so that the learner
// gets a snapshot holding transactions that are also forwarded behind it and applies them again.
// The cluster converges and the ZAB checker, which knows the fuzzy window, finds nothing.
func TestASnapIsStreamedFromTheLiveTree(t *testing.T) {
	cfg := zabmodel.Config{Voters: 3, CommitLogCount: 5, SnapshotSizeFactor: -1}
	w := newWatched(t, 31, cfg)
	leader := w.leader()
	follower := w.other(leader)
	w.writes(leader, "/before", 3)
	w.w.Crash(w.e.Server(follower).Node())
	w.run(clock.Second)
	w.writes(leader, "/w", 300)
	cl := w.client("busy", []sim.NodeID{w.e.Server(leader).Node()})
	w.run(2 * clock.Second)
	from := len(w.events)
	w.w.Restart(w.e.Server(follower).Node())
	for i := range 2000 {
		require.NoError(t, cl.Create(fmt.Sprintf("/busy%04d", i), nil, proto.OpenACLUnsafe, proto.Persistent, func(client.CreateResult) {}))
		w.run(clock.Millisecond)
	}
	w.run(10 * clock.Second)

	require.Equal(t, 1, snapSyncs(w, from, follower), "the follower gets a SNAP")
	var start, end int64
	for _, e := range w.since(from, leader, zabmodel.EventLearnerSync) {
		if e.Source == zabmodel.SourceSnap {
			end = e.Zxid
		} else {
			start = e.Zxid
		}
	}
	assert.Greater(t, end, start, "commits landed between startForwarding and the end of the walk")
	duplicates := 0
	loaded := w.since(from, follower, zabmodel.EventTreeLoaded)
	require.NotEmpty(t, loaded)
	for _, e := range w.since(from, follower, zabmodel.EventApply) {
		if e.Zxid <= loaded[len(loaded)-1].Zxid {
			duplicates++
		}
	}
	assert.Positive(t, duplicates, "the follower applied again a transaction its SNAP held")
	w.converged()
	violations, err := zab.Check(zab.Config{Voters: []int64{1, 2, 3}}, w.events)
	require.NoError(t, err)
	assert.Empty(t, violations)
}
