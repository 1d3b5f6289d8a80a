package sim

import (
	"fmt"
	"sync"

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

// queueKey is what the queue orders: the event's time and insertion sequence, and the slot that
// holds the rest of the event. It holds no pointer, so that moving keys costs no write barrier
// while the garbage collector runs; with the target interface inside the heap, those barriers cost
// more than the comparisons.
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

// Calendar geometry. A bucket spans 2^24 ns (about 17 ms) and the ring 1024 buckets (about 17 s):
// network deliveries and immediate events land in the near heap or the next buckets, and the
// servers' read timeouts (10 s by default, re-armed for every packet, so that most of them are
// cancelled long before they come due) land in the ring at the cost of an append.
const (
	defaultBucketShift = 24
	defaultRingBuckets = 1024
	// ringBucketKeys is the capacity each bucket starts with, carved from one array for the whole
	// ring. The standard scenario's buckets grow to a few dozen keys (mostly cancelled read
	// timeouts); grown one append at a time from empty, they cost thousands of allocations a run.
	ringBucketKeys = 32
)

// eventQueue is a calendar queue over a slab of events. Keys with a time before the horizon are in
// the near heap; keys in the next ring-length of buckets are in the ring, unsorted, one slice per
// bucket; later keys are in the far heap. The earliest key is always the near heap's minimum once
// the horizon has advanced over empty buckets, and a bucket's keys enter the near heap only when
// the horizon reaches it. The run's queue is mostly cancelled timers that wait for their time (see
// World.CancelTimer), thousands of them against a hundred or so live events: the calendar keeps
// them out of the heap that every event is popped from.
//
// Events are stored by value in the slab, whose slots are reused through a free list: no
// allocation per event once the slab and the buckets have grown to the run's working size.
type eventQueue struct {
	slots []event
	free  []uint32
	n     int

	near keyHeap
	far  keyHeap
	// ring[b % len(ring)] holds the keys of bucket b, for horizonBucket <= b < horizonBucket +
	// len(ring). ringCount is their number.
	ring          [][]queueKey
	ringCount     int
	horizonBucket int64
	bucketShift   uint
}

func (q *eventQueue) len() int { return q.n }

// spareQueues holds the arrays of finished runs' queues (World.Release), emptied, for the next
// worlds to start with: a run grows its slab and ring to megabytes, and a sweep runs thousands.
// A queue's behaviour depends on what it holds, never on its capacity, so a reused queue orders
// events exactly as a new one does; the pool only saves the growing.
var spareQueues sync.Pool // of *eventQueue

// takeSpareQueue returns an empty queue with a finished run's arrays, or a new one.
func takeSpareQueue() eventQueue {
	if q, ok := spareQueues.Get().(*eventQueue); ok {
		return *q
	}
	return eventQueue{}
}

// giveBack empties q and hands its arrays to spareQueues.
func (q *eventQueue) giveBack() { spareQueues.Put(q.emptied()) }

// emptied returns an empty queue with q's arrays and geometry, and leaves q as a zero queue.
func (q *eventQueue) emptied() *eventQueue {
	clear(q.slots) // Drop the targets, so that the pool keeps no finished world alive.
	spare := &eventQueue{
		slots:       q.slots[:0],
		free:        q.free[:0],
		near:        keyHeap{keys: q.near.keys[:0]},
		far:         keyHeap{keys: q.far.keys[:0]},
		ring:        q.ring,
		bucketShift: q.bucketShift,
	}
	for i := range spare.ring {
		spare.ring[i] = spare.ring[i][:0]
	}
	*q = eventQueue{}
	return spare
}

func (q *eventQueue) bucket(at clock.Time) int64 { return int64(at) >> q.bucketShift }

// peekTime returns the time of the earliest event. The queue must not be empty.
func (q *eventQueue) peekTime() clock.Time {
	q.settle()
	return q.near.keys[0].at
}

func (q *eventQueue) push(e event) {
	if q.ring == nil {
		if q.bucketShift == 0 {
			q.bucketShift = defaultBucketShift
		}
		q.ring = make([][]queueKey, defaultRingBuckets)
		// Each bucket's capacity ends where the next one's begins, so that a bucket that outgrows
		// it moves to its own array instead of writing over its neighbour.
		keys := make([]queueKey, defaultRingBuckets*ringBucketKeys)
		for i := range q.ring {
			q.ring[i] = keys[i*ringBucketKeys : i*ringBucketKeys : (i+1)*ringBucketKeys]
		}
	}
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
	q.n++
	q.place(queueKey{at: e.at, seq: e.seq, slot: slot})
}

// place puts a key where its time says: the near heap, a ring bucket, or the far heap.
func (q *eventQueue) place(k queueKey) {
	b := q.bucket(k.at)
	switch {
	case b < q.horizonBucket:
		q.near.push(k)
	case b < q.horizonBucket+int64(len(q.ring)):
		i := b % int64(len(q.ring))
		q.ring[i] = append(q.ring[i], k)
		q.ringCount++
	default:
		q.far.push(k)
	}
}

// pop removes and returns the earliest event. The queue must not be empty.
func (q *eventQueue) pop() event {
	q.settle()
	top := q.near.pop()
	q.n--
	e := q.slots[top.slot]
	q.slots[top.slot] = event{} // Drop references so that finished targets can be collected.
	q.free = append(q.free, top.slot)
	return e
}

// settle advances the horizon until the near heap holds the earliest key. The loop is bounded by
// the ring's length between two keys found: an empty ring jumps straight to the far heap's first
// bucket.
func (q *eventQueue) settle() {
	if q.near.len() > 0 {
		return
	}
	if q.n == 0 {
		panic("sim: the event queue is empty")
	}
	for q.near.len() == 0 {
		if q.ringCount == 0 {
			// Nothing in the ring: jump to the far heap's first bucket, and refill the ring.
			q.horizonBucket = max(q.horizonBucket, q.bucket(q.far.keys[0].at))
			q.refillRing()
		}
		i := q.horizonBucket % int64(len(q.ring))
		for _, k := range q.ring[i] {
			q.near.push(k)
		}
		q.ringCount -= len(q.ring[i])
		q.ring[i] = q.ring[i][:0]
		q.horizonBucket++
		q.refillRing()
	}
}

// refillRing moves the far heap's keys whose buckets the ring now covers into the ring.
func (q *eventQueue) refillRing() {
	end := q.horizonBucket + int64(len(q.ring))
	for q.far.len() > 0 && q.bucket(q.far.keys[0].at) < end {
		k := q.far.pop()
		i := q.bucket(k.at) % int64(len(q.ring))
		q.ring[i] = append(q.ring[i], k)
		q.ringCount++
	}
}

// queueArity is the heaps' branching factor. A 4-ary heap is half as deep as a binary one: a pop
// moves half as many keys, for a few more comparisons among children that share a cache line.
const queueArity = 4

// keyHeap is a 4-ary min-heap of keys.
type keyHeap struct {
	keys []queueKey
}

func (h *keyHeap) len() int { return len(h.keys) }

func (h *keyHeap) push(k queueKey) {
	h.keys = append(h.keys, k)
	h.siftUp(len(h.keys) - 1)
}

// siftUp moves the key at i towards the root until its parent is earlier. It moves a hole rather
// than swapping, so each level costs one key copy.
func (h *keyHeap) siftUp(i int) {
	keys := h.keys
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

// pop removes and returns the earliest key. The heap must not be empty.
func (h *keyHeap) pop() queueKey {
	top := h.keys[0]
	last := len(h.keys) - 1
	moved := h.keys[last]
	h.keys = h.keys[:last]
	if last > 0 {
		h.siftDown(moved)
	}
	return top
}

// siftDown places k, which replaces the root, by moving the hole at the root down past every
// child that is earlier than k.
func (h *keyHeap) siftDown(k queueKey) {
	keys := h.keys
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
