package zabmodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
)

// TestANewLeaderAckWithAnotherZxidReleasesItsLearner follows Leader.waitForNewLeaderAck in 3.8.0: an
// ack whose zxid is not the NEWLEADER's is logged and not counted, and the call returns at once, so
// that its LearnerHandler goes on to UPTODATE. An ack with the right zxid, short of a quorum, waits.
func TestANewLeaderAckWithAnotherZxidReleasesItsLearner(t *testing.T) {
	f := newFixture(t, 1, Config{Voters: 3})
	f.run(clock.Second)
	p := f.e.Server(1).p
	require.NotNil(t, p)
	l := &leader{p: p, newLeaderZxid: MakeZxid(7, 0)}

	var released, timedOut int
	release, timeout := func() { released++ }, func() { timedOut++ }
	l.waitForNewLeaderAck(2, MakeZxid(7, 3), release, timeout)
	assert.Equal(t, 1, released, "an ack with another zxid releases its learner at once")
	assert.Empty(t, l.newLeaderAcks, "and is not counted")

	l.waitForNewLeaderAck(3, MakeZxid(7, 0), release, timeout)
	assert.Equal(t, 1, released, "a right ack short of a quorum waits")
	assert.Equal(t, []int64{3}, l.newLeaderAcks)
	assert.False(t, l.quorumFormed)
	assert.Zero(t, timedOut)
}
