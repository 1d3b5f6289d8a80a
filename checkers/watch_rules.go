package checkers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// reply handles the reply to op i: it first checks that no watch the session holds should have
// fired before a reply this new, then records the watch the operation left, if any.
func (w *watchWalker) reply(i int) {
	op := &w.c.Ops[i]
	s := w.session(op.Session)
	if s.dead {
		return
	}
	ref := OpRef{Client: w.c.Name, Index: i}
	if op.Zxid > 0 {
		for _, a := range s.armed {
			if a.awaitingReply {
				a.first = w.x.firstCreateSurviving(a.path, a.registered, op.Zxid)
				a.awaitingReply = false
			}
		}
		for _, a := range slices.Clone(s.armed) {
			if a.first != 0 && a.first <= op.Zxid {
				w.col.add(w.beforeDataFinding(a, ref, op))
				s.disarm(a)
			}
		}
		s.lastZxid = max(s.lastZxid, op.Zxid)
	}
	w.register(s, ref, op)
}

func (w *watchWalker) beforeDataFinding(a *armedWatch, ref OpRef, op *Operation) Finding {
	return Finding{
		Rule: "watch-before-data",
		Message: fmt.Sprintf("%s arrived before the event of the %s watch on %s that %s set at zxid %s, although the change at zxid %s that triggers it is not newer than the reply",
			describeOperation(ref, op), a.table, a.path, a.ref, hexID(a.registered), hexID(a.first)),
		Clients: []string{w.c.Name}, Sessions: []int64{op.Session}, Ops: []OpRef{a.ref, ref},
		Zxids: []int64{a.registered, a.first, op.Zxid}, Times: []clock.Time{a.registeredAt, op.Return},
	}
}

// register records the watch a replied operation left on the server, as the Java client's
// ZKWatchManager does: on success, and for exists also on NONODE.
func (w *watchWalker) register(s *watchSession, ref OpRef, op *Operation) {
	if op.Outcome != OutcomeReplied {
		return
	}
	registered := op.Zxid
	if registered <= 0 {
		registered = s.lastZxid // the watch was set no earlier than what the session had seen
	}
	if op.Kind == proto.OpAddWatch && op.Err == proto.OK {
		recursive := op.WatchMode == proto.AddWatchPersistentRecursive
		s.persistent = append(s.persistent, persistentWatch{path: op.Path, recursive: recursive, registered: registered})
		return
	}
	if !op.Watch {
		return
	}
	a := &armedWatch{path: op.Path, registered: registered, ref: ref, registeredAt: op.Return}
	switch {
	case (op.Kind == proto.OpGetData || op.Kind == proto.OpExists) && op.Err == proto.OK:
		a.table = dataTable
		a.first = w.x.firstAfter(op.Path, registered, proto.EventNodeDataChanged, proto.EventNodeDeleted)
	case op.Kind == proto.OpExists && op.Err == proto.NoNode:
		a.table, a.exist = dataTable, true
		a.first = w.x.nextAfter(op.Path, proto.EventNodeCreated, registered)
	case (op.Kind == proto.OpGetChildren || op.Kind == proto.OpGetChildren2) && op.Err == proto.OK:
		a.table = childTable
		a.first = w.x.firstAfter(op.Path, registered, proto.EventNodeChildrenChanged, proto.EventNodeDeleted)
	default:
		return
	}
	if op.Zxid <= 0 {
		a.first = 0 // without a registration zxid there is no trigger to demand
	}
	if _, old := s.find(a.path, a.table); old != nil {
		// The server keeps one watch per connection, path and table: registrations coalesce and
		// the earliest trigger fires them all.
		old.registered = min(old.registered, a.registered)
		if a.first != 0 && (old.first == 0 || a.first < old.first) {
			old.first = a.first
		}
		old.exist = old.exist || a.exist
		return
	}
	s.armed = append(s.armed, a)
}

// tablesFiredBy returns the tables an event consumes watches from, as DataTree triggers them.
func tablesFiredBy(t proto.EventType) []watchTable {
	switch t {
	case proto.EventNodeCreated, proto.EventNodeDataChanged:
		return []watchTable{dataTable}
	case proto.EventNodeChildrenChanged:
		return []watchTable{childTable}
	case proto.EventNodeDeleted:
		return []watchTable{dataTable, childTable}
	default:
		return nil
	}
}

// persistentMatches reports whether a persistent watch delivers an event of type t on path:
// a plain one for its own path, a recursive one for its subtree except child-list changes.
func persistentMatches(p persistentWatch, t proto.EventType, path string) bool {
	if p.path == path {
		return !p.recursive || t != proto.EventNodeChildrenChanged
	}
	if !p.recursive || t == proto.EventNodeChildrenChanged {
		return false
	}
	return p.path == "/" || strings.HasPrefix(path, p.path+"/")
}

// event handles a watch notification: it must consume a watch the session holds and match a
// committed change after that watch was set.
func (w *watchWalker) event(a *Arrival) {
	s := w.session(a.Session)
	var consumed []*armedWatch
	for _, table := range tablesFiredBy(a.Event) {
		if _, armed := s.find(a.Path, table); armed != nil {
			consumed = append(consumed, armed)
		}
	}
	var registered int64 = -1
	for _, armed := range consumed {
		if registered < 0 || armed.registered < registered {
			registered = armed.registered
		}
	}
	for _, p := range s.persistent {
		if persistentMatches(p, a.Event, a.Path) && (registered < 0 || p.registered < registered) {
			registered = p.registered
		}
	}
	if registered < 0 || s.dead {
		w.col.add(w.eventFinding(a, "watch-one-shot", "but the session held no watch it could fire: it was never set, already fired, or the session had ended"))
		return
	}
	for _, armed := range consumed {
		s.disarm(armed)
	}
	compatible := compatibleChanges(a.Event)
	if a.Zxid > 0 {
		if a.Zxid <= registered || !w.x.at(a.Path, a.Zxid, compatible...) {
			w.col.add(w.eventFinding(a, "watch-event-real", fmt.Sprintf(
				"but the committed transaction at zxid %s makes no such change, or precedes the watch set at zxid %s", hexID(a.Zxid), hexID(registered))))
		}
		return
	}
	if w.x.firstAfter(a.Path, registered, compatible...) == 0 {
		w.col.add(w.eventFinding(a, "watch-event-real", fmt.Sprintf(
			"but no committed transaction after the watch was set at zxid %s makes such a change", hexID(registered))))
	}
}

func (w *watchWalker) eventFinding(a *Arrival, rule, why string) Finding {
	return Finding{
		Rule:    rule,
		Message: fmt.Sprintf("%s event on %s (zxid %s) reached %s (session %s) at %s, %s", a.Event, a.Path, hexID(a.Zxid), w.c.Name, hexID(a.Session), timeString(a.Time), why),
		Clients: []string{w.c.Name}, Sessions: []int64{a.Session}, Zxids: []int64{a.Zxid}, Times: []clock.Time{a.Time},
	}
}

// checkMissed reports the standard watches live sessions still hold at the end of a converged run
// although their triggering change was committed.
func (w *watchWalker) checkMissed(ended map[int64]bool) {
	ids := make([]int64, 0, len(w.sessions))
	for id := range w.sessions { // determinism:ok the ids are sorted before use
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		s := w.sessions[id]
		if s.dead || ended[id] {
			continue
		}
		for _, a := range s.armed {
			if a.awaitingReply {
				a.first = w.x.firstCreateSurviving(a.path, a.registered, w.x.last)
			}
			if a.first == 0 {
				continue
			}
			w.col.add(Finding{
				Rule: "watch-missed",
				Message: fmt.Sprintf("the %s watch on %s that %s set at zxid %s never fired, although the change at zxid %s triggers it and session %s lived to the end of the run",
					a.table, a.path, a.ref, hexID(a.registered), hexID(a.first), hexID(id)),
				Clients: []string{w.c.Name}, Sessions: []int64{id}, Ops: []OpRef{a.ref},
				Zxids: []int64{a.registered, a.first}, Times: []clock.Time{a.registeredAt},
			})
		}
	}
}
