package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/zabsim/zabsim/checkers/lock"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/scenarios"
)

const compareUsage = `Usage: simrun compare-locks [flags]

ZooKeeper locks against Redis locks, on the same protected resource, the same lock checkers and
the same faults. For every lock implementation, with and without fencing tokens, and every fault
family, it runs the seeds and counts the safety violations the lock checkers find at the resource
(lock/mutual-exclusion and lock/unsafe-without-fencing findings on that lock), then prints one
table: per cell, the seeds with a violation, the violations in all, and the first failing seed;
after it, each cell's first failing seed with the command that replays it. --verbose prints the
violations of every failing seed.

Implementations (rows):
  zk-exclusive    ZooKeeper: one ephemeral node (workload lock, lock /locks/simple)
  curator-mutex   Curator's InterProcessMutex (workload lock, lock /locks/fair; the same runs)
  redis-single    SET NX PX on one Redis master (workload redis-lock)
  redis-failover  the same on a master with a replica that Sentinel promotes (redis-failover)
  redlock         Redlock over five masters (workload redlock)
each with fencing (the ZooKeeper lock node's czxid; for Redis an INCR on the lock's instances)
and without (--bug lock-no-fencing).

Fault families (columns), each seed switching its family on (two seeds in three) and drawing its
times and targets as the swarm does: pause (clients and servers stop, as in a GC pause), clientkill
(client processes crash), crash (servers crash and restart: ZooKeeper leader changes, Redis
restarts without or with an AOF, and on redis-failover the Sentinel failover), partition, clock
(drift and wall-clock steps on servers and clients).

Exit status: 0 when the table was made (violations are the result, not a failure), 2 on bad usage.

Examples:
  simrun compare-locks --seeds 30
  simrun compare-locks --seeds 100 --only redlock --families clock,crash --verbose
`

// compareImplementation is one row's lock: the workload that runs it and, for the ZooKeeper
// locks that share the lock workload, the lock path its findings name.
type compareImplementation struct {
	name     string
	workload string
	lockPath string
}

var compareImplementations = []compareImplementation{
	{"zk-exclusive", "lock", "/locks/simple"},
	{"curator-mutex", "lock", "/locks/fair"},
	{"redis-single", "redis-lock", "/redis/lock"},
	{"redis-failover", "redis-failover", "/redis/lock"},
	{"redlock", "redlock", "/redis/lock"},
}

var compareFamilies = []string{scenarios.FaultPause, scenarios.FaultClientKill, scenarios.FaultCrash, scenarios.FaultPartition, scenarios.FaultClock}

type compareFlags struct {
	seeds     int64
	seedStart seedFlag
	parallel  int
	duration  time.Duration
	only      string
	families  string
	verbose   bool
}

func newCompareFlags() (*flag.FlagSet, *compareFlags) {
	f := &compareFlags{seedStart: seedFlag{value: 1}}
	fs := flag.NewFlagSet("compare-locks", flag.ContinueOnError)
	fs.Int64Var(&f.seeds, "seeds", 30, "seeds per cell")
	fs.Var(&f.seedStart, "seed-start", "first seed `S` of every cell")
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once")
	fs.DurationVar(&f.duration, "duration", scenarios.DefaultDuration, "virtual length of each run's fault phase (at most 1h)")
	fs.StringVar(&f.only, "only", "", "implementations to run, comma-separated (default all: "+strings.Join(implementationNames(), ", ")+")")
	fs.StringVar(&f.families, "families", "", "fault families to run, comma-separated (default all: "+strings.Join(compareFamilies, ", ")+")")
	fs.BoolVar(&f.verbose, "verbose", false, "print the violations of every failing seed")
	return fs, f
}

func implementationNames() []string {
	out := make([]string, len(compareImplementations))
	for i, c := range compareImplementations {
		out[i] = c.name
	}
	return out
}

// pick parses a comma-separated selection from known (all of them when empty).
func pick(what, list string, known []string) ([]string, error) {
	if list == "" {
		return slices.Clone(known), nil
	}
	var out []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(known, name) {
			return nil, fmt.Errorf("unknown %s %q (known: %s)", what, name, strings.Join(known, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// compareRun is one workload run (a seed of a workload, a family, with or without fencing); the
// ZooKeeper rows share theirs.
type compareRun struct {
	workload string
	family   string
	fencing  bool
	seed     uint64
}

// compareCell accumulates one row's results under one family.
type compareCell struct {
	implementation string
	family         string
	fencing        bool
	run            int // seeds run
	failing        int // seeds with a violation on this lock
	violations     int // violations on this lock, summed over the seeds
	other          int // seeds that failed for another reason (progress, liveness, ZooKeeper's checkers)
	first          uint64
	firstRule      string
	details        []string
}

// scenarioOf returns the flags of one run, as simrun replay reads them, so that the options of the
// run and its replay command are the same by construction.
func scenarioOf(workload, family string, fencing bool, duration time.Duration) scenarioFlags {
	scenario := defaultScenarioFlags()
	scenario.workload, scenario.faults, scenario.duration = workload, family, duration
	if !fencing {
		if err := scenario.bugs.Set(lockmodel.BugList()[slices.IndexFunc(lockmodel.BugList(), func(b lockmodel.BugInfo) bool {
			return b.Bit == lockmodel.BugNoFencing
		})].Name); err != nil {
			panic(fmt.Sprintf("simrun: the lock-no-fencing switch's name is refused: %v", err))
		}
	}
	return scenario
}

func cmdCompareLocks(env *environment, args []string) int {
	fs, f := newCompareFlags()
	if err := parseFlags(env, "compare-locks", fs, args); err != nil {
		return flagExit(err)
	}
	implementations, err := pick("implementation", f.only, implementationNames())
	var families []string
	if err == nil {
		families, err = pick("fault family", f.families, compareFamilies)
	}
	switch {
	case err != nil:
	case f.seeds < 1 || f.seeds > maxSeedsPerSweep:
		err = fmt.Errorf("--seeds must be from 1 to %d, not %d", maxSeedsPerSweep, f.seeds)
	case f.parallel < 1:
		err = fmt.Errorf("--parallel must be at least 1, not %d", f.parallel)
	case f.duration <= 0 || f.duration > time.Hour:
		err = fmt.Errorf("--duration must be more than 0 and at most 1h, not %s", f.duration)
	}
	if err != nil {
		usageFailed(env, "compare-locks", err)
		return exitUsage
	}
	began := time.Now()
	cells, err := compareLocks(env, f, implementations, families)
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun compare-locks: %v\n", err)
		return runErrorExit(err)
	}
	writeCompareTable(env.stdout, f, cells, implementations, families)
	fmt.Fprintf(env.stdout, "\n%d seeds per cell from seed %d, %s of faults each; wall time %s\n", f.seeds, f.seedStart.value, f.duration, time.Since(began).Round(time.Second))
	return exitPass
}

// compareLocks runs every needed workload run on parallel goroutines and fills the cells in seed
// order, so that the output does not depend on the scheduling.
func compareLocks(env *environment, f *compareFlags, implementations, families []string) ([]*compareCell, error) {
	var runs []compareRun
	for _, family := range families {
		for _, fencing := range []bool{true, false} {
			var workloads []string
			for _, c := range compareImplementations {
				if slices.Contains(implementations, c.name) && !slices.Contains(workloads, c.workload) {
					workloads = append(workloads, c.workload)
				}
			}
			for _, workload := range workloads {
				for k := range f.seeds {
					runs = append(runs, compareRun{workload: workload, family: family, fencing: fencing, seed: f.seedStart.value + uint64(k)})
				}
			}
		}
	}
	reports := make([]*scenarios.Report, len(runs))
	errs := make([]error, len(runs))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range f.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				run := runs[i]
				scenario := scenarioOf(run.workload, run.family, run.fencing, f.duration)
				opts, err := scenario.options()
				if err == nil {
					reports[i], err = env.runSeed(opts, run.seed)
				}
				errs[i] = err
			}
		}()
	}
	for i := range runs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var cells []*compareCell
	cell := func(name, family string, fencing bool) *compareCell {
		for _, c := range cells {
			if c.implementation == name && c.family == family && c.fencing == fencing {
				return c
			}
		}
		c := &compareCell{implementation: name, family: family, fencing: fencing}
		cells = append(cells, c)
		return c
	}
	for _, c := range compareImplementations {
		for _, family := range families {
			for _, fencing := range []bool{true, false} {
				if slices.Contains(implementations, c.name) {
					cell(c.name, family, fencing)
				}
			}
		}
	}
	for i, run := range runs {
		for _, impl := range compareImplementations {
			if impl.workload != run.workload || !slices.Contains(implementations, impl.name) {
				continue
			}
			countViolations(cell(impl.name, run.family, run.fencing), impl, run.seed, reports[i])
		}
	}
	return cells, nil
}

// countViolations adds one seed's report to a cell: the safety findings that name the cell's lock.
func countViolations(c *compareCell, impl compareImplementation, seed uint64, rep *scenarios.Report) {
	c.run++
	n, rule := 0, ""
	var details []string
	for _, checker := range []string{lock.CheckerMutualExclusion, lock.CheckerUnfenced} {
		res, ok := rep.Checks.Result(checker)
		if !ok {
			continue
		}
		for _, finding := range res.Findings {
			if !strings.HasPrefix(finding.Message, impl.lockPath+":") {
				continue
			}
			n++
			if rule == "" {
				rule = checker + " " + finding.Rule
			}
			details = append(details, fmt.Sprintf("seed %d: %s [%s] %s", seed, checker, finding.Rule, finding.Message))
		}
	}
	if n == 0 {
		// A safety finding on the other lock of the same run (the ZooKeeper rows share theirs) is
		// that lock's, not a failure of this one.
		if failure := rep.Failure(); failure != "" && failure != lock.CheckerMutualExclusion && failure != lock.CheckerUnfenced {
			c.other++
		}
		return
	}
	c.failing++
	c.violations += n
	c.details = append(c.details, details...)
	if c.first == 0 {
		c.first, c.firstRule = seed, rule
	}
}

func writeCompareTable(out io.Writer, f *compareFlags, cells []*compareCell, implementations, families []string) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "implementation\tfencing")
	for _, family := range families {
		fmt.Fprintf(tw, "\t%s", family)
	}
	fmt.Fprintln(tw)
	for _, impl := range compareImplementations {
		if !slices.Contains(implementations, impl.name) {
			continue
		}
		for _, fencing := range []bool{true, false} {
			fmt.Fprintf(tw, "%s\t%s", impl.name, onOff(fencing))
			for _, c := range cells {
				if c.implementation == impl.name && c.fencing == fencing && slices.Contains(families, c.family) {
					fmt.Fprintf(tw, "\t%s", c.summary())
				}
			}
			fmt.Fprintln(tw)
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(out, "\neach cell: seeds with a violation/seeds run (violations in all) first failing seed; +N: seeds that failed otherwise (progress, liveness)\n")
	fmt.Fprintf(out, "\nfirst failing seed of each cell:\n")
	for _, c := range cells {
		if c.first == 0 {
			continue
		}
		workload := ""
		for _, impl := range compareImplementations {
			if impl.name == c.implementation {
				workload = impl.workload
			}
		}
		scenario := scenarioOf(workload, c.family, c.fencing, f.duration)
		fmt.Fprintf(out, "  %-15s %-12s %-10s seed %-5d %s\n    replay: %s\n", c.implementation, "fencing="+onOff(c.fencing), c.family, c.first, c.firstRule, scenario.replayCommand(c.first))
	}
	if f.verbose {
		fmt.Fprintf(out, "\nviolations:\n")
		for _, c := range cells {
			for _, d := range c.details {
				fmt.Fprintf(out, "  %s %s %s: %s\n", c.implementation, onOff(c.fencing), c.family, d)
			}
		}
	}
}

func (c *compareCell) summary() string {
	s := fmt.Sprintf("%d/%d", c.failing, c.run)
	if c.failing > 0 {
		s += fmt.Sprintf(" (%d) s%d", c.violations, c.first)
	}
	if c.other > 0 {
		s += fmt.Sprintf(" +%d", c.other)
	}
	return s
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
