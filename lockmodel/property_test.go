package lockmodel

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/clock"
)

// TestPropertyMutexExcludesAndIsFair drives a few applications through random acquire, hold and
// release cycles (some acquisitions with timeouts) on a fault-free ensemble, and checks what a fair
// lock promises: holds never overlap, and the lock goes to nodes in the order of their sequence
// numbers.
func TestPropertyMutexExcludesAndIsFair(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64Range(1, 1<<20).Draw(rt, "seed")
		h := newHarness(t, seed, 1, true)
		h.ensure("/locks", "/locks/m")
		names := []string{"a", "b", "c", "d"}[:rapid.IntRange(2, 4).Draw(rt, "clients")]
		_, locks := newMutexes(t, h, Bugs{}, names...)
		var holds []hold
		for i, m := range locks {
			cycles := rapid.IntRange(1, 4).Draw(rt, "cycles")
			hold := clock.Duration(rapid.IntRange(1, 500).Draw(rt, "hold")) * clock.Millisecond
			timeout := clock.Duration(rapid.IntRange(0, 2).Draw(rt, "timeout")) * clock.Second
			startCycles(h, m, names[i], &holds, cycles, hold, timeout, clock.Duration(i)*50*clock.Millisecond)
		}
		h.run(20 * clock.Second)
		checkExclusionAndOrder(rt, holds)
	})
}

// hold is one hold of the lock as its application saw it: from the grant to the call of Release
// (after which it no longer uses what the lock protects).
type hold struct {
	client     string
	seq        int64
	zxid       int64
	start, end clock.Time
}

// startCycles makes m acquire and release cycles times, holding for hold each time, and records
// each hold.
func startCycles(h *harness, m *Mutex, name string, holds *[]hold, cycles int, d, timeout, delay clock.Duration) {
	var cycle func(left int)
	cycle = func(left int) {
		if left == 0 {
			return
		}
		_ = m.Acquire(timeout, func(g Grant) {
			if !g.Held {
				h.w.AfterFunc(m.s.node, 10*clock.Millisecond, func() { cycle(left - 1) })
				return
			}
			seq, _ := Sequence(g.Node)
			i := len(*holds)
			*holds = append(*holds, hold{client: name, seq: seq, zxid: g.Zxid, start: h.w.Now(), end: clock.Never})
			h.w.AfterFunc(m.s.node, d, func() {
				(*holds)[i].end = h.w.Now()
				_ = m.Release(func(error) { cycle(left - 1) })
			})
		})
	}
	h.w.AfterFunc(m.s.node, delay, func() { cycle(cycles) })
}

func checkExclusionAndOrder(rt *rapid.T, holds []hold) {
	if len(holds) == 0 {
		rt.Fatalf("the lock was never granted")
	}
	for i := 1; i < len(holds); i++ {
		prev, cur := holds[i-1], holds[i]
		if cur.start < prev.end {
			rt.Fatalf("%s was granted at %s while %s held the lock (until %s)", cur.client, cur.start, prev.client, prev.end)
		}
		if cur.seq <= prev.seq || cur.zxid <= prev.zxid {
			rt.Fatalf("grants out of queue order: %s (sequence %d, zxid 0x%x) after %s (sequence %d, zxid 0x%x)",
				cur.client, cur.seq, cur.zxid, prev.client, prev.seq, prev.zxid)
		}
	}
}
