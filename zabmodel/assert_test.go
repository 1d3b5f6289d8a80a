package zabmodel

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// assertionOf returns the broken assertion that ended the fixture's run, if one did.
func (f *fixture) assertionOf() *AssertionError {
	out := f.w.Outcome()
	var assertion *AssertionError
	if out.Kind != sim.Failure || !errors.As(out.Err, &assertion) {
		return nil
	}
	return assertion
}

// establishedLeader runs the fixture until a leader serves and returns it.
func (f *fixture) establishedLeader() *Server {
	f.t.Helper()
	f.run(20 * clock.Second)
	sid, _, ok := f.e.Leader()
	require.True(f.t, ok, "a leader is established")
	return f.e.Server(sid)
}

// createOn sends one create through a client of the ensemble, and runs the world for d.
func (f *fixture) createOn(path string, d clock.Duration) {
	f.t.Helper()
	node := f.w.AddNode("c1", nil)
	cl, err := client.New(f.w, f.nw, node, client.Config{Servers: f.e.Nodes(), SessionTimeout: 10 * clock.Second}, nil)
	require.NoError(f.t, err)
	require.NoError(f.t, cl.Create(path, []byte("x"), proto.OpenACLUnsafe, proto.Persistent, func(client.CreateResult) {}))
	f.w.RunFor(d)
}

func TestAssertionsHoldInACorrectRun(t *testing.T) {
	f := newFixture(t, 3, Config{Voters: 3})
	leader := f.establishedLeader()
	f.createOn("/a", 5*clock.Second)
	assert.False(t, f.w.Ended(), "no assertion fails: %v", f.w.Outcome())
	assert.Greater(t, CounterOf(leader.State().LastCommitted), int64(0), "the create (and its session) committed")
}

func TestAProposalBelowTheLeadersLastFailsTheRun(t *testing.T) {
	f := newFixture(t, 3, Config{Voters: 3})
	leader := f.establishedLeader()
	l := leader.p.leader
	l.lastProposed = MakeZxid(l.epoch+1, 0) // As if the leader had proposed in a later epoch.
	f.createOn("/a", 5*clock.Second)
	got := f.assertionOf()
	require.NotNil(t, got, "the run ends on the assertion: %v", f.w.Outcome())
	assert.Equal(t, InvariantProposalOrder, got.Invariant)
	assert.Equal(t, leader.Sid(), got.Server)
	assert.Equal(t, sim.Failure, f.w.Outcome().Kind, "a failure of the run, not a panic")
}

func TestACommitBelowTheFrontierFailsTheRun(t *testing.T) {
	f := newFixture(t, 3, Config{Voters: 3})
	leader := f.establishedLeader()
	l := leader.p.leader
	l.lastCommitted = MakeZxid(l.epoch, 1000) // As if far more had been committed.
	// processAck ignores acks at or below the frontier, so the proposal goes to tryToCommit itself.
	lp := &leaderProposal{proposal: &proposal{zxid: MakeZxid(l.epoch, 1)}, acks: []int64{1, 2, 3}}
	leader.p.h.(*simHost).step(func() { l.tryToCommit(lp, lp.zxid) })
	got := f.assertionOf()
	require.NotNil(t, got, "the run ends on the assertion: %v", f.w.Outcome())
	assert.Equal(t, InvariantCommitFrontier, got.Invariant)
}

func TestAnAckOfAnUnsyncedZxidFailsTheRun(t *testing.T) {
	f := newFixture(t, 3, Config{Voters: 3})
	leader := f.establishedLeader()
	var learner *learner
	for _, s := range f.e.Servers() {
		if s != leader && s.p.learner != nil {
			learner = s.p.learner
		}
	}
	require.NotNil(t, learner)
	zxid := MakeZxid(learner.p.currentEpoch, 77) // Never logged.
	learner.p.h.(*simHost).step(func() { learner.sendAck(zxid) })
	got := f.assertionOf()
	require.NotNil(t, got, "the run ends on the assertion: %v", f.w.Outcome())
	assert.Equal(t, InvariantAckDurable, got.Invariant)
}

func TestAReplayedRecordHoldingAnotherZxidFailsTheRun(t *testing.T) {
	f := newFixture(t, 3, Config{Voters: 3})
	leader := f.establishedLeader()
	f.createOn("/a", 5*clock.Second)
	require.False(t, f.w.Ended(), "%v", f.w.Outcome())
	victim := f.e.Server(1)
	if victim == leader {
		victim = f.e.Server(2)
	}
	f.w.Crash(victim.Node())
	disk := victim.Disk()
	last := disk.LastZxid()
	require.NotZero(t, last, "the log holds the create")
	// A record whose contents are another transaction's: the log no longer agrees with what was
	// appended under its zxid.
	entry := proto.TxnEntry{Header: proto.TxnHeader{Zxid: last + 5, Type: proto.OpCreateSession}, Txn: &proto.CreateSessionTxn{TimeoutMilliseconds: 1}}
	require.NoError(t, disk.Append(storage.Record{Zxid: last + 1, Data: proto.Marshal(&entry)}))
	disk.Synced(disk.Len())
	f.w.Restart(victim.Node())
	got := f.assertionOf()
	require.NotNil(t, got, "the run ends on the assertion: %v", f.w.Outcome())
	assert.Equal(t, InvariantReplayedLog, got.Invariant)
	assert.Equal(t, victim.Sid(), got.Server)
}

func TestAnAppendTheLogRefusesAgainstTheCoresExpectationFailsTheRun(t *testing.T) {
	f := newFixture(t, 3, Config{Voters: 3})
	leader := f.establishedLeader()
	f.createOn("/a", 5*clock.Second)
	require.False(t, f.w.Ended(), "%v", f.w.Outcome())
	sp := leader.p.zk.sync
	last := leader.Disk().LastZxid()
	require.NotZero(t, last, "the log holds the create")
	// A core whose view of the log was stale: it expects the log to take a zxid it already holds.
	stale := &proto.TxnEntry{Header: proto.TxnHeader{Zxid: last, Type: proto.OpCreateSession}, Txn: &proto.CreateSessionTxn{TimeoutMilliseconds: 1}}
	leader.p.h.(*simHost).step(func() { sp.apply(&ready{}, &effect{kind: effectAppend, entry: stale, appended: true}, &syncInput{}) })
	got := f.assertionOf()
	require.NotNil(t, got, "the run ends on the assertion: %v", f.w.Outcome())
	assert.Equal(t, InvariantCoreView, got.Invariant)
	assert.Equal(t, leader.Sid(), got.Server)
}

func TestAnAppendTheCoreExpectsTheLogToTakeHoldsTheRun(t *testing.T) {
	f := newFixture(t, 3, Config{Voters: 3})
	leader := f.establishedLeader()
	sp := leader.p.zk.sync
	next := &proto.TxnEntry{Header: proto.TxnHeader{Zxid: leader.Disk().LastZxid() + 1, Type: proto.OpCreateSession}, Txn: &proto.CreateSessionTxn{TimeoutMilliseconds: 1}}
	leader.p.h.(*simHost).step(func() { sp.apply(&ready{}, &effect{kind: effectAppend, entry: next, appended: true}, &syncInput{}) })
	assert.Nil(t, f.assertionOf(), "the log took it as expected: %v", f.w.Outcome())
	assert.Equal(t, next.Header.Zxid, leader.Disk().LastZxid())
}
