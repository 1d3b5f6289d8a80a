package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// availabilityResult returns the availability check's result of a report.
func availabilityResult(t *testing.T, rep *Report) checkers.Result {
	t.Helper()
	for _, res := range rep.Checks.Results {
		if res.Checker == CheckerAvailability {
			return res
		}
	}
	require.Fail(t, "no availability result", rep.Explain())
	return checkers.Result{}
}

// TestAvailabilityFiresOnAHandlerThatNeverReleasesItsLearner: with zabmodel's hold-learners
// self-test every learner handler keeps its learner after the NEWLEADER quorum, so no learner ever
// serves, while every voter is up and connected for the whole run. The check must name the
// quorum and the window; the same run without the self-test passes it.
func TestAvailabilityFiresOnAHandlerThatNeverReleasesItsLearner(t *testing.T) {
	script, err := ParseScript(strings.NewReader("servers 3\nobservers 0\nclients 2\nduration 1m\n"))
	require.NoError(t, err)
	rep, err := Run(Options{Seed: 3, Script: script, SelfTests: zabmodel.SelfTests{}.With(zabmodel.SelfTestHoldLearners)})
	require.NoError(t, err)
	assert.Equal(t, CheckerAvailability, rep.Failure(), rep.Explain())
	res := availabilityResult(t, rep)
	require.Equal(t, checkers.Violation, res.Status, rep.Explain())
	require.Len(t, res.Findings, 1)
	f := res.Findings[0]
	assert.Equal(t, "leader-within-bound", f.Rule)
	assert.Contains(t, f.Message, "servers zk")
	require.Len(t, f.Times, 2)
	bound := availabilityBound(zabmodel.Config{}.WithDefaults(), 0)
	assert.Equal(t, 51200*clock.Millisecond, bound, "the defaults' bound")
	assert.Greater(t, f.Times[1].Sub(f.Times[0]), bound, "the window is past the bound")
	assert.Less(t, f.Times[1].Sub(f.Times[0]), bound+clock.Second, "reported as soon as it passes")

	rep, err = Run(Options{Seed: 3, Script: script})
	require.NoError(t, err)
	require.False(t, rep.Failed(), rep.Explain())
	res = availabilityResult(t, rep)
	assert.Equal(t, checkers.Pass, res.Status)
	assert.Positive(t, res.Checked, "the fault phase had quorums to judge")
}

// TestAvailabilityBoundFollowsTheConfiguration: the bound grows with every timeout it is made of.
func TestAvailabilityBoundFollowsTheConfiguration(t *testing.T) {
	base := zabmodel.Config{}.WithDefaults()
	b := availabilityBound(base, 200*clock.Millisecond)
	assert.Equal(t, 2*10*2*clock.Second+5*2*clock.Second+2*(2*200*clock.Millisecond+200*clock.Millisecond), b)
	longer := base
	longer.InitLimit = 20
	assert.Greater(t, availabilityBound(longer, 200*clock.Millisecond), b)
	longer = base
	longer.SyncLimit = 10
	assert.Greater(t, availabilityBound(longer, 200*clock.Millisecond), b)
	longer = base
	longer.TickTime = 3 * clock.Second
	assert.Greater(t, availabilityBound(longer, 200*clock.Millisecond), b)
	assert.Greater(t, availabilityBound(base, clock.Second), b)
}
