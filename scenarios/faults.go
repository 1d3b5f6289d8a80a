package scenarios

import (
	"slices"
	"strconv"
	"strings"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
)

// act performs one scripted fault. Targets that do not resolve (no leader at that moment, a server
// number beyond the cluster) make the action a no-op, noted in the trace: a script drawn for one
// cluster stays meaningful when shrunk or replayed.
func (r *runner) act(a Action) {
	r.w.Note(sim.NoNode, "fault", "%s", a.String())
	r.faultsInjected++
	switch a.Verb {
	case "crash", "restart", "kill", "revive":
		for _, n := range r.targets(a.Args[0]) {
			if a.Verb == "crash" || a.Verb == "kill" {
				r.w.Crash(n)
			} else {
				r.w.Restart(n)
			}
		}
	case "crashpoint":
		for _, n := range r.targets(a.Args[0]) {
			if sid, ok := r.sidOf(n); ok {
				r.crashPoints[sid] = a.Args[1]
			}
		}
	case "partition":
		r.nw.Partition(r.groups(a.Args)...)
	case "oneway":
		from, to := r.targets(a.Args[0]), r.targets(a.Args[1])
		if len(from) == 1 && len(to) == 1 {
			r.nw.CutOneWay(from[0], to[0])
		}
	case "isolate":
		for _, n := range r.targets(a.Args[0]) {
			r.nw.Isolate(n)
		}
	case "heal":
		r.nw.Heal()
	case "expire":
		r.expire(a.Args[0])
	default:
		r.actOnTiming(a)
	}
}

func (r *runner) actOnTiming(a Action) {
	switch a.Verb {
	case "clog":
		d, _ := parseDuration(a.Args[1])
		for _, n := range r.targets(a.Args[0]) {
			r.nw.ClogNode(n, d)
		}
	case "swizzle":
		d, _ := parseDuration(a.Args[0])
		r.nw.Swizzle(r.ens.Nodes(), d/10, d)
	case "reset":
		for _, n := range r.targets(a.Args[0]) {
			for _, c := range r.nw.Conns(n) {
				r.nw.Reset(c)
			}
		}
	case "pause":
		d, _ := parseDuration(a.Args[1])
		for _, n := range r.targets(a.Args[0]) {
			r.pause(n, d)
		}
	case "drift":
		ppm, _ := strconv.ParseInt(strings.TrimSuffix(a.Args[1], "ppm"), 10, 64)
		for _, n := range r.targets(a.Args[0]) {
			_ = r.w.Clock(n).SetDrift(r.w.Now(), ppm)
		}
	case "stepwall":
		d, _ := parseSignedDuration(a.Args[1])
		for _, n := range r.targets(a.Args[0]) {
			r.w.Clock(n).StepWall(r.w.Now(), d)
		}
	}
}

// pause stops a process for d, as a long garbage-collection pause does.
func (r *runner) pause(n sim.NodeID, d clock.Duration) {
	if r.paused[n] || !r.w.IsUp(n) {
		return
	}
	r.paused[n] = true
	r.w.Pause(n)
	r.w.After(d, func() { r.resume(n) })
}

func (r *runner) resume(n sim.NodeID) {
	if r.paused[n] {
		delete(r.paused, n)
		r.w.Resume(n)
	}
}

// targets resolves a target name to nodes.
func (r *runner) targets(name string) []sim.NodeID {
	switch {
	case name == "leader":
		if sid, _, ok := r.ens.Leader(); ok {
			return []sim.NodeID{r.ens.Server(sid).Node()}
		}
		return nil
	case name == "follower":
		for _, s := range r.ens.Servers() {
			if st := s.State(); st.Serving && st.Role == zabmodel.Following {
				return []sim.NodeID{s.Node()}
			}
		}
		return nil
	case name == "all":
		return r.ens.Nodes()
	case strings.HasPrefix(name, "zk"):
		i, err := strconv.Atoi(name[2:])
		if err != nil || i < 1 || i > len(r.ens.Servers()) {
			return nil
		}
		return []sim.NodeID{r.ens.Server(int64(i)).Node()}
	case strings.HasPrefix(name, "c"):
		i, err := strconv.Atoi(name[1:])
		if err != nil || i < 1 || i > len(r.apps) {
			return nil
		}
		return []sim.NodeID{r.apps[i-1].node}
	}
	return nil
}

func (r *runner) sidOf(n sim.NodeID) (int64, bool) {
	for _, s := range r.ens.Servers() {
		if s.Node() == n {
			return s.Sid(), true
		}
	}
	return 0, false
}

// groups turns "zk1 zk2 | zk3" into node groups.
func (r *runner) groups(args []string) [][]sim.NodeID {
	var out [][]sim.NodeID
	var cur []sim.NodeID
	for _, arg := range append(slices.Clone(args), "|") {
		if arg == "|" {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, r.targets(arg)...)
	}
	return out
}

// crashHook is the ensemble's crash-point hook: a server armed for a point crashes there, once,
// during the fault phase.
func (r *runner) crashHook(sid int64, point string) bool {
	if r.crashPoints[sid] != point || r.w.Now() >= r.faultEnd {
		return false
	}
	delete(r.crashPoints, sid)
	r.faultsInjected++
	return true
}
