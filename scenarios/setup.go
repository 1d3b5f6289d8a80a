package scenarios

import (
	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// setup creates a workload's persistent znodes before the applications start, through a client of
// its own, "setup", whose operations are recorded like any application's so that the models see
// the znodes appear. It retries until every path exists.
type setup struct {
	r     *runner
	node  sim.NodeID
	c     *client.Client
	paths []string
	then  func()
}

func newSetup(r *runner, paths []string, then func()) *setup {
	return &setup{r: r, node: r.w.AddNode("setup", nil), paths: paths, then: then}
}

func (s *setup) start() {
	c, err := client.New(s.r.w, s.r.nw, s.node, client.Config{Servers: s.r.ens.Nodes(), SessionTimeout: sessionTimeout, Name: "setup"}, nil)
	if err != nil {
		panic("scenarios: setup client: " + err.Error())
	}
	s.c = c
	s.next()
}

func (s *setup) next() {
	if len(s.paths) == 0 {
		s.r.w.Note(s.node, "setup", "workload znodes created")
		_ = s.c.Close(nil)
		s.then()
		return
	}
	if s.c.SessionID() == 0 {
		s.r.w.AfterFunc(s.node, 100*clock.Millisecond, s.next)
		return
	}
	ref := s.r.rec.Call("setup", s.r.w.Now(), checkers.Operation{
		Session: s.c.SessionID(), Kind: proto.OpCreate, Path: s.paths[0], Data: []byte{}, Mode: proto.Persistent,
	})
	err := s.c.Create(s.paths[0], nil, proto.OpenACLUnsafe, proto.Persistent, func(res client.CreateResult) {
		now := s.r.w.Now()
		if res.Zxid == 0 {
			_ = s.r.rec.Fail(ref, now, res.Err, checkers.OutcomeUnknown)
		} else {
			stat := res.Stat
			_ = s.r.rec.Reply(ref, now, checkers.Reply{Err: res.Err, Zxid: res.Zxid, CreatedPath: res.Path, Stat: statIf(res.Err, &stat)})
		}
		if res.Err == proto.OK || res.Err == proto.NodeExists {
			s.paths = s.paths[1:]
			s.next()
			return
		}
		s.r.w.AfterFunc(s.node, 100*clock.Millisecond, s.next)
	})
	if err != nil {
		panic("scenarios: setup path " + s.paths[0] + ": " + err.Error())
	}
}
