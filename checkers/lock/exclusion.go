package lock

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
)

// tenure is one grant's stay at the resource: the accepted accesses with one token.
type tenure struct {
	token       int64
	client      string
	session     int64
	first, last int // indexes into the lock's accepted accesses
	write       bool
}

// checkExclusion judges mutual exclusion as the resource saw it. Two tenures (the spans between
// the first and the last accepted access with one token) must not interleave unless both only
// read. An interleaving is a recipe bug (CheckerMutualExclusion) if the older holder's lock node
// was still alive when it accessed inside the newer one's tenure; if that node had been deleted
// already (its session expired, or it released), the older holder was acting on a lock it had lost,
// which only fencing at the resource stops (CheckerUnfenced). With fencing, a rejected access is
// explained only by such a lost lock; the rejection of a holder whose node was alive means a newer
// holder was granted a conflicting lock while it held its own (CheckerMutualExclusion).
func checkExclusion(h *History, t *lockTree, fenced *collector) []checkers.Result {
	recipe, unfenced := newCollector(CheckerMutualExclusion), newCollector(CheckerUnfenced)
	checked := 0
	for _, l := range h.Locks {
		accepted, rejected := accessesOf(h, l.Path)
		checked += len(accepted) + len(rejected)
		tenures := tenuresOf(accepted)
		for i := range tenures {
			for j := i + 1; j < len(tenures); j++ {
				judgePair(l, accepted, tenures[i], tenures[j], t, recipe, unfenced)
			}
		}
		for _, a := range rejected {
			judgeRejection(h, l, a, accepted, t, recipe, fenced)
		}
	}
	summary := fmt.Sprintf("%d accesses at the resource judged (fencing %s)", checked, onOff(h.Fencing))
	return []checkers.Result{recipe.result(checked, summary), unfenced.result(checked, summary)}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func accessesOf(h *History, lock string) (accepted, rejected []Access) {
	for _, a := range h.Accesses {
		switch {
		case a.Lock != lock:
		case a.Accepted:
			accepted = append(accepted, a)
		default:
			rejected = append(rejected, a)
		}
	}
	return accepted, rejected
}

// tenuresOf groups accepted accesses by token, in order of first access.
func tenuresOf(accepted []Access) []tenure {
	var out []tenure
	index := map[int64]int{}
	for i, a := range accepted {
		k, ok := index[a.Token]
		if !ok {
			k = len(out)
			index[a.Token] = k
			out = append(out, tenure{token: a.Token, client: a.Client, session: a.Session, first: i})
		}
		out[k].last = i
		out[k].write = out[k].write || a.Write
	}
	return out
}

// judgePair reports two tenures that interleave and conflict.
func judgePair(l Lock, accesses []Access, x, y tenure, t *lockTree, recipe, unfenced *collector) {
	if x.last < y.first || y.last < x.first || (!x.write && !y.write) {
		return
	}
	older, newer := x, y
	if y.token < x.token {
		older, newer = y, x
	}
	// The evidence: the older holder's first access after the newer one's first, or the newer one's
	// first access if the older one never came back.
	inside := newer.first
	for i := newer.first + 1; i <= older.last; i++ {
		if accesses[i].Token == older.token {
			inside = i
			break
		}
	}
	a := accesses[inside]
	began := accesses[newer.first].Time
	n := t.byToken[older.token]
	f := checkers.Finding{
		Clients:  []string{older.client, newer.client},
		Sessions: []int64{older.session, newer.session},
		Zxids:    []int64{older.token, newer.token},
		Times:    []clock.Time{accesses[older.first].Time, accesses[older.last].Time, accesses[newer.first].Time, accesses[newer.last].Time},
	}
	holders := fmt.Sprintf("%s: %s (session %s, token %s, accesses %s to %s) and %s (session %s, token %s, accesses %s to %s) both used the resource under the lock",
		l.Path, older.client, hexID(older.session), hexID(older.token), ts(accesses[older.first].Time), ts(accesses[older.last].Time),
		newer.client, hexID(newer.session), hexID(newer.token), ts(accesses[newer.first].Time), ts(accesses[newer.last].Time))
	// The older holder was stale if its node was gone before the newer tenure began; if the node
	// was alive then, the recipe had granted the newer lock while the older one still stood.
	if n != nil && !n.aliveAt(began) {
		f.Rule = "stale-holder"
		f.Message = fmt.Sprintf("%s; %s's lock node %s had been deleted at %s by %s, before %s's first access at %s: a holder that lost its lock went on acting on it (at %s), which only fencing at the resource can stop",
			holders, older.client, n.path, ts(n.deletedAt), deletionCause(n), newer.client, ts(began), ts(a.Time))
		f.Times = append(f.Times, n.deletedAt)
		unfenced.add(f)
		return
	}
	f.Rule = "overlapping-holders"
	f.Message = fmt.Sprintf("%s; %s", holders, liveNodeClause(older, n, began))
	recipe.add(f)
}

func liveNodeClause(older tenure, n *node, at clock.Time) string {
	if n == nil {
		return fmt.Sprintf("no committed lock node has %s's token %s, so nothing explains its access at %s", older.client, hexID(older.token), ts(at))
	}
	return fmt.Sprintf("%s's lock node %s was still alive at %s: the recipe granted the lock to both", older.client, n.path, ts(at))
}

func deletionCause(n *node) string {
	if n.byClose {
		return fmt.Sprintf("the end of its session %s", hexID(n.owner))
	}
	return "a delete"
}

// judgeRejection reports a fenced-off access whose holder had not lost its lock, and tells apart
// the holders that had: one whose session the server expired (its node deleted by the
// closeSession) could not know, and fencing did its job; one whose own session deleted its node
// (its recipe replaced or dropped the node) while its recipe still believed it held the lock when
// the newer holder came is a recipe fault that fencing caught, reported to fenced (rule
// own-node-deleted) with the span of belief that shows it. Without the recipe's spans (Holds) the
// second kind cannot be told from a holder that knew it had let go, and is not reported.
func judgeRejection(h *History, l Lock, a Access, accepted []Access, t *lockTree, recipe, fenced *collector) {
	n := t.byToken[a.Token]
	newer := slices.IndexFunc(accepted, func(b Access) bool { return b.Token == a.Newest && b.Time <= a.Time })
	began := a.Time
	if newer >= 0 {
		began = accepted[newer].Time
	}
	if l.Kind == KindElection {
		// A leader that went on leading on the node that replaced its own is judged by that node.
		n = t.heldNode(n, a.Session, began)
	}
	if n != nil && !n.aliveAt(began) {
		if n.byClose || n.deletedBy != a.Session {
			return // a holder that had lost its lock before the newer one came: fencing did its job
		}
		believed := slices.IndexFunc(h.Holds, func(x Hold) bool {
			return x.Lock == l.Path && x.Token == a.Token && x.Session == a.Session && x.Start <= began && began < x.End
		})
		if believed < 0 {
			return // it had let go: an access still in flight, which fencing rightly refused
		}
		x := h.Holds[believed]
		known, why := "", "not an expiry by the server but the recipe losing its node without saying so, which fencing caught"
		if curatorWindow(l, x) {
			known, why = KnownLatchReplacedNode, "Curator 5.x's LeaderLatch window after a RECONNECTED started a second create ("+KnownLatchReplacedNode+"), which fencing caught"
		}
		fenced.add(checkers.Finding{
			Known:    known,
			Rule:     "own-node-deleted",
			Clients:  []string{a.Client},
			Sessions: []int64{a.Session},
			Zxids:    []int64{a.Token, a.Newest},
			Times:    []clock.Time{a.Time, n.deletedAt, x.Start, x.End},
			Message: fmt.Sprintf("%s: the resource rejected %s's %s at %s (session %s, token %s) in favour of the newer token %s: its own session had deleted its node %s at %s, yet its recipe believed it held the lock from %s until %s; %s",
				l.Path, a.Client, accessKind(a), ts(a.Time), hexID(a.Session), hexID(a.Token), hexID(a.Newest), n.path, ts(n.deletedAt), ts(x.Start), ts(x.End), why),
		})
		return
	}
	f := checkers.Finding{
		Rule:     "fenced-live-holder",
		Clients:  []string{a.Client},
		Sessions: []int64{a.Session},
		Zxids:    []int64{a.Token, a.Newest},
		Times:    []clock.Time{a.Time},
	}
	other := fmt.Sprintf("a holder with the newer token %s", hexID(a.Newest))
	if newer >= 0 {
		b := accepted[newer]
		other = fmt.Sprintf("%s (session %s, token %s, first access at %s)", b.Client, hexID(b.Session), hexID(b.Token), ts(b.Time))
		f.Clients = append(f.Clients, b.Client)
		f.Sessions = append(f.Sessions, b.Session)
		f.Times = append(f.Times, b.Time)
	}
	f.Message = fmt.Sprintf("%s: the resource rejected %s's %s at %s (session %s, token %s) because %s had used it, although %s: the recipe granted a conflicting lock to both",
		l.Path, a.Client, accessKind(a), ts(a.Time), hexID(a.Session), hexID(a.Token), other,
		liveOrUnknown(a, n))
	recipe.add(f)
}

func liveOrUnknown(a Access, n *node) string {
	if n == nil {
		return fmt.Sprintf("no committed lock node has the token %s", hexID(a.Token))
	}
	return fmt.Sprintf("%s's lock node %s was still alive", a.Client, n.path)
}

func accessKind(a Access) string {
	if a.Write {
		return "write"
	}
	return "read"
}

func hexID(v int64) string { return fmt.Sprintf("0x%x", v) }

// ts renders a virtual time in seconds, without the padding of clock.Time.String.
func ts(t clock.Time) string { return strings.TrimSpace(t.String()) + "s" }
