package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
)

type recordingTarget struct {
	w    *World
	node NodeID
	got  *[]string
	name string
}

func (r recordingTarget) Fire(uint64) {
	*r.got = append(*r.got, r.name)
	r.w.TraceEvent(r.node, KindDeliver, 99, 1, []byte(r.name), "")
}

// TestScheduleModeFiresAnyEnabledEvent shows the driver choosing the order: a later timer first
// (moving the clock to its deadline), posted events at the current time, and cancelled timers
// never offered.
func TestScheduleModeFiresAnyEnabledEvent(t *testing.T) {
	w, err := New(Config{Seed: 1})
	require.NoError(t, err)
	require.NoError(t, w.EnableScheduleMode())
	a := w.AddNode("a", nil)
	var got []string
	w.AfterFunc(a, 5*clock.Second, func() { got = append(got, "t5") })
	w.AfterFunc(a, 1*clock.Second, func() { got = append(got, "t1") })
	dead := w.AfterFunc(a, 2*clock.Second, func() { got = append(got, "dead") })
	w.CancelTimer(dead)
	w.Post(a, w.Now().Add(clock.Second), recordingTarget{w: w, node: a, got: &got, name: "post"}, 0)

	enabled := w.Enabled(nil)
	require.Len(t, enabled, 3, "the cancelled timer is not enabled")
	assert.True(t, enabled[0].Timer)
	assert.False(t, enabled[2].Timer)

	alive, err := w.FireEnabled(enabled[0].Seq) // the 5 s timer, before the 1 s one
	require.NoError(t, err)
	require.True(t, alive)
	assert.Equal(t, clock.Time(0).Add(5*clock.Second), w.Now(), "a timer moves the clock to its deadline")
	_, err = w.FireEnabled(enabled[2].Seq)
	require.NoError(t, err)
	assert.Equal(t, clock.Time(0).Add(5*clock.Second), w.Now(), "a posted event runs at the current time")
	_, err = w.FireEnabled(enabled[1].Seq)
	require.NoError(t, err)
	assert.Equal(t, clock.Time(0).Add(5*clock.Second), w.Now(), "a late timer does not move the clock back")
	assert.Equal(t, []string{"t5", "post", "t1"}, got)
	assert.Empty(t, w.Enabled(nil))
	_, err = w.FireEnabled(enabled[1].Seq)
	assert.Error(t, err, "an event fires once")
	assert.True(t, w.RunFor(clock.Hour), "Run does nothing in schedule mode")
	assert.Equal(t, clock.Time(0).Add(5*clock.Second), w.Now())
}

// TestScheduleModeHistoryCommutes: events for different nodes in either order give each node the
// same history; events for one node in different orders do not.
func TestScheduleModeHistoryCommutes(t *testing.T) {
	run := func(order []int) (uint64, uint64) {
		w, err := New(Config{Seed: 1})
		require.NoError(t, err)
		require.NoError(t, w.EnableScheduleMode())
		a, b := w.AddNode("a", nil), w.AddNode("b", nil)
		var got []string
		w.Post(a, w.Now(), recordingTarget{w: w, node: a, got: &got, name: "x"}, 0)
		w.Post(b, w.Now(), recordingTarget{w: w, node: b, got: &got, name: "y"}, 0)
		w.Post(a, w.Now(), recordingTarget{w: w, node: a, got: &got, name: "z"}, 0)
		enabled := w.Enabled(nil)
		for _, i := range order {
			_, err := w.FireEnabled(enabled[i].Seq)
			require.NoError(t, err)
		}
		return w.HistoryHash(a), w.HistoryHash(b)
	}
	a1, b1 := run([]int{0, 1, 2})
	a2, b2 := run([]int{1, 0, 2})
	a3, b3 := run([]int{2, 1, 0})
	assert.Equal(t, a1, a2)
	assert.Equal(t, b1, b2)
	assert.NotEqual(t, a1, a3, "a's two events in the other order are another history")
	assert.Equal(t, b1, b3)
}

// TestFirstDueIsEnabledsFirstDueEntry: FirstDue picks what a scan of Enabled's list for the first
// event whose time has come picks, passes over timers when asked, skips cancelled timers, and
// reports none when nothing is due.
func TestFirstDueIsEnabledsFirstDueEntry(t *testing.T) {
	w, err := New(Config{Seed: 1})
	require.NoError(t, err)
	require.NoError(t, w.EnableScheduleMode())
	a := w.AddNode("a", nil)
	var got []string
	dead := w.AfterFunc(a, 0, func() { got = append(got, "dead") })
	w.CancelTimer(dead)
	w.AfterFunc(a, 3*clock.Second, func() { got = append(got, "t3") })
	_, ok := w.FirstDue(false)
	assert.False(t, ok, "a timer in the future is not due, a cancelled one never")
	zero := w.AfterFunc(a, 0, func() { got = append(got, "t0") })
	w.Post(a, w.Now(), recordingTarget{w: w, node: a, got: &got, name: "post"}, 0)

	firstDue := func(skipTimers bool) (EnabledEvent, bool) {
		for _, ev := range w.Enabled(nil) {
			if ev.At <= w.Now() && !(skipTimers && ev.Timer) {
				return ev, true
			}
		}
		return EnabledEvent{}, false
	}
	for _, skip := range []bool{false, true} {
		want, wantOK := firstDue(skip)
		ev, ok := w.FirstDue(skip)
		require.True(t, wantOK)
		assert.Equal(t, wantOK, ok)
		assert.Equal(t, want, ev, "skip timers %v", skip)
	}
	ev, _ := w.FirstDue(false)
	assert.True(t, ev.Timer, "the zero-delay timer was scheduled first")
	w.CancelTimer(zero)
	ev, ok = w.FirstDue(false)
	require.True(t, ok)
	assert.False(t, ev.Timer, "the posted event, once the timer is cancelled")
	_, err = w.FireEnabled(ev.Seq)
	require.NoError(t, err)
	_, ok = w.FirstDue(false)
	assert.False(t, ok)
	assert.Equal(t, []string{"post"}, got)
}
