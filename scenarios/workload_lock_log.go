package scenarios

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/checkers/lock"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// lockLog turns the recipes' events into the lock checkers' records as the run goes.
type lockLog struct {
	grants   []lock.Grant
	attempts []lock.Attempt
	watches  []lock.Watch
	holds    []lock.Hold
	requeues []lock.Requeue
	open     map[string]int // an acquisition's key to its index in attempts
	// holding maps a held grant (client, session, recipe, lock, token) to its index in holds.
	holding  map[string]int
	holdKeys []string // by index in holds
	// released holds when each grant ended (released or lost), by token; tests read it.
	released map[int64]clock.Time
}

func newLockLog() lockLog {
	return lockLog{open: map[string]int{}, holding: map[string]int{}, released: map[int64]clock.Time{}}
}

func holdKey(e lockmodel.Event) string {
	return fmt.Sprintf("%s|%x|%s|%s|%x", e.Client, e.Session, e.Recipe, e.Lock, e.Token)
}

func attemptKey(e lockmodel.Event) string {
	return fmt.Sprintf("%s|%x|%s|%s|%d", e.Client, e.Session, e.Recipe, e.Lock, e.Attempt)
}

func modeOf(r lockmodel.Recipe) lock.Mode {
	switch r {
	case lockmodel.RecipeRead:
		return lock.ModeRead
	case lockmodel.RecipeWrite:
		return lock.ModeWrite
	}
	return lock.ModeExclusive
}

// add records one recipe event.
func (l *lockLog) add(e lockmodel.Event) {
	key := attemptKey(e)
	i, open := l.open[key]
	switch e.Kind {
	case lockmodel.EventAcquiring:
		l.open[key] = len(l.attempts)
		l.attempts = append(l.attempts, lock.Attempt{Lock: e.Lock, Client: e.Client, Session: e.Session,
			Mode: modeOf(e.Recipe), Start: e.Time, Outcome: lock.Waiting})
	case lockmodel.EventCreated:
		if open {
			l.attempts[i].Node = e.Node
		}
	case lockmodel.EventWatching:
		if open {
			l.watches = append(l.watches, lock.Watch{Lock: e.Lock, Client: e.Client, Session: e.Session, Mode: modeOf(e.Recipe),
				Attempt: i, Node: e.Node, Path: e.Path, Children: e.Children, Zxid: e.Zxid, Time: e.Time})
		}
	case lockmodel.EventGranted:
		l.grants = append(l.grants, lock.Grant{Lock: e.Lock, Client: e.Client, Session: e.Session, Node: e.Node, Token: e.Token,
			Mode: modeOf(e.Recipe), Zxid: e.Zxid, Time: e.Time, ViaWriteLock: e.ViaWriteLock})
		l.end(key, e.Time, lock.Granted)
		if _, held := l.holding[holdKey(e)]; !held {
			l.holding[holdKey(e)] = len(l.holds)
			l.holdKeys = append(l.holdKeys, holdKey(e))
			l.holds = append(l.holds, lock.Hold{Lock: e.Lock, Client: e.Client, Session: e.Session, Node: e.Node, Token: e.Token,
				Mode: modeOf(e.Recipe), Start: e.Time, Open: true})
		}
	case lockmodel.EventReleasing:
		l.letGo(e)
	case lockmodel.EventReleased, lockmodel.EventLost:
		l.letGo(e)
		if _, seen := l.released[e.Token]; !seen && e.Token != 0 {
			l.released[e.Token] = e.Time
		}
	case lockmodel.EventRequeued:
		l.requeues = append(l.requeues, lock.Requeue{Lock: e.Lock, Client: e.Client, Session: e.Session, Node: e.Node, Time: e.Time})
	case lockmodel.EventNotGranted:
		outcome := lock.NotGranted
		if errors.Is(e.Err, lockmodel.ErrLost) || errors.Is(e.Err, lockmodel.ErrClosed) {
			outcome = lock.Abandoned
		}
		var code *lockmodel.CodeError
		if errors.As(e.Err, &code) && code.Code == proto.SessionExpired {
			outcome = lock.Abandoned
		}
		l.end(key, e.Time, outcome)
	}
}

// letGo ends the recipe's belief that it holds the grant the event names.
func (l *lockLog) letGo(e lockmodel.Event) {
	key := holdKey(e)
	if i, held := l.holding[key]; held {
		delete(l.holding, key)
		l.holds[i].End, l.holds[i].Open = e.Time, false
		// A latch that found its node no longer first (or gone) ended its belief on its own check.
		l.holds[i].EndedByCheck = e.Kind == lockmodel.EventLost && errors.Is(e.Err, lockmodel.ErrNotFirst)
	}
}

// closeHolds ends, at the end of the run, the spans of belief still open.
func (l *lockLog) closeHolds(end clock.Time) []lock.Hold {
	out := slices.Clone(l.holds)
	for i := range out {
		if out[i].Open {
			out[i].End = end
		}
	}
	return out
}

func (l *lockLog) end(key string, at clock.Time, outcome lock.Outcome) {
	if i, ok := l.open[key]; ok {
		delete(l.open, key)
		if l.attempts[i].Outcome == lock.Waiting {
			l.attempts[i].Outcome, l.attempts[i].End = outcome, at
		}
	}
}

// abandon ends every acquisition of a client whose process crashed.
func (l *lockLog) abandon(clientName string, at clock.Time) {
	for i := range l.attempts {
		a := &l.attempts[i]
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

// lockObserver records an application's recipe events.
type lockObserver struct{ la *lockApp }

func (o lockObserver) LockEvent(e lockmodel.Event) { o.la.l.log.add(e) }

// lockTracer records an application's recipe requests and watch events in the client-visible
// history, exactly as app.issue and app.done record the other workloads' operations.
type lockTracer struct{ la *lockApp }

func (t lockTracer) Request(session int64, req lockmodel.Request) func(lockmodel.Reply) {
	la := t.la
	a := la.a
	op := checkers.Operation{
		Session: session, Kind: req.Kind, Path: req.Path, Data: req.Data, Version: req.Version, Mode: req.Mode, Watch: req.Watch,
	}
	if req.Kind == proto.OpSync {
		op.SyncLeaderZxid = a.r.syncFloor(a)
	}
	ref := a.r.rec.Call(a.name, a.r.w.Now(), op)
	if c := a.r.opts.Coverage; c != nil {
		server := int64(0)
		if a.c != nil {
			server = a.r.serverSid(a.c.Server())
		}
		c.clientRequest(session, req.Kind, a.r.w.Now(), server)
	}
	la.outstanding = append(la.outstanding, ref)
	return func(rep lockmodel.Reply) {
		if !la.answered(ref) {
			return // Failed already, when the process crashed.
		}
		now := a.r.w.Now()
		a.r.opsCompleted++
		if rep.Local != nil {
			code := proto.BadArguments
			if errors.Is(rep.Local, client.ErrCrashed) || errors.Is(rep.Local, client.ErrQueueFull) {
				code = proto.ConnectionLoss
			}
			_ = a.r.rec.Fail(ref, now, code, checkers.OutcomeNotApplied)
			return
		}
		_ = a.r.rec.Written(ref, rep.Session, rep.Xid)
		if rep.Zxid == 0 && (rep.Err == proto.ConnectionLoss || rep.Err == proto.SessionExpired || rep.Err == proto.AuthFailed) {
			outcome := checkers.OutcomeUnknown
			if rep.Xid == 0 {
				outcome = checkers.OutcomeNotApplied
			}
			_ = a.r.rec.Fail(ref, now, rep.Err, outcome)
			return
		}
		_ = a.r.rec.Reply(ref, now, checkers.Reply{Err: rep.Err, Zxid: rep.Zxid, CreatedPath: rep.Path, Data: rep.Data,
			Stat: rep.Stat, Children: rep.Children})
	}
}

func (t lockTracer) WatchEvent(session int64, e client.Event) {
	a := t.la.a
	a.r.rec.Event(a.name, session, a.r.w.Now(), e.Type, e.Path, -1)
}

// answered removes ref from the outstanding requests, reporting whether it was there.
func (la *lockApp) answered(ref checkers.OpRef) bool {
	for i, r := range la.outstanding {
		if r == ref {
			la.outstanding = append(la.outstanding[:i], la.outstanding[i+1:]...)
			return true
		}
	}
	return false
}
