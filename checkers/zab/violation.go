package zab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// Invariant names a safety property, with the name the TLA+ specifications of ZooKeeper give it.
type Invariant string

// The invariants, in the order Invariants and the Summary list them.
const (
	// Leadership: at most one server establishes itself (and at most one reaches an epoch quorum)
	// per epoch, and only an established leader proposes.
	Leadership Invariant = "Leadership"
	// Integrity: every transaction a server logs, applies or commits was proposed by a leader.
	Integrity Invariant = "Integrity"
	// Agreement: a committed zxid has one transaction (hash) everywhere.
	Agreement Invariant = "Agreement"
	// PrefixConsistency: what a server applies as committed, or holds when it starts serving,
	// agrees with the committed transactions; a commit-time apply is of a committed transaction.
	PrefixConsistency Invariant = "PrefixConsistency"
	// TotalOrder: zxids strictly increase along one applied history.
	TotalOrder Invariant = "TotalOrder"
	// GlobalPrimaryOrder: the epochs of the leaders that proposed the transactions never decrease
	// along one applied history.
	GlobalPrimaryOrder Invariant = "GlobalPrimaryOrder"
	// LocalPrimaryOrder: a leader's proposals in its epoch carry consecutive counters in that
	// epoch, never 0xffffffff (ZOOKEEPER-1277).
	LocalPrimaryOrder Invariant = "LocalPrimaryOrder"
	// PrimaryIntegrity: a server applying a commit already applied every committed transaction
	// with a smaller zxid.
	PrimaryIntegrity Invariant = "PrimaryIntegrity"
	// CommittedLogDurability: a committed transaction is never truncated, and is always durable on
	// a quorum of voters. A TRUNC may remove one only if the leader that sent it has it or forwards
	// it right behind the TRUNC (it was above the committed log the truncation point came from).
	CommittedLogDurability Invariant = "CommittedLogDurability"
	// LeaderLogCompleteness: an established leader's history holds every committed transaction of
	// its own and earlier epochs (a stale leader does not owe a later epoch's).
	LeaderLogCompleteness Invariant = "LeaderLogCompleteness"
	// ProcessConsistency: a learner that acknowledges NEWLEADER, persists the new currentEpoch or
	// starts serving holds a prefix of its leader's history, durably where it promised so.
	ProcessConsistency Invariant = "ProcessConsistency"
	// MonotonicRead: within one process incarnation, the highest committed zxid a server's tree
	// reflects never decreases (the TLA+ system spec's monotonicRead).
	MonotonicRead Invariant = "MonotonicRead"
	// NoVoteCircle: within one election round, a server never returns to a vote for another server
	// that it moved away from.
	NoVoteCircle Invariant = "NoVoteCircle"
	// DigestMismatch: a server's tree digest differed from the leader's after a transaction.
	DigestMismatch Invariant = "DigestMismatch"
	// TxnThrew: applying a committed transaction made a server's DataTree.processTxn throw an
	// unchecked exception, which no committed transaction may do (ZooKeeper logs it as a severe
	// error; at startup the server cannot load its database).
	TxnThrew Invariant = "TxnThrew"
	// EventStream: an event that no server can produce (an unknown sid, a log append that does not
	// increase the zxid, a tree loaded from a snapshot never taken), or a checker budget exceeded.
	// It points at the model that reports events, not at ZAB.
	EventStream Invariant = "EventStream"
)

// invariantOrder lists every invariant in a fixed order: the Summary's, and the index of each
// invariant's counter.
var invariantOrder = []Invariant{
	Leadership, Integrity, Agreement, PrefixConsistency, TotalOrder, GlobalPrimaryOrder,
	LocalPrimaryOrder, PrimaryIntegrity, CommittedLogDurability, LeaderLogCompleteness,
	ProcessConsistency, MonotonicRead, NoVoteCircle, DigestMismatch, TxnThrew, EventStream,
}

// Invariants returns every invariant in a fixed order.
func Invariants() []Invariant { return slices.Clone(invariantOrder) }

// invariantIndex maps an invariant to its position in invariantOrder, for the per-invariant
// counters.
func invariantIndex(inv Invariant) int {
	for i, known := range invariantOrder {
		if known == inv {
			return i
		}
	}
	panic(fmt.Sprintf("zab: invariant %q is not in invariantOrder", inv))
}

// Violation is one broken invariant, as found at one event.
type Violation struct {
	Invariant Invariant
	// Time is the virtual time of the event at which the violation was found.
	Time clock.Time
	// Servers are the sids involved, the one whose event revealed it first.
	Servers []int64
	// Zxids are the transactions involved (rendered with zabmodel.FormatZxid).
	Zxids []int64
	// Epoch is the epoch concerned, or 0.
	Epoch int64
	// Event is the event at which the violation was found.
	Event zabmodel.Event
	// Explanation says what happened and where to look, in a paragraph.
	Explanation string
}

// String renders the violation on one line, followed by its explanation.
func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %ss: servers %v", v.Invariant, strings.TrimSpace(v.Time.String()), v.Servers)
	if len(v.Zxids) > 0 {
		b.WriteString(" zxids")
		for _, z := range v.Zxids {
			b.WriteString(" " + zabmodel.FormatZxid(z))
		}
	}
	if v.Epoch != 0 {
		fmt.Fprintf(&b, " epoch %d", v.Epoch)
	}
	fmt.Fprintf(&b, " (event: %s)\n  %s", v.Event, v.Explanation)
	return b.String()
}

// finding is what a check hands to report: the parts of a Violation that the check knows.
type finding struct {
	servers []int64
	zxids   []int64
	epoch   int64
}

// report counts a violation of inv at the current event and keeps it if it is the invariant's
// first. The explanation is formatted only then, since later ones are counted and dropped.
func (c *Checker) report(inv Invariant, f finding, format string, args ...any) {
	i := invariantIndex(inv)
	c.violationCounts[i]++
	if c.violationCounts[i] > 1 {
		return
	}
	v := Violation{
		Invariant:   inv,
		Time:        c.current.Time,
		Servers:     f.servers,
		Zxids:       f.zxids,
		Epoch:       f.epoch,
		Event:       c.current,
		Explanation: fmt.Sprintf(format, args...),
	}
	c.violations = append(c.violations, v)
	if c.config.OnViolation != nil {
		c.config.OnViolation(v)
	}
	if c.config.Listener != nil {
		c.config.Listener.Violated(v)
	}
}

// zx renders a zxid for explanations.
func zx(zxid int64) string { return zabmodel.FormatZxid(zxid) }
