package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/zabsim/zabsim/scenarios"
)

const shrinkUsage = `Usage: simrun shrink --seed S [flags] [--out FILE]

Reproduces a failing seed, then shrinks its fault script: it removes actions (first in blocks,
then one at a time), then halves the duration and the number of clients, then tries fewer observers and fewer servers,
keeping a change only if the run still fails with the same failure class. It prints the minimal script and saves it to
--out (default shrunk-S.script); 'simrun replay --script FILE --seed S' with the same flags
reproduces the failure.

Candidates run as scripted runs with the same seed. A seed draws its script from a random stream
of its own, so the seed's script run as a script is the seed's own run; shrinking checks this
first (same failure class, same trace hash) and warns if it does not hold, which would be a bug in
zabsim. Only then, as a fallback, it tries the script with the next seeds (up to --reseed), says
which seed reproduces the failure, and uses that seed in the saved replay command.

Exit status: 0 when a minimal failing script was saved, 1 when the failure could not be
reproduced as a script (or the seed passes), 2 on bad usage.

Examples:
  simrun shrink --seed 17 --bug ZK-3911
  simrun shrink --seed 17 --bug ZK-3911 --out zk3911.script --max-runs 300
  simrun shrink --script scenarios/testdata/named/rolling-restart.script --bug ZK-3911  # a hand-written script
`

type shrinkFlags struct {
	scenario scenarioFlags
	seed     seedFlag
	out      string
	maxRuns  int
	reseeds  int
}

func newShrinkFlags() (*flag.FlagSet, *shrinkFlags) {
	fs := flag.NewFlagSet("shrink", flag.ContinueOnError)
	f := &shrinkFlags{}
	fs.Var(&f.seed, "seed", "the failing seed `S` (required unless --script is given; then it defaults to 1)")
	fs.StringVar(&f.out, "out", "", "`FILE` to save the minimal script to (default shrunk-S.script)")
	fs.IntVar(&f.maxRuns, "max-runs", 2000, "give up shrinking further after this many runs")
	fs.IntVar(&f.reseeds, "reseed", 64, "fallback only: if the seed's script run as a script does not fail alike (a zabsim bug), try it with up to this many next seeds")
	f.scenario.register(fs)
	return fs, f
}

func cmdShrink(env *environment, args []string) int {
	fs, f := newShrinkFlags()
	opts, err := parseOneSeed(env, "shrink", fs, &f.scenario, &f.seed, args)
	if err != nil {
		return flagExit(err)
	}
	if f.maxRuns < 1 || f.maxRuns > 1_000_000 {
		usageFailed(env, "shrink", fmt.Errorf("--max-runs must be 1 to 1000000, not %d", f.maxRuns))
		return exitUsage
	}
	if f.out == "" {
		f.out = fmt.Sprintf("shrunk-%d.script", opts.Seed)
	}
	// The output is checked before the first run, so that a bad path costs nothing.
	if err := checkOutputFile(f.out); err != nil {
		usageFailed(env, "shrink", fmt.Errorf("--out: %w", err))
		return exitUsage
	}
	if f.reseeds < 0 || f.reseeds > 10_000 {
		usageFailed(env, "shrink", fmt.Errorf("--reseed must be 0 to 10000, not %d", f.reseeds))
		return exitUsage
	}
	s := &shrinker{env: env, opts: opts, maxRuns: f.maxRuns, reseeds: f.reseeds, originalSeed: opts.Seed}
	script, code := s.reproduce()
	if code != exitPass {
		return code
	}
	minimal := s.shrink(script)
	return s.save(minimal, f)
}

// shrinker holds what every candidate run shares.
type shrinker struct {
	env     *environment
	opts    scenarios.Options
	class   string
	runs    int
	maxRuns int
	reseeds int
	// originalSeed is the seed whose failure is shrunk; opts.Seed is the one its script fails with.
	originalSeed uint64
}

var errRunBudget = errors.New("shrink: run budget spent")

// fails runs a candidate script and reports whether it fails with the class being shrunk.
func (s *shrinker) fails(script *scenarios.Script) (bool, error) {
	report, err := s.runCandidate(script)
	if err != nil {
		return false, err
	}
	return classify(report) == s.class, nil
}

// runCandidate runs a script with the shrinker's seed, counting the run against --max-runs.
func (s *shrinker) runCandidate(script *scenarios.Script) (*scenarios.Report, error) {
	if s.runs >= s.maxRuns {
		return nil, errRunBudget
	}
	s.runs++
	opts := s.opts
	opts.Script = script
	return s.env.runSeed(opts, opts.Seed)
}

// reproduce runs the seed as given and checks that its script, run as a script with the same
// seed, is the same run. If it is not even the same failure, it falls back to the next --reseed
// seeds.
func (s *shrinker) reproduce() (*scenarios.Script, int) {
	report, err := s.env.runSeed(s.opts, s.opts.Seed)
	if err != nil {
		fmt.Fprintf(s.env.stderr, "simrun shrink: %v\n", err)
		return nil, runErrorExit(err)
	}
	s.class = classify(report)
	if s.class == "" {
		fmt.Fprintf(s.env.stderr, "simrun shrink: seed %d passes with these flags: nothing to shrink\n", s.opts.Seed)
		return nil, exitFailure
	}
	script := report.Script
	fmt.Fprintf(s.env.stderr, "shrink: seed %d fails with %s; its script has %d actions\n", s.opts.Seed, s.class, len(script.Actions))
	if s.opts.Script != nil {
		return script, exitPass // The run was a scripted run already.
	}
	scripted, err := s.runCandidate(script)
	if err != nil {
		fmt.Fprintf(s.env.stderr, "simrun shrink: %v\n", err)
		return nil, runErrorExit(err)
	}
	if scripted.Outcome.TraceHash != report.Outcome.TraceHash {
		fmt.Fprintf(s.env.stderr, "shrink: WARNING: seed %d's script, run as a script with seed %d, gave trace hash %016x, not the "+
			"seed's %016x: a seed's script should replay its run exactly (scenarios.DrawScript); please report this\n",
			s.opts.Seed, s.opts.Seed, scripted.Outcome.TraceHash, report.Outcome.TraceHash)
	}
	if classify(scripted) == s.class {
		return script, exitPass
	}
	return s.reseed(script, classify(scripted))
}

// reseed is the fallback for a script that, run as a script with its own seed, does not fail
// alike: it tries the next seeds, up to --reseed of them, and says so loudly, since the seed's own
// script should have been the seed's own run.
func (s *shrinker) reseed(script *scenarios.Script, scriptedClass string) (*scenarios.Script, int) {
	fmt.Fprintf(s.env.stderr, "shrink: WARNING: seed %d's script, run as a script with seed %d, ends %q instead of failing with %s; "+
		"FALLBACK: trying the script with the next %d seeds\n", s.opts.Seed, s.opts.Seed, cmp.Or(scriptedClass, "passing"), s.class, s.reseeds)
	seed, err := s.scriptSeed(script)
	if err != nil {
		fmt.Fprintf(s.env.stderr, "simrun shrink: %v\n", err)
		return nil, exitFailure
	}
	fmt.Fprintf(s.env.stderr, "shrink: FALLBACK: the script fails with %s when replayed with seed %d, not with seed %d; "+
		"the saved replay command uses seed %d\n", s.class, seed, s.opts.Seed, seed)
	s.opts.Seed = seed
	return script, exitPass
}

// scriptSeed finds the seed after the shrinker's own with which the script, run as a script,
// fails with the class, trying up to --reseed of them.
func (s *shrinker) scriptSeed(script *scenarios.Script) (uint64, error) {
	original := s.opts.Seed
	defer func() { s.opts.Seed = original }()
	for i := 1; i <= s.reseeds && original+uint64(i) > original; i++ {
		s.opts.Seed = original + uint64(i)
		ok, err := s.fails(script)
		if err != nil {
			return 0, err
		}
		if ok {
			return s.opts.Seed, nil
		}
	}
	return 0, fmt.Errorf("seed %d's script, run as a script, fails with %s neither with seed %d nor with the %d seeds after it; "+
		"nothing reproducible to shrink (try a larger --reseed)", original, s.class, original, s.reseeds)
}

// shrink reduces the script while it keeps failing with the same class: blocks of actions, then
// single actions, then the duration and the clients; and single actions again if those changed.
func (s *shrinker) shrink(script *scenarios.Script) *scenarios.Script {
	script = s.removeActions(script)
	smaller := s.halveDuration(script)
	smaller = s.halveClients(smaller)
	smaller = s.shrinkCluster(smaller)
	if smaller != script {
		smaller = s.removeActions(smaller)
	}
	if s.runs >= s.maxRuns {
		fmt.Fprintf(s.env.stderr, "shrink: stopped after --max-runs %d runs; the script may shrink further\n", s.maxRuns)
	}
	return smaller
}

// removeActions removes blocks of actions, from half the script down to single actions, keeping
// each removal after which the run still fails alike. It repeats single-action passes until none
// removes anything, so that the result is minimal under removing one action.
func (s *shrinker) removeActions(script *scenarios.Script) *scenarios.Script {
	for block := len(script.Actions) / 2; block >= 1; block /= 2 {
		for i := 0; i+block <= len(script.Actions); {
			candidate := withoutRange(script, i, i+block)
			ok, err := s.fails(candidate)
			if err != nil {
				return script
			}
			if ok {
				script = candidate
				s.progress(script)
				continue
			}
			i += block
		}
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(script.Actions); {
			candidate := withoutRange(script, i, i+1)
			ok, err := s.fails(candidate)
			if err != nil {
				return script
			}
			if ok {
				script, changed = candidate, true
				s.progress(script)
				continue
			}
			i++
		}
	}
	return script
}

func (s *shrinker) progress(script *scenarios.Script) {
	fmt.Fprintf(s.env.stderr, "shrink: %d actions, %d clients, duration %v (%d runs)\n",
		len(script.Actions), script.Clients, script.Duration, s.runs)
}

// withoutRange returns a copy of the script without actions [from, to).
func withoutRange(script *scenarios.Script, from, to int) *scenarios.Script {
	c := *script
	c.Actions = append(append([]scenarios.Action(nil), script.Actions[:from]...), script.Actions[to:]...)
	return &c
}

// minimumDuration is the shortest fault phase shrinking tries.
const minimumDuration = time.Second

// halveDuration halves the fault phase while the run still fails, dropping the actions that would
// fall after its end (the runner would play them during the liveness phase, which is not what the
// script means).
func (s *shrinker) halveDuration(script *scenarios.Script) *scenarios.Script {
	for script.Duration/2 >= minimumDuration {
		c := *script
		c.Duration = script.Duration / 2
		c.Actions = nil
		for _, a := range script.Actions {
			if a.At < c.Duration {
				c.Actions = append(c.Actions, a)
			}
		}
		ok, err := s.fails(&c)
		if err != nil || !ok {
			return script
		}
		script = &c
		s.progress(script)
	}
	return script
}

// halveClients halves the number of clients while the run still fails, dropping the actions that
// target a client that no longer exists.
func (s *shrinker) halveClients(script *scenarios.Script) *scenarios.Script {
	for script.Clients/2 >= 1 {
		c := *script
		c.Clients = script.Clients / 2
		c.Actions = nil
		for _, a := range script.Actions {
			if !targetsClientBeyond(a, c.Clients) {
				c.Actions = append(c.Actions, a)
			}
		}
		ok, err := s.fails(&c)
		if err != nil || !ok {
			return script
		}
		script = &c
		s.progress(script)
	}
	return script
}

// targetsClientBeyond reports whether an action names a client numbered above clients.
func targetsClientBeyond(a scenarios.Action, clients int) bool {
	for _, arg := range a.Args {
		if n, err := strconv.Atoi(strings.TrimPrefix(arg, "c")); err == nil && strings.HasPrefix(arg, "c") && n > clients {
			return true
		}
	}
	return false
}

// text is the minimal script with a header naming the seed, the class and its replay command,
// for a script saved as path.
func (s *shrinker) text(script *scenarios.Script, flags scenarioFlags, path string) string {
	replayFlags := flags
	replayFlags.scriptPath = path
	// The script now decides the cluster, workload, faults, clients and duration.
	replayFlags.servers, replayFlags.observers, replayFlags.faults = defaultServers, defaultObservers, defaultFaults
	replayFlags.workload, replayFlags.clients, replayFlags.duration = "mixed", scenarios.DefaultClients, scenarios.DefaultDuration
	var b strings.Builder
	fmt.Fprintf(&b, "# Shrunk by simrun from seed %d: fails with %s.\n", s.originalSeed, s.class)
	fmt.Fprintf(&b, "# Replay: %s\n", replayFlags.replayCommand(s.opts.Seed))
	b.WriteString(scriptHeader(s.env))
	b.WriteString(script.String())
	return b.String()
}

// save prints the minimal script with a header naming its replay command, and writes it to the
// --out file.
func (s *shrinker) save(script *scenarios.Script, f *shrinkFlags) int {
	text := s.text(script, f.scenario, f.out)
	// The result is printed first: a failure to save it must not lose the runs it took.
	fmt.Fprint(s.env.stdout, text)
	if err := os.WriteFile(f.out, []byte(text), 0o644); err != nil {
		fmt.Fprintf(s.env.stderr, "simrun shrink: saving the script (printed above): %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(s.env.stderr, "shrink: %d actions left after %d runs; saved to %s\n", len(script.Actions), s.runs, f.out)
	return exitPass
}
