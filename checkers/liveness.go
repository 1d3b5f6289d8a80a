package checkers

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
)

// Default liveness bounds, generous enough for Fast Leader Election whose notification timeout
// may have backed off to its 60 s cap during a long partition, plus the client's reconnect
// delays. Runners with tighter configurations should pass tighter bounds.
const (
	DefaultLeaderBound    = 2 * clock.Minute
	DefaultOperationBound = 3 * clock.Minute
)

// LivenessOptions configure the liveness checker.
type LivenessOptions struct {
	// LeaderBound is how long after the heal a leader must be established; 0 means
	// DefaultLeaderBound.
	LeaderBound clock.Duration
	// OperationBound is how long after the later of its call and the heal every operation must
	// complete (with any result); 0 means DefaultOperationBound.
	OperationBound clock.Duration
}

// CheckLiveness checks the liveness phase, VOPR style: once faults stop and a quorum can talk,
//   - leader-after-heal: a leader is established within LeaderBound of the heal;
//   - operation-after-heal: every operation pending at the heal or issued after it completes
//     (with a reply or a local failure) within OperationBound of the later of its call and the
//     heal.
//
// It is Skipped without liveness facts, and Unknown if the run ended before the leader bound
// elapsed without a leader.
func CheckLiveness(h *History, opts LivenessOptions) (Result, error) {
	if err := Validate(h); err != nil {
		return Result{}, err
	}
	return checkLiveness(h, opts), nil
}

func checkLiveness(h *History, opts LivenessOptions) Result {
	col := newCollector(CheckerLiveness)
	l := h.Liveness
	if l == nil {
		return Result{Checker: CheckerLiveness, Status: Skipped, Summary: "the run had no liveness phase"}
	}
	leaderBound, opBound := opts.LeaderBound, opts.OperationBound
	if leaderBound <= 0 {
		leaderBound = DefaultLeaderBound
	}
	if opBound <= 0 {
		opBound = DefaultOperationBound
	}
	leaderDeadline := l.HealTime.Add(leaderBound)
	undecidedLeader := false
	switch {
	case l.LeaderTime <= leaderDeadline:
	case leaderDeadline > h.End:
		undecidedLeader = true
	default:
		col.add(Finding{
			Rule:    "leader-after-heal",
			Message: fmt.Sprintf("faults healed at %s, but %s; the bound was %v", timeString(l.HealTime), describeLeaderTime(l.LeaderTime), leaderBound),
			Times:   []clock.Time{l.HealTime, leaderDeadline},
		})
	}
	checked, late := checkOperationProgress(h, l.HealTime, opBound, col)
	if late > 0 {
		col.note("%d operations were issued too close to the end of the run for their bound to elapse", late)
	}
	res := col.result(checked, fmt.Sprintf("leader and %d operations judged against the heal at %s", checked, timeString(l.HealTime)))
	if undecidedLeader && res.Status == Pass {
		res.Status = Unknown
		res.Summary = fmt.Sprintf("no leader was established by the end of the run at %s, before the %v bound after the heal at %s elapsed",
			timeString(h.End), leaderBound, timeString(l.HealTime))
	}
	return res
}

func describeLeaderTime(t clock.Time) string {
	if t == clock.Never {
		return "no leader was established by the end of the run"
	}
	return "a leader was established only at " + timeString(t)
}

// checkOperationProgress applies the operation-after-heal rule. It returns how many operations it
// judged and how many it could not because the run ended before their deadline.
func checkOperationProgress(h *History, heal clock.Time, bound clock.Duration, col *collector) (checked, late int) {
	for ci := range h.Clients {
		c := &h.Clients[ci]
		for oi := range c.Ops {
			op := &c.Ops[oi]
			if op.Outcome != OutcomePending && op.Return < heal {
				continue // finished before the heal: the faults excuse anything
			}
			deadline := max(op.Call, heal).Add(bound)
			if deadline > h.End && op.Outcome == OutcomePending {
				late++
				continue
			}
			checked++
			if op.Outcome != OutcomePending && op.Return <= deadline {
				continue
			}
			ref := OpRef{Client: c.Name, Index: oi}
			col.add(Finding{
				Rule: "operation-after-heal",
				Message: fmt.Sprintf("%s did not complete by %s, %v after the later of its call and the heal at %s",
					describeOperation(ref, op), timeString(deadline), bound, timeString(heal)),
				Clients: []string{c.Name}, Sessions: []int64{op.Session}, Ops: []OpRef{ref},
				Times: []clock.Time{op.Call, heal, deadline},
			})
		}
	}
	return checked, late
}
