package scenarios

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
)

// act performs a script's action i. Only an action that changed something counts as an injected
// fault; a legal target may find nothing to act on at that moment (no leader, a server already
// down, a client without a session), and the action is then a no-op that the trace explains. A
// crashpoint action only arms its servers: the crash counts when it happens (countHit).
func (r *runner) act(i int, a Action) {
	r.w.Note(sim.NoNode, "fault", "%s", a.String())
	if sid, _, ok := r.ens.Leader(); ok {
		r.actionResults[i].leader = sid
	}
	var hit []sim.NodeID
	if r.opts.Coverage != nil {
		// Resolved before the action acts: "crash leader" names no leader afterwards.
		hit = r.coverageTargets(a)
		for _, n := range hit {
			if sid, ok := r.sidOf(n); ok {
				r.opts.Coverage.aim(sid)
			}
		}
	}
	why := r.perform(i, a)
	if why == "" {
		for _, n := range hit {
			if sid, ok := r.sidOf(n); ok {
				r.opts.Coverage.fault(a.Verb, sid, r.w.Now())
			}
		}
	}
	switch {
	case why != "":
		r.actionResults[i].idle = why
		r.w.Note(sim.NoNode, "fault", "%s did nothing: %s", a.String(), why)
	case !slices.Contains(pointVerbs, a.Verb):
		r.actionResults[i].done = true
		r.faultsInjected++
	}
	if r.opts.Watch != nil && r.opts.Watch.Action != nil {
		r.opts.Watch.Action(i, a, r.w.Now(), why)
	}
}

// perform carries out action i and says why it did nothing, or "" if it did something.
func (r *runner) perform(i int, a Action) string {
	switch a.Verb {
	case "crash", "kill":
		return r.forEach(r.targetsOf(a), "already down", func(n sim.NodeID) bool {
			if !r.w.IsUp(n) {
				return false
			}
			r.w.Crash(n)
			return true
		})
	case "restart", "revive":
		return r.forEach(r.targetsOf(a), "already running", func(n sim.NodeID) bool {
			if r.w.IsUp(n) {
				return false
			}
			r.w.Restart(n)
			return true
		})
	case "crashpoint", "pausepoint", "resetpoint":
		return r.arm(i, a)
	case "partition":
		groups, why := r.groups(a.Args)
		if why == "" {
			r.nw.Partition(groups...)
		}
		return why
	case "oneway":
		from, to := r.targets(a.Args[0]), r.targets(a.Args[1])
		switch {
		case len(from) != 1:
			return fmt.Sprintf("no %s at this moment", a.Args[0])
		case len(to) != 1:
			return fmt.Sprintf("no %s at this moment", a.Args[1])
		case from[0] == to[0]:
			return fmt.Sprintf("%s and %s are the same node at this moment", a.Args[0], a.Args[1])
		}
		r.nw.CutOneWay(from[0], to[0])
		return ""
	case "isolate":
		return r.forEach(r.targetsOf(a), "", func(n sim.NodeID) bool { r.nw.Isolate(n); return true })
	case "heal":
		r.nw.Heal()
		return ""
	case "expire":
		if r.expire(a.Args[0]) == 0 {
			return "no session to expire (see the notes above)"
		}
		return ""
	}
	return r.performOnTiming(a)
}

func (r *runner) performOnTiming(a Action) string {
	switch a.Verb {
	case "clog":
		d, _ := parseDuration(a.Args[1])
		return r.forEach(r.targetsOf(a), "", func(n sim.NodeID) bool { r.nw.ClogNode(n, d); return true })
	case "swizzle":
		d, _ := parseDuration(a.Args[0])
		r.nw.Swizzle(r.ens.Nodes(), d/10, d)
		return ""
	case "reset":
		return r.forEach(r.targetsOf(a), "no open connection", func(n sim.NodeID) bool {
			conns := r.nw.Conns(n)
			for _, c := range conns {
				r.nw.Reset(c)
			}
			return len(conns) > 0
		})
	case "pause":
		d, _ := parseDuration(a.Args[1])
		return r.forEach(r.targetsOf(a), "down or already paused", func(n sim.NodeID) bool { return r.pause(n, d) })
	case "stall":
		d, _ := parseDuration(a.Args[1])
		return r.forEach(r.targetsOf(a), "its disk was already stalled for longer", func(n sim.NodeID) bool {
			for _, srv := range r.ens.Servers() {
				if srv.Node() == n {
					return srv.StallDisk(d)
				}
			}
			return false
		})
	case "drift":
		ppm, err := parseDrift(a.Args[1])
		if err != nil {
			return err.Error()
		}
		return r.forEach(r.targetsOf(a), "", func(n sim.NodeID) bool {
			// parseDrift keeps the rate within what a local clock accepts.
			if err := r.w.Clock(n).SetDrift(r.w.Now(), ppm); err != nil {
				panic("scenarios: " + err.Error())
			}
			return true
		})
	case "stepwall":
		d, _ := parseSignedDuration(a.Args[1])
		return r.forEach(r.targetsOf(a), "", func(n sim.NodeID) bool { r.w.Clock(n).StepWall(r.w.Now(), d); return true })
	}
	return fmt.Sprintf("unknown action %q", a.Verb)
}

// forEach applies do to every node of targets and says why nothing happened: no target at this
// moment, or do changed none of them (for the reason given, e.g. "already down").
func (r *runner) forEach(targets []sim.NodeID, unchanged string, do func(sim.NodeID) bool) string {
	if len(targets) == 0 {
		return "no such node at this moment"
	}
	changed := 0
	for _, n := range targets {
		if do(n) {
			changed++
		}
	}
	if changed == 0 {
		return unchanged
	}
	return ""
}

// pause stops a process for d, as a long garbage-collection pause does, and reports whether it
// did: a process that is down or already paused is left alone.
func (r *runner) pause(n sim.NodeID, d clock.Duration) bool {
	if r.paused[n] || !r.w.IsUp(n) {
		return false
	}
	r.paused[n] = true
	r.w.Pause(n)
	r.w.After(d, func() { r.resume(n) })
	return true
}

func (r *runner) resume(n sim.NodeID) {
	if r.paused[n] {
		delete(r.paused, n)
		r.w.Resume(n)
	}
}

// coverageTargets are the nodes an action acts on, for the fuzzer's fault context: every named
// node of a partition, the first target of the verbs that act on one, and nothing for the verbs
// that start things (restart, revive), heal everything (heal, swizzle) or only arm (crashpoint).
func (r *runner) coverageTargets(a Action) []sim.NodeID {
	switch a.Verb {
	case "restart", "revive", "heal", "swizzle", "crashpoint":
		return nil
	case "partition":
		var out []sim.NodeID
		for _, arg := range a.Args {
			if arg != "|" {
				out = append(out, r.targets(arg)...)
			}
		}
		return out
	}
	return r.targetsOf(a)
}

// targetsOf resolves an action's first target. For the client verbs "all" is every client.
func (r *runner) targetsOf(a Action) []sim.NodeID {
	if a.Args[0] == "all" && slices.Contains(clientVerbs, a.Verb) {
		out := make([]sim.NodeID, len(r.apps))
		for i, app := range r.apps {
			out[i] = app.node
		}
		return out
	}
	return r.targets(a.Args[0])
}

// targets resolves a target name to nodes. The script's check has made sure that every zkN and cN
// exists; leader and follower may resolve to nothing at a given moment.
func (r *runner) targets(name string) []sim.NodeID {
	kind, n, _ := parseTarget(name)
	switch kind {
	case theLeader:
		if sid, _, ok := r.ens.Leader(); ok {
			return []sim.NodeID{r.ens.Server(sid).Node()}
		}
	case aFollower:
		for _, s := range r.ens.Servers() {
			if st := s.State(); st.Serving && st.Role == zabmodel.Following {
				return []sim.NodeID{s.Node()}
			}
		}
	case everyone:
		return r.ens.Nodes()
	case aServer:
		if n <= len(r.ens.Servers()) {
			return []sim.NodeID{r.ens.Server(int64(n)).Node()}
		}
	case aClient:
		if n <= len(r.apps) {
			return []sim.NodeID{r.apps[n-1].node}
		}
	case aRedis:
		if rn, ok := r.gen.(redisNoder); ok && n <= len(rn.redisNodes()) {
			return []sim.NodeID{rn.redisNodes()[n-1]}
		}
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

// groups turns "zk1 zk2 | zk3" into node groups, or says why it cannot at this moment: a group
// whose leader or follower resolves to nothing is empty, and one that names the node another group
// holds (leader and zk3, when zk3 leads) would cut that node from itself. The parser has refused
// the groups that are wrong whatever happens.
func (r *runner) groups(args []string) ([][]sim.NodeID, string) {
	var out [][]sim.NodeID
	var cur []sim.NodeID
	group := map[sim.NodeID]int{}
	for _, arg := range append(slices.Clone(args), "|") {
		if arg != "|" {
			for _, n := range r.targets(arg) {
				if g, ok := group[n]; ok && g != len(out) {
					return nil, fmt.Sprintf("%s is in groups %d and %d at this moment", r.w.Name(n), g+1, len(out)+1)
				}
				if _, ok := group[n]; !ok {
					group[n] = len(out)
					cur = append(cur, n)
				}
			}
			continue
		}
		if len(cur) == 0 {
			return nil, fmt.Sprintf("group %d has no node at this moment", len(out)+1)
		}
		out = append(out, cur)
		cur = nil
	}
	return out, ""
}

// CrashPointHit is one time a running server reached a crash point (see CrashPoints).
type CrashPointHit struct {
	Sid   int64
	Point string
	At    clock.Time
	// Crashed says that an armed crashpoint action made the server die here.
	Crashed bool
}

// armedCrash is a crashpoint, pausepoint or resetpoint action waiting for its hit. A server may
// have several, each counting the hits of its own point.
type armedCrash struct {
	// action is the index of the action that armed it, in the script's actions.
	action int
	kind   injectionKind
	point  string
	// pauseFor is a pausepoint's pause.
	pauseFor clock.Duration
	// remaining counts the hits of point still to come, this one included, before the crash.
	remaining    int
	restart      bool
	restartAfter clock.Duration
}

// arm performs crashpoint action i: each target server gets one more armed crash, beside any it
// already has, and says why it armed none. The script's check has made sure of the arguments.
func (r *runner) arm(i int, a Action) string {
	spec, err := parsePointAction(a.Verb, a.Args)
	if err != nil {
		return err.Error()
	}
	return r.forEach(r.targets(spec.target), "", func(n sim.NodeID) bool {
		sid, ok := r.sidOf(n)
		if ok {
			r.crashPoints[sid] = append(r.crashPoints[sid], armedCrash{action: i, kind: spec.kind, point: spec.point,
				remaining: spec.count, pauseFor: spec.pauseFor, restart: spec.restart, restartAfter: spec.restartAfter})
		}
		return ok
	})
}

// noteUnfiredCrashpoints ends the fault phase's account of the crashpoint actions: one that armed
// a server that never reached its point did nothing, and the trace says so.
func (r *runner) noteUnfiredCrashpoints() {
	for i, a := range r.script.Actions {
		if res := &r.actionResults[i]; slices.Contains(pointVerbs, a.Verb) && !res.done && res.idle == "" {
			res.idle = "no armed server reached the point before the end of the fault phase"
			r.w.Note(sim.NoNode, "fault", "%s did nothing: %s", a.String(), res.idle)
		}
	}
}

// crashHook is the ensemble's boundary hook. During the fault phase it tells the OnCrashPoint
// observer of every hit, and crashes, pauses or resets a server at the hit that completes one of
// its armed actions. It draws nothing and traces nothing itself but the injection it makes
// (zabmodel traces the crash), so that observing a run does not change it.
func (r *runner) crashHook(sid int64, point string, conn net.ConnID) bool {
	now := r.w.Now()
	if now < r.faultStart || now >= r.faultEnd {
		return false
	}
	crashed := false
	if len(r.crashPoints) > 0 {
		crashed = r.countHit(sid, point, conn)
	}
	if c := r.opts.Coverage; c != nil {
		c.crashPoint(sid, point, now)
		if crashed {
			c.fault("crashpoint "+point, sid, now)
		}
	}
	if r.opts.OnCrashPoint != nil {
		r.opts.OnCrashPoint(CrashPointHit{Sid: sid, Point: point, At: now, Crashed: crashed})
	}
	return crashed
}

// countHit counts a hit against each of the server's armed actions at this point and reports
// whether it completes a crash. Every crash it completes is disarmed and has its restart
// scheduled; they are one crash, counted as one fault, and the earliest restart wins. A completed
// pause or reset is performed here (after a crash, neither would matter) and counted as a fault.
func (r *runner) countHit(sid int64, point string, conn net.ConnID) bool {
	armed, ok := r.crashPoints[sid]
	if !ok {
		return false
	}
	crashed, fired := false, 0
	var pauseFor clock.Duration
	reset := false
	kept := armed[:0]
	for _, a := range armed {
		if a.point == point {
			a.remaining--
		}
		if a.remaining > 0 {
			kept = append(kept, a)
			continue
		}
		fired++
		r.actionResults[a.action].done = true
		switch a.kind {
		case injectCrash:
			crashed = true
			if a.restart {
				r.restartAfterCrash(sid, a.restartAfter)
			}
		case injectPause:
			pauseFor = max(pauseFor, a.pauseFor)
		case injectReset:
			reset = true
		}
	}
	if fired == 0 {
		return false
	}
	if len(kept) == 0 {
		delete(r.crashPoints, sid)
	} else {
		r.crashPoints[sid] = kept
	}
	r.faultsInjected++
	if crashed {
		return true
	}
	node := r.ens.Server(sid).Node()
	if reset {
		r.w.Note(sim.NoNode, "fault", "reset at %s of zk%d", point, sid)
		conns := []net.ConnID{conn}
		if conn == 0 {
			conns = r.nw.Conns(node)
		}
		for _, c := range conns {
			r.nw.Reset(c)
		}
	}
	if pauseFor > 0 {
		r.w.Note(sim.NoNode, "fault", "pause at %s of zk%d for %s", point, sid, formatDuration(pauseFor))
		r.pause(node, pauseFor)
	}
	return false
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
