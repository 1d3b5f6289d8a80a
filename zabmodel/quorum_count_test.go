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

// TestConfigTakesOneToSevenVoters: ZooKeeper runs any number of voters, odd or even; zabsim
// simulates one to seven.
func TestConfigTakesOneToSevenVoters(t *testing.T) {
	for voters := 1; voters <= MaxVoters; voters++ {
		assert.NoError(t, Config{Voters: voters}.WithDefaults().Validate(), "%d voters", voters)
	}
	for _, voters := range []int{-1, 0, MaxVoters + 1} {
		err := Config{Voters: voters}.WithDefaults().Validate()
		assert.ErrorIs(t, err, ErrConfig, "%d voters", voters)
		assert.ErrorContains(t, err, "voters must be 1 to 7", "%d voters", voters)
	}
}

// TestFourVotersBearOneFailure: a leader of four voters keeps serving when one follower is down
// (three of four are a quorum) and steps down when a second one goes (two of four are half, not
// more), as Leader.lead's tick finds its synced set short of a quorum.
func TestFourVotersBearOneFailure(t *testing.T) {
	f := newFixture(t, 11, Config{Voters: 4})
	f.run(30 * clock.Second)
	sids, leader := f.serving()
	require.Len(t, sids, 4)
	require.NotZero(t, leader)
	var followers []int64
	for _, sid := range sids {
		if sid != leader {
			followers = append(followers, sid)
		}
	}
	f.w.Crash(f.e.Server(followers[0]).Node())
	f.run(30 * clock.Second)
	st := f.e.Server(leader).State()
	assert.Equal(t, Leading, st.Role, "three of four voters keep their leader")
	assert.True(t, st.Serving)

	f.w.Crash(f.e.Server(followers[1]).Node())
	f.run(30 * clock.Second)
	for _, s := range f.e.Servers() {
		st := s.State()
		assert.False(t, st.Serving, "server %d serves with two of four voters up", st.Sid)
	}
}
