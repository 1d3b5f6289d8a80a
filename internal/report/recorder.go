package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
)

// maxMessages bounds the messages a report keeps: past it the latest are kept, since a failure's
// cause is usually just before it. A 60-second default run delivers about 20,000.
const maxMessages = 200_000

// Recorder collects one run's structured events for a report. Connect it to a run with
// Attach, then pass it to Write once the run is over.
type Recorder struct {
	shape    scenarios.RunShape
	started  bool
	protocol []zabmodel.Event
	messages []scenarios.Message
	dropped  int
	actions  []actedAction
	kernel   []kernelRecord
	stalls   []band // disk stalls, as the servers noted them
}

type actedAction struct {
	index  int
	action scenarios.Action
	at     clock.Time
	idle   string
}

// kernelRecord is a crash, restart, pause or resume of any node, as the simulator traced it.
type kernelRecord struct {
	at    clock.Time
	node  string
	event string
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Attach sets the run options' hooks so that the run feeds the recorder: the scenario watch, a
// structured trace sink (kept beside any text or JSON sink already set) and the annotations of
// porcupine's visualizations. Watching does not change the run or its trace hash.
func (r *Recorder) Attach(opts *scenarios.Options) {
	opts.Watch = &scenarios.Watch{
		Started:  func(shape scenarios.RunShape) { r.shape, r.started = shape, true },
		Protocol: func(e zabmodel.Event) { r.protocol = append(r.protocol, e) },
		Message:  r.message,
		Action: func(index int, action scenarios.Action, at clock.Time, idle string) {
			r.actions = append(r.actions, actedAction{index: index, action: action, at: at, idle: idle})
		},
	}
	opts.Trace.Records = r.record
	opts.Annotations = r.annotations
}

func (r *Recorder) message(m scenarios.Message) {
	if len(r.messages) >= maxMessages {
		// Keep the latest: drop the oldest tenth at once so that the copy is amortised.
		cut := maxMessages / 10
		r.messages = append(r.messages[:0], r.messages[cut:]...)
		r.dropped += cut
	}
	r.messages = append(r.messages, m)
}

func (r *Recorder) record(rec sim.Record) {
	switch rec.Event {
	case sim.KindCrash.String(), sim.KindRestart.String(), sim.KindPause.String(), sim.KindResume.String():
		r.kernel = append(r.kernel, kernelRecord{at: clock.Time(rec.TimeNanos), node: rec.Node, event: rec.Event})
	case "disk":
		// A server's note of a disk stall (zabmodel.Server.StallDisk): "stalled for DUR".
		if text, ok := strings.CutPrefix(rec.Detail, "stalled for "); ok {
			if d, err := time.ParseDuration(text); err == nil && d > 0 {
				at := clock.Time(rec.TimeNanos)
				r.stalls = append(r.stalls, band{start: at, end: at.Add(d), lane: rec.Node, kind: "stall", label: rec.Node + "'s disk stalled", action: -1})
			}
		}
	}
}

// annotations are the faults and leader changes of the run so far, for porcupine's visualization:
// it is asked once the run is over, when the checks run.
func (r *Recorder) annotations() []checkers.Annotation {
	var out []checkers.Annotation
	for _, a := range r.actions {
		end := a.at
		if d, ok := actionSpan(a.action); ok {
			end = a.at.Add(d)
		}
		desc := a.action.Verb + " " + joinArgs(a.action.Args)
		details := fmt.Sprintf("script line %d: %s", a.action.Line, a.action.String())
		if a.idle != "" {
			details += " (did nothing: " + a.idle + ")"
		}
		out = append(out, checkers.Annotation{Tag: "faults", Start: a.at, End: end, Description: desc, Details: details, Color: "#f4c7c3"})
	}
	for _, e := range r.protocol {
		if e.Kind == zabmodel.EventEstablished {
			out = append(out, checkers.Annotation{Tag: "leaders", Start: e.Time, End: e.Time,
				Description: fmt.Sprintf("zk%d leads epoch %d", e.Server, e.Epoch), Color: "#ffe08a"})
		}
	}
	return out
}

// actionSpan is how long an action with a duration acts.
func actionSpan(a scenarios.Action) (clock.Duration, bool) {
	var text string
	switch a.Verb {
	case "clog", "pause":
		if len(a.Args) == 2 {
			text = a.Args[1]
		}
	case "swizzle":
		if len(a.Args) == 1 {
			text = a.Args[0]
		}
	}
	if text == "" {
		return 0, false
	}
	d, err := time.ParseDuration(text)
	if err != nil || d <= 0 {
		return 0, false
	}
	return d, true
}

func joinArgs(args []string) string {
	out := ""
	for i, a := range args {
		if i > 0 {
			out += " "
		}
		out += a
	}
	return out
}

// sortedActions returns the acted actions in time order (they are recorded so already; this keeps
// the report right if a hook is ever called out of order).
func (r *Recorder) sortedActions() []actedAction {
	out := slices.Clone(r.actions)
	slices.SortStableFunc(out, func(a, b actedAction) int { return int(a.at - b.at) })
	return out
}
