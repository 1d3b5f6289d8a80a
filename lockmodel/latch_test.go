package lockmodel

import (
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
