package zabmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// TestSnapshotsAreFuzzyAndRestoreToleratesThem follows SyncRequestProcessor's snapshot thread:
// the snapshot is named by the zxid the tree had when the walk started, commits go on during the
// walk (so the file holds changes past its zxid), and a restart that loads it and replays the log
// from its zxid ends with the tree every other server has, without a digest mismatch.
func TestSnapshotsAreFuzzyAndRestoreToleratesThem(t *testing.T) {
	w := newWatched(t, 21, zabmodel.Config{Voters: 3, SnapCount: 6})
	leader := w.leader()
	w.writes(leader, "/f", 60)

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
