package lockmodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
)

type selectorApp struct {
	sel  *LeaderSelector
	led  int
	done func()
}

func newSelectors(t *testing.T, h *harness, names ...string) ([]*testApp, []*selectorApp) {
	t.Helper()
	var apps []*testApp
	var out []*selectorApp
	for _, n := range names {
		a := h.app(n, Bugs{})
		sel, err := NewLeaderSelector(a.s, "/election", n)
		require.NoError(t, err)
		sa := &selectorApp{sel: sel}
		sel.AutoRequeue = true
		sel.TakeLeadership = func(_ Grant, done func()) { sa.led++; sa.done = done }
		apps, out = append(apps, a), append(out, sa)
	}
	return apps, out
}

func selectorLeaders(s []*selectorApp) []int {
	var out []int
	for i, x := range s {
		if x.sel.HasLeadership() {
			out = append(out, i)
		}
	}
	return out
}

// TestLeaderSelectorTakesTurnsWithAutoRequeue: LeaderSelector (Curator 5.x): the first in the
// mutex's queue leads until takeLeadership returns; taskDone then requeues it (autoRequeue) and
// releases the mutex, so leadership goes round.
func TestLeaderSelectorTakesTurnsWithAutoRequeue(t *testing.T) {
	h := newHarness(t, 41, 3, true)
	h.ensure("/election")
	_, s := newSelectors(t, h, "a", "b")
	for _, x := range s {
		require.NoError(t, x.sel.Start())
		h.run(clock.Second)
	}
	h.run(time2s)
	require.Equal(t, []int{0}, selectorLeaders(s))
	s[0].done()
	h.run(time2s)
	assert.Equal(t, []int{1}, selectorLeaders(s), "b leads once a's takeLeadership returned")
	s[1].done()
	h.run(time2s)
	assert.Equal(t, []int{0}, selectorLeaders(s), "a requeued itself and leads again")
	assert.Equal(t, 2, s[0].led)
	require.NoError(t, s[0].sel.Close())
	h.run(time2s)
	assert.Equal(t, []int{1}, selectorLeaders(s))
	assert.Len(t, h.children("/election"), 1, "a's node is gone, b's is there")
}

// TestLeaderSelectorIsInterruptedWhenSuspended: LeaderSelectorListenerAdapter throws
// CancelLeadershipException on SUSPENDED, and cancelElection interrupts the leader: it stops
// leading, its node is deleted, and autoRequeue queues it again; the other participant leads.
func TestLeaderSelectorIsInterruptedWhenSuspended(t *testing.T) {
	h := newHarness(t, 42, 3, true)
	h.ensure("/election")
	apps, s := newSelectors(t, h, "a", "b")
	interrupted := 0
	s[0].sel.OnInterrupted = func() { interrupted++ }
	for _, x := range s {
		require.NoError(t, x.sel.Start())
		h.run(clock.Second)
	}
	h.run(time2s)
	require.Equal(t, []int{0}, selectorLeaders(s))
	h.nw.Isolate(apps[0].node)
	h.run(4500 * clock.Millisecond)
	require.Equal(t, StateSuspended, apps[0].s.State())
	assert.Equal(t, 1, interrupted)
	assert.False(t, s[0].sel.HasLeadership())
	h.nw.Heal()
	h.run(5 * clock.Second)
	assert.Equal(t, []int{1}, selectorLeaders(s), "a's node was deleted once it reconnected, so b leads")
	s[1].done()
	h.run(time2s)
	assert.Equal(t, []int{0}, selectorLeaders(s), "a requeued and leads after b")
}
