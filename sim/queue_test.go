package sim

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/clock"
)

// TestQueuePopsInTimeThenSequenceOrder checks the calendar queue against the simplest correct
// queue, a list kept sorted by (time, sequence), over random interleavings of pushes and pops with
// many equal times (the order of equal times is what makes a run reproducible). Small bucket and
// ring sizes drive keys through every part of the calendar: the near heap, the ring, the far heap,
// a horizon that walks over empty buckets and one that jumps over an empty ring.
func TestQueuePopsInTimeThenSequenceOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q eventQueue
		if !rapid.Bool().Draw(t, "default geometry") {
			q.bucketShift = uint(rapid.IntRange(0, 4).Draw(t, "bucket shift"))
			q.ring = make([][]queueKey, rapid.IntRange(1, 8).Draw(t, "ring buckets"))
		}
		maxDelay := rapid.SampledFrom([]int{0, 3, 40, 1000, 1 << 30}).Draw(t, "max delay")
		if rapid.Bool().Draw(t, "reused") {
			// A queue emptied after a run (World.Release) must behave as a new one: fill one
			// with events that are never popped, and start from its arrays.
			for i := range rapid.IntRange(1, 300).Draw(t, "leftover events") {
				q.push(event{at: clock.Time(rapid.IntRange(0, maxDelay).Draw(t, "leftover delay")), seq: uint64(1_000_000 + i), kind: evTarget})
			}
			if rapid.Bool().Draw(t, "pop some leftovers") {
				q.pop()
			}
			q = *q.emptied()
			require.Zero(t, q.len())
		}
		var reference []event
		var seq uint64
		var now clock.Time
		steps := rapid.IntRange(1, 400).Draw(t, "steps")
		for range steps {
			if len(reference) > 0 && rapid.IntRange(0, 2).Draw(t, "pop") == 0 {
				if rapid.Bool().Draw(t, "peek first") {
					require.Equal(t, reference[0].at, q.peekTime())
				}
				got := q.pop()
				want := reference[0]
				reference = reference[1:]
				require.Equal(t, want.seq, got.seq, "popped the wrong event")
				require.Equal(t, want, got, "the event came back changed")
				now = got.at // As the world does: nothing is ever pushed before the present.
				continue
			}
			seq++
			e := event{
				at:   now + clock.Time(rapid.IntRange(0, maxDelay).Draw(t, "delay")),
				seq:  seq,
				arg:  seq * 7,
				node: NodeID(seq % 5),
				kind: evTarget,
			}
			q.push(e)
			i, _ := slices.BinarySearchFunc(reference, e, func(a, b event) int {
				if a.at != b.at {
					return cmp.Compare(a.at, b.at)
				}
				return cmp.Compare(a.seq, b.seq)
			})
			reference = slices.Insert(reference, i, e)
			require.Equal(t, len(reference), q.len())
			if rapid.Bool().Draw(t, "peek") {
				require.Equal(t, reference[0].at, q.peekTime())
			}
		}
		for len(reference) > 0 {
			got := q.pop()
			require.Equal(t, reference[0], got)
			reference = reference[1:]
		}
		assert.Zero(t, q.len())
	})
}

// TestQueueReusesSlotsAndDropsReferences checks that a popped event's slot is reused and no longer
// holds its target, so that a long run neither grows the slab nor keeps finished targets alive.
func TestQueueReusesSlotsAndDropsReferences(t *testing.T) {
	var q eventQueue
	target := funcTarget(func() {})
	for i := range 100 {
		q.push(event{at: clock.Time(i), seq: uint64(i + 1), target: target, kind: evTarget})
		q.pop()
	}
	assert.Len(t, q.slots, 1, "one slot serves events that never overlap")
	assert.Nil(t, q.slots[0].target, "a popped event's target is dropped")
	assert.Zero(t, q.len())
}
