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
		r.arm(a)
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

// CrashPointHit is one time a running server reached a crash point (see CrashPoints).
type CrashPointHit struct {
	Sid   int64
	Point string
	At    clock.Time
	// Crashed says that an armed crashpoint action made the server die here.
	Crashed bool
}

// armedCrash is a crashpoint action waiting for its hit. A server may have several, each counting
// the hits of its own point.
type armedCrash struct {
	point string
	// remaining counts the hits of point still to come, this one included, before the crash.
	remaining    int
	restart      bool
	restartAfter clock.Duration
}

// arm performs a crashpoint action: each target server gets one more armed crash, beside any it
// already has. The parser has checked the arguments; a script built in code that bypassed it is
// refused here, in the trace, rather than guessed at.
func (r *runner) arm(a Action) {
	spec, err := parseCrashpoint(a.Args)
	if err != nil {
		r.w.Note(sim.NoNode, "fault", "not armed: %v", err)
		return
	}
	for _, n := range r.targets(spec.target) {
		if sid, ok := r.sidOf(n); ok {
			r.crashPoints[sid] = append(r.crashPoints[sid],
				armedCrash{point: spec.point, remaining: spec.count, restart: spec.restart, restartAfter: spec.restartAfter})
		}
	}
}

// crashHook is the ensemble's crash-point hook. During the fault phase it tells the OnCrashPoint
// observer of every hit, and crashes a server at the hit that completes one of its armed crashes.
// It draws nothing and traces nothing itself (zabmodel traces the crash), so that observing a run
// does not change it.
func (r *runner) crashHook(sid int64, point string) bool {
	now := r.w.Now()
	if now < r.faultStart || now >= r.faultEnd {
		return false
	}
	crashed := r.countHit(sid, point)
	if r.opts.OnCrashPoint != nil {
		r.opts.OnCrashPoint(CrashPointHit{Sid: sid, Point: point, At: now, Crashed: crashed})
	}
	return crashed
}

// countHit counts a hit against each of the server's armed crashes at this point and reports
// whether it completes any. Every crash it completes is disarmed and has its restart scheduled;
// they are one crash, counted as one fault, and the earliest restart wins.
func (r *runner) countHit(sid int64, point string) bool {
	armed := r.crashPoints[sid]
	crashed := false
	kept := armed[:0]
	for _, a := range armed {
		if a.point == point {
			a.remaining--
		}
		if a.remaining > 0 {
			kept = append(kept, a)
			continue
		}
		crashed = true
		if a.restart {
			r.restartAfterCrash(sid, a.restartAfter)
		}
	}
	if !crashed {
		return false
	}
	if len(kept) == 0 {
		delete(r.crashPoints, sid)
	} else {
		r.crashPoints[sid] = kept
	}
	r.faultsInjected++
	return true
}

// restartAfterCrash starts a server again d after the crash its crash point is about to cause
// (zabmodel crashes it as soon as the hook returns). The restart is for that crash only: if the
// server was restarted and crashed again meanwhile, its incarnation tells, and it stays down.
func (r *runner) restartAfterCrash(sid int64, d clock.Duration) {
	node := r.ens.Server(sid).Node()
	crashed := r.w.Incarnation(node) + 1
	r.w.After(d, func() {
		if r.w.IsUp(node) || r.w.Incarnation(node) != crashed {
			return
		}
		r.w.Note(sim.NoNode, "fault", "restart zk%d, %s after its crash point", sid, formatDuration(d))
		r.faultsInjected++
		r.w.Restart(node)
	})
}
