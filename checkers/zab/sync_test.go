package zab

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zabsim/zabsim/zabmodel"
)

// behind is an ensemble where leader 1 and follower 2 committed 1:1 and 1:2 while server 3 was
// away; server 3 now elects leader 1 and will be sent a DIFF of both.
func behind() *script {
	s := newScript().start(1, 1, 2).write(1, z(1, 1), 2).write(1, z(1, 2), 2)
	return s.add(zabmodel.Event{Kind: zabmodel.EventElected, Server: 3, Role: zabmodel.Following, Leader: 1, Epoch: 1})
}

func TestProcessConsistencyAtNewLeader(t *testing.T) {
	t.Run("the DIFF is logged, applied and fsynced before the ACK", func(t *testing.T) {
		s := behind().log(3, z(1, 1)).log(3, z(1, 2))
		s.apply(3, z(1, 1), zabmodel.SourceSync).apply(3, z(1, 2), zabmodel.SourceSync).fsync(3)
		s.ackNewLeader(1, 1, 3)
		s.add(zabmodel.Event{Kind: zabmodel.EventServing, Server: 3, Role: zabmodel.Following, Epoch: 1})
		s.requireClean(t, threeVoters)
	})
	t.Run("ZOOKEEPER-3911: the ACK before the DIFF is logged", func(t *testing.T) {
		s := behind()
		s.add(zabmodel.Event{Kind: zabmodel.EventNewLeaderAck, Server: 3, Leader: 1, Epoch: 1})
		v := s.requireViolation(t, threeVoters, ProcessConsistency)
		assert.Equal(t, []int64{3, 1}, v.Servers)
		assert.Equal(t, []int64{z(1, 1)}, v.Zxids)
	})
	t.Run("ZOOKEEPER-4646: the ACK before the DIFF is fsynced", func(t *testing.T) {
		s := behind().log(3, z(1, 1)).log(3, z(1, 2))
		s.apply(3, z(1, 1), zabmodel.SourceSync).apply(3, z(1, 2), zabmodel.SourceSync)
		s.add(zabmodel.Event{Kind: zabmodel.EventNewLeaderAck, Server: 3, Leader: 1, Epoch: 1})
		s.requireViolation(t, threeVoters, ProcessConsistency)
	})
	t.Run("ZOOKEEPER-4643: currentEpoch persisted before the DIFF", func(t *testing.T) {
		s := behind().log(3, z(1, 1)).log(3, z(1, 2))
		s.add(zabmodel.Event{Kind: zabmodel.EventCurrentEpoch, Server: 3, Epoch: 1})
		s.fsync(3).add(zabmodel.Event{Kind: zabmodel.EventNewLeaderAck, Server: 3, Leader: 1, Epoch: 1})
		v := s.requireViolation(t, threeVoters, ProcessConsistency)
		assert.Equal(t, zabmodel.EventCurrentEpoch, v.Event.Kind)
	})
	t.Run("an observer's ACK promises no durability", func(t *testing.T) {
		config := Config{Voters: []int64{1, 2, 3}, Observers: []int64{4}}
		s := newScript().start(1, 1, 2).write(1, z(1, 1), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventElected, Server: 4, Role: zabmodel.Observing, Leader: 1, Epoch: 1})
		s.apply(4, z(1, 1), zabmodel.SourceSync).ackNewLeader(1, 1, 4)
		s.add(zabmodel.Event{Kind: zabmodel.EventServing, Server: 4, Role: zabmodel.Observing, Epoch: 1})
		s.requireClean(t, config)
	})
	t.Run("commits after the learner bound to the leader reach it after NEWLEADER", func(t *testing.T) {
		s := behind().write(1, z(1, 3), 2) // Committed while server 3 syncs.
		s.log(3, z(1, 1)).log(3, z(1, 2)).apply(3, z(1, 1), zabmodel.SourceSync).apply(3, z(1, 2), zabmodel.SourceSync)
		s.fsync(3).ackNewLeader(1, 1, 3)
		s.log(3, z(1, 3)).apply(3, z(1, 3), zabmodel.SourceSync)
		s.add(zabmodel.Event{Kind: zabmodel.EventServing, Server: 3, Role: zabmodel.Following, Epoch: 1})
		s.requireClean(t, threeVoters)
	})
}

// TestProcessConsistencyZooKeeper2845: the old leader fsynced 1:3, which was never committed,
// but left its role without fast-forwarding its tree; the new leader's DIFF starts from the tree
// and the record stays in the log, to come back at the next restart.
func TestProcessConsistencyZooKeeper2845(t *testing.T) {
	s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3).write(1, z(1, 2), 2, 3)
	s.propose(1, z(1, 3)).fsync(1)
	s.add(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 1},
		zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2},
		zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3})
	s.elect(2, 2, 1, 3).ackNewLeader(2, 2, 3)
	s.requireClean(t, threeVoters)
	s.ackNewLeader(2, 2, 1)
	v := s.requireViolation(t, threeVoters, ProcessConsistency)
	assert.Equal(t, []int64{1, 2}, v.Servers)
	assert.Equal(t, []int64{z(1, 3)}, v.Zxids)
}

func TestProcessConsistencyWhenServing(t *testing.T) {
	s := behind().log(3, z(1, 1)).log(3, z(1, 2))
	s.apply(3, z(1, 1), zabmodel.SourceSync).apply(3, z(1, 2), zabmodel.SourceSync).fsync(3)
	s.ackNewLeader(1, 1, 3)
	// Between NEWLEADER and UPTODATE the learner logs a record its leader never had.
	s.add(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 1, Zxid: z(1, 3), Hash: 5},
		zabmodel.Event{Kind: zabmodel.EventLog, Server: 3, Zxid: z(1, 3), Hash: 5},
		zabmodel.Event{Kind: zabmodel.EventServing, Server: 3, Role: zabmodel.Following, Epoch: 1})
	v := s.requireViolation(t, threeVoters, ProcessConsistency)
	assert.Equal(t, zabmodel.EventServing, v.Event.Kind)
}

// TestANewLeaderPromisesTheHistoryItWasSentWith is the shape of seeds 1005550 and 1069851: server 3
// elected leader 1, whose process synchronized it with 1:1 in the DIFF. Leader 1 then crashed, came
// back, led epoch 2 with server 2 and proposed 2:1. Only now do the bytes the dead process wrote
// before it died reach server 3 (its link was clogged): it persists currentEpoch 1 and acknowledges
// NEWLEADER, an ACK that no one will count. That NEWLEADER promised the history it was sent with
// (1:1), not the history server 1 holds now: judging against the process that leads now (the rule
// before) reported 2:1 missing. A learner that does not hold what the dead process sent is still
// reported, whether or not server 1 still leads.
func TestANewLeaderPromisesTheHistoryItWasSentWith(t *testing.T) {
	run := func(learnerLogged, stepDown bool) *script {
		s := newScript().start(1, 1, 2).write(1, z(1, 1), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventElected, Server: 3, Role: zabmodel.Following, Leader: 1, Epoch: 1},
			zabmodel.Event{Kind: zabmodel.EventLearnerSync, Server: 1, Learner: 3})
		if learnerLogged {
			s.log(3, z(1, 1)).fsync(3)
		}
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1}, zabmodel.Event{Kind: zabmodel.EventRestart, Server: 1})
		s.apply(1, z(1, 1), zabmodel.SourceStartup)
		s.add(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2})
		s.elect(2, 1, 2).add(zabmodel.Event{Kind: zabmodel.EventLearnerSync, Server: 1, Learner: 2})
		s.ackNewLeader(2, 1, 2).establish(2, 1, 2).write(1, z(2, 1), 2)
		if stepDown {
			s.add(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 1})
		}
		return s.ackNewLeader(1, 1, 3)
	}
	for _, stepDown := range []bool{false, true} {
		run(true, stepDown).requireClean(t, threeVoters)
		v := run(false, stepDown).requireViolation(t, threeVoters, ProcessConsistency)
		assert.Equal(t, []int64{3, 1}, v.Servers)
		assert.Equal(t, []int64{z(1, 1)}, v.Zxids, "the dead process's promise, not the history of the one leading now")
	}
}

// TestALearnerIsBoundToTheProcessThatSynchronizesIt: server 3 elected leader 1's first process,
// which died before server 3 connected; its connection reached the restarted process, which leads
// epoch 2 and had applied 2:1 when it computed server 3's synchronization. Server 3's NEWLEADER ACK
// promises that process's history.
func TestALearnerIsBoundToTheProcessThatSynchronizesIt(t *testing.T) {
	run := func(learnerLogged ...int64) *script {
		s := newScript().start(1, 1, 2).write(1, z(1, 1), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventElected, Server: 3, Role: zabmodel.Following, Leader: 1, Epoch: 1})
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1}, zabmodel.Event{Kind: zabmodel.EventRestart, Server: 1})
		s.apply(1, z(1, 1), zabmodel.SourceStartup)
		s.add(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2})
		s.elect(2, 1, 2).add(zabmodel.Event{Kind: zabmodel.EventLearnerSync, Server: 1, Learner: 2})
		s.ackNewLeader(2, 1, 2).establish(2, 1, 2).write(1, z(2, 1), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventLearnerSync, Server: 1, Learner: 3})
		for _, zxid := range learnerLogged {
			s.log(3, zxid)
		}
		return s.fsync(3).ackNewLeader(2, 1, 3)
	}
	run(z(1, 1), z(2, 1)).requireClean(t, threeVoters)
	v := run(z(1, 1)).requireViolation(t, threeVoters, ProcessConsistency)
	assert.Equal(t, []int64{3, 1}, v.Servers)
	assert.Equal(t, []int64{z(2, 1)}, v.Zxids)
}
