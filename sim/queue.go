package sim

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
)

// eventKind says how the loop dispatches an event.
type eventKind uint8

const (
	// evTimer is a node timer: arg is its slot, guard the slot's generation, so that a cancelled or
	// superseded timer is recognised and skipped without searching the queue.
	evTimer eventKind = iota + 1
	// evTarget calls target.Fire(arg). It is how the network delivers without allocating.
	evTarget
)

// event is one pending occurrence, as the world pushes it and the loop dispatches it.
type event struct {
	at     clock.Time
	seq    uint64
	arg    uint64
	target Target
	node   NodeID
	guard  uint32
	kind   eventKind
}

// queueKey is what the heap orders: the event's time and insertion sequence, and the slot that
// holds the rest of the event. It holds no pointer, so that moving keys inside the heap costs no
// write barrier while the garbage collector runs; with the target interface inside the heap, those
// barriers cost more than the comparisons.
type queueKey struct {
	at   clock.Time
	seq  uint64
	slot uint32
}

// before orders keys by virtual time, then by insertion sequence. The sequence is assigned by the
// world from a counter, so ties are broken the same way in every run: never by map order, pointer
// values or goroutine scheduling. Sequences are unique, so the order is total and any correct
// priority queue pops the events in exactly the same order.
func (k *queueKey) before(o *queueKey) bool {
	if k.at != o.at {
		return k.at < o.at
	}
	return k.seq < o.seq
}

// queueArity is the heap's branching factor. A 4-ary heap is half as deep as a binary one: a pop
// moves half as many keys, for a few more comparisons among children that share a cache line.
const queueArity = 4

// eventQueue is a 4-ary min-heap of keys over a slab of events. Events are stored by value in the
// slab, whose slots are reused through a free list: no allocation per event once the slab has
// grown to the run's working size.
type eventQueue struct {
	keys  []queueKey
	slots []event
	free  []uint32
}

func (q *eventQueue) len() int { return len(q.keys) }

// peekTime returns the time of the earliest event. The queue must not be empty.
func (q *eventQueue) peekTime() clock.Time { return q.keys[0].at }

func (q *eventQueue) push(e event) {
	var slot uint32
	if k := len(q.free); k > 0 {
		slot = q.free[k-1]
		q.free = q.free[:k-1]
		q.slots[slot] = e
	} else {
		if len(q.slots) >= 1<<32-1 {
			panic(fmt.Sprintf("sim: %d events pending, more than the queue can index", len(q.slots)))
		}
		slot = uint32(len(q.slots))
		q.slots = append(q.slots, e)
	}
	q.keys = append(q.keys, queueKey{at: e.at, seq: e.seq, slot: slot})
	q.siftUp(len(q.keys) - 1)
}

// siftUp moves the key at i towards the root until its parent is earlier. It moves a hole rather
// than swapping, so each level costs one key copy.
func (q *eventQueue) siftUp(i int) {
	keys := q.keys
	k := keys[i]
	for i > 0 {
		parent := (i - 1) / queueArity
		if !k.before(&keys[parent]) {
			break
		}
		keys[i] = keys[parent]
		i = parent
	}
	keys[i] = k
}

// pop removes and returns the earliest event. The queue must not be empty.
func (q *eventQueue) pop() event {
	top := q.keys[0]
	last := len(q.keys) - 1
	moved := q.keys[last]
	q.keys = q.keys[:last]
	if last > 0 {
		q.siftDown(moved)
	}
	e := q.slots[top.slot]
	q.slots[top.slot] = event{} // Drop references so that finished targets can be collected.
	q.free = append(q.free, top.slot)
	return e
}

// siftDown places k, which replaces the root, by moving the hole at the root down past every
// child that is earlier than k.
func (q *eventQueue) siftDown(k queueKey) {
	keys := q.keys
	n := len(keys)
	i := 0
	for {
		first := queueArity*i + 1
		if first >= n {
			break
		}
		least := first
		end := min(first+queueArity, n)
		for c := first + 1; c < end; c++ {
			if keys[c].before(&keys[least]) {
				least = c
			}
		}
		if !keys[least].before(&k) {
			break
		}
		keys[i] = keys[least]
		i = least
	}
	keys[i] = k
}
