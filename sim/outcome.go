package sim

import (
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/clock"
)

// OutcomeKind says how a run ended.
type OutcomeKind uint8

const (
	// Running: the run has not ended.
	Running OutcomeKind = iota
	// Completed: the driver called Finish; the scenario ran its course.
	Completed
	// Quiescent: Run found no events left.
	Quiescent
	// EventBudget: the run dispatched its maximum number of events, the usual sign of a livelock.
	EventBudget
	// TimeBudget: virtual time reached its maximum.
	TimeBudget
	// QueueBudget: too many events were pending at once, the usual sign of a message storm.
	QueueBudget
	// Panic: simulated code panicked. Err is a *PanicError.
	Panic
	// Failure: a checker (or the driver) called Fail with a violation.
	Failure
)

var outcomeNames = [...]string{
	Running: "running", Completed: "completed", Quiescent: "quiescent", EventBudget: "event-budget",
	TimeBudget: "time-budget", QueueBudget: "queue-budget", Panic: "panic", Failure: "failure",
}

func (k OutcomeKind) String() string {
	if int(k) < len(outcomeNames) {
		return outcomeNames[k]
	}
	return fmt.Sprintf("outcome(%d)", k)
}

// Outcome describes how a run ended and identifies it for replay.
type Outcome struct {
	Kind OutcomeKind
	// Err explains every kind but Running, Completed and Quiescent.
	Err error
	// Seed, Time and Events locate the end of the run.
	Seed   uint64
	Time   clock.Time
	Events int64
	// TraceHash and TraceRecords summarise the whole trace: equal hashes mean equal runs.
	TraceHash    uint64
	TraceRecords int64
	// OutsideFaultModel lists the faults outside ZAB's model that the run used, sorted. A failure in
	// such a run belongs to its own class.
	OutsideFaultModel []string
}

// OK reports whether the run ended without panic, failure or exhausted budget.
func (o Outcome) OK() bool { return o.Kind == Completed || o.Kind == Quiescent }

func (o Outcome) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s seed=%d time=%ss events=%d trace=%016x", o.Kind, o.Seed, strings.TrimSpace(o.Time.String()), o.Events, o.TraceHash)
	if len(o.OutsideFaultModel) > 0 {
		fmt.Fprintf(&b, " outside-fault-model=%s", strings.Join(o.OutsideFaultModel, ","))
	}
	if o.Err != nil {
		fmt.Fprintf(&b, ": %v", o.Err)
	}
	return b.String()
}

// PanicError is a panic caught inside simulated code. It carries what is needed to reproduce it.
type PanicError struct {
	Value any
	Stack string
	Seed  uint64
	Time  clock.Time
	Node  string
}

func (p *PanicError) Error() string {
	return fmt.Sprintf("panic in node %s at %s (seed %d): %v", p.Node, strings.TrimSpace(p.Time.String()), p.Seed, p.Value)
}

// EventKind classifies trace records. The kernel and the network share one vocabulary, so that a
// rendered trace reads as one log.
type EventKind uint8

// Trace record kinds.
const (
	KindNote EventKind = iota + 1
	KindTimer
	KindCrash
	KindRestart
	KindPause
	KindResume
	KindEnd
	KindDial
	KindAccept
	KindConnected
	KindDialFailed
	KindDeliver
	KindClose
	KindReset
	KindDrop
	KindDuplicate
	KindReorder
)

var kindNames = [...]string{
	KindNote: "note", KindTimer: "timer", KindCrash: "crash", KindRestart: "restart", KindPause: "pause",
	KindResume: "resume", KindEnd: "end", KindDial: "dial", KindAccept: "accept", KindConnected: "connected",
	KindDialFailed: "dial-fail", KindDeliver: "deliver", KindClose: "close", KindReset: "reset",
	KindDrop: "drop", KindDuplicate: "duplicate", KindReorder: "reorder",
}

func (k EventKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Tracing reports whether trace records are being rendered, so that callers can skip building
// detail strings that nobody will read.
func (w *World) Tracing() bool { return w.trace.Rendering() }

// TraceEvent records a structured event for node. The hash covers now, node, kind, a, b and payload;
// detail is only rendered, so callers pass it only when Tracing is true.
func (w *World) TraceEvent(node NodeID, kind EventKind, a, b uint64, payload []byte, detail string) {
	w.trace.hashEvent(w.now, node, kind, a, b, payload)
	if w.schedule {
		w.recordHistory(node, kind, b, payload)
	}
	if w.trace.Rendering() {
		w.trace.render(w.now, w.Name(node), kind.String(), detail)
	}
}

// Note records a free-form annotation by node: a role change, a decision, a fault. It is both the
// simulated world's log and part of the trace hash.
func (w *World) Note(node NodeID, kind, format string, args ...any) {
	detail := format
	if len(args) > 0 {
		detail = fmt.Sprintf(format, args...)
	}
	w.trace.hashNote(w.now, node, kind, detail)
	if w.schedule {
		w.recordNote(node, kind, detail)
	}
	if w.trace.Rendering() {
		w.trace.render(w.now, w.Name(node), kind, detail)
	}
}

func (w *World) traceKernel(node NodeID, kind EventKind, a, b uint64, detail string) {
	w.TraceEvent(node, kind, a, b, nil, detail)
}

func (w *World) traceTimer(node NodeID, h TimerHandler, tag uint64) {
	w.trace.hashEvent(w.now, node, KindTimer, tag, 0, nil)
	if w.trace.Rendering() {
		detail := fmt.Sprintf("tag=%d", tag)
		if namer, ok := h.(TimerNamer); ok {
			detail = namer.TimerName(tag)
		}
		w.trace.render(w.now, w.Name(node), KindTimer.String(), detail)
	}
}
