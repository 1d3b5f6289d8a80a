package zab

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zabsim/zabsim/zabmodel"
)

func TestCommittedLogDurability(t *testing.T) {
	t.Run("a commit with only the leader's copy fsynced", func(t *testing.T) {
		// The followers acknowledged before fsyncing (an ACK-before-fsync bug).
		s := newScript().start(1, 1, 2, 3).propose(1, z(1, 1), 2, 3).fsync(1)
		s.commit(1, z(1, 1), 2, 3)
		v := s.requireViolation(t, threeVoters, CommittedLogDurability)
		assert.Equal(t, []int64{z(1, 1)}, v.Zxids)
	})
	t.Run("a commit with a quorum fsynced passes, the third copy may lag", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).propose(1, z(1, 1), 2, 3).fsync(1).fsync(2)
		s.commit(1, z(1, 1), 2, 3)
		s.requireClean(t, threeVoters)
	})
	t.Run("half of an even ensemble is not a quorum", func(t *testing.T) {
		// Two of four voters fsynced: half, and QuorumMaj's quorum is more than half.
		fourVoters := Config{Voters: []int64{1, 2, 3, 4}}
		s := newScript().start(1, 1, 2, 3, 4).propose(1, z(1, 1), 2, 3, 4).fsync(1).fsync(2)
		s.commit(1, z(1, 1), 2, 3, 4)
		s.requireViolation(t, fourVoters, CommittedLogDurability)
		s = newScript().start(1, 1, 2, 3, 4).propose(1, z(1, 1), 2, 3, 4).fsync(1).fsync(2).fsync(3)
		s.commit(1, z(1, 1), 2, 3, 4)
		s.requireClean(t, fourVoters)
	})
	t.Run("two voters need both copies", func(t *testing.T) {
		twoVoters := Config{Voters: []int64{1, 2}}
		s := newScript().start(1, 1, 2).propose(1, z(1, 1), 2).fsync(1)
		s.commit(1, z(1, 1), 2)
		s.requireViolation(t, twoVoters, CommittedLogDurability)
		s = newScript().start(1, 1, 2).propose(1, z(1, 1), 2).fsync(1).fsync(2)
		s.commit(1, z(1, 1), 2)
		s.requireClean(t, twoVoters)
	})
	t.Run("observers do not count", func(t *testing.T) {
		config := Config{Voters: []int64{1, 2, 3}, Observers: []int64{4}}
		s := newScript().start(1, 1, 2, 3).propose(1, z(1, 1), 2, 3, 4).fsync(1).fsync(4)
		s.commit(1, z(1, 1), 2, 3)
		s.requireViolation(t, config, CommittedLogDurability)
	})
	// Leader 1 commits 1:2 with follower 2 only, and dies; server 3, which lacks 1:2, wrongly
	// leads epoch 2 and tells server 2 to truncate it.
	wrongLeader := func() *script {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3).write(1, z(1, 2), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3})
		return s.elect(2, 3, 2).add(zabmodel.Event{Kind: zabmodel.EventTruncate, Server: 2, Zxid: z(1, 1)})
	}
	t.Run("a TRUNC removes a committed transaction the leader lacks", func(t *testing.T) {
		v := wrongLeader().requireViolation(t, threeVoters, CommittedLogDurability)
		assert.Equal(t, []int64{z(1, 2), z(1, 1)}, v.Zxids)
		assert.Equal(t, []int64{2, 3}, v.Servers)
	})
	t.Run("the truncation also leaves a minority of copies", func(t *testing.T) {
		c, err := New(threeVoters)
		assert.NoError(t, err)
		for _, e := range wrongLeader().events {
			c.Observe(e)
		}
		assert.Len(t, c.Violations(), 1) // Kept once, counted for the truncation and the lost quorum.
		for _, count := range c.Summary().Violations {
			if count.Invariant == CommittedLogDurability {
				assert.Equal(t, int64(2), count.Count)
			}
		}
	})
	t.Run("a crash loses fsynced records of a committed transaction", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 2},
			zabmodel.Event{Kind: zabmodel.EventLost, Server: 2, Zxid: 0, Count: 1})
		s.requireViolation(t, threeVoters, CommittedLogDurability)
	})
}

func TestSnapshotDurability(t *testing.T) {
	// Leader 1 logs 1:1 with follower 2 and dies before fsyncing it; server 2 leads epoch 2
	// and sends server 3 a SNAP, which only a snapshot makes durable.
	snapSync := func(snapshotTaken bool) *script {
		s := newScript().start(1, 1, 2).propose(1, z(1, 1), 2).fsync(2)
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
			zabmodel.Event{Kind: zabmodel.EventLost, Server: 1, Count: 1},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2})
		s.apply(2, z(1, 1), zabmodel.SourceFastForward).elect(2, 2, 3)
		s.add(zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 3, Zxid: z(1, 1), Source: zabmodel.SourceSnap})
		if snapshotTaken {
			s.add(zabmodel.Event{Kind: zabmodel.EventSnapshot, Server: 3, Zxid: z(1, 1)})
		}
		return s.ackNewLeader(2, 2, 3).establish(2, 2, 3)
	}
	t.Run("a snapshot makes a SNAP durable", func(t *testing.T) {
		snapSync(true).requireClean(t, threeVoters)
	})
	t.Run("a SNAP without a snapshot is not durable", func(t *testing.T) {
		v := snapSync(false).requireViolation(t, threeVoters, CommittedLogDurability)
		assert.Equal(t, []int64{z(1, 1)}, v.Zxids)
	})
}

func TestLeaderLogCompleteness(t *testing.T) {
	t.Run("the most complete server leads", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3})
		s.elect(2, 2, 3).log(3, z(1, 1)).apply(3, z(1, 1), zabmodel.SourceSync).fsync(3)
		s.ackNewLeader(2, 2, 3).establish(2, 2, 3)
		s.requireClean(t, threeVoters)
	})
	t.Run("a server without the committed transaction leads", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3})
		s.elect(2, 3, 2).ackNewLeader(2, 3, 2).establish(2, 3, 2)
		v := s.requireViolation(t, threeVoters, LeaderLogCompleteness)
		assert.Equal(t, []int64{3}, v.Servers)
		assert.Equal(t, []int64{z(1, 1)}, v.Zxids)
	})
	// Server 3, leading epoch 2, has server 2's NEWLEADER ACK but pauses before counting it;
	// meanwhile servers 1 and 2 establish epoch 3 and commit 3:1. Server 3 then resumes and
	// establishes epoch 2, as Leader.waitForNewLeaderAck does in Java (seed 1000187).
	staleLeader := func(lagging bool) *script {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3)
		if lagging {
			s.write(1, z(1, 2), 2)
		}
		s.add(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 1},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3})
		s.elect(2, 3, 2).ackNewLeader(2, 3, 2)
		s.elect(3, 1, 2).ackNewLeader(3, 1, 2).establish(3, 1, 2).write(1, z(3, 1), 2)
		return s.add(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 3, Epoch: 2})
	}
	t.Run("a stale leader need not hold a later epoch's transactions", func(t *testing.T) {
		staleLeader(false).requireClean(t, threeVoters)
	})
	t.Run("a stale leader must still hold its earlier epochs' transactions", func(t *testing.T) {
		v := staleLeader(true).requireViolation(t, threeVoters, LeaderLogCompleteness)
		assert.Equal(t, []int64{3}, v.Servers)
		assert.Equal(t, []int64{z(1, 2)}, v.Zxids)
	})
}

func TestMonotonicRead(t *testing.T) {
	// Server 2 holds 1:1 (committed) and 1:2 (never committed) in its tree.
	base := func() *script {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3).propose(1, z(1, 2), 2).fsync(2)
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
			zabmodel.Event{Kind: zabmodel.EventLost, Server: 1, Zxid: z(1, 1), Count: 1},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3})
		return s.apply(2, z(1, 2), zabmodel.SourceFastForward)
	}
	t.Run("a TRUNC that removes only the uncommitted transaction", func(t *testing.T) {
		s := base().elect(2, 3, 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventTruncate, Server: 2, Zxid: z(1, 1)},
			zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 2, Source: zabmodel.SourceTruncate})
		s.apply(2, z(1, 1), zabmodel.SourceTruncate)
		s.add(zabmodel.Event{Kind: zabmodel.EventSnapshot, Server: 2, Zxid: z(1, 1)})
		s.ackNewLeader(2, 3, 2).establish(2, 3, 2)
		s.requireClean(t, threeVoters)
	})
	t.Run("a SNAP that forgets a committed transaction the leader lacks", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3})
		s.elect(2, 3, 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 2, Source: zabmodel.SourceSnap})
		v := s.requireViolation(t, threeVoters, MonotonicRead)
		assert.Equal(t, []int64{z(1, 1), 0, z(1, 1)}, v.Zxids)
	})
}

// TestTruncRacingACommit: server 3 restarts with 1:2 logged; the leader, whose committed log ends
// at 1:1, tells it to truncate to 1:1 and meanwhile commits 1:2 with server 2. The TRUNC then
// removes a committed transaction, which the leader sends again: this is correct ZooKeeper.
func TestTruncRacingACommit(t *testing.T) {
	race := func() *script {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3).propose(1, z(1, 2), 2, 3).fsync(1).fsync(3)
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 3},
			zabmodel.Event{Kind: zabmodel.EventRestart, Server: 3},
			zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 3, Source: zabmodel.SourceStartup})
		s.apply(3, z(1, 1), zabmodel.SourceStartup).apply(3, z(1, 2), zabmodel.SourceStartup)
		s.add(zabmodel.Event{Kind: zabmodel.EventElected, Server: 3, Role: zabmodel.Following, Leader: 1, Epoch: 1})
		s.fsync(2).commit(1, z(1, 2), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventTruncate, Server: 3, Zxid: z(1, 1)},
			zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 3, Source: zabmodel.SourceTruncate})
		s.apply(3, z(1, 1), zabmodel.SourceTruncate)
		s.add(zabmodel.Event{Kind: zabmodel.EventSnapshot, Server: 3, Zxid: z(1, 1)})
		return s.ackNewLeader(1, 1, 3).add(zabmodel.Event{Kind: zabmodel.EventServing, Server: 3, Role: zabmodel.Following, Epoch: 1})
	}
	t.Run("the leader sends the transaction again", func(t *testing.T) {
		s := race().log(3, z(1, 2)).apply(3, z(1, 2), zabmodel.SourceSync).write(1, z(1, 3), 2, 3)
		s.requireClean(t, threeVoters)
	})
	t.Run("the learner never gets it back", func(t *testing.T) {
		s := race().propose(1, z(1, 3), 2, 3).fsync(1).fsync(2).commit(1, z(1, 3), 2, 3)
		v := s.requireViolation(t, threeVoters, PrimaryIntegrity)
		assert.Equal(t, []int64{z(1, 3), z(1, 2)}, v.Zxids)
	})
}

// A learner elected an earlier process of its leader; the process that leads now reached it,
// sent it a SNAP and crashed before the SNAP arrived (ZooKeeper's learner retries its connection
// to the leader's address, and a crashed process's last bytes are still delivered). The SNAP
// carries the crashed process's history, which the checker keeps until its restart.
func TestASnapFromALeaderThatCrashedAfterSendingIt(t *testing.T) {
	s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3)
	s.add(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3},
		zabmodel.Event{Kind: zabmodel.EventElected, Server: 3, Role: zabmodel.Following, Leader: 1, Epoch: 1},
		zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
		zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2},
		zabmodel.Event{Kind: zabmodel.EventRestart, Server: 1},
		zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 1, Source: zabmodel.SourceStartup})
	s.apply(1, z(1, 1), zabmodel.SourceStartup).elect(2, 1, 2)
	s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
		zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 3, Zxid: z(1, 1), Source: zabmodel.SourceSnap})
	s.requireClean(t, threeVoters)
}

// TestATruncMayRemoveAProposalItsLeaderForwardsBehindIt is the shape of seed 1023103: server 3
// restarts with 1:2 logged, which leader 1 had proposed but not yet committed. The leader
// synchronizes it (LearnerHandler.syncFollower) with a TRUNC to its committed log's end, 1:1, and
// Leader.startForwarding queues the outstanding 1:2 right behind it. Server 2's ACK then commits
// 1:2, and the leader crashes after writing the TRUNC but before writing the PROPOSAL; the TRUNC
// reaches server 3. ZooKeeper does the same: 1:2 was not committed when the truncation point was
// chosen, and a quorum (servers 1 and 2) still holds it. A TRUNC that removes a committed
// transaction the (dead) leader process never had is still a violation.
func TestATruncMayRemoveAProposalItsLeaderForwardsBehindIt(t *testing.T) {
	t.Run("the outstanding proposal queued after the TRUNC", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3).propose(1, z(1, 2), 3).fsync(1).fsync(3)
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 3},
			zabmodel.Event{Kind: zabmodel.EventRestart, Server: 3},
			zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 3, Source: zabmodel.SourceStartup})
		s.apply(3, z(1, 1), zabmodel.SourceStartup)
		s.add(zabmodel.Event{Kind: zabmodel.EventElected, Server: 3, Role: zabmodel.Following, Leader: 1, Epoch: 1},
			zabmodel.Event{Kind: zabmodel.EventLearnerSync, Server: 1, Learner: 3, Zxid: z(1, 1)})
		s.log(2, z(1, 2)).fsync(2).add(zabmodel.Event{Kind: zabmodel.EventAck, Server: 2, Zxid: z(1, 2)})
		s.commit(1, z(1, 2))
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
			zabmodel.Event{Kind: zabmodel.EventTruncate, Server: 3, Zxid: z(1, 1)},
			zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 3, Source: zabmodel.SourceTruncate})
		s.apply(3, z(1, 1), zabmodel.SourceTruncate)
		s.add(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3})
		s.requireClean(t, threeVoters)
	})
	t.Run("the dead leader process lacked the committed transaction", func(t *testing.T) {
		// Leader 1 commits 1:2 with follower 2 only and dies; server 3, which lacks 1:2, wrongly
		// synchronizes server 2 with a TRUNC to 1:1 and dies before the TRUNC arrives.
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3).write(1, z(1, 2), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3})
		s.elect(2, 3, 2).add(zabmodel.Event{Kind: zabmodel.EventLearnerSync, Server: 3, Learner: 2, Zxid: z(1, 1)},
			zabmodel.Event{Kind: zabmodel.EventCrash, Server: 3},
			zabmodel.Event{Kind: zabmodel.EventTruncate, Server: 2, Zxid: z(1, 1)})
		v := s.requireViolation(t, threeVoters, CommittedLogDurability)
		assert.Equal(t, []int64{2, 3}, v.Servers)
		assert.Equal(t, []int64{z(1, 2), z(1, 1)}, v.Zxids)
	})
}
