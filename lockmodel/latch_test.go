package lockmodel

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
)

func newLatches(t *testing.T, h *harness, bugs Bugs, names ...string) ([]*testApp, []*LeaderLatch) {
	t.Helper()
	var apps []*testApp
	var latches []*LeaderLatch
	for _, n := range names {
		a := h.app(n, bugs)
		l, err := NewLeaderLatch(a.s, "/election", n)
		require.NoError(t, err)
		apps, latches = append(apps, a), append(latches, l)
	}
	return apps, latches
}

func leaders(latches []*LeaderLatch) []int {
	var out []int
	for i, l := range latches {
		if l.HasLeadership() {
			out = append(out, i)
		}
	}
	return out
}

func TestLeaderLatchElectsOneLeaderAtATime(t *testing.T) {
	h := newHarness(t, 31, 3, true)
	h.ensure("/election")
	_, l := newLatches(t, h, Bugs{}, "a", "b", "c")
	became := map[string]int{}
	for i, latch := range l {
		name := []string{"a", "b", "c"}[i]
		latch.OnLeader = func(Grant) { became[name]++ }
		require.NoError(t, latch.Start())
		h.run(clock.Second)
	}
	h.run(time2s)
	require.Equal(t, []int{0}, leaders(l), "the first to join leads")
	assert.Equal(t, 1, became["a"])
	assert.Error(t, l[0].Start(), "a latch starts once")
	require.NoError(t, l[0].Close())
	h.run(time2s)
	assert.Equal(t, []int{1}, leaders(l), "the next in line leads after the leader leaves")
	assert.Greater(t, l[1].Token(), l[0].Token())
	require.NoError(t, l[1].Close())
	h.run(time2s)
	assert.Equal(t, []int{2}, leaders(l))
	assert.Error(t, l[0].Close(), "a closed latch cannot close again")
}

func TestLeaderLatchGivesUpLeadershipWhenSuspended(t *testing.T) {
	h := newHarness(t, 32, 3, true)
	h.ensure("/election")
	apps, l := newLatches(t, h, Bugs{}, "a", "b")
	for _, latch := range l {
		require.NoError(t, latch.Start())
		h.run(clock.Second)
	}
	h.run(time2s)
	require.Equal(t, []int{0}, leaders(l))
	// Cut a off for less than its session timeout: it is suspended (and gives up leadership), then
	// reconnects with its session and finds its node still first.
	token := l[0].Token()
	h.nw.Isolate(apps[0].node)
	h.run(4500 * clock.Millisecond)
	assert.Equal(t, StateSuspended, apps[0].s.State())
	assert.Empty(t, leaders(l), "a suspended leader does not lead")
	h.nw.Heal()
	h.run(5 * clock.Second)
	assert.Equal(t, StateReconnected, apps[0].s.State())
	assert.Equal(t, []int{0}, leaders(l), "a leads again on its old node")
	assert.Equal(t, token, l[0].Token())
	var kinds []EventKind
	for _, e := range h.events {
		if e.Client == "a" && e.Kind != EventWatching {
			kinds = append(kinds, e.Kind)
		}
	}
	assert.Equal(t, []EventKind{EventAcquiring, EventCreated, EventGranted, EventLost, EventAcquiring, EventGranted}, kinds)
}

func TestLeaderLatchOfAnExpiredSessionEndsAndAnotherLeads(t *testing.T) {
	h := newHarness(t, 33, 3, true)
	h.ensure("/election")
	apps, l := newLatches(t, h, Bugs{}, "a", "b")
	for _, latch := range l {
		require.NoError(t, latch.Start())
		h.run(clock.Second)
	}
	h.run(time2s)
	require.Equal(t, []int{0}, leaders(l))
	h.w.Pause(apps[0].node)
	h.run(20 * clock.Second)
	assert.Equal(t, []int{1}, leaders(l)[len(leaders(l))-1:], "b leads once a's session expired")
	h.w.Resume(apps[0].node)
	h.run(10 * clock.Second)
	assert.Equal(t, StateLost, apps[0].s.State())
	assert.Equal(t, []int{1}, leaders(l), "a learned that it lost")
}

func TestLeaderLatchHerdBug(t *testing.T) {
	for _, bug := range []bool{false, true} {
		h := newHarness(t, 34, 1, true)
		h.ensure("/election")
		bugs := Bugs{}
		if bug {
			bugs = bugs.With(BugHerd)
		}
		_, l := newLatches(t, h, bugs, "a", "b", "c", "d")
		for _, latch := range l {
			require.NoError(t, latch.Start())
			h.run(clock.Second)
		}
		before := len(h.eventsOf(EventWatching, ""))
		require.NoError(t, l[0].Close())
		h.run(time2s)
		assert.Equal(t, []int{1}, leaders(l), "bug=%v", bug)
		woke := len(h.eventsOf(EventWatching, "")) - before
		if bug {
			assert.Equal(t, 2, woke, "c and d woke and watch the children again")
		} else {
			assert.Zero(t, woke, "only b woke, and it leads")
		}
	}
}

// TestLeaderLatchGivesUpLeadershipWhenItsNodeIsNoLongerFirst: Curator 5.4.0's
// LeaderLatch.checkLeadership calls setLeadership(false) when the participant's node is not first
// (CURATOR-653); before it, a leader whose node was replaced by a later one kept leading. The
// listing is handed to checkLeadership directly: a node that sorts before the leader's.
func TestLeaderLatchGivesUpLeadershipWhenItsNodeIsNoLongerFirst(t *testing.T) {
	for _, keep := range []bool{false, true} {
		h := newHarness(t, 31, 3, true)
		// A child made first gives the latch's node sequence number 1, so that a node numbered 0
		// sorts before it.
		h.ensure("/election", "/election/other")
		cfg := Config{Name: "a"}
		if keep {
			cfg.SelfTests = cfg.SelfTests.With(SelfTestLatchKeepsLeadership)
		}
		a := h.appWith("a", cfg)
		l, err := NewLeaderLatch(a.s, "/election", "a")
		require.NoError(t, err)
		require.NoError(t, l.Start())
		h.run(time2s)
		require.True(t, l.HasLeadership())
		earlier := "_c_00000000-0000-0000-0000-000000000000-latch-0000000000"
		require.True(t, strings.HasSuffix(l.OurPath(), LatchLockName+"0000000001"), l.OurPath())
		l.checkLeadership([]string{nodeName(l.OurPath()), earlier}, 0)
		assert.Equal(t, keep, l.HasLeadership(), "keeps leadership with latch-keeps-leadership only")
	}
}

// TestLeaderLatchChecksTheOwnerOfItsNodeBeforeLeading: Curator 5.7.0's checkLeadership reads the
// first node with getData and leads only if its ephemeral owner is this session (CURATOR-696);
// otherwise it resets with a new node.
func TestLeaderLatchChecksTheOwnerOfItsNodeBeforeLeading(t *testing.T) {
	h := newHarness(t, 31, 3, true)
	h.ensure("/election")
	apps, l := newLatches(t, h, Bugs{}, "a", "b")
	require.NoError(t, l[0].Start())
	h.run(time2s)
	require.True(t, l[0].HasLeadership())
	require.NoError(t, l[1].Start())
	h.run(time2s)
	require.False(t, l[1].HasLeadership())
	stolen := l[0].OurPath()
	// b's latch is made to believe that a's node is its own: the owner check must refuse it.
	l[1].ourPath, l[1].ourToken = stolen, 0
	l[1].lead(0)
	h.run(time2s)
	assert.False(t, l[1].HasLeadership(), "a node owned by another session never makes a leader")
	assert.NotEqual(t, stolen, l[1].OurPath(), "the participant reset with a node of its own")
	assert.NotEmpty(t, h.eventsOf(EventRequeued, "b"), "the reset is reported as a requeue")
	assert.True(t, l[0].HasLeadership())
	_ = apps
}

// TestLeaderLatchReplacedNodeLeadsUntilItsListingReturns: in Curator 5.x, the callback of reset's
// create calls setNode, which deletes the node before in the background (a guaranteed delete),
// and then getChildren; only checkLeadership, when that listing returns, sets leadership false.
// A leader whose earlier create completes late (a RECONNECTED started a second one) so still
// believes it leads on its deleted node for one round trip, and a waiter that watched that node
// may be granted within it: the window lock/exclusive-belief-fenced reports as the known class
// curator-latch-replaced-node.
func TestLeaderLatchReplacedNodeLeadsUntilItsListingReturns(t *testing.T) {
	h := newHarness(t, 31, 3, true)
	h.ensure("/election")
	_, l := newLatches(t, h, Bugs{}, "a", "b")
	require.NoError(t, l[0].Start())
	h.run(time2s)
	require.NoError(t, l[1].Start())
	h.run(time2s)
	require.Equal(t, []int{0}, leaders(l))
	led := l[0].OurPath()
	// The late create's node: after b's in the queue.
	late := "/election/_c_00000000-0000-0000-0000-000000000009-latch-0000000009"
	h.ensure(late)
	l[0].nodeCreated(late, 0)
	assert.True(t, l[0].HasLeadership(), "setNode neither ends leadership nor waits for its delete")
	assert.Equal(t, late, l[0].OurPath())
	h.run(time2s)
	assert.Equal(t, []int{1}, leaders(l), "b, whose predecessor was deleted, leads; a gave up at its listing")
	assert.NotContains(t, h.children("/election"), nodeName(led), "a's own session deleted the node it led on")
	lost := h.eventsOf(EventLost, "a")
	require.NotEmpty(t, lost)
	assert.ErrorIs(t, lost[len(lost)-1].Err, ErrNotFirst, "ended by its own leadership check")
	assert.Equal(t, led, lost[len(lost)-1].Node, "the loss names the node it led on")
}
