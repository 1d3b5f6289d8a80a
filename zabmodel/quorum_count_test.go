package zabmodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
)

// TestQuorumCountsTheIdsItIsGiven: like QuorumMaj.containsQuorum, Quorum counts whatever ids it is
// given, observers included, once each; filtering observers out is its callers' job.
func TestQuorumCountsTheIdsItIsGiven(t *testing.T) {
	cfg := Config{Voters: 3, Observers: 2}
	assert.True(t, cfg.Quorum([]int64{1, 2}))
	assert.False(t, cfg.Quorum([]int64{1}))
	assert.True(t, cfg.Quorum([]int64{1, 4}), "an observer's id counts when a caller passes it")
	assert.False(t, cfg.Quorum([]int64{1, 1, 1}), "a sid given twice counts once")
	assert.True(t, Config{Voters: 4}.Quorum([]int64{1, 2, 3}))
	assert.False(t, Config{Voters: 4}.Quorum([]int64{1, 2}))
}

// TestObserversAloneKeepNoLeader: a leader whose voting followers are gone steps down although its
// observers stay synced, because its tick counts voting members only (SyncedLearnerTracker.addAck).
// With Quorum counting every id it is given, this fails if the tick forgets to filter observers.
func TestObserversAloneKeepNoLeader(t *testing.T) {
	f := newFixture(t, 7, Config{Voters: 3, Observers: 2})
	f.run(30 * clock.Second)
	sids, leader := f.serving()
	require.Len(t, sids, 5)
	require.NotZero(t, leader)
	for _, s := range f.e.Servers() {
		if s.Sid() != leader && f.e.Config().IsVoter(s.Sid()) {
			f.w.Crash(s.Node())
		}
	}
	f.run(30 * clock.Second)
	st := f.e.Server(leader).State()
	assert.NotEqual(t, Leading, st.Role, "the leader of a lone voter and two observers steps down")
	assert.False(t, st.Serving)
}
