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
