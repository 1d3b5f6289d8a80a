package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/zabmodel"
)

// segment is a span of one server's life in one state.
type segment struct {
	start, end clock.Time
	up         bool
	role       zabmodel.Role
	serving    bool
	epoch      int64
}

// zxidStep is a server's last logged zxid from a moment on.
type zxidStep struct {
	at   clock.Time
	zxid int64
}

// serverLane is one server's row of the timeline.
type serverLane struct {
	name     string
	sid      int64
	segments []segment
	zxids    []zxidStep
}

// band is a shaded span: a partition, a clog, a pause, a swizzle, a client that was down.
type band struct {
	start, end clock.Time
	lane       string // a node name, or "" for the whole cluster
	kind       string // partition, clog, pause, swizzle, down, stall
	label      string
	action     int // the script action that made it, or -1
}

// evidence is what the first failure cites, for highlighting.
type evidence struct {
	title   string
	at      clock.Time
	hasTime bool
	servers []string // node names
	zxids   []string // formatted zxids
	ops     []checkers.OpRef
	clients []string
	times   []clock.Time
	text    string
}

// serverLanes builds each server's role, epoch and zxid over time from the protocol events.
func (r *Recorder) serverLanes(end clock.Time) []serverLane {
	var lanes []serverLane
	index := map[int64]int{}
	for i, name := range r.shape.Servers {
		sid := int64(i + 1)
		index[sid] = len(lanes)
		lanes = append(lanes, serverLane{name: name, sid: sid, segments: []segment{{up: true}}})
	}
	set := func(lane *serverLane, at clock.Time, change func(s *segment)) {
		last := &lane.segments[len(lane.segments)-1]
		next := *last
		change(&next)
		if next == *last {
			return
		}
		if last.start == at {
			*last = next
			last.start = at
			return
		}
		last.end = at
		next.start = at
		lane.segments = append(lane.segments, next)
	}
	for _, e := range r.protocol {
		i, ok := index[e.Server]
		if !ok {
			continue
		}
		lane := &lanes[i]
		switch e.Kind {
		case zabmodel.EventCrash:
			set(lane, e.Time, func(s *segment) { s.up, s.serving, s.role = false, false, zabmodel.Looking })
		case zabmodel.EventRestart:
			set(lane, e.Time, func(s *segment) { s.up, s.serving, s.role = true, false, zabmodel.Looking })
		case zabmodel.EventElected:
			set(lane, e.Time, func(s *segment) { s.role, s.serving = e.Role, false })
		case zabmodel.EventServing:
			set(lane, e.Time, func(s *segment) { s.role, s.serving, s.epoch = e.Role, true, e.Epoch })
		case zabmodel.EventStopServing:
			set(lane, e.Time, func(s *segment) { s.role, s.serving = zabmodel.Looking, false })
		case zabmodel.EventCurrentEpoch:
			set(lane, e.Time, func(s *segment) { s.epoch = e.Epoch })
		case zabmodel.EventLog, zabmodel.EventTruncate, zabmodel.EventLost:
			lane.zxids = append(lane.zxids, zxidStep{at: e.Time, zxid: e.Zxid})
		}
	}
	for i := range lanes {
		lanes[i].segments[len(lanes[i].segments)-1].end = end
	}
	return lanes
}

// bands lists the shaded spans: the script's partitions (until the next heal or the end of the
// fault phase, when the liveness phase heals everything), clogs, swizzles and pauses, every
// node's pauses and client crashes as the simulator traced them, and the disk stalls the servers
// noted.
func (r *Recorder) bands(end clock.Time) []band {
	var out []band
	faultEnd := r.shape.FaultEnd
	if faultEnd == 0 || faultEnd > end {
		faultEnd = end
	}
	var open []int // indexes in out of partitions still in force
	for _, a := range r.sortedActions() {
		if a.idle != "" {
			continue
		}
		switch a.action.Verb {
		case "partition", "oneway", "isolate":
			open = append(open, len(out))
			out = append(out, band{start: a.at, end: faultEnd, kind: "partition", label: a.action.Verb + " " + joinArgs(a.action.Args), action: a.index})
		case "heal":
			for _, i := range open {
				out[i].end = a.at
			}
			open = nil
		case "clog", "swizzle":
			d, _ := actionSpan(a.action)
			lane := ""
			if a.action.Verb == "clog" && len(a.action.Args) == 2 && !strings.ContainsAny(a.action.Args[0], " ") {
				lane = a.action.Args[0]
			}
			out = append(out, band{start: a.at, end: min(a.at.Add(d), end), lane: lane, kind: "clog", label: a.action.String(), action: a.index})
		}
	}
	paused := map[string]clock.Time{}
	down := map[string]clock.Time{}
	for _, k := range r.kernel {
		switch k.event {
		case "pause":
			paused[k.node] = k.at
		case "resume":
			if start, ok := paused[k.node]; ok {
				out = append(out, band{start: start, end: k.at, lane: k.node, kind: "pause", label: k.node + " paused", action: -1})
				delete(paused, k.node)
			}
		case "crash":
			if slices.Contains(r.shape.Clients, k.node) {
				down[k.node] = k.at
			}
		case "restart":
			if start, ok := down[k.node]; ok {
				out = append(out, band{start: start, end: k.at, lane: k.node, kind: "down", label: k.node + " down", action: -1})
				delete(down, k.node)
			}
		}
	}
	for _, node := range sortedKeys(paused) {
		out = append(out, band{start: paused[node], end: end, lane: node, kind: "pause", label: node + " paused", action: -1})
	}
	for _, node := range sortedKeys(down) {
		out = append(out, band{start: down[node], end: end, lane: node, kind: "down", label: node + " down", action: -1})
	}
	for _, st := range r.stalls {
		st.end = min(st.end, end)
		out = append(out, st)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// findEvidence picks what the run's first failure cites: a ZAB violation's servers, zxids, epoch
// and time, or a checker finding's clients, operations, zxids and times.
func findEvidence(rep *scenarios.Report) evidence {
	if len(rep.Zab) > 0 {
		v := rep.Zab[0]
		ev := evidence{title: string(v.Invariant), at: v.Time, hasTime: true, text: v.String()}
		for _, sid := range v.Servers {
			ev.servers = append(ev.servers, fmt.Sprintf("zk%d", sid))
		}
		for _, z := range v.Zxids {
			ev.zxids = append(ev.zxids, zabmodel.FormatZxid(z))
		}
		return ev
	}
	for _, res := range rep.Checks.Results {
		if !res.Failed() {
			continue
		}
		ev := evidence{title: res.Checker, text: res.String()}
		if len(res.Findings) > 0 {
			f := res.Findings[0]
			ev.title = res.Checker + " [" + f.Rule + "]"
			ev.ops, ev.clients, ev.times = f.Ops, f.Clients, f.Times
			for _, z := range f.Zxids {
				ev.zxids = append(ev.zxids, zabmodel.FormatZxid(z))
			}
			if len(f.Times) > 0 {
				ev.at, ev.hasTime = slices.Max(f.Times), true
			}
		}
		if !ev.hasTime {
			ev.at, ev.hasTime = rep.Stats.VirtualTime, true
		}
		return ev
	}
	if rep.Failed() {
		return evidence{title: rep.Failure(), at: rep.Outcome.Time, hasTime: true, text: rep.Explain()}
	}
	return evidence{}
}

// cites reports whether a message is one the failure cites: it carries a cited zxid between
// cited servers (or any servers when none is cited), or it reached a cited server at the very
// moment of the violation.
func (ev evidence) cites(m scenarios.Message) bool {
	if !ev.hasTime || m.Sent > ev.at {
		return false
	}
	involved := len(ev.servers) == 0 || slices.Contains(ev.servers, m.From) || slices.Contains(ev.servers, m.To) ||
		slices.Contains(ev.clients, m.From) || slices.Contains(ev.clients, m.To)
	if !involved {
		return false
	}
	for _, z := range ev.zxids {
		if strings.Contains(m.Label, "zxid="+z) || strings.HasSuffix(m.Label, " "+z) {
			return true
		}
	}
	return false
}

// citesOp reports whether the failure cites a client's operation: by its reference, or, when
// the finding names clients and times but no operations, an operation of a cited client in
// progress at one of the cited times.
func (ev evidence) citesOp(client string, index int, op checkers.Operation, end clock.Time) bool {
	if slices.Contains(ev.ops, checkers.OpRef{Client: client, Index: index}) {
		return true
	}
	if len(ev.ops) > 0 || !slices.Contains(ev.clients, client) {
		return false
	}
	ret := op.Return
	if op.Outcome == checkers.OutcomePending || ret < op.Call {
		ret = end
	}
	for _, t := range ev.times {
		if op.Call <= t && t <= ret {
			return true
		}
	}
	return false
}
