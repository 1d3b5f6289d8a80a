package checkers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zabsim/zabsim/clock"
)

// Status is a checker's verdict.
type Status uint8

// The verdicts. Unknown is its own outcome and never a pass: the checker could not decide (the
// linearizability search ran out of time, a fact it needs is missing).
const (
	Pass Status = iota + 1
	Violation
	Unknown
	// Skipped means the checker had nothing to judge: no liveness facts, no operations in scope.
	Skipped
	// Known means that every finding is a documented behaviour of the software zabsim models
	// (ZooKeeper 3.8's own, or Curator 5.x's), each naming its class in Finding.Known, and none is
	// a bug of zabsim or of its model. A known finding is reported and counted, and does not fail a
	// run unless the run asks for it (scenarios.Options.FailOnKnown, simrun --fail-on-known), so
	// that the default sweep stays green on the correct build while the behaviour stays visible.
	Known
)

// String names the verdict.
func (s Status) String() string {
	switch s {
	case Pass:
		return "pass"
	case Violation:
		return "VIOLATION"
	case Unknown:
		return "UNKNOWN"
	case Skipped:
		return "skipped"
	case Known:
		return "KNOWN"
	default:
		return "invalid-status"
	}
}

// Names of the checkers, as they appear in results.
const (
	CheckerRegister                   = "linearizability/register"
	CheckerTree                       = "linearizability/tree"
	CheckerQueue                      = "linearizability/queue"
	CheckerSequentialConsistency      = "sequential-consistency"
	CheckerLinearizableReadsAfterSync = "linearizable-reads-after-sync"
	CheckerWatches                    = "watches"
	CheckerSessions                   = "sessions"
	CheckerLiveness                   = "liveness"
)

// maxViolationsPerResult bounds how many violations one result keeps; the rest are only counted.
// One violation usually explains a failure; a flood of them only hides it.
const maxViolationsPerResult = 25

// OpRef names one operation of a history.
type OpRef struct {
	Client string
	Index  int // index into the client's Ops
}

// String renders the reference as "c1#4".
func (r OpRef) String() string { return r.Client + "#" + strconv.Itoa(r.Index) }

// Finding is one violation: which rule broke, an explanation in full sentences, and the clients,
// sessions, operations, zxids and virtual times involved.
type Finding struct {
	Checker  string
	Rule     string
	Message  string
	Clients  []string
	Sessions []int64
	Ops      []OpRef
	Zxids    []int64
	Times    []clock.Time
	// Known, if set, names the class of a documented behaviour of the modelled software that this
	// finding is (see the Known status), e.g. "zk-accepted-epoch-lockout".
	Known string
}

// String renders the finding on one line, for logs and reports.
func (f Finding) String() string {
	return fmt.Sprintf("%s [%s]: %s", f.Checker, f.ruleLabel(), f.Message)
}

// ruleLabel is the rule, with the known class if there is one.
func (f Finding) ruleLabel() string {
	if f.Known != "" {
		return f.Rule + ", known: " + f.Known
	}
	return f.Rule
}

// StatusOf is the verdict that findings make: Pass without any, Known when every one is a known
// behaviour, Violation otherwise.
func StatusOf(findings []Finding) Status {
	switch {
	case len(findings) == 0:
		return Pass
	case slices.ContainsFunc(findings, func(f Finding) bool { return f.Known == "" }):
		return Violation
	}
	return Known
}

// KnownClasses returns the distinct known classes of the findings, in order of appearance.
func KnownClasses(findings []Finding) []string {
	var out []string
	for _, f := range findings {
		if f.Known != "" && !slices.Contains(out, f.Known) {
			out = append(out, f.Known)
		}
	}
	return out
}

// Result is what one checker concluded.
type Result struct {
	Checker string
	Status  Status
	// BeyondGuarantee marks a checker that demands more than ZooKeeper promises (it is opt-in); its
	// violations are findings about the stronger property, not bugs in ZooKeeper's guarantees.
	BeyondGuarantee bool
	// Summary says in one sentence what was checked or why the verdict is what it is.
	Summary string
	// Findings holds up to maxViolationsPerResult violations, in the order found.
	Findings []Finding
	// Dropped counts violations beyond those kept.
	Dropped int
	// Notes record what the checker did that a reader should know: unknown outcomes resolved from
	// the committed log, parts it could not judge.
	Notes []string
	// Checked counts the items examined (operations, reads, events, sessions).
	Checked int
	// Duration is the host time the check took, if the caller supplied a stopwatch.
	Duration time.Duration
}

// Failed reports whether the result is a violation or unknown: anything but a pass, a skip or a
// known finding.
func (r Result) Failed() bool { return r.Status == Violation || r.Status == Unknown }

// String renders the result with its findings, one per line.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", r.Checker, r.Status)
	if r.BeyondGuarantee {
		b.WriteString(" (opt-in, stronger than ZooKeeper promises)")
	}
	if r.Summary != "" {
		b.WriteString(": " + r.Summary)
	}
	for _, f := range r.Findings {
		b.WriteString("\n  - [" + f.ruleLabel() + "] " + f.Message)
	}
	if r.Dropped > 0 {
		fmt.Fprintf(&b, "\n  - and %d more violations", r.Dropped)
	}
	for _, n := range r.Notes {
		b.WriteString("\n  note: " + n)
	}
	return b.String()
}

// collector accumulates the findings of one checker, keeping a bounded number.
type collector struct {
	checker  string
	findings []Finding
	dropped  int
	notes    []string
}

func newCollector(checker string) *collector { return &collector{checker: checker} }

func (c *collector) add(f Finding) {
	f.Checker = c.checker
	if len(c.findings) >= maxViolationsPerResult {
		c.dropped++
		return
	}
	c.findings = append(c.findings, f)
}

// full reports whether the collector keeps no more findings: a checker that finds one then
// need not build its explanation, only count it (see dropped).
func (c *collector) full() bool { return len(c.findings) >= maxViolationsPerResult }

func (c *collector) note(format string, args ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

// result turns the findings into a verdict: a violation if there is any, else pass.
func (c *collector) result(checked int, summary string) Result {
	status := Pass
	if len(c.findings) > 0 {
		status = Violation
	}
	return Result{
		Checker: c.checker, Status: status, Summary: summary, Findings: c.findings,
		Dropped: c.dropped, Notes: c.notes, Checked: checked,
	}
}

// Report aggregates the results of the checkers run on one history.
type Report struct {
	Results []Result
	// Total is the host time all checks took, if the caller supplied a stopwatch.
	Total time.Duration
}

// Failed reports whether any checker found a violation or could not decide.
func (r Report) Failed() bool {
	for _, res := range r.Results {
		if res.Failed() {
			return true
		}
	}
	return false
}

// Findings returns every kept violation of every checker, in result order.
func (r Report) Findings() []Finding {
	var out []Finding
	for _, res := range r.Results {
		out = append(out, res.Findings...)
	}
	return out
}

// Result returns the result of the named checker, and whether it ran.
func (r Report) Result(checker string) (Result, bool) {
	for _, res := range r.Results {
		if res.Checker == checker {
			return res, true
		}
	}
	return Result{}, false
}

// String renders every result, one block per checker, with timings if measured.
func (r Report) String() string {
	var b strings.Builder
	for _, res := range r.Results {
		b.WriteString(res.String())
		if res.Duration > 0 {
			fmt.Fprintf(&b, "\n  took %v", res.Duration)
		}
		b.WriteByte('\n')
	}
	if r.Total > 0 {
		fmt.Fprintf(&b, "checking took %v\n", r.Total)
	}
	return b.String()
}
