package lock

import (
	"fmt"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
)

// checkProgress demands that, after the faults heal, every acquisition still waiting is granted
// within the bound: an acquisition waiting when the run ended, more than the bound after the later
// of its start and the heal, is a violation, reported with what blocked it (the lock's first node
// and its owner). Without a liveness phase the check is skipped; a waiter whose bound had not passed
// when the run ended is noted, not judged.
func checkProgress(h *History, t *lockTree, opts Options) checkers.Result {
	if h.Liveness == nil {
		return skipped(CheckerProgress, "the run had no liveness phase")
	}
	bound := opts.ProgressBound
	if bound <= 0 {
		bound = DefaultProgressBound
	}
	col := newCollector(CheckerProgress)
	heal := h.Liveness.HealTime
	checked, late := 0, 0
	for _, a := range h.Attempts {
		if a.Outcome != Waiting {
			continue
		}
		deadline := max(a.Start, heal).Add(bound)
		if deadline > h.End {
			late++
			continue
		}
		checked++
		col.add(checkers.Finding{
			Rule: "granted-after-heal",
			Message: fmt.Sprintf("%s: %s (session %s) has waited for the %s lock since %s%s and was still waiting when the run ended at %s, more than %v after the heal at %s; %s",
				a.Lock, a.Client, hexID(a.Session), a.Mode, ts(a.Start), nodeClause(a.Node), ts(h.End), bound, ts(heal), blocker(h, t, a.Lock)),
			Clients:  []string{a.Client},
			Sessions: []int64{a.Session},
			Times:    []clock.Time{a.Start, heal, h.End},
		})
	}
	if late > 0 {
		col.note(fmt.Sprintf("%d waiters started too close to the end of the run for their bound to pass", late))
	}
	return col.result(checked, fmt.Sprintf("%d waiters judged against the heal at %s", checked, ts(heal)))
}

func nodeClause(node string) string {
	if node == "" {
		return ""
	}
	return " on node " + node
}

// blocker describes the node that holds a lock at the end of the run and who owns it.
func blocker(h *History, t *lockTree, lock string) string {
	var n *node
	if h.lockOf(lock).Kind.queued() {
		n = t.lowestAlive(lock)
	} else {
		n = t.alive[lock]
	}
	if n == nil {
		return "no lock node was left, so nothing blocked it but the recipe itself"
	}
	holder := "no recipe ever held it (an orphan)"
	for i := len(h.Grants) - 1; i >= 0; i-- {
		if g := h.Grants[i]; g.Token == n.czxid {
			holder = fmt.Sprintf("%s was granted it at %s", g.Client, ts(g.Time))
			break
		}
	}
	owner := "whose session was still open"
	if end, closed := t.closes[n.owner]; closed {
		owner = fmt.Sprintf("whose session ended at %s", ts(end.at))
	}
	return fmt.Sprintf("the lock was blocked by node %s (token %s) of session %s, %s; %s", n.path, hexID(n.czxid), hexID(n.owner), owner, holder)
}
