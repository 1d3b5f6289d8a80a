package zabmodel

import (
	"github.com/zabsim/zabsim/internal/switches"
)

// SelfTest names a deliberate break of the server that only a client-visible checker can see. The
// self-tests are not bugs ZooKeeper had (those are the bug zoo, Bugs): they exist to prove the
// harness's own wiring end to end, each one caught by its own checker in a sweep with the white-box
// ZAB checker switched off. None changes the ZAB protocol, so none breaks a ZAB invariant.
type SelfTest uint32

// The self-test switches. Each is off unless switched on (Config.SelfTests).
const (
	// SelfTestAckFailedWrite: a server answers a write whose committed transaction is an error
	// (a create of an existing node, a set or delete of a missing node or at a wrong version) as if
	// it had succeeded. The client holds an acknowledgement for a write that never committed:
	// linearizability (register, queue or tree model, by workload) sees it.
	SelfTestAckFailedWrite SelfTest = 1 << iota
	// SelfTestStaleRead: a server stamps each read's reply with the zxid before its last applied
	// transaction, so that a session sees its server's state go back (sequential consistency:
	// read-state, monotonic-zxid).
	SelfTestStaleRead
	// SelfTestEarlySync: a follower or observer answers sync at once, from its own state, without
	// waiting for the leader's reply; a read after it may miss writes the leader had committed when
	// the sync was called (sequential consistency: read-after-sync).
	SelfTestEarlySync
	// SelfTestDropWatch: a server never delivers watch notifications: a client that set a watch
	// misses the change while its session lives, and sees the data that the event announces first
	// (the watch checker: watch-before-data, watch-missed).
	SelfTestDropWatch
	// SelfTestNoSessionRenewal: the session tracker never renews a session: each expires three of
	// its timeouts after the tracker learned of it, however healthy its client is (the session
	// checker: wrongful-expiry).
	SelfTestNoSessionRenewal
	// SelfTestHoldLearners: every learner handler, once a quorum acknowledged NEWLEADER, holds its
	// learner for ever instead of sending UPTODATE, so that no learner ever serves while every
	// voter is up and connected (the availability checker: leader-within-bound).
	SelfTestHoldLearners
)

var selfTestTable = switches.NewTable("self-test",
	switches.Switch[SelfTest]{Bit: SelfTestAckFailedWrite, Name: "ack-failed-write", Description: "a failed write is acknowledged as done (linearizability)"},
	switches.Switch[SelfTest]{Bit: SelfTestStaleRead, Name: "stale-read", Description: "reads are stamped with the zxid before the server's last one (sequential-consistency)"},
	switches.Switch[SelfTest]{Bit: SelfTestEarlySync, Name: "early-sync", Description: "a learner answers sync without waiting for the leader (sequential-consistency: read-after-sync)"},
	switches.Switch[SelfTest]{Bit: SelfTestDropWatch, Name: "drop-watch", Description: "watch notifications are never delivered (watches: watch-before-data, watch-missed)"},
	switches.Switch[SelfTest]{Bit: SelfTestNoSessionRenewal, Name: "no-session-renewal", Description: "sessions are never renewed and expire however healthy (sessions)"},
	switches.Switch[SelfTest]{Bit: SelfTestHoldLearners, Name: "hold-learners", Description: "a leader never releases its learners after NEWLEADER, so no learner serves (availability)"},
)

// Table returns the self-tests' table, which names the switches of a SelfTests set.
func (SelfTest) Table() *switches.Table[SelfTest] { return &selfTestTable }

// SelfTests is a set of self-test switches (Has, With, Union, Empty, Names, String, Validate); the
// zero value switches nothing on.
type SelfTests = switches.Set[SelfTest]

// SelfTestInfo describes one self-test for listings (simrun selftests): its Bit, Name and
// Description.
type SelfTestInfo = switches.Switch[SelfTest]

// SelfTestList returns the self-tests in order.
func SelfTestList() []SelfTestInfo { return selfTestTable.List() }

// ParseSelfTests parses a comma-separated list of self-test names; "" and "none" are the empty
// set. An unknown name is an error that lists the known ones.
func ParseSelfTests(list string) (SelfTests, error) {
	return switches.ParseSet[SelfTest](list)
}
