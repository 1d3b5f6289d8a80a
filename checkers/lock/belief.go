package lock

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
)

// Hold is one span during which a client's recipe believed that it held a lock (or leadership),
// from the recipe's own state: from its grant until it began to release, was told it lost the lock
// (a lost session, a leader suspended or no longer first), or its process crashed. Open says it
// still held when the run ended (End is then the run's end).
type Hold struct {
	Lock    string
	Client  string
	Session int64
	// Node is the node the grant was for and Token its czxid.
	Node       string
	Token      int64
	Mode       Mode
	Start, End clock.Time
	Open       bool
	// EndedByCheck says that the recipe ended the belief itself, on its own leadership check
	// (LeaderLatch.checkLeadership or reset found its node not first, or gone), rather than by a
	// release, a lost session or a crash.
	EndedByCheck bool
}

// curatorWindow reports whether an overlap whose older holder's own session deleted its node is
// Curator's LeaderLatch window (KnownLatchReplacedNode): an election whose leader ended its belief
// on its own leadership check.
func curatorWindow(l Lock, older Hold) bool { return l.Kind == KindElection && older.EndedByCheck }

// Requeue is one time a participant abandoned its node and queued again with a new one, within one
// acquisition (or one stay in an election), with its session alive.
type Requeue struct {
	Lock    string
	Client  string
	Session int64
	// Node is the node abandoned, or "" if its create had not completed.
	Node string
	Time clock.Time
}

// checkBelief judges leader (and lock) exclusivity from what the recipes believed, independent of
// what the resource accepted: at no instant may two clients believe that they hold conflicting
// locks (both, unless both read). A span of belief is half-open, [grant, let go), so that a holder
// that lets go in the very instant another is granted does not count.
//
// One overlap is excused: either holder's session had been closed by the server (its ephemeral
// node deleted by the closeSession of an expiry) by the time the newer holder was granted. The
// older one could not know (it was paused, or cut off from every server); the newer one was granted
// from a server that had not applied the expiry yet (a follower cut off from the leader still
// answers reads for a moment), after its session had ended. Neither holder could know, and using
// the resource then is what lock/unsafe-without-fencing judges. Every other overlap is a recipe fault: the older holder's node
// was still alive (the recipe granted both), or it had been deleted by a delete (its own recipe,
// typically, replaced it and went on believing, as LeaderLatch before Curator 5.4.0 did).
//
// With fencing on the findings go to CheckerExclusiveBeliefFenced, so that a user sees that fencing
// saved the resource here; without, to CheckerExclusiveBelief. Both fail the run: two believers are
// a recipe violation whatever the resource did about it, except for Curator's own LeaderLatch
// window (KnownLatchReplacedNode), which with fencing is a known finding: reported, and failing a
// run only if it asks for that. fenced also receives the rejections that
// judgeRejection traced to a holder whose own session deleted its node while it still believed.
func checkBelief(h *History, t *lockTree, fenced *collector) []checkers.Result {
	plain := newCollector(CheckerExclusiveBelief)
	col := plain
	if h.Fencing {
		col = fenced
	}
	checked, excused := 0, 0
	for _, l := range h.Locks {
		var holds []Hold
		for _, x := range h.Holds {
			if x.Lock == l.Path {
				holds = append(holds, x)
			}
		}
		slices.SortStableFunc(holds, func(a, b Hold) int { return cmp.Compare(a.Start, b.Start) })
		checked += len(holds)
		for i := range holds {
			for j := i + 1; j < len(holds); j++ {
				older, newer := holds[i], holds[j]
				if newer.Start >= older.End {
					continue
				}
				if older.Client == newer.Client || (older.Mode == ModeRead && newer.Mode == ModeRead) {
					continue
				}
				n := t.byToken[older.Token]
				if l.Kind == KindElection {
					n = t.heldNode(n, older.Session, newer.Start)
				}
				if expiredBy(n, newer.Start) || expiredBy(t.byToken[newer.Token], newer.Start) {
					excused++
					continue
				}
				f := beliefFinding(l, older, newer, n)
				if h.Fencing && f.Rule == "own-node-deleted" && curatorWindow(l, older) {
					f.Known = KnownLatchReplacedNode
					f.Message += " until its own listing told it; Curator 5.x's LeaderLatch does the same when a RECONNECTED starts a second create (" + KnownLatchReplacedNode + "), and fencing covered it"
				}
				col.add(f)
			}
		}
	}
	summary := fmt.Sprintf("%d spans of belief judged (fencing %s)", checked, onOff(h.Fencing))
	if excused > 0 {
		col.note(fmt.Sprintf("%d overlaps of a holder whose session the server had expired before the next grant were left to %s", excused, CheckerUnfenced))
	}
	if h.Fencing {
		return []checkers.Result{skipped(CheckerExclusiveBelief, "fencing is on: two believers are reported as "+CheckerExclusiveBeliefFenced),
			fenced.result(checked, summary+"; the resource's fencing kept every such overlap from corrupting it")}
	}
	return []checkers.Result{plain.result(checked, summary), skipped(CheckerExclusiveBeliefFenced, "fencing is off")}
}

// expiredBy reports whether a node had been deleted by the close of its session (an expiry) by at.
func expiredBy(n *node, at clock.Time) bool { return n != nil && n.byClose && !n.aliveAt(at) }

func beliefFinding(l Lock, older, newer Hold, n *node) checkers.Finding {
	f := checkers.Finding{
		Rule:     "two-believers",
		Clients:  []string{older.Client, newer.Client},
		Sessions: []int64{older.Session, newer.Session},
		Zxids:    []int64{older.Token, newer.Token},
		Times:    []clock.Time{older.Start, older.End, newer.Start},
	}
	until := "until " + ts(older.End)
	if older.Open {
		until = "until the end of the run"
	}
	why := "no committed lock node has its token"
	replaced := ""
	if n != nil && n.czxid != older.Token {
		replaced = fmt.Sprintf("the node %s that its recipe led on after replacing its own, ", n.path)
	}
	switch {
	case n == nil:
	case n.aliveAt(newer.Start):
		why = fmt.Sprintf("its node %s was still alive then: the recipe granted both", n.path)
		if replaced != "" {
			why = replaced + "was still alive and had been first in the queue: the recipe granted both"
		}
	case n.deletedBy == older.Session:
		f.Rule = "own-node-deleted"
		why = fmt.Sprintf("its own session had deleted its node %s at %s and it went on believing", n.path, ts(n.deletedAt))
		f.Times = append(f.Times, n.deletedAt)
	default:
		why = fmt.Sprintf("its node %s had been deleted at %s by a delete of session %s, and nothing told it", n.path, ts(n.deletedAt), hexID(n.deletedBy))
		f.Times = append(f.Times, n.deletedAt)
	}
	f.Message = fmt.Sprintf("%s: %s (session %s, token %s, %s) believed it held the %s lock from %s %s, and %s (session %s, token %s) was granted it at %s; %s",
		l.Path, older.Client, hexID(older.Session), hexID(older.Token), older.Node, older.Mode, ts(older.Start), until,
		newer.Client, hexID(newer.Session), hexID(newer.Token), ts(newer.Start), why)
	return f
}

// checkChurn counts each participant's abandon-and-requeue (Requeues) and flags two kinds of churn
// that no other check sees as long as someone eventually holds the lock:
//
//   - requeue-storm: a participant that requeued more than opts.ChurnBound times within one
//     session (so without losing it);
//   - livelock: after the faults healed, a span longer than opts.LivelockBound during which nobody
//     held the lock while its queue kept changing (at least livelockRequeues requeues in it).
func checkChurn(h *History, t *lockTree, opts Options) checkers.Result {
	col := newCollector(CheckerChurn)
	bound := opts.ChurnBound
	if bound <= 0 {
		bound = DefaultChurnBound
	}
	type participant struct {
		lock, client string
		session      int64
	}
	var order []participant
	counts := map[participant][]clock.Time{}
	for _, r := range h.Requeues {
		p := participant{r.Lock, r.Client, r.Session}
		if _, seen := counts[p]; !seen {
			order = append(order, p)
		}
		counts[p] = append(counts[p], r.Time)
	}
	for _, p := range order {
		times := counts[p]
		if len(times) <= bound {
			continue
		}
		col.add(checkers.Finding{
			Rule: "requeue-storm",
			Message: fmt.Sprintf("%s: %s (session %s) abandoned its node and queued again %d times between %s and %s without losing its session (bound %d)",
				p.lock, p.client, hexID(p.session), len(times), ts(times[0]), ts(times[len(times)-1]), bound),
			Clients:  []string{p.client},
			Sessions: []int64{p.session},
			Times:    []clock.Time{times[0], times[len(times)-1]},
		})
	}
	livelocks := 0
	if h.Liveness != nil {
		livelocks = checkLivelock(h, t, opts, col)
	}
	return col.result(len(h.Requeues), fmt.Sprintf("%d requeues of %d participants judged against a bound of %d; %d spans without a holder judged", len(h.Requeues), len(order), bound, livelocks))
}

// livelockRequeues is how many requeues a span without a holder needs to count as a livelock
// rather than an idle lock.
const livelockRequeues = 3

// checkLivelock finds, for each lock, the spans after the heal in which no hold was open, and
// flags one longer than the bound in which the queue kept changing. Time in which the first node
// of the queue was one that only the end of its owner's session removed does not count: that is a
// dead or cut-off client's ephemeral node, which no recipe can delete and which lives until the
// leader's session tracker expires its session (SessionTrackerImpl), a full session timeout after
// a new leader took over. The participants' requeues meanwhile are Curator's own answers to the
// heal's reconnects (LeaderLatch.handleStateChange lists the children on RECONNECTED, and
// checkLeadership resets when a create was still in flight). It returns how many spans it judged.
func checkLivelock(h *History, t *lockTree, opts Options, col *collector) int {
	bound := opts.LivelockBound
	if bound <= 0 {
		bound = DefaultLivelockBound
	}
	heal := h.Liveness.HealTime
	judged := 0
	for _, l := range h.Locks {
		var spans [][2]clock.Time // holds after the heal, merged
		for _, x := range h.Holds {
			if x.Lock != l.Path || x.End <= heal {
				continue
			}
			spans = append(spans, [2]clock.Time{max(x.Start, heal), x.End})
		}
		slices.SortFunc(spans, func(a, b [2]clock.Time) int { return cmp.Compare(a[0], b[0]) })
		from := heal
		gap := func(to clock.Time) {
			judged++
			if to.Sub(from) <= bound {
				return
			}
			n := 0
			for _, r := range h.Requeues {
				if r.Lock == l.Path && r.Time >= from && r.Time < to {
					n++
				}
			}
			if n < livelockRequeues {
				return
			}
			orphaned := t.blockedByEndingSessions(l.Path, from, to)
			if to.Sub(from)-orphaned <= bound {
				return
			}
			excused := ""
			if orphaned > 0 {
				excused = fmt.Sprintf(" (%v of it not counted: the queue's first node was one its owner's session end removed)", orphaned)
			}
			col.add(checkers.Finding{
				Rule: "livelock",
				Message: fmt.Sprintf("%s: nobody held the lock from %s to %s (%v%s, longer than the bound %v) after the heal at %s, while its participants abandoned their nodes and queued again %d times",
					l.Path, ts(from), ts(to), to.Sub(from), excused, bound, ts(heal), n),
				Times: []clock.Time{from, to, heal},
			})
		}
		for _, s := range spans {
			if s[0] > from {
				gap(s[0])
			}
			from = max(from, s[1])
		}
		if from < h.End {
			gap(h.End)
		}
	}
	return judged
}
