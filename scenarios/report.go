package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/checkers/zab"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
)

// Report is the verdict on one run.
type Report struct {
	Seed    uint64
	Script  *Script
	Bugs    string
	Outcome sim.Outcome
	Zab     []zab.Violation
	Checks  checkers.Report
	// ZabCheckTime estimates the host time the streaming ZAB invariant checker took, if
	// Options.Stopwatch was set (see zab.Config.Stopwatch); Checks.Total holds the rest.
	ZabCheckTime time.Duration
	CheckErr     error
	Liveness     *checkers.LivenessFacts
	History      *checkers.History
	Stats        Stats
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
// "<checker>" (e.g. "linearizability/register"), "unknown:<checker>", "assertion:<invariant>" (an
// assertion in a server's code, zabmodel.AssertionError), "panic", "budget:<kind>",
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
		var assertion *zabmodel.AssertionError
		if errors.As(r.Outcome.Err, &assertion) {
			return "assertion:" + assertion.Invariant // A bug of the model, not of ZooKeeper.
		}
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

// Explain renders the failure for a person: what broke, where, and the first findings, and the
// known findings (checkers.Known) of the run, which do not fail it.
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
		if res.Status == checkers.Violation || res.Status == checkers.Unknown || res.Status == checkers.Known {
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
	if !r.opts.NoZabChecker {
		rep.Zab = r.zab.Violations()
	}
	rep.ZabCheckTime = r.zab.Summary().HostTime
	if rep.Outcome.Kind == sim.Running {
		r.w.Finish()
		rep.Outcome = r.w.Outcome()
	}
	if len(rep.Zab) > 0 || !rep.Outcome.OK() {
		return rep // The history of a broken run would only echo what broke it.
	}
	lin := r.gen.checks()
	for i := range lin {
		lin[i].TimeLimit = r.opts.CheckTimeLimit
	}
	if r.opts.Visualization != nil {
		var annotations []checkers.Annotation
		if r.opts.Annotations != nil {
			annotations = r.opts.Annotations()
		}
		for i := range lin {
			lin[i].Visualization = r.opts.Visualization(lin[i].Model, lin[i].Prefix)
			lin[i].Annotations = annotations
		}
	}
	opts := checkers.Options{
		Linearizability: lin,
		Checker:         r.opts.Checker,
		Reads:           checkers.ReadOptions{LinearizableReadsAfterSync: r.opts.LinearizableReadsAfterSync},
		Liveness:        checkers.LivenessOptions{LeaderBound: r.opts.LivenessBound, OperationBound: r.opts.LivenessBound},
		Stopwatch:       r.opts.Stopwatch,
	}
	rep.Checks, rep.CheckErr = checkers.Run(h, opts)
	// A workload's own checks come before convergence: an application stuck waiting for a lock
	// also keeps the run from settling, and the lock checkers say which lock and why.
	if j, ok := r.gen.(judged); ok && rep.CheckErr == nil {
		own := j.judge(r, h)
		for _, res := range own {
			rep.Checks.Total += res.Duration
		}
		rep.Checks.Results = append(rep.Checks.Results, own...)
	}
	if rep.CheckErr == nil {
		rep.Checks.Results = append(rep.Checks.Results, r.availability.result())
	}
	if rep.CheckErr == nil && liveness != nil {
		rep.Checks.Results = append(rep.Checks.Results, r.convergence(liveness))
	}
	if r.opts.FailOnKnown {
		for i := range rep.Checks.Results {
			if res := &rep.Checks.Results[i]; res.Status == checkers.Known {
				res.Status = checkers.Violation
				res.Notes = append(res.Notes, "every finding is a known behaviour of the modelled software; it fails the run because the run asked for that (FailOnKnown, --fail-on-known)")
			}
		}
	}
	return rep
}

// Known returns the results whose findings are all known behaviours of the modelled software
// (checkers.Known): reported, and not a failure of the run.
func (r *Report) Known() []checkers.Result {
	var out []checkers.Result
	for _, res := range r.Checks.Results {
		if res.Status == checkers.Known {
			out = append(out, res)
		}
	}
	return out
}

// KnownClasses returns the classes of the run's known findings, as "<checker>:<class>", in the
// order of the results.
func (r *Report) KnownClasses() []string {
	var out []string
	for _, res := range r.Known() {
		for _, class := range checkers.KnownClasses(res.Findings) {
			out = append(out, res.Checker+":"+class)
		}
	}
	return out
}

// CheckerConvergence names the end-of-run check that every server came back and holds the same
// tree: VOPR's demand that a healed cluster converges, which catches a server that never restarts
// (a refused start) or that diverged without any client seeing it yet.
const CheckerConvergence = "convergence"

func (r *runner) convergence(l *checkers.LivenessFacts) checkers.Result {
	var ends []serverEnd
	for _, s := range r.ens.Servers() {
		ends = append(ends, serverEnd{State: s.State(), Exit: s.Exit()})
	}
	return judgeConvergence(ends, l, r.opts.LivenessBound)
}

// serverEnd is what the convergence check reads of a server at the end of a run.
type serverEnd struct {
	zabmodel.State
	Exit string // why the process stopped on its own, if it did
}

// judgeConvergence passes a run whose applications all got through their final sync after the
// heal (l.Completed); otherwise it names what kept the cluster from converging: a server that
// exited (a refused start), one that is up and not serving, or serving servers whose trees differ.
// When every server looks converged and still some application did not finish, it says so.
func judgeConvergence(ends []serverEnd, l *checkers.LivenessFacts, bound clock.Duration) checkers.Result {
	res := checkers.Result{Checker: CheckerConvergence, Status: checkers.Pass,
		Summary: "every server serves and holds the same tree after the heal"}
	if l.Completed {
		return res
	}
	var problems, lockedOut []string
	var digests []int64 // the distinct trees of the serving servers
	leaderEpoch := servingLeaderEpoch(ends)
	for _, st := range ends {
		switch {
		case !st.Up && st.Exit != "":
			problems = append(problems, fmt.Sprintf("server %d exited: %s", st.Sid, st.Exit))
		case !st.Serving && leaderEpoch > 0 && st.Up && st.AcceptedEpoch > leaderEpoch:
			lockedOut = append(lockedOut, fmt.Sprintf("server %d is %s and not serving: its acceptedEpoch %d is above the serving leader's epoch %d, so Learner.registerWithLeader refuses every LEADERINFO of that leader (\"Leaders epoch, %d is less than accepted epoch, %d\") until a higher epoch is elected",
				st.Sid, st.Role, st.AcceptedEpoch, leaderEpoch, leaderEpoch, st.AcceptedEpoch))
		case !st.Serving:
			problems = append(problems, fmt.Sprintf("server %d is %s and not serving", st.Sid, st.Role))
		case !slices.Contains(digests, st.Digest):
			digests = append(digests, st.Digest)
		}
	}
	if len(digests) > 1 {
		problems = append(problems, fmt.Sprintf("the serving servers hold %d different trees", len(digests)))
	}
	if len(problems) == 0 && len(lockedOut) == 0 {
		problems = append(problems, "some application never got through its final sync")
	}
	heal := strings.TrimSpace(l.HealTime.String())
	if len(problems) > 0 {
		res.Findings = append(res.Findings, checkers.Finding{Checker: CheckerConvergence, Rule: "converge-after-heal",
			Message: fmt.Sprintf("%s after the liveness bound of %v following the heal at %ss",
				strings.Join(problems, "; "), bound, heal)})
	}
	if len(lockedOut) > 0 {
		res.Findings = append(res.Findings, checkers.Finding{Checker: CheckerConvergence, Rule: "converge-after-heal",
			Known: KnownAcceptedEpochLockout,
			Message: fmt.Sprintf("%s, after the liveness bound of %v following the heal at %ss; ZooKeeper 3.8 does the same (%s)",
				strings.Join(lockedOut, "; "), bound, heal, KnownAcceptedEpochLockout)})
	}
	res.Status = checkers.StatusOf(res.Findings)
	res.Summary = "the cluster did not converge after the heal"
	if res.Status == checkers.Known {
		res.Summary = "every other server serves and holds the same tree after the heal; the servers named are kept out as ZooKeeper 3.8 keeps them out"
	}
	return res
}

// KnownAcceptedEpochLockout is the known class (checkers.Known) of a server that ZooKeeper 3.8
// itself keeps out of a healthy cluster. A server's acceptedEpoch is raised before its epoch is
// established: by a leader as soon as a quorum's FOLLOWERINFO arrived (Leader.getEpochToPropose),
// by a learner on LEADERINFO (Learner.registerWithLeader). If that epoch then fails (the server
// crashed, or lost its quorum, before NEWLEADER), the server restarts with acceptedEpoch above its
// currentEpoch (QuorumPeer.loadDataBase refuses only the opposite), and votes with its currentEpoch
// (FastLeaderElection.getPeerEpoch). A server with a higher currentEpoch can then win, and a leader
// fixes its new epoch from the first quorum of FOLLOWERINFOs (getEpochToPropose returns the epoch
// as decided to every later one), which need not include the server; if that epoch is not above
// the server's acceptedEpoch, the server's registerWithLeader throws "Leaders epoch ... is less
// than accepted epoch" on every LEADERINFO, and it goes back to LOOKING, is told the same leader,
// and tries again, until an epoch above its acceptedEpoch is elected. The convergence check reports
// exactly that state (a server up and not serving whose acceptedEpoch is above the serving
// leader's epoch) as this known class, and any other way of not converging as a violation.
const KnownAcceptedEpochLockout = "zk-accepted-epoch-lockout"

// servingLeaderEpoch returns the epoch of the serving leader (its currentEpoch), or 0 if no leader
// serves.
func servingLeaderEpoch(ends []serverEnd) int64 {
	for _, st := range ends {
		if st.Up && st.Serving && st.Role == zabmodel.Leading {
			return st.CurrentEpoch
		}
	}
	return 0
}

// judged is implemented by workloads with checks of their own beyond the client-visible ones (the
// lock recipes' safety and progress), run after those.
type judged interface {
	judge(r *runner, h *checkers.History) []checkers.Result
}
