package zab

import (
	"testing"

	"github.com/zabsim/zabsim/zabmodel"
)

// fuzzySnap has server 3 join leader 1 of epoch 1 late and get a SNAP streamed from the live tree:
// the leader computes the sync at 1:2, commits 1:3 before it reads the SNAP's zxid and 1:4 during
// the walk, so the learner loads a SNAP named 1:3 whose tree also reflects 1:4, and gets the
// COMMITs of 1:3 and 1:4 forwarded behind it. then adds what the learner does with them.
func fuzzySnap(then func(s *script)) *script {
	s := newScript().start(1, 1, 2).write(1, z(1, 1), 2).write(1, z(1, 2), 2)
	s.add(zabmodel.Event{Kind: zabmodel.EventElected, Server: 3, Role: zabmodel.Following, Leader: 1},
		zabmodel.Event{Kind: zabmodel.EventAcceptedEpoch, Server: 3, Epoch: 1},
		zabmodel.Event{Kind: zabmodel.EventLearnerSync, Server: 1, Learner: 3, Zxid: z(1, 2)})
	s.write(1, z(1, 3), 2).write(1, z(1, 4), 2)
	s.add(zabmodel.Event{Kind: zabmodel.EventLearnerSync, Server: 1, Learner: 3, Zxid: z(1, 4), Source: zabmodel.SourceSnap},
		zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 3, Zxid: z(1, 3), Source: zabmodel.SourceSnap})
	then(s)
	return s
}

func digestMismatch(sid, zxid int64) zabmodel.Event {
	return zabmodel.Event{Kind: zabmodel.EventDigestMismatch, Server: sid, Zxid: zxid}
}

func TestFuzzySnap(t *testing.T) {
	t.Run("the learner applies again what the SNAP held and mismatches digests until the walk's end", func(t *testing.T) {
		fuzzySnap(func(s *script) {
			s.apply(3, z(1, 3), zabmodel.SourceSync).add(digestMismatch(3, z(1, 3)))
			s.apply(3, z(1, 4), zabmodel.SourceSync)
			s.add(zabmodel.Event{Kind: zabmodel.EventSnapshot, Server: 3, Zxid: z(1, 4)})
			s.ackNewLeader(1, 1, 3)
			s.add(zabmodel.Event{Kind: zabmodel.EventServing, Server: 3, Role: zabmodel.Following, Epoch: 1})
		}).requireClean(t, threeVoters)
	})
	t.Run("a digest mismatch once the walk's last transaction is applied", func(t *testing.T) {
		fuzzySnap(func(s *script) {
			s.apply(3, z(1, 3), zabmodel.SourceSync)
			s.apply(3, z(1, 4), zabmodel.SourceSync).add(digestMismatch(3, z(1, 4)))
		}).requireViolation(t, threeVoters, DigestMismatch)
	})
	t.Run("applying again a transaction from before the sync", func(t *testing.T) {
		fuzzySnap(func(s *script) {
			s.apply(3, z(1, 2), zabmodel.SourceSync)
		}).requireViolation(t, threeVoters, TotalOrder)
	})
	t.Run("applying another transaction under a zxid the SNAP held", func(t *testing.T) {
		fuzzySnap(func(s *script) {
			s.add(zabmodel.Event{Kind: zabmodel.EventApply, Server: 3, Zxid: z(1, 3), Hash: hashOf(z(1, 3)) ^ 1, Source: zabmodel.SourceSync})
		}).requireViolation(t, threeVoters, TotalOrder)
	})
	t.Run("without the walk's end the SNAP is not fuzzy", func(t *testing.T) {
		s := newScript().start(1, 1, 2).write(1, z(1, 1), 2).write(1, z(1, 2), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventElected, Server: 3, Role: zabmodel.Following, Leader: 1},
			zabmodel.Event{Kind: zabmodel.EventAcceptedEpoch, Server: 3, Epoch: 1},
			zabmodel.Event{Kind: zabmodel.EventLearnerSync, Server: 1, Learner: 3, Zxid: z(1, 2)})
		s.write(1, z(1, 3), 2)
		s.add(zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 3, Zxid: z(1, 3), Source: zabmodel.SourceSnap})
		s.apply(3, z(1, 3), zabmodel.SourceSync)
		s.requireViolation(t, threeVoters, TotalOrder)
	})
}
