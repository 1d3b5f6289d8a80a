package scenarios

import (
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// send issues spec through the client; done receives the result exactly once, unless send returns
// an error (the client refused it locally).
func (a *app) send(spec opSpec, done func(result)) error {
	c := a.c
	var watcher client.Watcher
	if spec.watch {
		watcher = c.DefaultWatcher()
	}
	switch spec.kind {
	case proto.OpCreate:
		return c.Create(spec.path, spec.data, proto.OpenACLUnsafe, spec.mode, func(r client.CreateResult) {
			stat := r.Stat
			done(result{err: r.Err, zxid: r.Zxid, xid: r.Xid, session: r.Session, path: r.Path, stat: statIf(r.Err, &stat)})
		})
	case proto.OpDelete:
		return c.Delete(spec.path, spec.version, func(r client.Result) { done(result{err: r.Err, zxid: r.Zxid, xid: r.Xid, session: r.Session}) })
	case proto.OpSetData:
		return c.SetData(spec.path, spec.data, spec.version, func(r client.StatResult) {
			stat := r.Stat
			done(result{err: r.Err, zxid: r.Zxid, xid: r.Xid, session: r.Session, stat: statIf(r.Err, &stat)})
		})
	case proto.OpExists:
		return c.Exists(spec.path, watcher, func(r client.StatResult) {
			stat := r.Stat
			done(result{err: r.Err, zxid: r.Zxid, xid: r.Xid, session: r.Session, stat: statIf(r.Err, &stat)})
		})
	case proto.OpGetData:
		return c.GetData(spec.path, watcher, func(r client.DataResult) {
			stat := r.Stat
			done(result{err: r.Err, zxid: r.Zxid, xid: r.Xid, session: r.Session, data: r.Data, stat: statIf(r.Err, &stat)})
		})
	case proto.OpGetChildren, proto.OpGetChildren2:
		return c.GetChildren(spec.path, watcher, func(r client.ChildrenResult) {
			stat := r.Stat
			done(result{err: r.Err, zxid: r.Zxid, xid: r.Xid, session: r.Session, children: r.Children, stat: statIf(r.Err, &stat)})
		})
	case proto.OpSync:
		return c.Sync(spec.path, func(r client.Result) { done(result{err: r.Err, zxid: r.Zxid, xid: r.Xid, session: r.Session}) })
	case proto.OpMulti:
		return c.Multi(multiOps(spec), func(r client.MultiResult) {
			done(result{err: r.Err, zxid: r.Zxid, xid: r.Xid, session: r.Session, multi: r.Results})
		})
	}
	panic(fmt.Sprintf("scenarios: a workload asked for %v, which applications do not issue", spec.kind))
}

func statIf(err proto.Code, s *proto.Stat) *proto.Stat {
	if err != proto.OK {
		return nil
	}
	return s
}

func multiOps(spec opSpec) []client.Op {
	ops := make([]client.Op, 0, len(spec.multi))
	for _, sub := range spec.multi {
		switch sub.Kind {
		case proto.OpCreate:
			ops = append(ops, client.CreateOp(sub.Path, sub.Data, proto.OpenACLUnsafe, sub.Mode))
		case proto.OpDelete:
			ops = append(ops, client.DeleteOp(sub.Path, sub.Version))
		case proto.OpSetData:
			ops = append(ops, client.SetDataOp(sub.Path, sub.Data, sub.Version))
		case proto.OpCheck:
			ops = append(ops, client.CheckOp(sub.Path, sub.Version))
		default:
			panic(fmt.Sprintf("scenarios: a workload put %v in a multi", sub.Kind))
		}
	}
	return ops
}
