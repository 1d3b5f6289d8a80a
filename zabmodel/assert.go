package zabmodel

import "fmt"

// Assertions. The checkers (checkers/zab and the client-visible ones) judge a run from the outside;
// the invariants below are asserted where they must hold, in the manner of TigerBeetle's
// assertions, because no bug switch is meant to break them: a broken one is a bug of the model
// itself, not a finding about ZooKeeper. A failed assertion ends the step at once (nothing after it
// runs) and ends the run as a failure whose error is an *AssertionError, so that a sweep reports it
// with its seed and its trace like any checker's violation, never as a Go panic.

// Invariants asserted in the code.
const (
	// InvariantProposalOrder: the zxids of one leader's proposals strictly rise.
	InvariantProposalOrder = "proposal-order"
	// InvariantCommitFrontier: the last zxid an established leader committed only grows.
	InvariantCommitFrontier = "commit-frontier"
	// InvariantReplayedLog: a txn log replayed from disk holds, in strictly rising zxid order,
	// records whose contents are the transactions appended under those zxids.
	InvariantReplayedLog = "replayed-log"
	// InvariantAckDurable: a learner acknowledges a proposal only once its txn log holds it durably.
	InvariantAckDurable = "ack-durable"
	// InvariantCoreView: a core's expectation of an effect's outcome (the sync processor's, that the
	// log takes an append) is what the driver's storage did.
	InvariantCoreView = "core-view"
)

// AssertionError is the failure of an invariant asserted in a server's code.
type AssertionError struct {
	Server    int64
	Invariant string
	Detail    string
}

func (e *AssertionError) Error() string {
	return fmt.Sprintf("zabmodel: assertion %s failed on server %d: %s", e.Invariant, e.Server, e.Detail)
}

// assert checks an invariant: if ok is false, the host ends the step and the run (host.fail).
func (p *peer) assert(ok bool, invariant, format string, args ...any) {
	if !ok {
		p.h.fail(&AssertionError{Server: p.sid, Invariant: invariant, Detail: fmt.Sprintf(format, args...)})
	}
}
