package lock

import (
	"fmt"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
)

// checkFairness judges the queued locks' FIFO order: a grant decided at server state zxid Zg for
// the node with sequence number Sg is out of order if a node earlier in the queue (Sh < Sg) was
// granted only at a later state (Zh > Zg), unless both are read grants, which share the lock. That
// earlier node existed at Zg (it was created before and still granted after), so the later node was
// not first when it took the lock. Grants of a read lock to the holder of the write lock, and grants
// whose state is unknown, are not judged. The queue's parent is a container: once the server has
// deleted it and a recipe made it again, sequence numbers start from 0 again, so the order is by
// the parent's incarnation (its czxid) first.
func checkFairness(h *History, t *lockTree, _ Options) checkers.Result {
	col := newCollector(CheckerFairness)
	checked := 0
	for _, l := range h.Locks {
		if !l.Kind.queued() {
			continue
		}
		grants := fairGrants(h, t, l.Path)
		checked += len(grants)
		for _, g := range grants {
			for _, e := range grants {
				earlier := queueBefore(e.generation, e.seq, g.generation, g.seq)
				if earlier && e.Zxid > g.Zxid && e.Token != g.Token && (e.Mode != ModeRead || g.Mode != ModeRead) {
					col.add(outOfOrder(l, g, e))
					break
				}
			}
		}
	}
	return col.result(checked, fmt.Sprintf("%d grants of queued locks judged against the queue order", checked))
}

type queuedGrant struct {
	Grant
	generation, seq int64
}

func fairGrants(h *History, t *lockTree, lock string) []queuedGrant {
	var out []queuedGrant
	for _, g := range h.Grants {
		if g.Lock != lock || g.ViaWriteLock || g.Zxid <= 0 {
			continue
		}
		if seq := sequenceKey(g.Node); seq >= 0 {
			out = append(out, queuedGrant{Grant: g, generation: t.generationOf(g.Token), seq: seq})
		}
	}
	return out
}

func outOfOrder(l Lock, g, e queuedGrant) checkers.Finding {
	return checkers.Finding{
		Rule: "queue-order",
		Message: fmt.Sprintf("%s: %s (session %s) was granted the %s lock on node %s (sequence %d) at zxid %s (%s) while the earlier node %s (sequence %d) of %s (session %s) was waiting; that one was granted only at zxid %s (%s)",
			l.Path, g.Client, hexID(g.Session), g.Mode, g.Node, g.seq, hexID(g.Zxid), ts(g.Time), e.Node, e.seq, e.Client, hexID(e.Session), hexID(e.Zxid), ts(e.Time)),
		Clients:  []string{g.Client, e.Client},
		Sessions: []int64{g.Session, e.Session},
		Zxids:    []int64{g.Zxid, e.Zxid, g.Token, e.Token},
		Times:    []clock.Time{g.Time, e.Time},
	}
}
