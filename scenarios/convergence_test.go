package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// serving is a server that serves a tree with the given digest.
func serving(sid, digest int64, role zabmodel.Role) serverEnd {
	return serverEnd{State: zabmodel.State{Sid: sid, Up: true, Serving: true, Role: role, Digest: digest}}
}

func TestConvergencePassesACompletedRun(t *testing.T) {
	// Completed is the run's own statement that every application finished its final sync; the
	// servers' end states are not looked at then.
	ends := []serverEnd{serving(1, 7, zabmodel.Leading), {State: zabmodel.State{Sid: 2}, Exit: "refused"}}
	res := judgeConvergence(ends, &checkers.LivenessFacts{Completed: true}, 2*clock.Minute)
	assert.Equal(t, checkers.Pass, res.Status)
}

func TestConvergenceNamesWhatKeptTheClusterApart(t *testing.T) {
	leader, follower := serving(1, 7, zabmodel.Leading), serving(2, 7, zabmodel.Following)
	cases := []struct {
		name string
		ends []serverEnd
		want []string
	}{
		{"a server exited", []serverEnd{leader, follower,
			{State: zabmodel.State{Sid: 3}, Exit: "currentEpoch is less than acceptedEpoch"}},
			[]string{"server 3 exited: currentEpoch is less than acceptedEpoch"}},
		{"a server up and not serving", []serverEnd{leader, follower,
			{State: zabmodel.State{Sid: 3, Up: true, Role: zabmodel.Looking}}},
			[]string{"server 3 is LOOKING and not serving"}},
		{"serving servers diverged", []serverEnd{leader, follower, serving(3, 9, zabmodel.Following)},
			[]string{"the serving servers hold 2 different trees"}},
		{"everything at once", []serverEnd{leader, serving(2, 9, zabmodel.Following),
			{State: zabmodel.State{Sid: 3, Up: true, Role: zabmodel.Looking}}},
			[]string{"server 3 is LOOKING and not serving", "2 different trees"}},
		{"servers converged, an application did not", []serverEnd{leader, follower, serving(3, 7, zabmodel.Following)},
			[]string{"some application never got through its final sync"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := &checkers.LivenessFacts{HealTime: clock.Time(0).Add(70 * clock.Second)}
			res := judgeConvergence(c.ends, l, 2*clock.Minute)
			require.Equal(t, checkers.Violation, res.Status)
			require.Len(t, res.Findings, 1)
			for _, want := range c.want {
				assert.Contains(t, res.Findings[0].Message, want)
			}
			assert.Contains(t, res.Findings[0].Message, "after the liveness bound of 2m0s")
			assert.Equal(t, "converge-after-heal", res.Findings[0].Rule)
		})
	}
}

// TestConvergenceKnowsTheAcceptedEpochLockout: a server up and not serving whose acceptedEpoch is
// above the serving leader's epoch is ZooKeeper 3.8's own lock-out (Learner.registerWithLeader):
// a known finding, which names the reason. The same server with an acceptedEpoch not above the
// leader's, or beside another problem, is a violation.
func TestConvergenceKnowsTheAcceptedEpochLockout(t *testing.T) {
	leader := serving(3, 7, zabmodel.Leading)
	leader.CurrentEpoch, leader.AcceptedEpoch = 6, 6
	follower := serving(2, 7, zabmodel.Following)
	lockedOut := serverEnd{State: zabmodel.State{Sid: 1, Up: true, Role: zabmodel.Following, AcceptedEpoch: 7, CurrentEpoch: 3}}
	l := &checkers.LivenessFacts{HealTime: clock.Time(0).Add(65 * clock.Second)}

	res := judgeConvergence([]serverEnd{lockedOut, follower, leader}, l, 2*clock.Minute)
	require.Equal(t, checkers.Known, res.Status, res.String())
	require.Len(t, res.Findings, 1)
	assert.Equal(t, KnownAcceptedEpochLockout, res.Findings[0].Known)
	assert.Contains(t, res.Findings[0].Message, "acceptedEpoch 7 is above the serving leader's epoch 6")
	assert.Contains(t, res.Findings[0].Message, "Learner.registerWithLeader")
	assert.False(t, res.Failed())

	notAbove := lockedOut
	notAbove.AcceptedEpoch = 6
	assert.Equal(t, checkers.Violation, judgeConvergence([]serverEnd{notAbove, follower, leader}, l, 2*clock.Minute).Status)

	noLeader := judgeConvergence([]serverEnd{lockedOut, follower, serving(3, 7, zabmodel.Following)}, l, 2*clock.Minute)
	assert.Equal(t, checkers.Violation, noLeader.Status, "without a serving leader there is no epoch to be locked out of")

	diverged := judgeConvergence([]serverEnd{lockedOut, serving(2, 9, zabmodel.Following), leader}, l, 2*clock.Minute)
	require.Equal(t, checkers.Violation, diverged.Status)
	assert.Len(t, diverged.Findings, 2, "the lock-out is still named beside the violation")
}
