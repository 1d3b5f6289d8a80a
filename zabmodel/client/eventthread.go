package client

import (
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// maxDeliveriesPerDrain bounds one drain of the event queue. Deliveries only come from events the
// client received, so the bound is reached only by callbacks that keep issuing requests on a dead
// client, each failing at once: an endless loop in Java's EventThread too, here a reported panic.
const maxDeliveriesPerDrain = 1 << 20

type itemKind uint8

const (
	itemEvent    itemKind = iota // a WatchedEvent with its materialized watchers
	itemCallback                 // a finished packet's callback, or a local callback
	itemPacket                   // a finished packet whose typed callback (packet.sink) waits
	itemDeath                    // eventOfDeath
)

type eventItem struct {
	kind     itemKind
	event    Event
	watchers []Watcher
	callback func()
	packet   *packet // itemPacket: a finished packet whose sink takes its result
}

// eventThread is ClientCnxn.EventThread: one FIFO of watch events and callbacks, delivered in the
// order they were queued, so that an application sees a watch event before the reply that followed
// it on the wire.
//
// Its shutdown follows Java: after eventOfDeath the thread finishes what is queued and stops. From
// then on Java still runs packet callbacks (queuePacket processes them on the caller's thread), but a
// WatchedEvent queued later is added to a queue nobody reads. That is why an application sees the
// Expired event but never the Closed event that the SendThread queues about 200 ms later.
type eventThread struct {
	queue        []eventItem
	head         int
	sessionState proto.KeeperState
	killed       bool
	stopped      bool
}

func (t *eventThread) pending() bool { return len(t.queue) > t.head }

func (t *eventThread) push(item eventItem) { t.queue = append(t.queue, item) }

func (t *eventThread) pop() eventItem {
	item := t.queue[t.head]
	t.queue[t.head] = eventItem{}
	t.head++
	if t.head == len(t.queue) {
		t.queue, t.head = t.queue[:0], 0
	}
	return item
}

// queueEvent is EventThread.queueEvent: a state change equal to the last one queued is dropped, the
// watchers are materialized now (taking one-shot watches off the tables), and the event is queued
// unless the thread has stopped. materialized, if not nil, replaces the materialization (watch
// removal events). ok is false when the watch manager refuses the event type.
func (c *Client) queueEvent(e Event, materialized []Watcher) (ok bool) {
	t := &c.events
	if e.Type == proto.EventNone && t.sessionState == e.State {
		return true
	}
	t.sessionState = e.State
	watchers := materialized
	if watchers == nil {
		watchers, ok = c.watches.materialize(e.State, e.Type, e.Path)
		if !ok {
			return false
		}
	}
	if !t.stopped {
		t.push(eventItem{kind: itemEvent, event: e, watchers: watchers})
	}
	return true
}

// queueState queues a connection state change (EventType None).
func (c *Client) queueState(s proto.KeeperState) {
	c.queueEvent(Event{Type: proto.EventNone, State: s}, nil)
}

// queueCallback queues a callback. Callbacks are delivered even after the thread stopped.
func (c *Client) queueCallback(fn func()) {
	c.events.push(eventItem{kind: itemCallback, callback: fn})
}

func (c *Client) queueDeath() { c.events.push(eventItem{kind: itemDeath}) }

// drain delivers everything queued, including what the deliveries themselves queue.
func (c *Client) drain() {
	t := &c.events
	for n := 0; t.pending(); n++ {
		if n == maxDeliveriesPerDrain {
			panic(fmt.Sprintf("client %s: %d deliveries in one drain; a callback loops issuing requests on a closed client?", c.name, n))
		}
		item := t.pop()
		switch item.kind {
		case itemEvent:
			for _, w := range item.watchers {
				w.Process(item.event)
			}
		case itemCallback:
			item.callback()
		case itemPacket:
			item.packet.sink.deliverPacket(item.packet)
		case itemDeath:
			t.killed = true
		}
	}
	if t.killed {
		t.stopped = true
	}
}
