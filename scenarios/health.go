package scenarios

import (
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
)

// healthStep is how often the sampler looks at every session.
const healthStep = 100 * clock.Millisecond

// healthSampler records, per session, the intervals during which expiring it would be wrong: its
// application runs and is not paused, its client is connected to a server that serves, that server
// is or follows the serving leader, neither server is paused, and the network lets the client talk
// to its server and that server to the leader, both ways. The wrongful-expiry check reads them.
// Sampling is conservative: a session counts as healthy only for the whole of a sampling step in
// which it was healthy at both ends.
type healthSampler struct {
	r        *runner
	sessions []*sessionHealth
	last     clock.Time // when the latest sample was taken
}

type sessionHealth struct {
	app     *app
	id      int64
	healthy bool
	since   clock.Time
}

func newHealthSampler(r *runner) *healthSampler { return &healthSampler{r: r} }

func (h *healthSampler) track(a *app, id int64) {
	h.sessions = append(h.sessions, &sessionHealth{app: a, id: id})
}

func (h *healthSampler) start() { h.r.w.After(healthStep, h.sample) }

func (h *healthSampler) sample() {
	now := h.r.w.Now()
	h.last = now
	for _, s := range h.sessions {
		healthy := h.healthy(s)
		switch {
		case healthy && !s.healthy:
			s.healthy, s.since = true, now
		case !healthy && s.healthy:
			h.close(s, now-clock.Time(healthStep))
		}
	}
	h.sessions = slices.DeleteFunc(h.sessions, func(s *sessionHealth) bool { return s.app.session != s.id && !s.healthy })
	if !h.r.w.Ended() {
		h.r.w.After(healthStep, h.sample)
	}
}

// close ends a healthy interval at the last sample that saw it healthy.
func (h *healthSampler) close(s *sessionHealth, to clock.Time) {
	s.healthy = false
	if to > s.since {
		_ = h.r.rec.SessionHealthy(s.id, s.since, to)
	}
}

// ended samples a session once more when its closeSession commits, and stops tracking it. Without
// this last sample a healthy interval would end at the sample before the close, since the server
// holding the client's connection closes it as soon as it applies the close (ZOOKEEPER-558), long
// before the next sample: the wrongful-expiry rule, which asks for health right up to the commit,
// could then never judge a session whose client was cut off promptly, which is every session a
// killer closes and every wrongful expiry of a well-connected client. The sample is as conservative
// as the others: the interval reaches the commit only if the session was healthy at the last
// sample and is healthy now.
func (h *healthSampler) ended(id int64) {
	now := h.r.w.Now()
	for _, s := range h.sessions {
		if s.id != id {
			continue
		}
		switch {
		case s.healthy && h.healthy(s):
			h.close(s, now)
		case s.healthy:
			h.close(s, h.last)
		}
	}
	h.sessions = slices.DeleteFunc(h.sessions, func(s *sessionHealth) bool { return s.id == id })
}

// flush closes every open interval at the end of the run.
func (h *healthSampler) flush() {
	for _, s := range h.sessions {
		if s.healthy {
			h.close(s, h.r.w.Now())
		}
	}
}

func (h *healthSampler) healthy(s *sessionHealth) bool {
	r := h.r
	a := s.app
	if a.session != s.id || a.c == nil || !a.c.State().IsConnected() || !r.w.IsUp(a.node) || r.w.IsPaused(a.node) {
		return false
	}
	conns := r.nw.Conns(a.node)
	if len(conns) != 1 {
		return false
	}
	serverNode, ok := r.nw.Peer(a.node, conns[0])
	if !ok || !h.serverHealthy(serverNode) || !h.linked(a.node, serverNode) {
		return false
	}
	leaderSid, _, ok := r.ens.Leader()
	if !ok {
		return false
	}
	leaderNode := r.ens.Server(leaderSid).Node()
	if leaderNode == serverNode {
		return true
	}
	sid, _ := r.sidOf(serverNode)
	st := r.ens.Server(sid).State()
	return st.Leader == leaderSid && h.serverHealthy(leaderNode) && h.linked(serverNode, leaderNode)
}

func (h *healthSampler) serverHealthy(n sim.NodeID) bool {
	r := h.r
	sid, ok := r.sidOf(n)
	if !ok || !r.w.IsUp(n) || r.w.IsPaused(n) {
		return false
	}
	st := r.ens.Server(sid).State()
	return st.Serving && (st.Role == zabmodel.Leading || st.Role == zabmodel.Following || st.Role == zabmodel.Observing)
}

func (h *healthSampler) linked(a, b sim.NodeID) bool {
	return !h.r.nw.Blocked(a, b) && !h.r.nw.Blocked(b, a)
}

func sortedPaused(m map[sim.NodeID]bool) []sim.NodeID {
	out := make([]sim.NodeID, 0, len(m))
	for n := range m { // determinism:ok sorted before use
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// syncFloor is what a sync issued now must at least reach: the last committed zxid of the leader
// that the application's server follows (ZooKeeper's sync makes a server catch up with its own
// leader, which may be a deposed one that does not know it yet: ZOOKEEPER-1675). 0 when unknown.
func (r *runner) syncFloor(a *app) int64 {
	conns := r.nw.Conns(a.node)
	if len(conns) != 1 {
		return 0
	}
	serverNode, ok := r.nw.Peer(a.node, conns[0])
	if !ok {
		return 0
	}
	sid, ok := r.sidOf(serverNode)
	if !ok {
		return 0
	}
	st := r.ens.Server(sid).State()
	if !st.Serving {
		return 0
	}
	if st.Role != zabmodel.Leading {
		if st.Leader < 1 || int(st.Leader) > len(r.ens.Servers()) {
			return 0
		}
		st = r.ens.Server(st.Leader).State()
	}
	// The state that leader had committed is every committed transaction up to its last commit,
	// which for a leader that has not committed in its epoch yet is the epoch's start zxid: the
	// floor is the newest committed transaction at or below it.
	i, found := slices.BinarySearch(r.committedZxids, st.LastCommitted)
	if found {
		return st.LastCommitted
	}
	if i == 0 {
		return 0
	}
	return r.committedZxids[i-1]
}
