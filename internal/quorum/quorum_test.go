package quorum

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

// TestMajorityIsQuorumMaj checks the rule against ZooKeeper's for one to seven voters, written out
// from QuorumMaj: half = votingMembers.size() / 2 and containsQuorum(set) = set.size() > half. The
// table is the Java's arithmetic done by hand, so that a change of the Go expression cannot pass
// by agreeing with itself.
func TestMajorityIsQuorumMaj(t *testing.T) {
	smallest := map[int]int{1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 6: 4, 7: 4}
	tolerated := map[int]int{1: 0, 2: 0, 3: 1, 4: 1, 5: 2, 6: 2, 7: 3}
	for voters := 1; voters <= 7; voters++ {
		m := Majority(voters)
		assert.Equal(t, smallest[voters], m.Size(), "smallest quorum of %d voters", voters)
		assert.Equal(t, tolerated[voters], m.FaultTolerance(), "failures %d voters bear", voters)
		for count := 0; count <= voters; count++ {
			assert.Equal(t, count >= smallest[voters], m.Contains(count), "%d of %d voters", count, voters)
		}
	}
}

// TestEvenSplitHasNoQuorum is the case even ensembles add: two equal halves, neither a quorum.
func TestEvenSplitHasNoQuorum(t *testing.T) {
	for _, voters := range []int{2, 4, 6} {
		assert.False(t, Majority(voters).Contains(voters/2), "half of %d voters", voters)
		assert.True(t, Majority(voters).Contains(voters/2+1), "half of %d voters and one", voters)
	}
}

// TestQuorumsIntersect checks the property every ZAB invariant rests on: any two quorums of the
// same ensemble share a voter, so two disjoint groups can never both have one.
func TestQuorumsIntersect(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		voters := rapid.IntRange(1, 64).Draw(t, "voters")
		a := rapid.IntRange(0, voters).Draw(t, "a")
		b := rapid.IntRange(0, voters-a).Draw(t, "b") // a and b disjoint: together at most voters
		m := Majority(voters)
		if m.Contains(a) && m.Contains(b) {
			t.Fatalf("disjoint groups of %d and %d voters are both quorums of %d", a, b, voters)
		}
	})
}

func TestMajorityOfNoVotersPanics(t *testing.T) {
	assert.Panics(t, func() { Majority(0).Contains(0) })
}
