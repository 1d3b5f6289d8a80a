package conform

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// execute performs one op on its session and fills the result.
func (r *simRunner) execute(s *simSession, op Op, result *Result) error {
	if op.Kind.hasPath() && ClientRejectsPath(op.Path, op.Kind == OpCreate && op.Flags.Sequential) {
		result.Err = CodeInvalidPath
		return nil
	}
	switch op.Kind {
	case OpClose:
		return r.close(s, result)
	case OpExpire:
		return r.expire(s, result)
	case OpMulti:
		return r.multi(s, op, result)
	}
	var code proto.Code
	var done bool
	finish := func(c proto.Code) { code, done = c, true }
	if err := r.issue(s, op, result, finish); err != nil {
		if errors.Is(err, client.ErrInvalidPath) {
			return fmt.Errorf("the client library refused path %q, which go-zookeeper sends: %v", op.Path, err)
		}
		return err
	}
	if err := r.await(string(op.Kind)+" on session "+s.name, func() bool { return done }); err != nil {
		return err
	}
	result.Err = CodeFromNumber(int32(code))
	return nil
}

// issue sends the request of a single op; finish receives its code, after the result fields are set.
func (r *simRunner) issue(s *simSession, op Op, result *Result, finish func(proto.Code)) error {
	c := s.c
	watcher := func() client.Watcher {
		if op.Watch {
			return c.DefaultWatcher()
		}
		return nil
	}
	switch op.Kind {
	case OpCreate:
		mode := createMode(op.Flags)
		cb := func(res client.CreateResult) {
			if res.Err == proto.OK {
				result.Path = res.Path
			}
			finish(res.Err)
		}
		if op.Flags.TTL {
			return c.CreateTTL(op.Path, op.Payload(), toProtoACL(op.EffectiveACL()), mode, op.TTLMs, cb)
		}
		return c.Create(op.Path, op.Payload(), toProtoACL(op.EffectiveACL()), mode, cb)
	case OpDelete:
		return c.Delete(op.Path, op.Version, func(res client.Result) { finish(res.Err) })
	case OpExists:
		return c.Exists(op.Path, watcher(), func(res client.StatResult) {
			if res.Err == proto.OK {
				result.Stat = r.stat(res.Stat)
			}
			finish(res.Err)
		})
	case OpGet:
		return c.GetData(op.Path, watcher(), func(res client.DataResult) {
			if res.Err == proto.OK {
				result.SetData(res.Data)
				result.Stat = r.stat(res.Stat)
			}
			finish(res.Err)
		})
	case OpSet:
		return c.SetData(op.Path, op.Payload(), op.Version, func(res client.StatResult) {
			if res.Err == proto.OK {
				result.Stat = r.stat(res.Stat)
			}
			finish(res.Err)
		})
	case OpChildren:
		return c.GetChildren(op.Path, watcher(), func(res client.ChildrenResult) {
			if res.Err == proto.OK {
				result.Children = slices.Sorted(slices.Values(res.Children))
				if result.Children == nil {
					result.Children = []string{}
				}
				result.Stat = r.stat(res.Stat)
			}
			finish(res.Err)
		})
	}
	return r.issueOther(s, op, result, finish)
}

func (r *simRunner) issueOther(s *simSession, op Op, result *Result, finish func(proto.Code)) error {
	c := s.c
	switch op.Kind {
	case OpSync:
		return c.Sync(op.Path, func(res client.Result) {
			if res.Err == proto.OK {
				result.Path = op.Path // SyncResponse echoes the request's path.
			}
			finish(res.Err)
		})
	case OpGetACL:
		return c.GetACL(op.Path, func(res client.ACLResult) {
			if res.Err == proto.OK {
				result.ACL, result.Stat = fromProtoACL(res.ACL), r.stat(res.Stat)
			}
			finish(res.Err)
		})
	case OpSetACL:
		return c.SetACL(op.Path, toProtoACL(op.EffectiveACL()), op.Version, func(res client.StatResult) {
			if res.Err == proto.OK {
				result.Stat = r.stat(res.Stat)
			}
			finish(res.Err)
		})
	case OpAddAuth:
		return c.AddAuth(op.Scheme, []byte(op.Auth), func(res client.Result) { finish(res.Err) })
	}
	return fmt.Errorf("unknown op kind %q", op.Kind)
}

// multi runs a transaction and reports every op's result.
func (r *simRunner) multi(s *simSession, op Op, result *Result) error {
	ops := make([]client.Op, 0, len(op.Ops))
	for _, sub := range op.Ops {
		switch sub.Kind {
		case OpCreate:
			ops = append(ops, client.CreateOp(sub.Path, sub.Payload(), toProtoACL(sub.EffectiveACL()), createMode(sub.Flags)))
		case OpDelete:
			ops = append(ops, client.DeleteOp(sub.Path, sub.Version))
		case OpSet:
			ops = append(ops, client.SetDataOp(sub.Path, sub.Payload(), sub.Version))
		case OpCheck:
			ops = append(ops, client.CheckOp(sub.Path, sub.Version))
		default:
			return fmt.Errorf("unknown multi op kind %q", sub.Kind)
		}
	}
	var got *client.MultiResult
	if err := s.c.Multi(ops, func(res client.MultiResult) { got = &res }); err != nil {
		return fmt.Errorf("the client library refused the multi: %v", err)
	}
	if err := r.await("multi on session "+s.name, func() bool { return got != nil }); err != nil {
		return err
	}
	result.Err = CodeFromNumber(int32(got.Err))
	if got.Results == nil {
		return nil
	}
	result.Results = make([]MultiResult, 0, len(got.Results))
	for i, res := range got.Results {
		sub := MultiResult{Op: op.Ops[i].Kind, Err: CodeOK}
		if res.Type == proto.OpError {
			sub.Err = CodeFromNumber(int32(res.Err))
		}
		if sub.Err == CodeOK {
			sub.Path = res.Path
			if res.Type == proto.OpSetData || res.Type == proto.OpCreate2 {
				sub.Stat = r.stat(res.Stat)
			}
		}
		result.Results = append(result.Results, sub)
	}
	return nil
}

// close ends the session with closeSession and waits until the server has applied it.
func (r *simRunner) close(s *simSession, result *Result) error {
	lastZxid := r.server.LastProcessedZxid()
	var done bool
	if err := s.c.Close(func(client.Result) { done = true }); err != nil {
		return err
	}
	if err := r.await("close of session "+s.name, func() bool { return done }); err != nil {
		return err
	}
	delete(r.sessions, s.name)
	if err := r.awaitSessionGone(s, lastZxid); err != nil {
		return err
	}
	result.Err = CodeOK
	return nil
}

// expire imitates a client that stops for longer than its session timeout, as the real runner
// does: its connection is cut and new ones are held back until the server has expired the session
// and applied its closeSession; then the client reconnects once and learns that its session expired.
func (r *simRunner) expire(s *simSession, result *Result) error {
	lastZxid := r.server.LastProcessedZxid()
	delete(r.sessions, s.name)
	r.nw.Isolate(s.node)
	for _, c := range r.nw.Conns(s.node) {
		r.nw.Reset(c)
	}
	if err := r.awaitSessionGone(s, lastZxid); err != nil {
		return err
	}
	r.nw.Heal()
	if err := r.await("session "+s.name+" learns of its expiry", func() bool { return !s.c.State().IsAlive() }); err != nil {
		return err
	}
	s.events = nil // A severed connection delivers nothing more.
	result.Err = CodeOK
	return nil
}

// awaitSessionGone waits until the server no longer tracks the session and has applied a txn after
// lastZxid: its closeSession, the only txn an idle runner can cause.
func (r *simRunner) awaitSessionGone(s *simSession, lastZxid int64) error {
	id := s.c.SessionID()
	return r.await(fmt.Sprintf("session %s (%#x) ends", s.name, id), func() bool {
		return r.server.LastProcessedZxid() > lastZxid && !r.server.TracksSession(id)
	})
}

// stat converts a stat, naming the ephemeral owner.
func (r *simRunner) stat(stat proto.Stat) *Stat {
	return &Stat{
		Czxid: stat.Czxid, Mzxid: stat.Mzxid, Pzxid: stat.Pzxid,
		Ctime: stat.Ctime, Mtime: stat.Mtime,
		Version: stat.Version, Cversion: stat.Cversion, Aversion: stat.Aversion,
		EphemeralOwner: RenderOwner(stat.EphemeralOwner, func(id int64) (string, bool) {
			name, ok := r.names[id]
			return name, ok
		}),
		DataLength: stat.DataLength, NumChildren: stat.NumChildren,
	}
}

func createMode(f Flags) proto.CreateMode {
	switch {
	case f.Container:
		return proto.Container
	case f.TTL && f.Sequential:
		return proto.PersistentSequentialWithTTL
	case f.TTL:
		return proto.PersistentWithTTL
	case f.Ephemeral && f.Sequential:
		return proto.EphemeralSequential
	case f.Ephemeral:
		return proto.Ephemeral
	case f.Sequential:
		return proto.PersistentSequential
	}
	return proto.Persistent
}

func toProtoACL(acl []ACL) []proto.ACL {
	out := make([]proto.ACL, len(acl))
	for i, a := range acl {
		out[i] = proto.ACL{Perms: proto.Perm(a.Perms), ID: proto.ID{Scheme: a.Scheme, ID: a.ID}}
	}
	return out
}

func fromProtoACL(acl []proto.ACL) []ACL {
	out := make([]ACL, len(acl))
	for i, a := range acl {
		out[i] = ACL{Perms: Perms(a.Perms), Scheme: a.ID.Scheme, ID: a.ID.ID}
	}
	return out
}
