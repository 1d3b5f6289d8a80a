package scenarios

import (
	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// livenessStep is how often the liveness phase looks at the cluster.
const livenessStep = 100 * clock.Millisecond

// runLivenessPhase is VOPR's end game: every fault is healed, every crashed process restarted, the
// applications stop issuing; then a leader must be established and every pending operation must
// complete within the liveness bound, and the servers must converge.
func (r *runner) runLivenessPhase() *checkers.LivenessFacts {
	if r.w.Ended() {
		return nil
	}
	r.healEverything()
	heal := r.w.Now()
	facts := &checkers.LivenessFacts{HealTime: heal, LeaderTime: clock.Never}
	deadline := heal.Add(r.opts.LivenessBound)
	for r.w.Now() < deadline {
		if !r.w.RunFor(livenessStep) {
			return facts
		}
		if facts.LeaderTime == clock.Never {
			if _, _, ok := r.ens.Leader(); ok {
				facts.LeaderTime = r.w.Now()
			}
		}
		r.barriers()
		if facts.LeaderTime != clock.Never && r.appsSettled() && r.converged() && r.quiet() {
			facts.Completed = true
			return facts
		}
	}
	return facts
}

// healEverything ends every fault in force and restarts every process.
func (r *runner) healEverything() {
	r.w.Note(-1, "fault", "liveness phase: heal everything")
	clear(r.crashPoints)
	r.stopKillers()
	r.nw.Heal()
	r.nw.UnclogAll()
	for _, n := range sortedPaused(r.paused) {
		r.resume(n)
	}
	for _, s := range r.ens.Servers() {
		s.EndDiskStall()
		r.w.Restart(s.Node())
		_ = r.w.Clock(s.Node()).SetDrift(r.w.Now(), 0)
	}
	if h, ok := r.gen.(healer); ok {
		h.heal() // The Redis workloads' servers (workload_redis.go).
	}
	for _, a := range r.apps {
		a.stopped = true
		r.w.Restart(a.node)
		_ = r.w.Clock(a.node).SetDrift(r.w.Now(), 0)
	}
}

// barriers has every application with a live session send one sync after the heal. Its reply
// proves the client is connected again: the watches it re-registered were re-armed or fired before
// it, and its own pending operations are answered.
//
// A barrier counts only if its reply shows the last committed state: a later change (the expiry of
// a dead session, say), or a barrier answered by a server that followed a deposed leader, could
// still owe a watch event to the client, so the barriers go round again until they all do.
func (r *runner) barriers() {
	for _, a := range r.apps {
		if a.barrierDone && a.barrierZxid < r.lastCommitted {
			a.barrierDone = false
		}
		if !a.barrierDone && !a.busy && a.c != nil && a.c.State().IsAlive() && a.c.SessionID() != 0 {
			a.issue(opSpec{kind: proto.OpSync, path: "/", barrier: true})
		}
	}
}

// quiet reports whether every barrier passed saw the last committed state.
func (r *runner) quiet() bool {
	for _, a := range r.apps {
		if a.barrierDone && a.barrierZxid < r.lastCommitted {
			return false
		}
	}
	return true
}

// appsSettled reports whether every application has either passed its barrier or lost its client
// for good (an expired session, which the liveness phase does not replace).
func (r *runner) appsSettled() bool {
	for _, a := range r.apps {
		if a.busy || (!a.barrierDone && a.c != nil && a.c.State().IsAlive()) {
			return false
		}
		if s, ok := r.gen.(settler); ok && !s.settled(a) {
			return false // A Redis lock workload's last acquisition (workload_redis.go).
		}
	}
	return true
}

// converged reports whether every server serves and all hold the same tree.
func (r *runner) converged() bool {
	var digest int64
	for i, s := range r.ens.Servers() {
		st := s.State()
		if !st.Serving {
			return false
		}
		if i == 0 {
			digest = st.Digest
		} else if st.Digest != digest {
			return false
		}
	}
	return true
}
