package checkers

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// WatchOptions configure the watch checker. There are none yet; the type keeps the signature
// stable as options are added.
type WatchOptions struct{}

// CheckWatches checks the watches clients set and the notifications they received, walking each
// client's arrival stream in order:
//   - watch-one-shot: every event consumes a watch the session holds: a standard watch fires at
//     most once per registration (registrations of one path and kind coalesce, as the server
//     keeps one watch per connection), and persistent watches (addWatch) may fire any number of
//     times;
//   - watch-event-real: every event matches a committed change of its type on its path after the
//     registration it consumes (exactly at its zxid if the runner recorded one);
//   - watch-before-data: a watch's event arrives before any reply carrying a zxid at or after the
//     first change that triggers it;
//   - watch-missed: at the end of a run whose liveness phase completed, a live session holds no
//     standard watch whose triggering change was committed.
//
// Persistent watches are checked only for reality: ZooKeeper re-adds them after a reconnect
// without replaying what changed meanwhile, so they may miss events by design.
func CheckWatches(h *History, opts WatchOptions) (Result, error) {
	if err := Validate(h); err != nil {
		return Result{}, err
	}
	return checkWatches(h, opts), nil
}

func checkWatches(h *History, _ WatchOptions) Result {
	col := newCollector(CheckerWatches)
	x := buildWatchIndex(h)
	ended := endedSessions(h)
	checked := 0
	missedSkipped := false
	for ci := range h.Clients {
		c := &h.Clients[ci]
		w := &watchWalker{h: h, x: x, c: c, col: col, sessions: map[int64]*watchSession{}}
		checked += w.walk()
		if h.Liveness == nil || !h.Liveness.Completed || c.Stopped {
			missedSkipped = missedSkipped || w.holdsWatches()
			continue
		}
		w.checkMissed(ended)
	}
	if missedSkipped {
		col.note("the watch-missed rule was not applied to some sessions: the run's liveness phase did not complete, or their client stopped")
	}
	return col.result(checked, fmt.Sprintf("%d arrivals judged against the watch triggers of %d committed transactions", checked, len(h.Committed)))
}

// endedSessions returns the sessions the runner saw end, or whose closeSession committed.
func endedSessions(h *History) map[int64]bool {
	ended := map[int64]bool{}
	for i := range h.Sessions {
		if h.Sessions[i].End != nil {
			ended[h.Sessions[i].Session] = true
		}
	}
	for i := range h.Committed {
		if hdr := &h.Committed[i].Entry.Header; hdr.Type == proto.OpCloseSession {
			ended[hdr.ClientID] = true
		}
	}
	return ended
}

// watchTable is the server-side table a standard watch lives in: getData and exists register
// data watches, getChildren child watches.
type watchTable uint8

const (
	dataTable watchTable = iota + 1
	childTable
)

func (t watchTable) String() string {
	if t == dataTable {
		return "data"
	}
	return "child"
}

// armedWatch is one standard watch a session holds: the coalesced registrations of one path in
// one table.
type armedWatch struct {
	path  string
	table watchTable
	// exist says it was registered by exists on a missing node, so a create triggers it.
	exist bool
	// registered is the smallest reply zxid of the registrations; first is the zxid of the first
	// committed change after it that triggers the watch, or 0 if none is in the log.
	registered, first int64
	ref               OpRef
	registeredAt      clock.Time
	// awaitingReply marks an exist watch re-registered by a reconnect: its first trigger is
	// recomputed when the first reply on the new connection bounds the server's state.
	awaitingReply bool
}

type persistentWatch struct {
	path       string
	recursive  bool
	registered int64
}

// watchSession is what the walker knows about one session's watches.
type watchSession struct {
	armed      []*armedWatch
	persistent []persistentWatch
	lastZxid   int64
	dead       bool
}

func (s *watchSession) find(path string, table watchTable) (int, *armedWatch) {
	for i, a := range s.armed {
		if a.path == path && a.table == table {
			return i, a
		}
	}
	return -1, nil
}

func (s *watchSession) disarm(a *armedWatch) {
	if i := slices.Index(s.armed, a); i >= 0 {
		s.armed = slices.Delete(s.armed, i, i+1)
	}
}

// watchWalker walks one client's arrivals.
type watchWalker struct {
	h        *History
	x        *watchIndex
	c        *ClientHistory
	col      *collector
	sessions map[int64]*watchSession
	// current is the session of the latest reply or state change, for arrivals that do not name
	// their session.
	current int64
}

func (w *watchWalker) session(id int64) *watchSession {
	s := w.sessions[id]
	if s == nil {
		s = &watchSession{}
		w.sessions[id] = s
	}
	return s
}

func (w *watchWalker) walk() int {
	for i := range w.c.Arrivals {
		a := w.c.Arrivals[i]
		if a.Kind == ArrivalReply {
			a.Session = w.c.Ops[a.Op].Session
		}
		if a.Session == 0 {
			a.Session = w.current
		}
		w.current = a.Session
		switch a.Kind {
		case ArrivalReply:
			w.reply(a.Op)
		case ArrivalEvent:
			if a.Event != proto.EventNone {
				w.event(&a)
			}
		case ArrivalState:
			w.state(&a)
		}
	}
	return len(w.c.Arrivals)
}

func (w *watchWalker) state(a *Arrival) {
	s := w.session(a.Session)
	switch a.State {
	case proto.StateExpired, proto.StateClosed, proto.StateAuthFailed:
		s.dead, s.armed, s.persistent = true, nil, nil
	case proto.StateSyncConnected, proto.StateConnectedReadOnly:
		for _, armed := range s.armed {
			if armed.exist {
				armed.awaitingReply = true
			}
		}
	}
}

func (w *watchWalker) holdsWatches() bool {
	for _, s := range w.sessions { // determinism:ok only tests for any session holding a watch
		if !s.dead && len(s.armed) > 0 {
			return true
		}
	}
	return false
}
