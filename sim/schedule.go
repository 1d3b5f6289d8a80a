package sim

import (
	"fmt"
	"reflect"
	"runtime/debug"

	"github.com/zabsim/zabsim/clock"
)

// Schedule mode is the kernel as a model checker drives it (package modelcheck). Events are not
// dispatched in time order: every pending event is an enabled step, and the driver picks which
// one runs next (FireEnabled). Time is abstracted: a posted event (a message delivery, a loopback
// hand-off, a dial timeout) runs at the current time, and a timer moves the clock to its deadline
// if that is later, so the clock advances only when a timer fires and which timers fire decides
// it. Whether a timer may fire before the earliest one is the driver's rule, not the kernel's.
//
// In schedule mode the world also keeps a history hash for each node: every event it dispatches
// for the node (which timer, which connection's head message, at what time) and every trace record
// the node's code writes (deliveries with their payloads, crashes, restarts, notes) is folded into
// it, with the numeric identities that depend on the path (connection ids, timer ids, event
// sequence numbers) left out. A node's volatile state is a function of its history, so two paths
// that give every node the same history reach the same state: in particular, two deliveries to
// different nodes commute. HistoryHash exposes it for fingerprints.

// ScheduleKeyer is implemented by event targets that can name themselves canonically, independent
// of the path: the network's connection directions return their endpoints and port. Targets that
// do not implement it are named by their type.
type ScheduleKeyer interface {
	ScheduleKey() uint64
}

// EnabledEvent is one pending event as schedule mode offers it.
type EnabledEvent struct {
	// Seq identifies the event for FireEnabled.
	Seq uint64
	// At is the time the event was scheduled for; a timer whose At is later than Now is not due.
	At    clock.Time
	Node  NodeID
	Timer bool
}

// EventKey names a pending event without path-dependent numbers: the timer's handler type and
// tag, or the target's ScheduleKey or type. It is "" for an event that is not pending.
func (w *World) EventKey(seq uint64) string {
	for i := range w.sched {
		if w.sched[i].seq == seq {
			return w.eventKey(&w.sched[i])
		}
	}
	return ""
}

// EnableScheduleMode switches the world to schedule mode. It must be called before anything is
// scheduled; there is no way back.
func (w *World) EnableScheduleMode() error {
	if w.queue.len() > 0 || w.events > 0 {
		return fmt.Errorf("sim: schedule mode must be enabled before any event is scheduled")
	}
	w.schedule = true
	return nil
}

// ScheduleMode reports whether the world is in schedule mode.
func (w *World) ScheduleMode() bool { return w.schedule }

// live reports whether a pending event would do anything if dispatched: a cancelled timer, or one
// of an earlier incarnation, would not; nor would an event for a paused node.
func (w *World) live(ev *event) bool {
	if ev.node != NoNode && w.nodes[ev.node].paused {
		return false
	}
	if ev.kind != evTimer {
		return true
	}
	s := &w.timers[ev.arg]
	if !s.live || s.gen != ev.guard {
		return false
	}
	n := &w.nodes[s.node]
	return n.up && n.incarnation == s.incarnation
}

// Enabled appends the live pending events to buf, in the order they were scheduled. Dead events
// (cancelled or stale timers) are dropped from the pending list as a side effect.
func (w *World) Enabled(buf []EnabledEvent) []EnabledEvent {
	kept := w.sched[:0]
	for i := range w.sched {
		ev := &w.sched[i]
		if ev.kind == evTimer && !w.live(ev) && (ev.node == NoNode || !w.nodes[ev.node].paused) {
			continue // A dead timer never comes back to life.
		}
		kept = append(kept, *ev)
	}
	clear(w.sched[len(kept):])
	w.sched = kept
	for i := range w.sched {
		ev := &w.sched[i]
		if !w.live(ev) {
			continue
		}
		buf = append(buf, EnabledEvent{Seq: ev.seq, At: ev.at, Node: ev.node, Timer: ev.kind == evTimer})
	}
	return buf
}

// FirstDue returns the first live pending event, in the order Enabled lists them, whose time has
// come (At <= Now), passing over timers if skipTimers: the entry a scan of Enabled's list for the
// first due event finds, without listing every pending event (a model checker that runs the due
// events in their canonical order asks this after every event). Unlike Enabled it drops nothing.
func (w *World) FirstDue(skipTimers bool) (EnabledEvent, bool) {
	for i := range w.sched {
		ev := &w.sched[i]
		if ev.at > w.now || (skipTimers && ev.kind == evTimer) || !w.live(ev) {
			continue
		}
		return EnabledEvent{Seq: ev.seq, At: ev.at, Node: ev.node, Timer: ev.kind == evTimer}, true
	}
	return EnabledEvent{}, false
}

// eventKey names an event canonically.
func (w *World) eventKey(ev *event) string {
	if ev.kind == evTimer {
		s := &w.timers[ev.arg]
		return fmt.Sprintf("timer %s %d", reflect.TypeOf(s.handler), s.tag)
	}
	if k, ok := ev.target.(ScheduleKeyer); ok {
		return fmt.Sprintf("target %d", k.ScheduleKey())
	}
	return fmt.Sprintf("target %s %d", reflect.TypeOf(ev.target), ev.arg)
}

// eventHash folds what eventKey renders into h, without rendering it.
func (w *World) eventHash(h uint64, ev *event) uint64 {
	if ev.kind == evTimer {
		s := &w.timers[ev.arg]
		return mixWord(mixString(h, reflect.TypeOf(s.handler).String()), s.tag)
	}
	if k, ok := ev.target.(ScheduleKeyer); ok {
		return mixWord(h, k.ScheduleKey())
	}
	return mixWord(mixString(h, reflect.TypeOf(ev.target).String()), ev.arg)
}

// FireEnabled dispatches the pending event seq, which Enabled listed. A timer moves the clock
// forward to its deadline; any other event runs at the current time. It returns false when the
// run has ended (a panic in simulated code or a failure) and an error when seq is not pending.
func (w *World) FireEnabled(seq uint64) (alive bool, err error) {
	if !w.schedule {
		return false, fmt.Errorf("sim: FireEnabled outside schedule mode")
	}
	if w.ended {
		return false, nil
	}
	at := -1
	for i := range w.sched {
		if w.sched[i].seq == seq {
			at = i
			break
		}
	}
	if at < 0 || !w.live(&w.sched[at]) {
		return true, fmt.Errorf("sim: event %d is not enabled", seq)
	}
	ev := w.sched[at]
	copy(w.sched[at:], w.sched[at+1:])
	w.sched[len(w.sched)-1] = event{}
	w.sched = w.sched[:len(w.sched)-1]
	if ev.kind == evTimer && ev.at > w.now {
		w.now = ev.at
	}
	if ev.node != NoNode {
		w.mixHistory(ev.node, w.eventHash(mixWord(uint64(w.now), 0x5ced), &ev))
	} else {
		w.globalHistory = w.eventHash(mixWord(w.globalHistory, uint64(w.now)), &ev)
	}
	defer func() {
		if r := recover(); r != nil {
			w.end(Outcome{Kind: Panic, Err: &PanicError{
				Value: r, Stack: string(debug.Stack()), Seed: w.seed, Time: w.now, Node: w.Name(w.current),
			}})
			alive = false
		}
		w.current = NoNode
	}()
	if w.dispatch(&ev) {
		w.events++
	}
	return !w.ended, nil
}

// HistoryHash returns node's history hash (see EnableScheduleMode); NoNode returns the hash of
// the world-level events.
func (w *World) HistoryHash(node NodeID) uint64 {
	if node == NoNode {
		return w.globalHistory
	}
	if int(node) >= len(w.history) {
		return 0
	}
	return w.history[node]
}

// NoteHistory folds a driver's action on node (a fault it injected) into the node's history hash,
// or into the world-level hash for NoNode.
func (w *World) NoteHistory(node NodeID, what string) {
	if node == NoNode {
		w.globalHistory = hashString(w.globalHistory, what)
		return
	}
	w.mixHistory(node, hashString(0x70a1, what))
}

func (w *World) mixHistory(node NodeID, v uint64) {
	for int(node) >= len(w.history) {
		w.history = append(w.history, hashSeed)
	}
	w.history[node] = mixWord(w.history[node], v)
}

// recordHistory folds a trace record attributed to a node into its history, without the first
// argument (a connection id, an incarnation or a tag, numbers that depend on the path or are
// already covered by the event that caused the record).
func (w *World) recordHistory(node NodeID, kind EventKind, b uint64, payload []byte) {
	if node == NoNode {
		return
	}
	h := mixWord(uint64(w.now), uint64(kind))
	h = mixWord(h, b)
	if payload != nil {
		h = mixBytes(h, payload)
	}
	w.mixHistory(node, h)
}

func (w *World) recordNote(node NodeID, kind, detail string) {
	if node == NoNode {
		return
	}
	w.mixHistory(node, hashString(hashString(uint64(w.now), kind), detail))
}

func hashString(h uint64, s string) uint64 { return mixString(h, s) }
