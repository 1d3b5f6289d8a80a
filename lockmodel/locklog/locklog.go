// Package locklog turns the lock recipes' events (lockmodel.Event) into the records the lock
// checkers judge (checkers/lock), as a run goes. The sweep's lock workloads (scenarios) and the
// model checker's lockers (modelcheck) both record through it, so that the two judge histories
// built by one piece of code.
//
// A Log is a lockmodel.Observer; hand it to the recipes' sessions and fill the history at the end:
//
//	log := locklog.New()
//	session, err := lockmodel.NewSession(w, c, lockmodel.Config{Name: "c1", Observer: log})
//	...
//	h := &lock.History{Locks: locks, Committed: committed, End: end}
//	log.Fill(h, end)
//	results, err := lock.Run(h, lock.Options{})
package locklog

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/checkers/lock"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Log holds the records made so far. Its exported slices are the checkers' records in the order
// the events came; read them, do not change them (Fill hands them to a history as they are).
type Log struct {
	Grants   []lock.Grant
	Attempts []lock.Attempt
	Watches  []lock.Watch
	Requeues []lock.Requeue
	// Released holds when each grant ended (released or lost), by its token, for tests that ask
	// how long a grant was believed.
	Released map[int64]clock.Time

	// holds are the spans of belief; an open one ends at the end of the history (CloseHolds).
	holds []lock.Hold
	// open maps an acquisition (client, session, recipe, lock, attempt) to its index in Attempts.
	open map[string]int
	// holding maps a held grant (client, session, recipe, lock, token) to its index in holds.
	holding  map[string]int
	holdKeys []string // by index in holds
}

// New returns an empty log.
func New() *Log {
	return &Log{Released: map[int64]clock.Time{}, open: map[string]int{}, holding: map[string]int{}}
}

func holdKey(e lockmodel.Event) string {
	return fmt.Sprintf("%s|%x|%s|%s|%x", e.Client, e.Session, e.Recipe, e.Lock, e.Token)
}

func attemptKey(e lockmodel.Event) string {
	return fmt.Sprintf("%s|%x|%s|%s|%d", e.Client, e.Session, e.Recipe, e.Lock, e.Attempt)
}

// ModeOf is the lock mode a recipe takes.
func ModeOf(r lockmodel.Recipe) lock.Mode {
	switch r {
	case lockmodel.RecipeRead:
		return lock.ModeRead
	case lockmodel.RecipeWrite:
		return lock.ModeWrite
	}
	return lock.ModeExclusive
}

// LockEvent implements lockmodel.Observer: it records one recipe event.
func (l *Log) LockEvent(e lockmodel.Event) {
	key := attemptKey(e)
	i, open := l.open[key]
	switch e.Kind {
	case lockmodel.EventAcquiring:
		l.open[key] = len(l.Attempts)
		l.Attempts = append(l.Attempts, lock.Attempt{Lock: e.Lock, Client: e.Client, Session: e.Session,
			Mode: ModeOf(e.Recipe), Start: e.Time, Outcome: lock.Waiting})
	case lockmodel.EventCreated:
		if open {
			l.Attempts[i].Node = e.Node
		}
	case lockmodel.EventWatching:
		if open {
			l.Watches = append(l.Watches, lock.Watch{Lock: e.Lock, Client: e.Client, Session: e.Session, Mode: ModeOf(e.Recipe),
				Attempt: i, Node: e.Node, Path: e.Path, Children: e.Children, Zxid: e.Zxid, Time: e.Time})
		}
	case lockmodel.EventGranted:
		l.Grants = append(l.Grants, lock.Grant{Lock: e.Lock, Client: e.Client, Session: e.Session, Node: e.Node, Token: e.Token,
			Mode: ModeOf(e.Recipe), Zxid: e.Zxid, Time: e.Time, ViaWriteLock: e.ViaWriteLock})
		l.end(key, e.Time, lock.Granted)
		if hk := holdKey(e); !l.isHeld(hk) {
			l.holding[hk] = len(l.holds)
			l.holdKeys = append(l.holdKeys, hk)
			l.holds = append(l.holds, lock.Hold{Lock: e.Lock, Client: e.Client, Session: e.Session, Node: e.Node, Token: e.Token,
				Mode: ModeOf(e.Recipe), Start: e.Time, Open: true})
		}
	case lockmodel.EventReleasing:
		l.letGo(e)
	case lockmodel.EventReleased, lockmodel.EventLost:
		l.letGo(e)
		if _, seen := l.Released[e.Token]; !seen && e.Token != 0 {
			l.Released[e.Token] = e.Time
		}
	case lockmodel.EventRequeued:
		l.Requeues = append(l.Requeues, lock.Requeue{Lock: e.Lock, Client: e.Client, Session: e.Session, Node: e.Node, Time: e.Time})
	case lockmodel.EventNotGranted:
		// An acquisition its session could no longer finish was abandoned, not refused: the
		// fairness and progress checkers owe it nothing.
		outcome := lock.NotGranted
		var code *lockmodel.CodeError
		if errors.Is(e.Err, lockmodel.ErrLost) || errors.Is(e.Err, lockmodel.ErrClosed) ||
			(errors.As(e.Err, &code) && code.Code == proto.SessionExpired) {
			outcome = lock.Abandoned
		}
		l.end(key, e.Time, outcome)
	}
}

func (l *Log) isHeld(key string) bool {
	_, held := l.holding[key]
	return held
}

// letGo ends the recipe's belief that it holds the grant the event names.
func (l *Log) letGo(e lockmodel.Event) {
	key := holdKey(e)
	if i, held := l.holding[key]; held {
		delete(l.holding, key)
		l.holds[i].End, l.holds[i].Open = e.Time, false
		// A latch that found its node no longer first (or gone) ended its belief on its own check.
		l.holds[i].EndedByCheck = e.Kind == lockmodel.EventLost && errors.Is(e.Err, lockmodel.ErrNotFirst)
	}
}

func (l *Log) end(key string, at clock.Time, outcome lock.Outcome) {
	if i, ok := l.open[key]; ok {
		delete(l.open, key)
		if l.Attempts[i].Outcome == lock.Waiting {
			l.Attempts[i].Outcome, l.Attempts[i].End = outcome, at
		}
	}
}

// Abandon ends every acquisition and every span of belief of a client whose process crashed.
func (l *Log) Abandon(clientName string, at clock.Time) {
	for i := range l.Attempts {
		a := &l.Attempts[i]
		if a.Client == clientName && a.Outcome == lock.Waiting {
			a.Outcome, a.End = lock.Abandoned, at
		}
	}
	for i := range l.holds {
		x := &l.holds[i]
		if x.Client == clientName && x.Open {
			x.End, x.Open = at, false
			delete(l.holding, l.holdKeys[i])
		}
	}
}

// Holds returns the spans of belief so far, those still open ending at end (the log keeps them
// open: a later event may still end them).
func (l *Log) Holds(end clock.Time) []lock.Hold {
	out := slices.Clone(l.holds)
	for i := range out {
		if out[i].Open {
			out[i].End = end
		}
	}
	return out
}

// Fill sets the history's recipe records: grants, attempts, watches, requeues, and the spans of
// belief with those still open ending at end.
func (l *Log) Fill(h *lock.History, end clock.Time) {
	h.Grants, h.Attempts, h.Watches, h.Requeues = l.Grants, l.Attempts, l.Watches, l.Requeues
	h.Holds = l.Holds(end)
}
