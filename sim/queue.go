package sim

import "github.com/zabsim/zabsim/clock"

// eventKind says how the loop dispatches an event.
type eventKind uint8

const (
	// evTimer is a node timer: arg is its slot, guard the slot's generation, so that a cancelled or
	// superseded timer is recognised and skipped without searching the queue.
	evTimer eventKind = iota + 1
	// evTarget calls target.Fire(arg). It is how the network delivers without allocating.
	evTarget
)

// event is one pending occurrence. Events are stored by value in the heap: no allocation per event.
type event struct {
	at     clock.Time
	seq    uint64
	arg    uint64
	target Target
	node   NodeID
	guard  uint32
	kind   eventKind
}

// before orders events by virtual time, then by insertion sequence. The sequence is assigned by the
// world from a counter, so ties are broken the same way in every run: never by map order, pointer
// values or goroutine scheduling.
func (e *event) before(o *event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.seq < o.seq
}

// eventQueue is a binary min-heap written out by hand: container/heap would box every event in an
// interface value and allocate.
type eventQueue struct {
	items []event
}

func (q *eventQueue) len() int { return len(q.items) }

func (q *eventQueue) peek() *event { return &q.items[0] }

func (q *eventQueue) push(e event) {
	q.items = append(q.items, e)
	i := len(q.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !q.items[i].before(&q.items[parent]) {
			break
		}
		q.items[i], q.items[parent] = q.items[parent], q.items[i]
		i = parent
	}
}

func (q *eventQueue) pop() event {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items[last] = event{} // Drop references so that finished targets can be collected.
	q.items = q.items[:last]
	i := 0
	for {
		left := 2*i + 1
		if left >= last {
			break
		}
		least := left
		if right := left + 1; right < last && q.items[right].before(&q.items[left]) {
			least = right
		}
		if !q.items[least].before(&q.items[i]) {
			break
		}
		q.items[i], q.items[least] = q.items[least], q.items[i]
		i = least
	}
	return top
}
