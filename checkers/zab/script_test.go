package zab

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// script builds event streams for the unit tests, step by step, the way correct servers report
// them; a test then appends or alters the events that break one invariant.
type script struct {
	events []zabmodel.Event
	now    clock.Time
	// logLength tracks each server's txn log length, for the Count of EventFsync.
	logLength map[int64]int
	// held tracks the last zxid of each server's tree and txn log, for the Through of
	// EventEstablished: what a correct server reports that its establishment commits.
	held map[int64]scriptHeld
}

type scriptHeld struct{ applied, logged int64 }

func newScript() *script { return &script{logLength: map[int64]int{}, held: map[int64]scriptHeld{}} }

// add appends events as a correct server reports them: an EventEstablished without a Through gets
// the server's whole history's (addExact keeps what it is given).
func (s *script) add(events ...zabmodel.Event) *script {
	for _, e := range events {
		if e.Kind == zabmodel.EventEstablished && e.Through == 0 {
			held := s.held[e.Server]
			e.Through = max(held.applied, held.logged)
		}
		s.addExact(e)
	}
	return s
}

// addExact appends events as they are.
func (s *script) addExact(events ...zabmodel.Event) *script {
	for _, e := range events {
		s.now = s.now.Add(clock.Millisecond)
		e.Time = s.now
		s.events = append(s.events, e)
		held := s.held[e.Server]
		switch e.Kind {
		case zabmodel.EventLog:
			s.logLength[e.Server]++
			held.logged = e.Zxid
		case zabmodel.EventApply, zabmodel.EventTreeLoaded:
			held.applied = e.Zxid
		case zabmodel.EventTruncate, zabmodel.EventLost:
			held.logged = e.Zxid
		case zabmodel.EventLogDeleted:
			held.logged = 0
		}
		s.held[e.Server] = held
	}
	return s
}

func (s *script) fsync(sid int64) *script {
	return s.add(zabmodel.Event{Kind: zabmodel.EventFsync, Server: sid, Count: s.logLength[sid]})
}

func (s *script) log(sid, zxid int64) *script {
	return s.add(zabmodel.Event{Kind: zabmodel.EventLog, Server: sid, Zxid: zxid, Hash: hashOf(zxid)})
}

func (s *script) apply(sid, zxid int64, source zabmodel.Source) *script {
	return s.add(zabmodel.Event{Kind: zabmodel.EventApply, Server: sid, Zxid: zxid, Hash: hashOf(zxid), Source: source})
}

// hashOf gives each zxid one transaction identity in the tests; a test that needs a different
// transaction under the same zxid flips it.
func hashOf(zxid int64) uint64 { return uint64(zxid)*0x9e3779b97f4a7c15 + 1 }

// elect makes leader and learners elect leader, run discovery for epoch and nothing else.
func (s *script) elect(epoch, leader int64, learners ...int64) *script {
	s.add(zabmodel.Event{Kind: zabmodel.EventElected, Server: leader, Role: zabmodel.Leading, Leader: leader, Epoch: epoch - 1})
	for _, sid := range learners {
		s.add(zabmodel.Event{Kind: zabmodel.EventElected, Server: sid, Role: zabmodel.Following, Leader: leader, Epoch: epoch - 1})
	}
	for _, sid := range append([]int64{leader}, learners...) {
		s.add(zabmodel.Event{Kind: zabmodel.EventAcceptedEpoch, Server: sid, Epoch: epoch})
	}
	return s.add(zabmodel.Event{Kind: zabmodel.EventEpochQuorum, Server: leader, Epoch: epoch},
		zabmodel.Event{Kind: zabmodel.EventCurrentEpoch, Server: leader, Epoch: epoch})
}

// ackNewLeader persists the epoch and acknowledges NEWLEADER at a learner.
func (s *script) ackNewLeader(epoch, leader, learner int64) *script {
	return s.add(zabmodel.Event{Kind: zabmodel.EventCurrentEpoch, Server: learner, Epoch: epoch},
		zabmodel.Event{Kind: zabmodel.EventNewLeaderAck, Server: learner, Leader: leader, Epoch: epoch})
}

// establish completes establishment and starts everyone serving.
func (s *script) establish(epoch, leader int64, learners ...int64) *script {
	s.add(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: leader, Epoch: epoch},
		zabmodel.Event{Kind: zabmodel.EventServing, Server: leader, Role: zabmodel.Leading, Epoch: epoch})
	for _, sid := range learners {
		s.add(zabmodel.Event{Kind: zabmodel.EventServing, Server: sid, Role: zabmodel.Following, Epoch: epoch})
	}
	return s
}

// start runs a whole election with empty histories: everyone acknowledges at once.
func (s *script) start(epoch, leader int64, learners ...int64) *script {
	s.elect(epoch, leader, learners...)
	for _, sid := range learners {
		s.ackNewLeader(epoch, leader, sid)
	}
	return s.establish(epoch, leader, learners...)
}

// propose has the leader propose and log zxid, and the followers log it.
func (s *script) propose(leader, zxid int64, followers ...int64) *script {
	s.add(zabmodel.Event{Kind: zabmodel.EventPropose, Server: leader, Zxid: zxid, Hash: hashOf(zxid)})
	s.log(leader, zxid)
	for _, sid := range followers {
		s.log(sid, zxid)
	}
	return s
}

// commit has the leader commit zxid and everyone named apply it.
func (s *script) commit(leader, zxid int64, followers ...int64) *script {
	s.add(zabmodel.Event{Kind: zabmodel.EventCommit, Server: leader, Zxid: zxid, Hash: hashOf(zxid)})
	s.apply(leader, zxid, zabmodel.SourceCommit)
	for _, sid := range followers {
		s.apply(sid, zxid, zabmodel.SourceCommit)
	}
	return s
}

// write runs one full broadcast: propose, log, fsync and ACK everywhere, commit, apply.
func (s *script) write(leader, zxid int64, followers ...int64) *script {
	s.propose(leader, zxid, followers...)
	s.fsync(leader)
	for _, sid := range followers {
		s.fsync(sid)
		s.add(zabmodel.Event{Kind: zabmodel.EventAck, Server: sid, Zxid: zxid})
	}
	return s.commit(leader, zxid, followers...)
}

var threeVoters = Config{Voters: []int64{1, 2, 3}}

func (s *script) check(t *testing.T, config Config) []Violation {
	t.Helper()
	violations, err := Check(config, s.events)
	require.NoError(t, err)
	return violations
}

// requireClean asserts the stream passes.
func (s *script) requireClean(t *testing.T, config Config) {
	t.Helper()
	violations := s.check(t, config)
	require.Empty(t, violations, "a correct stream was reported:\n%v\nevents:\n%s", violations, describeEvents(s.events))
}

// requireViolation asserts the stream is reported under inv and returns that violation.
func (s *script) requireViolation(t *testing.T, config Config, inv Invariant) Violation {
	t.Helper()
	violations := s.check(t, config)
	for _, v := range violations {
		if v.Invariant == inv {
			assert.NotEmpty(t, v.Explanation)
			return v
		}
	}
	require.Failf(t, "violation not reported", "want %s, got %v\nevents:\n%s", inv, violations, describeEvents(s.events))
	return Violation{}
}

func z(epoch, counter int64) int64 { return zabmodel.MakeZxid(epoch, counter) }
