package lockmodel

import (
	"github.com/zabsim/zabsim/internal/switches"
)

// SelfTest names a recipe self-test switch: a deliberate fault in a recipe that exists only to show
// that a lock checker fires on it, end to end. Self-tests are not bugs of the bug zoo (BUGS.md):
// they are not claimed to be real, are never hunted for, and are listed apart (simrun bugs lists
// the zoo; --selftest NAME switches one on).
type SelfTest uint32

// The recipe self-tests. Each is off unless switched on.
const (
	// SelfTestLatchKeepsLeadership: LeaderLatch as it was before Curator 5.4.0: checkLeadership
	// does not give up leadership when its own node is no longer first (CURATOR-653), nor reads
	// its node's owner before leading (CURATOR-696, 5.7.0, came later still). A participant
	// whose retried create replaced its node keeps leading while another is granted (election
	// seed 38): lock/exclusive-belief-fenced (or lock/exclusive-belief without fencing) fires.
	SelfTestLatchKeepsLeadership SelfTest = 1 << iota
	// SelfTestLatchYields: a LeaderLatch participant whose node is first, with others queued,
	// waits one base sleep of the retry policy and then abandons its node and queues again,
	// instead of leading: leadership passes round the queue with nobody ever leading, while every
	// session is healthy. lock/churn fires.
	SelfTestLatchYields
	// SelfTestLatchNoOwnerCheck: LeaderLatch as Curator 5.4.0 to 5.6.x have it: it gives up
	// leadership when its node is not first, but leads without reading its node's owner
	// (CURATOR-696 came in 5.7.0). With one ZooKeeper session per recipe session no checker can
	// tell it from 5.7.0; it replays a seed recorded before the owner check (election seed 38) up
	// to the moment 5.4.0's check gives leadership up, and is a control for latch-keeps-leadership.
	SelfTestLatchNoOwnerCheck
)

var selfTestTable = switches.NewTable("recipe self-test",
	switches.Switch[SelfTest]{Bit: SelfTestLatchKeepsLeadership, Name: "latch-keeps-leadership",
		Description: "LeaderLatch as before Curator 5.4.0: it keeps leadership when its node is no longer first (CURATOR-653); lock/exclusive-belief fires"},
	switches.Switch[SelfTest]{Bit: SelfTestLatchYields, Name: "latch-yields",
		Description: "a LeaderLatch participant that is first requeues instead of leading while others wait; lock/churn fires"},
	switches.Switch[SelfTest]{Bit: SelfTestLatchNoOwnerCheck, Name: "latch-no-owner-check",
		Description: "LeaderLatch as Curator 5.4.0-5.6.x: no owner check before leading (a control: no checker fires)"},
)

// Table returns the recipe self-tests' table, which names the switches of a SelfTests set.
func (SelfTest) Table() *switches.Table[SelfTest] { return &selfTestTable }

// SelfTests is a set of recipe self-test switches (Has, With, Union, Empty, Names, String,
// Validate); the zero value switches nothing on.
type SelfTests = switches.Set[SelfTest]

// SelfTestInfo describes one self-test for listings (simrun selftests): its Bit, Name and
// Description.
type SelfTestInfo = switches.Switch[SelfTest]

// SelfTestList returns the recipe self-tests in table order.
func SelfTestList() []SelfTestInfo { return selfTestTable.List() }

// ParseSelfTests parses a comma-separated list of recipe self-test names; "" and "none" are the
// empty set. An unknown name is an error that lists the known ones.
func ParseSelfTests(list string) (SelfTests, error) {
	return switches.ParseSet[SelfTest](list)
}
