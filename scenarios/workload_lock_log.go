package scenarios

import (
	"errors"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// lockObserver records an application's recipe events.
type lockObserver struct{ la *lockApp }

func (o lockObserver) LockEvent(e lockmodel.Event) { o.la.l.log.LockEvent(e) }

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
		c.sessionClient(session, a.name)
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
