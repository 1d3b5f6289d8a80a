package zab

import (
	"fmt"
	"strings"
	"time"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// InvariantCount is how many times one invariant was found violated (only the first is kept).
type InvariantCount struct {
	Invariant Invariant
	Count     int64
}

// KindCount is how many events of one kind the checker saw.
type KindCount struct {
	Kind  zabmodel.EventKind
	Count int64
}

// Summary describes a checker's run.
type Summary struct {
	// Violations counts every violation per invariant, in the order of Invariants().
	Violations []InvariantCount
	// Events is the number of events seen, and EventsByKind their split by kind (kinds never seen
	// are left out).
	Events       int64
	EventsByKind []KindCount
	// Proposals and Committed count the distinct proposed and committed transactions.
	Proposals, Committed int
	// First and Last are the virtual times of the first and last events seen.
	First, Last clock.Time
	// HostTime is the host time spent checking, estimated from one event in every
	// HostTimeSampleEvery, and only if Config.Stopwatch was set.
	HostTime time.Duration
	// Halted says the checker stopped checking because a budget was exceeded.
	Halted bool
}

// Summary returns the counters of the run so far.
func (c *Checker) Summary() Summary {
	s := Summary{
		Events:    c.events,
		Proposals: c.proposals.len(),
		Committed: len(c.committedOrder),
		First:     c.first,
		Last:      c.last,
		HostTime:  c.hostTime,
		Halted:    c.halted,
	}
	for i, inv := range invariantOrder {
		s.Violations = append(s.Violations, InvariantCount{Invariant: inv, Count: c.violationCounts[i]})
	}
	for kind, count := range c.eventsByKind {
		if count > 0 {
			s.EventsByKind = append(s.EventsByKind, KindCount{Kind: zabmodel.EventKind(kind), Count: count})
		}
	}
	return s
}

// Failed reports whether any invariant was violated.
func (s Summary) Failed() bool {
	for _, v := range s.Violations {
		if v.Count > 0 {
			return true
		}
	}
	return false
}

// String renders the summary in a few lines.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "zab invariants: %d events from %s to %s, %d proposals, %d committed",
		s.Events, s.First, s.Last, s.Proposals, s.Committed)
	if s.HostTime > 0 {
		fmt.Fprintf(&b, ", %s host time", s.HostTime)
		if s.Events > 0 {
			fmt.Fprintf(&b, " (%d ns/event)", s.HostTime.Nanoseconds()/s.Events)
		}
	}
	if s.Halted {
		b.WriteString(", HALTED (budget exceeded)")
	}
	b.WriteString("\n  violations:")
	found := false
	for _, v := range s.Violations {
		if v.Count > 0 {
			fmt.Fprintf(&b, " %s=%d", v.Invariant, v.Count)
			found = true
		}
	}
	if !found {
		b.WriteString(" none")
	}
	b.WriteString("\n  events:")
	for _, k := range s.EventsByKind {
		fmt.Fprintf(&b, " %s=%d", k.Kind, k.Count)
	}
	return b.String()
}
