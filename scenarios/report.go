package scenarios

import (
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/checkers/zab"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
)

// Report is the verdict on one run.
type Report struct {
	Seed     uint64
	Script   *Script
	Bugs     string
	Outcome  sim.Outcome
	Zab      []zab.Violation
	Checks   checkers.Report
	CheckErr error
	Liveness *checkers.LivenessFacts
	History  *checkers.History
	Stats    Stats
}

// Stats are the run's counts.
type Stats struct {
	VirtualTime    clock.Time
	Events         int64
	OpsCompleted   int
	Committed      int
	Leaders        int
	FaultsInjected int
}

// Failed reports whether the run found anything wrong: a broken invariant, a failed or undecided
// check, a panic, an exhausted budget, or a run that could not be judged.
func (r *Report) Failed() bool { return r.Failure() != "" }

// Failure names what failed first, as a class a sweep can count: "zab:<Invariant>",
// "<checker>" (e.g. "linearizability/register"), "unknown:<checker>", "panic", "budget:<kind>",
// "history", or "" for a passing run.
func (r *Report) Failure() string {
	if len(r.Zab) > 0 {
		return "zab:" + string(r.Zab[0].Invariant)
	}
	switch r.Outcome.Kind {
	case sim.Panic:
		return "panic"
	case sim.EventBudget, sim.TimeBudget, sim.QueueBudget:
		return "budget:" + r.Outcome.Kind.String()
	case sim.Failure:
		return "failure"
	}
	if r.CheckErr != nil {
		return "history"
	}
	for _, res := range r.Checks.Results {
		switch res.Status {
		case checkers.Violation:
			return res.Checker
		case checkers.Unknown:
			return "unknown:" + res.Checker
		}
	}
	return ""
}

// Explain renders the failure for a person: what broke, where, and the first findings.
func (r *Report) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %s\n", r.Seed, r.Outcome)
	for _, v := range r.Zab {
		fmt.Fprintf(&b, "%s\n", v.String())
	}
	if r.CheckErr != nil {
		fmt.Fprintf(&b, "history could not be judged: %v\n", r.CheckErr)
	}
	for _, res := range r.Checks.Results {
		if res.Status == checkers.Violation || res.Status == checkers.Unknown {
			fmt.Fprintf(&b, "%s\n", res.String())
		}
	}
	return b.String()
}

// judge finishes the run and applies every checker.
func (r *runner) judge(liveness *checkers.LivenessFacts) *Report {
	r.health.flush()
	h := r.rec.Finish(r.w.Now(), liveness)
	rep := &Report{
		Seed: r.opts.Seed, Script: r.script, Bugs: r.opts.Bugs.String(), Outcome: r.w.Outcome(),
		Liveness: liveness, History: h,
		Stats: Stats{VirtualTime: r.w.Now(), Events: r.w.Events(), OpsCompleted: r.opsCompleted,
			Committed: len(h.Committed), Leaders: r.leaders, FaultsInjected: r.faultsInjected},
	}
	rep.Zab = r.zab.Violations()
	if rep.Outcome.Kind == sim.Running {
		r.w.Finish()
		rep.Outcome = r.w.Outcome()
	}
	if len(rep.Zab) > 0 || !rep.Outcome.OK() {
		return rep // The history of a broken run would only echo what broke it.
	}
	opts := checkers.Options{
		Linearizability: r.gen.checks(),
		Reads:           checkers.ReadOptions{LinearizableReadsAfterSync: r.opts.LinearizableReadsAfterSync},
		Liveness:        checkers.LivenessOptions{LeaderBound: r.opts.LivenessBound, OperationBound: r.opts.LivenessBound},
		Stopwatch:       r.opts.Stopwatch,
	}
	rep.Checks, rep.CheckErr = checkers.Run(h, opts)
	if j, ok := r.gen.(judged); ok && rep.CheckErr == nil {
		rep.Checks.Results = append(rep.Checks.Results, j.judge(r, h)...)
	}
	return rep
}

// judged is implemented by workloads with checks of their own beyond the client-visible ones (the
// lock recipes' safety and progress), run after those.
type judged interface {
	judge(r *runner, h *checkers.History) []checkers.Result
}
