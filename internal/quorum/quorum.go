package quorum

import "fmt"

// Majority is QuorumMaj for an ensemble of that many voters (participants; observers are not
// voters). Its methods panic on a count below one, which no validated configuration has.
type Majority int

// half is QuorumMaj.half: votingMembers.size() / 2, rounded down.
func (m Majority) half() int {
	if m < 1 {
		panic(fmt.Sprintf("quorum: a majority of %d voters", int(m)))
	}
	return int(m) / 2
}

// Contains is QuorumMaj.containsQuorum: whether count distinct voters are more than half of them.
// The caller counts each voter once and no observer, as the Java's Set of voting members does.
func (m Majority) Contains(count int) bool { return count > m.half() }

// Size is the fewest voters that form a quorum: half + 1.
func (m Majority) Size() int { return m.half() + 1 }

// FaultTolerance is how many voters may be down or cut off with a quorum still left: the voters
// beyond the smallest quorum.
func (m Majority) FaultTolerance() int { return int(m) - m.Size() }
