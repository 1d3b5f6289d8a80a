package zab

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel"
)

func TestLeadership(t *testing.T) {
	t.Run("successive epochs pass", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3)
		s.add(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 1})
		s.elect(2, 2, 3).ackNewLeader(2, 2, 3).establish(2, 2, 3).write(2, z(2, 1), 3)
		s.requireClean(t, threeVoters)
	})
	t.Run("two servers establish one epoch", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3)
		s.add(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 2, Epoch: 1})
		v := s.requireViolation(t, threeVoters, Leadership)
		assert.Equal(t, []int64{2, 1}, v.Servers)
		assert.Equal(t, int64(1), v.Epoch)
	})
	t.Run("a standalone server establishes its epoch at every start", func(t *testing.T) {
		standalone := Config{Voters: []int64{1}}
		established := zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 1}
		s := newScript().add(established).write(1, z(0, 1)).write(1, z(0, 2))
		s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
			zabmodel.Event{Kind: zabmodel.EventRestart, Server: 1},
			zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 1, Source: zabmodel.SourceStartup})
		s.apply(1, z(0, 1), zabmodel.SourceStartup).apply(1, z(0, 2), zabmodel.SourceStartup)
		s.add(established).write(1, z(0, 3))
		s.requireClean(t, standalone)
		s.requireViolation(t, threeVoters, Leadership) // A quorum's epoch is never established twice.
		s.add(established)                             // Nor a standalone one within one process.
		s.requireViolation(t, standalone, Leadership)
	})
	t.Run("two epoch quorums for one epoch", func(t *testing.T) {
		s := newScript().elect(1, 1, 2).elect(1, 3, 2)
		s.requireViolation(t, threeVoters, Leadership)
	})
	t.Run("a proposal from a server that is not established", func(t *testing.T) {
		s := newScript().elect(1, 1, 2, 3) // Discovery only: no NEWLEADER quorum yet.
		s.add(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 1, Zxid: z(1, 1), Hash: 1})
		s.requireViolation(t, threeVoters, Leadership)
	})
}

func TestIntegrity(t *testing.T) {
	t.Run("an unproposed transaction is applied", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3)
		s.add(zabmodel.Event{Kind: zabmodel.EventApply, Server: 3, Zxid: z(1, 2), Hash: 99, Source: zabmodel.SourceFastForward})
		v := s.requireViolation(t, threeVoters, Integrity)
		assert.Equal(t, []int64{z(1, 2)}, v.Zxids)
	})
	t.Run("a transaction is logged under another zxid", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).propose(1, z(1, 1))
		s.add(zabmodel.Event{Kind: zabmodel.EventLog, Server: 2, Zxid: z(1, 2), Hash: hashOf(z(1, 1))})
		s.requireViolation(t, threeVoters, Integrity)
	})
}

func TestAgreement(t *testing.T) {
	t.Run("two commits of one zxid disagree", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3)
		s.add(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Zxid: z(1, 1), Hash: 5})
		s.requireViolation(t, threeVoters, Agreement)
	})
	t.Run("a repeated commit of the same transaction passes", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3)
		s.add(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Zxid: z(1, 1), Hash: hashOf(z(1, 1))})
		s.requireClean(t, threeVoters)
	})
	t.Run("an established history disagrees with a commit", func(t *testing.T) {
		// Two leaders in epoch 1 (a Leadership violation too) propose different transactions as
		// 1:1; the first commits its own, the second establishes epoch 2 with the other.
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 3, Epoch: 1},
			zabmodel.Event{Kind: zabmodel.EventPropose, Server: 3, Zxid: z(1, 1), Hash: 77},
			zabmodel.Event{Kind: zabmodel.EventLog, Server: 3, Zxid: z(1, 1), Hash: 77},
			zabmodel.Event{Kind: zabmodel.EventFsync, Server: 3, Count: 1},
			zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3})
		s.elect(2, 3).establish(2, 3)
		s.requireViolation(t, threeVoters, Agreement)
	})
}

func TestPrefixConsistency(t *testing.T) {
	t.Run("a commit-time apply of an uncommitted transaction", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).propose(1, z(1, 1), 2, 3)
		s.apply(2, z(1, 1), zabmodel.SourceCommit)
		s.requireViolation(t, threeVoters, PrefixConsistency)
	})
	t.Run("serving with a transaction that lost to a committed one", func(t *testing.T) {
		// Leader 1 of epoch 1 proposes 1:1 = A, logged only at itself; then server 3, also
		// claiming epoch 1, gets 1:1 = B committed with server 2. Server 1 fast-forwards A and
		// serves again without synchronizing.
		s := newScript().start(1, 1, 2)
		s.propose(1, z(1, 1)).fsync(1).apply(1, z(1, 1), zabmodel.SourceFastForward)
		s.add(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 3, Epoch: 1},
			zabmodel.Event{Kind: zabmodel.EventPropose, Server: 3, Zxid: z(1, 1), Hash: 77},
			zabmodel.Event{Kind: zabmodel.EventCommit, Server: 3, Zxid: z(1, 1), Hash: 77},
			zabmodel.Event{Kind: zabmodel.EventServing, Server: 1, Role: zabmodel.Leading, Epoch: 1})
		s.requireViolation(t, threeVoters, PrefixConsistency)
	})
}

func TestTotalOrder(t *testing.T) {
	s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3).write(1, z(1, 2), 2, 3)
	s.requireClean(t, threeVoters)
	s.apply(3, z(1, 1), zabmodel.SourceFastForward)
	v := s.requireViolation(t, threeVoters, TotalOrder)
	assert.Equal(t, []int64{z(1, 2), z(1, 1)}, v.Zxids)
}

// TestGlobalPrimaryOrder builds the ZOOKEEPER-1277 overflow: the leader of epoch 1 wraps its
// counter into epoch 2's zxids, so a follower applies a transaction of epoch 1 after one of
// epoch 2 although the zxids increase.
func TestGlobalPrimaryOrder(t *testing.T) {
	s := newScript().start(1, 1, 2, 3)
	s.add(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 1, Zxid: z(2, 2), Hash: hashOf(z(2, 2))})
	s.add(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2})
	s.elect(2, 2, 3).ackNewLeader(2, 2, 3).establish(2, 2, 3)
	s.add(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 2, Zxid: z(2, 1), Hash: hashOf(z(2, 1))})
	s.apply(3, z(2, 1), zabmodel.SourceFastForward).apply(3, z(2, 2), zabmodel.SourceFastForward)
	v := s.requireViolation(t, threeVoters, GlobalPrimaryOrder)
	assert.Equal(t, []int64{3}, v.Servers)
}

func TestLocalPrimaryOrder(t *testing.T) {
	t.Run("a skipped counter", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3)
		s.add(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 1, Zxid: z(1, 3), Hash: 3})
		s.requireViolation(t, threeVoters, LocalPrimaryOrder)
	})
	t.Run("a first proposal that does not start at counter 1", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3)
		s.add(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 1, Zxid: z(1, 2), Hash: 3})
		s.requireViolation(t, threeVoters, LocalPrimaryOrder)
	})
	t.Run("a proposal in another epoch", func(t *testing.T) {
		s := newScript().start(1, 1, 2, 3)
		s.add(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 1, Zxid: z(2, 1), Hash: 3})
		s.requireViolation(t, threeVoters, LocalPrimaryOrder)
	})
	t.Run("the counter reaches 0xffffffff", func(t *testing.T) {
		config := threeVoters
		config.InitialZxidCounter = 0xfffffffd
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 0xfffffffe), 2, 3)
		s.requireClean(t, config)
		s.propose(1, z(1, 0xffffffff), 2, 3)
		v := s.requireViolation(t, config, LocalPrimaryOrder)
		assert.Contains(t, v.Explanation, "ZOOKEEPER-1277")
	})
}

func TestPrimaryIntegrity(t *testing.T) {
	s := newScript().start(1, 1, 2, 3)
	s.propose(1, z(1, 1), 2, 3).propose(1, z(1, 2), 2, 3).fsync(1).fsync(2).fsync(3)
	s.commit(1, z(1, 1), 2).commit(1, z(1, 2), 2)
	s.requireClean(t, threeVoters)
	// Server 3 missed the commit of 1:1 and applies 1:2.
	s.apply(3, z(1, 2), zabmodel.SourceCommit)
	v := s.requireViolation(t, threeVoters, PrimaryIntegrity)
	assert.Equal(t, []int64{z(1, 2), z(1, 1)}, v.Zxids)
}

func TestNoVoteCircle(t *testing.T) {
	vote := func(server, leader, round int64) zabmodel.Event {
		return zabmodel.Event{Kind: zabmodel.EventVote, Server: server, Leader: leader, Zxid: leader, Round: round}
	}
	t.Run("votes that only improve pass", func(t *testing.T) {
		s := newScript().add(vote(1, 1, 1), vote(1, 2, 1), vote(1, 3, 1), vote(1, 3, 1))
		// A new round starts over. Moving from server 2 to oneself and back to server 2 is no
		// circle: as in the TLA+ spec, votes for oneself are not recorded.
		s.add(vote(1, 2, 2))
		s.add(vote(1, 1, 3), vote(1, 2, 3), vote(1, 1, 3), vote(1, 2, 3))
		s.requireClean(t, threeVoters)
	})
	t.Run("returning to an abandoned vote", func(t *testing.T) {
		s := newScript().add(vote(1, 1, 4), vote(1, 2, 4), vote(1, 3, 4), vote(1, 2, 4))
		v := s.requireViolation(t, threeVoters, NoVoteCircle)
		assert.Equal(t, []int64{1, 2}, v.Servers)
	})
}

// TestEstablishmentCommitsWhatTheLeaderReports: the checker commits what a leader's
// EventEstablished reports (its history through Through), and a report that stops short of the
// history the leader's own events built is an impossible event.
func TestEstablishmentCommitsWhatTheLeaderReports(t *testing.T) {
	// Leader 1 of epoch 1 commits 1:1 everywhere and 1:2 with server 2; 1:3 reaches only server
	// 2's log. Server 2 then leads epoch 2 with server 3: its history is 1:1, 1:2 (applied) and
	// 1:3 (logged only).
	build := func() *script {
		s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3).write(1, z(1, 2), 2)
		s.propose(1, z(1, 3), 2).fsync(2)
		s.add(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2})
		s.elect(2, 2, 3).log(3, z(1, 2)).log(3, z(1, 3)).fsync(3) // The DIFF.
		return s.ackNewLeader(2, 2, 3)
	}
	committed := func(s *script) []int64 {
		var zxids []int64
		config := threeVoters
		config.OnCommit = func(zxid int64, _ uint64) { zxids = append(zxids, zxid) }
		violations, err := Check(config, s.events)
		require.NoError(t, err)
		require.Empty(t, violations)
		return zxids
	}
	t.Run("the whole history, logged tail included", func(t *testing.T) {
		s := build().establish(2, 2, 3)
		require.Equal(t, z(1, 3), s.events[len(s.events)-3].Through, "the script reports the history's last zxid")
		assert.Equal(t, []int64{z(1, 1), z(1, 2), z(1, 3)}, committed(s))
	})
	t.Run("a report beyond the history commits nothing more", func(t *testing.T) {
		s := build().addExact(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 2, Epoch: 2, Through: z(2, 0)})
		assert.Equal(t, []int64{z(1, 1), z(1, 2), z(1, 3)}, committed(s))
	})
	t.Run("a leader that under-reports", func(t *testing.T) {
		s := build().addExact(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 2, Epoch: 2, Through: z(1, 2)})
		v := s.requireViolation(t, threeVoters, EventStream)
		assert.Equal(t, []int64{z(1, 3)}, v.Zxids)
		assert.Equal(t, []int64{2}, v.Servers)
	})
	t.Run("a leader that under-reports a committed transaction", func(t *testing.T) {
		// Reporting only 1:1 leaves out the committed 1:2 as well: what the leader says it
		// commits must hold every committed transaction.
		s := build().addExact(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 2, Epoch: 2, Through: z(1, 1)})
		violations := s.check(t, threeVoters)
		require.Len(t, violations, 2, "%v", violations)
		assert.Equal(t, EventStream, violations[0].Invariant)
		assert.Equal(t, LeaderLogCompleteness, violations[1].Invariant)
		assert.Equal(t, []int64{z(1, 2)}, violations[1].Zxids)
	})
}
