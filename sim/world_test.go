package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
)

func newWorld(t *testing.T, cfg Config) *World {
	t.Helper()
	w, err := New(cfg)
	require.NoError(t, err)
	return w
}

// counterProcess keeps one durable and one volatile counter, as a server keeps its txn log and its
// in-memory state.
type counterProcess struct {
	durable, volatile int
	crashes, restarts int
}

func (p *counterProcess) Crash()   { p.volatile = 0; p.crashes++ }
func (p *counterProcess) Restart() { p.volatile = p.durable; p.restarts++ }

type recorder struct {
	w    *World
	got  []string
	tags []uint64
}

func (r *recorder) OnTimer(tag uint64) {
	r.tags = append(r.tags, tag)
	r.got = append(r.got, strings.TrimSpace(r.w.Now().String()))
}

func TestEventsRunInTimeThenInsertionOrder(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	var order []string
	w.At(clock.Time(2*clock.Second), func() { order = append(order, "late") })
	w.At(clock.Time(clock.Second), func() { order = append(order, "a") })
	w.At(clock.Time(clock.Second), func() { order = append(order, "b") })
	w.At(clock.Time(clock.Second), func() { order = append(order, "c") })
	o := w.Run()
	assert.Equal(t, Quiescent, o.Kind)
	assert.Equal(t, []string{"a", "b", "c", "late"}, order)
	assert.Equal(t, clock.Time(2*clock.Second), w.Now())
}

func TestTimersFireCancelAndDieWithTheirIncarnation(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	p := &counterProcess{}
	id := w.AddNode("n1", p)
	r := &recorder{w: w}
	w.SetTimer(id, clock.Second, r, 1)
	cancelled := w.SetTimer(id, 2*clock.Second, r, 2)
	doomed := w.SetTimer(id, 4*clock.Second, r, 3)
	require.NotZero(t, doomed)
	assert.True(t, w.CancelTimer(cancelled))
	assert.False(t, w.CancelTimer(cancelled), "cancelling twice reports false")
	assert.False(t, w.CancelTimer(0), "the zero timer is never pending")
	w.At(clock.Time(3*clock.Second), func() { w.Crash(id) })
	w.At(clock.Time(3500*clock.Millisecond), func() {
		w.Restart(id)
		w.SetTimer(id, clock.Second, r, 4)
	})
	w.Run()
	assert.Equal(t, []uint64{1, 4}, r.tags, "the cancelled timer and the pre-crash timer never fire")
	assert.Equal(t, []string{"1.000000000", "4.500000000"}, r.got)
	assert.False(t, w.CancelTimer(doomed), "a timer killed by a crash is no longer pending")
}

func TestTimersFollowTheNodesDriftingClock(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	fast := w.AddNode("fast", nil)
	slow := w.AddNode("slow", nil)
	require.NoError(t, w.Clock(fast).SetDrift(0, 250_000))  // 25% fast
	require.NoError(t, w.Clock(slow).SetDrift(0, -200_000)) // 20% slow
	var fastAt, slowAt clock.Time
	w.AfterFunc(fast, 10*clock.Second, func() { fastAt = w.Now() })
	w.AfterFunc(slow, 10*clock.Second, func() { slowAt = w.Now() })
	w.Run()
	assert.Equal(t, clock.Time(8*clock.Second), fastAt)
	assert.Equal(t, clock.Time(12500*clock.Millisecond), slowAt)
	assert.Equal(t, clock.Time(15625*clock.Millisecond), w.Elapsed(fast), "the run ends at 12.5 s, which the fast clock reads as 15.625 s")
}

func TestCrashKeepsDurableStateAndDropsVolatile(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	p := &counterProcess{durable: 7, volatile: 9}
	id := w.AddNode("n1", p)
	var crashedSeen []NodeID
	var volatileSeen []int
	w.OnCrash(func(n NodeID) {
		crashedSeen = append(crashedSeen, n)
		volatileSeen = append(volatileSeen, p.volatile)
		assert.False(t, w.IsUp(n), "observers run after the node is marked down")
	})
	w.Crash(id)
	assert.False(t, w.IsUp(id))
	assert.Equal(t, 0, p.volatile)
	w.Crash(id) // Crashing a crashed node does nothing.
	assert.Equal(t, 1, p.crashes)
	w.Restart(id)
	assert.True(t, w.IsUp(id))
	assert.Equal(t, 7, p.volatile)
	w.Restart(id)
	assert.Equal(t, 1, p.restarts)
	assert.Equal(t, []NodeID{id}, crashedSeen)
	assert.Equal(t, []int{9}, volatileSeen, "observers run before the node's own hook")
	assert.Equal(t, uint32(1), w.Incarnation(id))
	w.Crash(id)
	assert.Panics(t, func() { w.SetTimer(id, 1, nil, 0) }, "arming a timer for a crashed node is a caller bug")
}

func TestPauseDefersEventsInOrderWhileTheClockRuns(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	id := w.AddNode("n1", nil)
	r := &recorder{w: w}
	w.SetTimer(id, 1*clock.Second, r, 1)
	w.SetTimer(id, 2*clock.Second, r, 2)
	w.SetTimer(id, 6*clock.Second, r, 3)
	w.At(clock.Time(500*clock.Millisecond), func() { w.Pause(id) })
	w.At(clock.Time(5*clock.Second), func() { w.Resume(id) })
	w.Run()
	assert.Equal(t, []uint64{1, 2, 3}, r.tags)
	assert.Equal(t, []string{"5.000000000", "5.000000000", "6.000000000"}, r.got)
}

func TestCrashWhilePausedDropsDeferredEvents(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	id := w.AddNode("n1", nil)
	r := &recorder{w: w}
	w.SetTimer(id, clock.Second, r, 1)
	w.At(clock.Time(500*clock.Millisecond), func() { w.Pause(id) })
	w.At(clock.Time(2*clock.Second), func() { w.Crash(id) })
	w.At(clock.Time(3*clock.Second), func() { w.Restart(id) })
	w.Run()
	assert.Empty(t, r.tags)
	assert.False(t, w.IsPaused(id))
}

type ticker struct {
	w  *World
	id NodeID
	d  clock.Duration
	n  int
}

func (k *ticker) OnTimer(uint64) {
	k.n++
	k.w.SetTimer(k.id, k.d, k, 0)
}

func TestEventBudgetEndsALivelock(t *testing.T) {
	w := newWorld(t, Config{Seed: 3, Budget: Budget{MaxEvents: 1000}})
	id := w.AddNode("spinner", nil)
	k := &ticker{w: w, id: id, d: 0} // Re-arms itself at the same instant forever.
	w.SetTimer(id, 0, k, 0)
	o := w.Run()
	assert.Equal(t, EventBudget, o.Kind)
	assert.Equal(t, int64(1000), o.Events)
	assert.Equal(t, 1000, k.n)
	assert.False(t, w.RunUntil(clock.Never), "an ended run stays ended")
}

func TestTimeBudgetEndsARunThatNeverQuiesces(t *testing.T) {
	w := newWorld(t, Config{Seed: 3, Budget: Budget{MaxTime: 10 * clock.Second}})
	id := w.AddNode("ticker", nil)
	w.SetTimer(id, clock.Second, &ticker{w: w, id: id, d: clock.Second}, 0)
	o := w.Run()
	assert.Equal(t, TimeBudget, o.Kind)
	assert.Equal(t, clock.Time(10*clock.Second), o.Time)

	w2 := newWorld(t, Config{Seed: 3, Budget: Budget{MaxTime: 10 * clock.Second}})
	assert.False(t, w2.RunUntil(clock.Time(11*clock.Second)), "a deadline past the budget ends the run too")
	assert.Equal(t, TimeBudget, w2.Outcome().Kind)
}

func TestQueueBudgetEndsAStorm(t *testing.T) {
	w := newWorld(t, Config{Seed: 3, Budget: Budget{MaxQueue: 100}})
	var storm func()
	storm = func() { w.After(clock.Millisecond, storm); w.After(clock.Millisecond, storm) }
	w.After(0, storm)
	o := w.Run()
	assert.Equal(t, QueueBudget, o.Kind)
	assert.LessOrEqual(t, w.Pending(), 101)
}

func TestPanicInSimulatedCodeEndsOnlyThatRun(t *testing.T) {
	w := newWorld(t, Config{Seed: 99, Trace: TraceConfig{Tail: 10}})
	id := w.AddNode("s2", nil)
	w.AfterFunc(id, 3*clock.Second, func() {
		w.Note(id, "state", "about to fail")
		var m map[string]int
		m["boom"] = 1 // A nil map write, as a real bug would do.
	})
	w.AfterFunc(id, 4*clock.Second, func() { t.Error("events after the panic must not run") })
	o := w.Run()
	require.Equal(t, Panic, o.Kind)
	var pe *PanicError
	require.True(t, errors.As(o.Err, &pe))
	assert.Equal(t, uint64(99), pe.Seed)
	assert.Equal(t, "s2", pe.Node)
	assert.Equal(t, clock.Time(3*clock.Second), pe.Time)
	assert.Contains(t, pe.Stack, "world_test.go")
	assert.Contains(t, o.String(), "seed=99")
	tail := strings.Join(w.Trace().Tail(), "\n")
	assert.Contains(t, tail, "about to fail", "the trace leading to the panic is kept")
	assert.Contains(t, tail, "panic")
}

func TestFailEndsTheRunWithTheFirstViolation(t *testing.T) {
	w := newWorld(t, Config{Seed: 5})
	first := errors.New("first violation")
	w.After(clock.Second, func() { w.Fail(first); w.Fail(errors.New("second")) })
	w.After(2*clock.Second, func() { t.Error("the run must stop at the failure") })
	o := w.Run()
	assert.Equal(t, Failure, o.Kind)
	assert.ErrorIs(t, o.Err, first)
	assert.False(t, o.OK())
}

func TestNewRejectsNegativeBudgets(t *testing.T) {
	_, err := New(Config{Budget: Budget{MaxEvents: -1}})
	assert.Error(t, err)
	_, err = New(Config{Trace: TraceConfig{Tail: -3}})
	assert.Error(t, err)
}

func TestOutsideFaultModelIsReported(t *testing.T) {
	w := newWorld(t, Config{Seed: 5})
	w.NoteOutsideFaultModel("net: reordering")
	w.NoteOutsideFaultModel("disk: corruption")
	w.NoteOutsideFaultModel("net: reordering")
	o := w.Run()
	assert.Equal(t, []string{"disk: corruption", "net: reordering"}, o.OutsideFaultModel)
	assert.Contains(t, o.String(), "outside-fault-model=disk: corruption,net: reordering")
}

func TestTraceRendersTextAndJSON(t *testing.T) {
	var text, js bytes.Buffer
	w := newWorld(t, Config{Seed: 5, Trace: TraceConfig{Text: &text, JSON: &js}})
	id := w.AddNode("s1", nil)
	w.AfterFunc(id, clock.Second, func() { w.Note(id, "role", "LOOKING -> LEADING epoch=%d", 3) })
	w.Run()
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	require.Len(t, lines, 3) // The timer, the note, and the end of the run.
	assert.Equal(t, "    1.000000000 s1   role      LOOKING -> LEADING epoch=3", lines[1])
	var rec Record
	jsonLines := strings.Split(strings.TrimSpace(js.String()), "\n")
	require.Len(t, jsonLines, 3)
	require.NoError(t, json.Unmarshal([]byte(jsonLines[1]), &rec))
	assert.Equal(t, Record{TimeNanos: int64(clock.Second), Time: "    1.000000000", Node: "s1", Event: "role", Detail: "LOOKING -> LEADING epoch=3"}, rec)
	assert.NoError(t, w.Trace().Err())
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestTraceSinkErrorIsReported(t *testing.T) {
	w := newWorld(t, Config{Seed: 5, Trace: TraceConfig{Text: failingWriter{}}})
	w.Note(NoNode, "x", "y")
	assert.ErrorContains(t, w.Trace().Err(), "disk full")
}

func TestTraceTailKeepsTheLastLines(t *testing.T) {
	w := newWorld(t, Config{Seed: 5, Trace: TraceConfig{Tail: 3}})
	for i := 0; i < 10; i++ {
		w.Note(NoNode, "n", "line %d", i)
	}
	tail := w.Trace().Tail()
	require.Len(t, tail, 3)
	assert.Contains(t, tail[0], "line 7")
	assert.Contains(t, tail[2], "line 9")
}

func TestNodeNamesAreUnique(t *testing.T) {
	w := newWorld(t, Config{})
	w.AddNode("a", nil)
	assert.Panics(t, func() { w.AddNode("a", nil) })
	id, ok := w.Lookup("a")
	assert.True(t, ok)
	assert.Equal(t, "a", w.Name(id))
	_, ok = w.Lookup("b")
	assert.False(t, ok)
}

func TestSerialNeverRepeatsWithinAWorld(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	assert.Equal(t, uint64(1), w.Serial())
	assert.Equal(t, uint64(2), w.Serial())
	other := newWorld(t, Config{Seed: 1})
	assert.Equal(t, uint64(1), other.Serial(), "each world counts on its own, so runs stay independent")
}
