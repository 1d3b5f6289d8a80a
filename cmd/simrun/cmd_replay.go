package main

import (
	"bufio"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/sim"
)

const replayUsage = `Usage: simrun replay --seed S [flags]
       simrun replay --script FILE [--seed S] [flags]
       simrun replay --counterexample FILE

Runs one seed with its full trace on stdout (one line per event; --trace-json for JSON lines),
then prints the report. It then runs the seed a second time without rendering the trace and
compares the two trace hashes: they must be equal, and a mismatch is a determinism bug in zabsim.

Give the same flags as the run that failed (the replay command printed by 'simrun run' has them).
With --script, the script decides the cluster, the workload and the faults, and the seed (default
1) decides everything else. A seed draws its script from a random stream of its own, apart from
the one its run uses, so the script of seed S ('simrun script --seed S') replayed with --script
and --seed S is the very same run as seed S alone: same trace, same trace hash. Edit the script
to try a variation of a failing seed. A script that simrun saved (script.txt and shrunk.script
under --out, shrink's output) records the build that wrote it; replayed by another build, simrun
says so on stderr, since the same seed and script are the same run only on the same code.

Exit status: 0 when the run passed, 1 when it failed or replayed differently, 2 on bad usage.

With --html FILE, the replay also writes the run's HTML report (see 'simrun help run') to FILE, and
porcupine's visualization of each linearizability check beside it, named after it.

Examples:
  simrun replay --seed 17 --bug ZK-3911 > trace.txt
  simrun replay --seed 17 --bug ZK-3911 --html seed-17.html > trace.txt
  simrun replay --seed 17 --servers 5 --faults crash,partition --trace-json | jq .
  simrun replay --script scenarios/testdata/named/crash-inside-newleader.script --seed 17
`

// replayFlags are the flags of replay, shrink and script: one seed and a scenario.
type replayFlags struct {
	scenario  scenarioFlags
	seed      seedFlag
	traceJSON bool
	html      string
}

func newReplayFlags() (*flag.FlagSet, *replayFlags) {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	f := &replayFlags{}
	fs.Var(&f.seed, "seed", "the seed `S` to replay (required unless --script is given; then it defaults to 1)")
	fs.BoolVar(&f.traceJSON, "trace-json", false, "write the trace as JSON lines (the report then goes to stderr)")
	fs.String("counterexample", "", "replay a model checker's counterexample `FILE` ('simrun check --out'); no other flag applies")
	fs.StringVar(&f.html, "html", "", "also write the run's HTML report to `FILE` (and porcupine's visualizations beside it)")
	f.scenario.register(fs)
	return fs, f
}

// parseOneSeed parses the flags of a command that runs one seed and returns its options, with the
// seed set. A usage error has been reported when err is not nil.
func parseOneSeed(env *environment, name string, fs *flag.FlagSet, scenario *scenarioFlags, seed *seedFlag, args []string) (scenarios.Options, error) {
	if err := parseFlags(env, name, fs, args); err != nil {
		return scenarios.Options{}, err
	}
	scenario.noteSet(fs)
	if !seed.given && scenario.scriptPath == "" {
		err := errors.New("--seed is required (or --script)")
		usageFailed(env, name, err)
		return scenarios.Options{}, err
	}
	if !seed.given {
		seed.value = 1
	}
	opts, err := scenario.options()
	if err != nil {
		usageFailed(env, name, err)
		return opts, err
	}
	if scenario.otherBuild != "" {
		fmt.Fprintln(env.stderr, scenario.otherBuild)
	}
	opts.Seed = seed.value
	return opts, nil
}

func cmdReplay(env *environment, args []string) int {
	if mentionsFlag(args, "counterexample") {
		return cmdReplayCounterexample(env, args)
	}
	fs, f := newReplayFlags()
	opts, err := parseOneSeed(env, "replay", fs, &f.scenario, &f.seed, args)
	if err != nil {
		return flagExit(err)
	}
	traced := bufio.NewWriterSize(env.stdout, 1<<16)
	reportTo := env.stdout
	if f.traceJSON {
		opts.Trace = sim.TraceConfig{JSON: traced}
		reportTo = env.stderr
	} else {
		opts.Trace = sim.TraceConfig{Text: traced}
	}
	var page *htmlReport
	if f.html != "" {
		// The output is checked before the run, so that a bad path costs nothing.
		if page, err = newHTMLReport(f.html); err != nil {
			usageFailed(env, "replay", err)
			return exitUsage
		}
		page.attach(&opts)
	}
	first, err := env.runSeed(opts, opts.Seed)
	flushErr := traced.Flush()
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun replay: %v\n", err)
		return runErrorExit(err)
	}
	if flushErr != nil {
		fmt.Fprintf(env.stderr, "simrun replay: writing the trace: %v\n", flushErr)
		return exitFailure
	}
	writeReport(reportTo, first, f.scenario.bugs.String(), f.scenario.replayCommand(opts.Seed))
	if page != nil {
		if err := page.write(env, first, f.scenario.replayCommand(opts.Seed)); err != nil {
			fmt.Fprintf(env.stderr, "simrun replay: --html: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(reportTo, "HTML report: %s\n", f.html)
	}
	opts.Trace = sim.TraceConfig{}
	opts.Watch, opts.Visualization, opts.Annotations = nil, nil, nil
	second, err := env.runSeed(opts, opts.Seed)
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun replay: the second run: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(reportTo, "trace hash: %016x (first run, trace rendered), %016x (second run, hash only)\n",
		first.Outcome.TraceHash, second.Outcome.TraceHash)
	if first.Outcome.TraceHash != second.Outcome.TraceHash {
		fmt.Fprintln(env.stderr, (&determinismError{seed: opts.Seed, first: first.Outcome.TraceHash,
			again: second.Outcome.TraceHash, what: "run again without rendering the trace"}).Error())
		return exitFailure
	}
	if first.Failed() {
		return exitFailure
	}
	return exitPass
}

// writeReport prints a run's verdict and counts for a person. bugs names the switches on, of both
// kinds (the report knows only the server's).
func writeReport(w io.Writer, report *scenarios.Report, bugs, replay string) {
	class := classify(report)
	verdict := "PASS"
	if known := report.KnownClasses(); len(known) > 0 {
		verdict = "PASS with known findings: " + strings.Join(known, ", ") + " (documented behaviour of the modelled software; --fail-on-known fails on them)"
	}
	if class != "" {
		verdict = "FAIL " + class
	}
	s := report.Stats
	fmt.Fprintf(w, "--- report\n%s\n%s", verdict, report.Explain())
	fmt.Fprintf(w, "virtual time %ss, %d events, %d operations completed, %d txns committed, %d leaders established, %d faults injected, bugs: %s\n",
		strings.TrimSpace(s.VirtualTime.String()), s.Events, s.OpsCompleted, s.Committed, s.Leaders, s.FaultsInjected, cmp.Or(bugs, "none"))
	if len(report.Outcome.OutsideFaultModel) > 0 {
		fmt.Fprintln(w, outsideModelWarning)
	}
	fmt.Fprintf(w, "replay: %s\n", replay)
}
