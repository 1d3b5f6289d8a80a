// Package quorum is ZooKeeper's majority rule, QuorumMaj (org.apache.zookeeper.server.quorum.
// flexible.QuorumMaj), in the one place every part of zabsim takes it from: the election
// (FastLeaderElection's termination through SyncedLearnerTracker), the leader's discovery,
// synchronization and broadcast (Leader.waitForEpochAck, waitForNewLeaderAck, tryToCommit), the
// ZAB invariants in checkers/zab, the availability monitor in scenarios and the model checker.
//
// QuorumMaj sets half = votingMembers.size() / 2 (integer division) and calls a set of voters a
// quorum when its size exceeds half. An ensemble of any size follows from it, odd or even:
//
//	voters          1  2  3  4  5  6  7
//	smallest quorum 1  2  2  3  3  4  4
//	failures borne  0  0  1  1  2  2  3
//
// An even ensemble tolerates no more failures than the odd one below it, and a split into two
// equal halves leaves neither half a quorum (QuorumPeerConfig warns "No server failure will be
// tolerated" for 2 voters and "Non-optimal configuration, consider an odd number of servers" for
// other even counts). Observers never count: a caller counts only voters, as Leader.isParticipant
// and SyncedLearnerTracker.addAck do.
//
// Usage:
//
//	m := quorum.Majority(4)
//	m.Contains(2)      // false: 2 of 4 is not more than half
//	m.Contains(3)      // true
//	m.Size()           // 3, the fewest voters that form a quorum
//	m.FaultTolerance() // 1, the voters that may fail with a quorum left
package quorum
