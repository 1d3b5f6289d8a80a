package lock

import (
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
)

// checkHerd counts the waiters each committed change wakes: for every watch a waiting acquisition
// set, the first change after it that fires it (unless its session ended first) is the change that
// woke it. A change must wake at most one waiter of a queued lock per watched node: the successor of
// the node that went away. Read waiters are not counted: Curator's read lock makes every reader
// watch the first write node, by design, and they all get the lock together. A watch wakes no
// waiter if its acquisition had stopped waiting before the change (it was granted or gave up), or
// if the node it was set for was gone by then (the waiter was leaving the queue, or had moved to
// another node, and only the watch was left behind).
func checkHerd(h *History, t *lockTree, _ Options) checkers.Result {
	col := newCollector(CheckerHerd)
	type wake struct {
		lock, path string
		change     change
		watches    []Watch
	}
	var wakes []*wake
	index := map[string]*wake{}
	for _, w := range h.Watches {
		if !h.lockOf(w.Lock).Kind.queued() || w.Mode == ModeRead {
			continue
		}
		c, fired := t.trigger(w.Path, w.Children, w.Zxid, w.Session)
		a := h.Attempts[w.Attempt]
		own := w.Node
		if own == "" {
			own = a.Node
		}
		if !fired || (a.Outcome != Waiting && a.End < c.at) || !t.inQueue(own, c.zxid) {
			continue
		}
		key := fmt.Sprintf("%s|%s|%d", w.Lock, w.Path, c.zxid)
		k, ok := index[key]
		if !ok {
			k = &wake{lock: w.Lock, path: w.Path, change: c}
			index[key] = k
			wakes = append(wakes, k)
		}
		if !containsSession(k.watches, w.Session) {
			k.watches = append(k.watches, w)
		}
	}
	for _, k := range wakes {
		if len(k.watches) > 1 {
			col.add(herdFinding(k.lock, k.path, k.change, k.watches))
		}
	}
	return col.result(len(wakes), fmt.Sprintf("%d changes that woke waiters of queued locks judged", len(wakes)))
}

func containsSession(ws []Watch, session int64) bool {
	for _, w := range ws {
		if w.Session == session {
			return true
		}
	}
	return false
}

func herdFinding(lock, path string, c change, ws []Watch) checkers.Finding {
	f := checkers.Finding{Rule: "one-waiter-per-release", Zxids: []int64{c.zxid}, Times: []clock.Time{c.at}}
	var names []string
	for _, w := range ws {
		f.Clients = append(f.Clients, w.Client)
		f.Sessions = append(f.Sessions, w.Session)
		kind := "a data watch on " + w.Path
		if w.Children {
			kind = "a child watch on " + w.Path
		}
		names = append(names, fmt.Sprintf("%s (session %s, %s set at zxid %s)", w.Client, hexID(w.Session), kind, hexID(w.Zxid)))
	}
	f.Message = fmt.Sprintf("%s: %s, committed at %s (zxid %s), woke %d waiters through %s: %s; a change to the queue should wake only the waiter next in line",
		lock, c.what, ts(c.at), hexID(c.zxid), len(ws), path, strings.Join(names, ", "))
	return f
}

// inQueue reports whether an acquisition's node existed just before the change at zxid.
func (t *lockTree) inQueue(path string, zxid int64) bool {
	n, ok := t.byPath[path]
	return ok && n.czxid < zxid && (n.deleted == 0 || n.deleted > zxid)
}
