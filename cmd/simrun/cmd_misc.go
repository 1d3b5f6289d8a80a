package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/scenarios/conform"
	"github.com/zabsim/zabsim/zabmodel"
)

const scriptUsage = `Usage: simrun script --seed S [flags]

Prints the fault script a seed draws with these flags (the cluster, the workload, the duration
and every timed fault), in the format 'simrun replay --script' reads, so that it can be saved and
edited. The seed is not run: its script comes from a random stream of its own (DrawScript), apart
from the stream its run uses. That is also why 'simrun replay --script FILE --seed S', with the
printed script and the same flags, is the same run as 'simrun replay --seed S'.

Examples:
  simrun script --seed 17 > s17.script
  simrun script --seed 17 --servers 5 --faults partition,clog --duration 2m
  simrun replay --script s17.script --seed 17     # the same run as: simrun replay --seed 17
`

type scriptFlags struct {
	scenario scenarioFlags
	seed     seedFlag
}

func newScriptFlags() (*flag.FlagSet, *scriptFlags) {
	fs := flag.NewFlagSet("script", flag.ContinueOnError)
	f := &scriptFlags{}
	fs.Var(&f.seed, "seed", "the seed `S` whose script to print (required)")
	f.scenario.register(fs)
	// A script is what this command prints, not an input it takes: the help must not list it.
	hideFlag(fs, "script")
	return fs, f
}

func cmdScript(env *environment, args []string) int {
	fs, f := newScriptFlags()
	if err := parseFlags(env, "script", fs, args); err != nil {
		return flagExit(err)
	}
	f.scenario.noteSet(fs)
	if !f.seed.given {
		usageFailed(env, "script", errors.New("--seed is required"))
		return exitUsage
	}
	opts, err := f.scenario.options()
	if err != nil {
		usageFailed(env, "script", err)
		return exitUsage
	}
	opts.Seed = f.seed.value
	script, err := scenarios.DrawScript(opts)
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun script: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(env.stdout, "# Drawn by seed %d with: %s\n", f.seed.value,
		strings.Join(append([]string{"simrun", "script", "--seed", f.seed.String()}, f.scenario.replayArgs()...), " "))
	fmt.Fprintf(env.stdout, "# With --script FILE --seed %d and the same flags, replay runs exactly seed %d's run.\n", f.seed.value, f.seed.value)
	if err := script.Format(env.stdout); err != nil {
		fmt.Fprintf(env.stderr, "simrun script: %v\n", err)
		return exitFailure
	}
	return exitPass
}

const conformUsage = `Usage: simrun conform [flags] < sequence.jsonl

Reads a conformance sequence (JSON lines in the scenarios/conform format) on stdin, runs it
against a standalone simulated server with conform.Simulate, and writes one result line per
operation on stdout. --normalize replaces zxids by their rank and zeroes the times, the form
the real server's results are compared in.

Exit status: 0 when the sequence ran, 1 when the simulation could not complete (a zabsim bug),
2 on bad usage or malformed input (the parser's error names the line).

Examples:
  simrun conform --normalize < scenarios/conform/testdata/set_get.jsonl
  simrun conform < scenarios/conform/testdata/set_get.jsonl
`

type conformFlags struct {
	seed          seedFlag
	normalize     bool
	extendedTypes bool
}

func newConformFlags() (*flag.FlagSet, *conformFlags) {
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	f := &conformFlags{seed: seedFlag{value: 1}}
	fs.Var(&f.seed, "seed", "the simulation seed `S` (results do not depend on it for a correct server)")
	fs.BoolVar(&f.normalize, "normalize", false, "rank zxids and zero ctime/mtime, to compare with another server's results")
	fs.BoolVar(&f.extendedTypes, "extended-types", false, "enable TTL nodes, like the real runner's option of the same name")
	return fs, f
}

func cmdConform(env *environment, args []string) int {
	fs, f := newConformFlags()
	if err := parseFlags(env, "conform", fs, args); err != nil {
		return flagExit(err)
	}
	ops, err := conform.Parse(env.stdin)
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun conform: malformed input on stdin:\n%v\n", err)
		return exitUsage
	}
	results, err := conform.Simulate(conform.SimOptions{Seed: f.seed.value, ExtendedTypes: f.extendedTypes}, ops)
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun conform: %v\n", err)
		if errors.Is(err, conform.ErrSimulation) {
			return exitFailure
		}
		return exitUsage
	}
	if f.normalize {
		results = conform.Normalize(results)
	}
	if err := conform.WriteResults(env.stdout, results); err != nil {
		fmt.Fprintf(env.stderr, "simrun conform: writing the results: %v\n", err)
		return exitFailure
	}
	return exitPass
}

const bugsUsage = `Usage: simrun bugs

Lists the real bugs that zabsim can re-introduce, one switch each, for the --bug flag of run,
replay, shrink and script: the ZooKeeper server bugs, then the lock recipe bugs. A recipe bug acts
only on the lock, rwlock and election workloads. 'simrun hunt' measures how fast a sweep finds
each one. RELEASES says which ZooKeeper releases have a server bug's behaviour: --zk-version
VERSION switches on every bug of that release (the default, fixed, switches on none). Then the
release profiles are listed, with what a profile does not model of its release.

Examples:
  simrun bugs
  simrun run --seeds 200 --bug ZK-3911,ZK-2845
  simrun run --seeds 200 --bug lock-herd --workload lock
  simrun hunt --seeds 500
`

func cmdBugs(env *environment, args []string) int {
	fs := flag.NewFlagSet("bugs", flag.ContinueOnError)
	if err := parseFlags(env, "bugs", fs, args); err != nil {
		return flagExit(err)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tRELEASES\tDESCRIPTION")
	for _, bug := range zabmodel.BugList() {
		fmt.Fprintf(tw, "%s\tserver\t%s\t%s\n", bug.Name, releaseRanges(zabmodel.ReleasesWith(bug.Bit)), bug.Description)
	}
	for _, bug := range lockmodel.BugList() {
		fmt.Fprintf(tw, "%s\trecipe (%s workload)\t-\t%s\n", bug.Name, recipeWorkload(bug.Name), bug.Description)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "RELEASE\tBUGS\tSUMMARY")
	for _, r := range zabmodel.Releases() {
		names := strings.Join(r.Bugs.Names(), ",")
		if names == "" {
			names = "-"
		}
		summary := r.Summary
		if r.Unmodelled != "" {
			summary += "; not modelled: " + r.Unmodelled
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, names, summary)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(env.stderr, "simrun bugs: %v\n", err)
		return exitFailure
	}
	return exitPass
}

// releaseRanges writes release names compactly: runs of consecutive releases (in the order of
// zabmodel.Releases) as "first-last", "-" for none.
func releaseRanges(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	var order []string
	for _, r := range zabmodel.Releases() {
		order = append(order, r.Name)
	}
	var parts []string
	for i := 0; i < len(names); {
		j := i
		for j+1 < len(names) && slices.Index(order, names[j+1]) == slices.Index(order, names[j])+1 {
			j++
		}
		if j == i {
			parts = append(parts, names[i])
		} else {
			parts = append(parts, names[i]+"-"+names[j])
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

const selfTestsUsage = `Usage: simrun selftests

Lists the harness self-tests. A server self-test breaks the server on purpose in a way that no ZAB
invariant sees and one client-visible checker must; a recipe self-test breaks a lock recipe (it acts
only on the lock, rwlock and election workloads) so that a lock checker is seen firing. They test
zabsim itself, not ZooKeeper, and are not part of the bug zoo ('simrun bugs', 'simrun hunt'). Switch
one on with --selftest NAME, and, for a server self-test, switch the white-box ZAB checker off with
--no-zab-checker to see the client-visible checker catch it alone. Each description names the
checker expected to catch it; TestSelfTestsAreCaughtByTheirCheckers and the tests of
lock_selftest_test.go in package scenarios check that it does.

Examples:
  simrun selftests
  simrun run --seeds 40 --workload registers --selftest stale-read --no-zab-checker
  simrun run --seeds 40 --workload queue --selftest ack-failed-write --no-zab-checker
  simrun run --workload election --seed 2 --selftest latch-yields
`

func cmdSelfTests(env *environment, args []string) int {
	fs := flag.NewFlagSet("selftests", flag.ContinueOnError)
	if err := parseFlags(env, "selftests", fs, args); err != nil {
		return flagExit(err)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tDESCRIPTION")
	for _, selfTest := range zabmodel.SelfTestList() {
		fmt.Fprintf(tw, "%s\tserver\t%s\n", selfTest.Name, selfTest.Description)
	}
	for _, selfTest := range lockmodel.SelfTestList() {
		fmt.Fprintf(tw, "%s\trecipe\t%s\n", selfTest.Name, selfTest.Description)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(env.stderr, "simrun selftests: %v\n", err)
		return exitFailure
	}
	return exitPass
}

const helpUsage = `Usage: simrun help [command]

Shows the list of commands, or one command's usage, flags and examples.
`
