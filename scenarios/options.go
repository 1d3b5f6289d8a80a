package scenarios

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
)

// Options describe one run. The zero value of a field means "draw it from the seed" where the field
// says so (swarm testing: every seed gets its own cluster size, workload and fault mix), or the
// documented default otherwise.
type Options struct {
	// Seed decides everything else.
	Seed uint64
	// Servers is the number of voters, 1 to 7, odd or even (a quorum is more than half of them);
	// 0 draws 3 or 5 from the seed (a draw never gives an even ensemble).
	Servers int
	// Observers is 0 to 2; -1 draws it from the seed (0 when drawing gives a single voter).
	Observers int
	// Clients is the number of simulated applications (default 5).
	Clients int
	// Workload names the workload (see Workloads); "" or "mixed" draws one from the seed.
	Workload string
	// Faults lists the fault families allowed (see FaultFamilies), or "all" (the default) or
	// "none". Each seed switches each allowed family on or off and draws its rates.
	Faults []string
	// Duration is the length of the fault phase (default 60 s of virtual time).
	Duration clock.Duration
	// LivenessBound is how long, after the faults are healed, a leader and every pending operation
	// may take (default DefaultLivenessBound, 2 minutes).
	LivenessBound clock.Duration
	// Bugs re-introduces real ZooKeeper bugs in every server.
	Bugs zabmodel.Bugs
	// RecipeBugs re-introduces lock recipe bugs in the lock workloads' recipes and resource.
	RecipeBugs lockmodel.Bugs
	// RecipeSelfTests switches on recipe self-tests (lockmodel.SelfTests): deliberate faults in
	// the lock workloads' recipes that show a lock checker firing end to end. They are not bugs of
	// the zoo and are never hunted for.
	RecipeSelfTests lockmodel.SelfTests
	// SelfTests breaks the servers on purpose in ways only a client-visible checker can see, to
	// test the harness itself (see zabmodel.SelfTest). They are not bugs of the zoo.
	SelfTests zabmodel.SelfTests
	// NoZabChecker keeps the white-box ZAB checker from judging the run: it still follows the
	// protocol (the client-visible checkers replay the committed log it reports), but its
	// violations neither end the run nor fail it. An option for testing the harness, so that a
	// self-test is seen to be caught by a client-visible checker alone; never for finding bugs.
	NoZabChecker bool
	// LinearizableReadsAfterSync adds the opt-in check that ZooKeeper does not promise
	// (ZOOKEEPER-1675).
	LinearizableReadsAfterSync bool
	// FailOnKnown makes a known finding (checkers.Known: a documented behaviour of ZooKeeper 3.8 or
	// Curator 5.x, such as the acceptedEpoch lock-out) fail the run like any violation. By default
	// it is reported (Report.Known) and the run passes.
	FailOnKnown bool
	// DatagramFaults adds loss, duplication and reordering inside connections: outside ZAB's fault
	// model, reported as its own class.
	DatagramFaults bool
	// SnapCount is the servers' zookeeper.snapCount (default 200, so that runs take snapshots and
	// SNAP syncs happen).
	SnapCount int
	// Chooser replaces the seeded generator (a replayed choice list, a fuzzer's bytes).
	Chooser sim.Chooser
	// Trace says where the trace goes; the zero value keeps only its hash.
	Trace sim.TraceConfig
	// Script, if set, replaces the random fault schedule by a scripted one (a shrunk or
	// hand-written scenario).
	Script *Script
	// Stopwatch, if set, reads the host's monotonic clock so that the checkers' time can be
	// reported. Simulated code never reads the host's clock itself; only a caller outside the
	// simulation (simrun, a benchmark) may supply one.
	Stopwatch func() time.Duration
	// OnCrashPoint, if set, is told of every crash point (see CrashPoints) that a running server
	// reaches during the fault phase, in the order reached, whether or not a crashpoint action
	// armed the server there (the hit says whether it crashed). It only watches: it draws no
	// choice, schedules no event and writes no trace record, so a run observed is the run
	// unobserved. The explorer lists from it where a run can be made to crash.
	OnCrashPoint func(CrashPointHit)
	// Coverage, if set, collects the protocol situations the run reaches (the fuzzer's
	// feedback). Like OnCrashPoint it only watches: a run observed is the run unobserved.
	Coverage *Coverage
	// CheckTimeLimit bounds each linearizability check's search in host time (0 means
	// checkers.DefaultTimeLimit). Past it the verdict is Unknown: the one verdict that depends on
	// the host's speed and not on the seed alone.
	CheckTimeLimit time.Duration
	// Checker says how linearizability is decided: by the zxid order (the zero value, the
	// default), by porcupine's search, or both with a cross-check.
	Checker checkers.LinearizabilityChecker
	// Visualization, if set, is asked for a writer for each linearizability check (its model and
	// prefix); porcupine's HTML visualization of the history is written there. nil means none.
	Visualization func(model checkers.ModelKind, prefix string) io.Writer

	// Watch, if set, receives the run's structured events as they happen (see Watch); it does not
	// change the run.
	Watch *Watch
	// Annotations, if set, is asked once the run is over for the annotations of every
	// linearizability visualization (the faults and leader changes it saw); see Visualization.
	Annotations func() []checkers.Annotation
}

// Defaults.
const (
	DefaultClients  = 5
	DefaultDuration = 60 * clock.Second
	// DefaultLivenessBound leaves room for the slowest recovery ZooKeeper is designed for: a
	// server whose election backed off to FLE's longest notification interval (60 s) before the
	// heal sends its next notification only that much later, and then syncs (initLimit: 20 s).
	DefaultLivenessBound = 2 * clock.Minute
	DefaultSnapCount     = 200
)

// Fault families.
const (
	FaultCrash      = "crash"      // server crash and restart, and crashes between persistence steps
	FaultPartition  = "partition"  // partitions of every shape, and heals
	FaultClog       = "clog"       // clogging and swizzle
	FaultReset      = "reset"      // connection resets
	FaultPause      = "pause"      // process pauses of servers and clients (GC), longer than a session
	FaultClock      = "clock"      // clock drift and wall-clock steps
	FaultClientKill = "clientkill" // client process crashes
	FaultExpire     = "expire"     // forced session expiries: a killer client closes a live client's session
	FaultDisk       = "disk"       // disk stalls: a server's fsyncs hang for a while (see zabmodel.Server.StallDisk)
)

// FaultFamilies lists the families, in the order the injector considers them. A new family goes
// last: a seed draws the families in this order from one stream, so the scripts the earlier
// families draw stay as they were.
var FaultFamilies = []string{FaultCrash, FaultPartition, FaultClog, FaultReset, FaultPause, FaultClock, FaultClientKill, FaultExpire, FaultDisk}

// ErrOptions marks invalid options.
var ErrOptions = errors.New("scenarios: invalid options")

// ParseFaults parses a comma-separated fault list: "all", "none", or family names.
func ParseFaults(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "":
		return nil, fmt.Errorf("%w: an empty fault list; say all, none, or name families (%s)", ErrOptions, strings.Join(FaultFamilies, ", "))
	case "all":
		return slices.Clone(FaultFamilies), nil
	case "none":
		return []string{}, nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(FaultFamilies, name) {
			return nil, fmt.Errorf("%w: unknown fault family %q (known: %s, all, none)", ErrOptions, name, strings.Join(FaultFamilies, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// recipeBugsApply refuses recipe bugs on a workload without locks, where they would never act.
func recipeBugsApply(bugs lockmodel.Bugs, workload string) error {
	if bugs.Empty() || slices.Contains(LockWorkloads, workload) {
		return nil
	}
	if slices.Contains(redisWorkloads, workload) && bugs == (lockmodel.Bugs{}).With(lockmodel.BugNoFencing) {
		return nil // The Redis lock workloads' resource checks tokens unless told not to.
	}
	return fmt.Errorf("%w: recipe bug %s acts only on the %s workloads, never on %s", ErrOptions, bugs, strings.Join(LockWorkloads, ", "), workload)
}

// recipeSelfTestsApply is recipeBugsApply for the recipe self-tests.
func recipeSelfTestsApply(tests lockmodel.SelfTests, workload string) error {
	if tests.Empty() || slices.Contains(LockWorkloads, workload) {
		return nil
	}
	return fmt.Errorf("%w: recipe self-test %s acts only on the %s workloads, never on %s", ErrOptions, tests, strings.Join(LockWorkloads, ", "), workload)
}

// withDefaults fills the defaults that do not depend on the seed.
func (o Options) withDefaults() Options {
	if o.Clients == 0 {
		o.Clients = DefaultClients
	}
	if o.Faults == nil {
		o.Faults = slices.Clone(FaultFamilies)
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.LivenessBound == 0 {
		o.LivenessBound = DefaultLivenessBound
	}
	if o.SnapCount == 0 {
		o.SnapCount = DefaultSnapCount
	}
	return o
}

// Validate checks the options, naming every problem.
func (o Options) Validate() error {
	var problems []error
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: "+format, append([]any{ErrOptions}, args...)...))
	}
	if o.Servers < 0 || o.Servers > zabmodel.MaxVoters {
		bad("servers must be 1 to %d (or 0 to draw), not %d", zabmodel.MaxVoters, o.Servers)
	}
	if o.Observers < -1 || o.Observers > 2 {
		bad("observers must be 0 to 2 (or -1 to draw), not %d", o.Observers)
	}
	if o.Servers == 1 && o.Observers > 0 {
		bad("a single server cannot have observers")
	}
	if o.Clients < 0 || o.Clients > 100 {
		bad("clients must be 1 to 100, not %d", o.Clients)
	}
	if o.Workload != "" && o.Workload != "mixed" && !slices.Contains(Workloads(), o.Workload) {
		bad("unknown workload %q (known: %s, mixed)", o.Workload, strings.Join(Workloads(), ", "))
	}
	switch {
	case o.Script != nil:
		if err := recipeBugsApply(o.RecipeBugs, scriptWorkload(o.Script, o)); err != nil {
			problems = append(problems, err)
		}
		if err := recipeSelfTestsApply(o.RecipeSelfTests, scriptWorkload(o.Script, o)); err != nil {
			problems = append(problems, err)
		}
	case o.Workload != "" && o.Workload != "mixed":
		if err := recipeSelfTestsApply(o.RecipeSelfTests, o.Workload); err != nil {
			problems = append(problems, err)
		}
		if err := recipeBugsApply(o.RecipeBugs, o.Workload); err != nil {
			problems = append(problems, err)
		}
	}
	for _, f := range o.Faults {
		if !slices.Contains(FaultFamilies, f) {
			bad("unknown fault family %q", f)
		}
	}
	if o.Duration < 0 || o.Duration > clock.Hour {
		bad("duration %v must be between 0 and 1h", o.Duration)
	}
	if o.LivenessBound < 0 || o.LivenessBound > clock.Hour {
		bad("liveness bound %v must be between 0 and 1h", o.LivenessBound)
	}
	if o.CheckTimeLimit < 0 {
		bad("check time limit %v must not be negative", o.CheckTimeLimit)
	}
	if o.Checker > checkers.BothCheckers {
		bad("linearizability checker %d does not exist", o.Checker)
	}
	if o.SnapCount < 0 {
		bad("snapCount must not be negative")
	}
	return errors.Join(problems...)
}
