package zab

import (
	"github.com/zabsim/zabsim/zabmodel"
)

// fuzzyWindow is what a learner's tree may hold beyond its applied history after a SNAP streamed
// from the leader's live tree (LearnerHandler.run serializes it after Leader.startForwarding, while
// the leader goes on applying commits). The SNAP is named by the zxid the leader's tree had when
// the walk started, and its content is that prefix of the leader's applied history; but each node
// was written as the walk found it, so the tree also reflects some transactions up to the leader's
// last applied zxid when the walk ended (to). Every transaction the leader applied after it
// computed the synchronization (after from) is queued behind the SNAP, so the learner applies
// again those it already holds, and its tree digest differs from the leader's until it has applied
// everything up to to. Java tolerates both (DataTree.processTxn is idempotent on replay; the
// learner logs the digest mismatches); the checker excuses exactly these and nothing else: an apply
// of a transaction the applied history holds already, with the same hash, with a zxid in (from,
// to], and a digest mismatch at a zxid in (from, to). From to on, the learner's tree must be the
// leader's again, so a replay that is not idempotent is still a DigestMismatch.
type fuzzyWindow struct {
	from, to int64
}

func (w fuzzyWindow) holds(zxid int64) bool { return w.from < zxid && zxid <= w.to }

// onSnapStreamed records the end of a SNAP's walk on the leader (an EventLearnerSync with
// SourceSnap): where the fuzzy part of the learner's snapshot ends.
func (c *Checker) onSnapStreamed(leader *server, e zabmodel.Event) {
	learner, ok := c.servers[e.Learner]
	if !ok || !learner.syncing || learner.leader.sid != leader.sid || !leader.up {
		return
	}
	learner.leader.snapTo = lastZxid(leader.applied)
}

// startFuzzyWindow opens the window of a SNAP just loaded by s, from its leader binding.
func (c *Checker) startFuzzyWindow(s *server) {
	if b := s.leader; b.known && b.snapTo > b.snapFrom {
		s.fuzzy = fuzzyWindow{from: b.snapFrom, to: b.snapTo}
	}
}

// excusedDuplicate reports whether applying t again, at or below the last applied zxid, is the
// re-apply a fuzzy SNAP causes.
func (s *server) excusedDuplicate(t txn) bool {
	return s.fuzzy.holds(t.zxid) && contains(s.applied, t)
}

// excusedDigestMismatch reports whether a digest mismatch at zxid lies in the fuzzy part of a SNAP.
func (s *server) excusedDigestMismatch(zxid int64) bool {
	return s.fuzzy.holds(zxid) && zxid < s.fuzzy.to
}
