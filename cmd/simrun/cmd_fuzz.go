package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zabsim/zabsim/scenarios"
)

const fuzzUsage = `Usage: simrun fuzz [flags]

Fuzzes the ensemble with structure-aware inputs and protocol-state feedback, on every core, until
--time-limit or --execs. An input is a seed and a few edits of the scenario that seed draws (add,
drop, move, retarget or stretch a fault, or inject one at an effect boundary); the feedback is the
set of protocol situations the runs reached (each server's steps by role and ZAB phase, its
transitions, the relations between its epoch files and its log at every durable step, truncation
depths, what its disk lived through at each role and sync, what a fault hit and what the server
did next; see scenarios.Coverage), not Go line coverage, which a protocol saturates within a few
runs. An input that reaches a situation no earlier input reached joins the corpus (a failing input
does not: its mutants would fail the same way). Most mutations are site injections: a crash, a
pause or a connection reset at exactly one boundary hit of a corpus entry's run or of a recent
fresh seed's (its first append of a sync, its NEWLEADER epoch write, a SNAP sent), drawn by how
rare that situation is, so that the fault is sure to fire where the run is known to go (a third
of them then let the rest of the ensemble recover: later faults dropped, network healed, the
other servers started). Race edits hold a leader's quorum back around a client's create that a
run proposed (every other voter paused or clogged for up to 3 s) and reset the client's
connections, so that its retry meets a create proposed and not committed. Others add faults at
the moment of an entry's rarest new situations, rerun its faults under another seed, splice two
entries or edit at random. The first --fresh-first inputs are the swarm's first
seeds; after them a share of at least --fresh-percent are fresh seeds, the random swarm itself,
raised (up to 90%) while fresh seeds reach rarer situations than mutations do. The summary counts
runs, failing runs and new corpus entries per kind of input.

With --corpus DIR the corpus persists: every entry is a scenario script with a "# seed N" line,
read back and run first by the next campaign. With --out DIR the first failure of each class is
saved there as such a script, replayable with the command printed beside it (and shrinkable with
simrun shrink --script). Failures are deduplicated by class.

Exit status: 0 when no input failed, 1 when some did, 2 on bad usage.

Examples:
  simrun fuzz --time-limit 10m --corpus fuzz/corpus --out fuzz/failures
  simrun fuzz --bug ZK-4712 --duration 10s --clients 3 --stop-on-failure
`

type fuzzFlags struct {
	scenario      scenarioFlags
	timeLimit     time.Duration
	execs         int64
	corpus        string
	out           string
	seedStart     seedFlag
	parallel      int
	freshPercent  int
	freshFirst    int
	randomSeed    uint64
	stopOnFailure bool
	json          bool
}

func newFuzzFlags() (*flag.FlagSet, *fuzzFlags) {
	f := &fuzzFlags{seedStart: seedFlag{value: 1}}
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	f.scenario.register(fs)
	fs.DurationVar(&f.timeLimit, "time-limit", time.Minute, "wall time of the campaign (0: until --execs)")
	fs.Int64Var(&f.execs, "execs", 0, "stop after this many runs (0: until --time-limit)")
	fs.StringVar(&f.corpus, "corpus", "", "keep the corpus in `DIR` (read first, then new entries written there)")
	fs.StringVar(&f.out, "out", "", "save the first failing input of each class in `DIR`")
	fs.Var(&f.seedStart, "seed-start", "first fresh seed `S`; fresh seeds count up from it")
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once, one goroutine each")
	fs.IntVar(&f.freshPercent, "fresh-percent", 50, "least share of fresh seeds among the inputs after --fresh-first, 1 to 100 (it adapts above)")
	fs.IntVar(&f.freshFirst, "fresh-first", scenarios.DefaultFreshFirst, "fresh seeds run before the first mutation (the swarm's first seeds), 0 or more")
	fs.Uint64Var(&f.randomSeed, "random-seed", 1, "seed of the mutator's own choices (with --parallel 1 a campaign is then repeatable)")
	fs.BoolVar(&f.stopOnFailure, "stop-on-failure", false, "stop at the first failing input")
	fs.BoolVar(&f.json, "json", false, "print one JSON object per failure class and a summary object")
	return fs, f
}

func (f *fuzzFlags) validate() error {
	var problems []error
	if f.scenario.scriptPath != "" {
		problems = append(problems, errors.New("--script cannot be used with fuzz: the fuzzer makes its own scripts (use --corpus DIR to start from scripts)"))
	}
	if f.timeLimit < 0 || f.timeLimit > 7*24*time.Hour {
		problems = append(problems, fmt.Errorf("--time-limit must be 0 to 168h, not %v", f.timeLimit))
	}
	if f.execs < 0 {
		problems = append(problems, fmt.Errorf("--execs must be 0 or more, not %d", f.execs))
	}
	if f.timeLimit == 0 && f.execs == 0 {
		problems = append(problems, errors.New("--time-limit 0 needs --execs: the campaign must end"))
	}
	if f.parallel < 1 || f.parallel > maxParallel {
		problems = append(problems, fmt.Errorf("--parallel must be 1 to %d, not %d", maxParallel, f.parallel))
	}
	if f.freshPercent < 1 || f.freshPercent > 100 {
		problems = append(problems, fmt.Errorf("--fresh-percent must be 1 to 100, not %d", f.freshPercent))
	}
	if f.freshFirst < 0 || f.freshFirst > 1_000_000_000 {
		problems = append(problems, fmt.Errorf("--fresh-first must be 0 to 1000000000, not %d", f.freshFirst))
	}
	for _, dir := range []struct{ flag, path string }{{"--corpus", f.corpus}, {"--out", f.out}} {
		if dir.path == "" {
			continue
		}
		if err := os.MkdirAll(dir.path, 0o755); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", dir.flag, err))
		}
	}
	return errors.Join(problems...)
}

// fuzzClassRecord is one failure class of a campaign; it is also its JSON line.
type fuzzClassRecord struct {
	Type   string `json:"type"`
	Class  string `json:"class"`
	Count  int    `json:"count"`
	Seed   uint64 `json:"seed"`
	Edits  string `json:"edits,omitempty"`
	File   string `json:"file,omitempty"`
	Replay string `json:"replay"`
	// Execs is the run of the campaign (1-based) that found the class first, and WallSeconds when.
	Execs       int64   `json:"execs"`
	WallSeconds float64 `json:"wall_seconds"`
	Headline    string  `json:"headline"`
}

type fuzzSummary struct {
	Type        string  `json:"type"`
	Execs       int64   `json:"execs"`
	WallSeconds float64 `json:"wall_seconds"`
	ExecsPerSec float64 `json:"execs_per_second"`
	Corpus      int     `json:"corpus"`
	Features    int     `json:"features"`
	Failures    int     `json:"failing_runs"`
	Classes     int     `json:"failure_classes"`
	Invalid     int     `json:"invalid_inputs"`
	// FreshRuns counts the runs of fresh seeds, the swarm's own (the rest ran corpus entries or
	// their mutations).
	FreshRuns int64 `json:"fresh_runs"`
	// Mutations counts, per kind of input (fresh, site, recover, directed, reseed, splice, random,
	// corpus), the runs, the failing runs and the corpus entries it made: what each kind costs and
	// finds.
	Mutations []fuzzKindRecord `json:"mutations"`
}

// fuzzKindRecord is one kind of input's account in a campaign's summary.
type fuzzKindRecord struct {
	Kind    string `json:"kind"`
	Runs    int64  `json:"runs"`
	Failing int64  `json:"failing_runs"`
	Entries int64  `json:"corpus_entries"`
}

// fuzzKinds are the kinds of input in the order the summary lists them; "corpus" is a corpus
// directory's entry run as it is.
var fuzzKinds = []string{"fresh", "site", "recover", "race", "rejoin", "directed", "reseed", "splice", "random", "corpus"}

// countKind adds a run to its kind's account.
func (s *fuzzSummary) countKind(run fuzzRun) {
	if s.Mutations == nil {
		for _, kind := range fuzzKinds {
			s.Mutations = append(s.Mutations, fuzzKindRecord{Kind: kind})
		}
	}
	kind := run.candidate.Mutation
	if kind == "" {
		kind = "corpus"
	}
	i := slices.IndexFunc(s.Mutations, func(k fuzzKindRecord) bool { return k.Kind == kind })
	if i < 0 {
		s.Mutations = append(s.Mutations, fuzzKindRecord{Kind: kind})
		i = len(s.Mutations) - 1
	}
	k := &s.Mutations[i]
	k.Runs++
	if run.class != "" {
		k.Failing++
	}
	if run.entry != nil {
		k.Entries++
	}
}

func cmdFuzz(env *environment, args []string) int {
	fs, f := newFuzzFlags()
	if err := parseFlags(env, "fuzz", fs, args); err != nil {
		return flagExit(err)
	}
	f.scenario.noteSet(fs)
	if err := f.validate(); err != nil {
		usageFailed(env, "fuzz", err)
		return exitUsage
	}
	opts, err := f.scenario.options()
	if err != nil {
		usageFailed(env, "fuzz", err)
		return exitUsage
	}
	initial, err := readCorpus(f.corpus)
	if err != nil {
		usageFailed(env, "fuzz", err)
		return exitUsage
	}
	fuzzer := scenarios.NewFuzzer(scenarios.FuzzerOptions{SeedStart: f.seedStart.value, Duration: opts.Duration,
		FreshPercent: f.freshPercent, FreshFirst: freshFirstOption(f.freshFirst), RandomSeed: f.randomSeed})
	var classes []*fuzzClassRecord
	var summary fuzzSummary
	lastLine := time.Now()
	fuzzLoop(env, fuzzLoopConfig{opts: opts, fuzzer: fuzzer, parallel: f.parallel, initial: initial, maxExecs: f.execs, timeLimit: f.timeLimit},
		func(run fuzzRun) bool {
			summary.Execs, summary.WallSeconds, summary.Features = run.execs, run.wall.Seconds(), run.features
			if run.candidate.Fresh {
				summary.FreshRuns++
			}
			summary.countKind(run)
			if run.err != nil && run.class == "" {
				summary.Invalid++
				fmt.Fprintf(env.stderr, "fuzz: an input could not run (seed %d): %v\n", run.candidate.Seed, run.err)
				return true
			}
			if run.entry != nil && f.corpus != "" {
				if err := writeCorpusEntry(f.corpus, run.entry); err != nil {
					fmt.Fprintf(env.stderr, "fuzz: saving a corpus entry: %v\n", err)
				}
			}
			if run.class != "" {
				summary.Failures++
				classes = noteFuzzFailure(env, f, classes, run)
			}
			if time.Since(lastLine) >= 10*time.Second && !f.json {
				lastLine = time.Now()
				fmt.Fprintf(env.stderr, "fuzz: %d runs, %.1f/s, corpus %d, %d situations, %d failing runs in %d classes\n",
					run.execs, float64(run.execs)/run.wall.Seconds(), len(fuzzer.Corpus()), run.features, summary.Failures, len(classes))
			}
			return !(f.stopOnFailure && run.class != "")
		})
	summary.Type, summary.Corpus, summary.Classes = "summary", len(fuzzer.Corpus()), len(classes)
	summary.ExecsPerSec = ratio(float64(summary.Execs), summary.WallSeconds)
	if f.json {
		for _, c := range classes {
			writeJSON(env.stdout, c)
		}
		writeJSON(env.stdout, summary)
	} else {
		writeFuzzSummary(env.stdout, summary, classes)
	}
	if summary.Failures > 0 {
		return exitFailure
	}
	return exitPass
}

// freshFirstOption turns --fresh-first into FuzzerOptions.FreshFirst, whose zero means the default.
func freshFirstOption(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// noteFuzzFailure counts a failing run in its class; the first of a class is saved and printed.
func noteFuzzFailure(env *environment, f *fuzzFlags, classes []*fuzzClassRecord, run fuzzRun) []*fuzzClassRecord {
	for _, c := range classes {
		if c.Class == run.class {
			c.Count++
			return classes
		}
	}
	record := &fuzzClassRecord{Type: "class", Class: run.class, Count: 1, Seed: run.candidate.Seed, Execs: run.execs,
		WallSeconds: run.wall.Seconds(), Edits: describeEdits(run.candidate.Edits)}
	if run.report != nil {
		record.Headline = headline(run.report.Explain())
	}
	if f.out != "" && run.report != nil {
		name := fmt.Sprintf("%s-seed%d.script", fileSafe(run.class), run.candidate.Seed)
		path := filepath.Join(f.out, name)
		record.File = path
		record.Replay = fuzzReplayCommand(&f.scenario, path, run.candidate.Seed)
		text := scenarios.FormatFuzzScript(run.candidate.Seed, run.report.Script, "found by simrun fuzz: "+run.class,
			"replay: "+record.Replay)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			fmt.Fprintf(env.stderr, "fuzz: saving %s: %v\n", path, err)
		}
	} else {
		record.Replay = fmt.Sprintf("(save it with --out DIR) seed %d with edits %s", run.candidate.Seed, record.Edits)
	}
	if !f.json {
		fmt.Fprintf(env.stdout, "FAIL %s: run %d, seed %d%s\n  %s\n  %s\n", run.class, run.execs, run.candidate.Seed,
			editsSuffix(record.Edits), record.Headline, record.Replay)
	}
	return append(classes, record)
}

func editsSuffix(edits string) string {
	if edits == "" {
		return " (no edit: the seed's own run)"
	}
	return ", edits: " + edits
}

func describeEdits(edits []scenarios.Edit) string {
	parts := make([]string, len(edits))
	for i, e := range edits {
		parts[i] = e.String()
	}
	return strings.Join(parts, "; ")
}

// fuzzReplayCommand replays a saved input: the script decides the cluster, the workload, the
// faults, the clients and the duration; the other run flags are repeated.
func fuzzReplayCommand(f *scenarioFlags, path string, seed uint64) string {
	replay := *f
	replay.scriptPath = path
	replay.servers, replay.observers, replay.clients = defaultServers, defaultObservers, scenarios.DefaultClients
	replay.workload, replay.faults, replay.duration = "mixed", defaultFaults, scenarios.DefaultDuration
	return replay.replayCommand(seed)
}

// fileSafe turns a failure class into a file name part.
func fileSafe(class string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, class)
}

// readCorpus reads a corpus directory's scripts, sorted by name so that a campaign starts the same
// way every time. A file that does not parse is an error naming it: a corpus is the tool's own
// output, and a damaged one should be noticed, not skipped.
func readCorpus(dir string) ([]*scenarios.FuzzEntry, error) {
	if dir == "" {
		return nil, nil
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.script"))
	if err != nil {
		return nil, fmt.Errorf("--corpus: %w", err)
	}
	slices.Sort(names)
	var entries []*scenarios.FuzzEntry
	for _, name := range names {
		text, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("--corpus: %w", err)
		}
		seed, script, err := scenarios.ParseFuzzScript(string(text))
		if err != nil {
			return nil, fmt.Errorf("--corpus: %s: %w", name, err)
		}
		entries = append(entries, &scenarios.FuzzEntry{Seed: seed, Script: script})
	}
	return entries, nil
}

// writeCorpusEntry saves an entry under a name made of its seed and a hash of its script, with the
// situations it reached first as comments.
func writeCorpusEntry(dir string, e *scenarios.FuzzEntry) error {
	text := e.Script.String()
	var h uint64 = 14695981039346656037
	for i := 0; i < len(text); i++ {
		h = (h ^ uint64(text[i])) * 1099511628211
	}
	comments := []string{fmt.Sprintf("reached %d new situations first, among them:", len(e.New))}
	for i, ft := range e.New {
		if i == 5 {
			break
		}
		comments = append(comments, fmt.Sprintf("  zk%d at %v: %s", ft.Server, time.Duration(ft.At), ft.Name))
	}
	path := filepath.Join(dir, fmt.Sprintf("seed%d-%016x.script", e.Seed, h))
	return os.WriteFile(path, []byte(scenarios.FormatFuzzScript(e.Seed, e.Script, comments...)), 0o644)
}

func writeFuzzSummary(w io.Writer, s fuzzSummary, classes []*fuzzClassRecord) {
	var b strings.Builder
	fmt.Fprintf(&b, "fuzz: %d runs in %s (%.1f runs/s, %d of them fresh seeds), corpus %d, %d distinct protocol situations\n",
		s.Execs, seconds(s.WallSeconds), s.ExecsPerSec, s.FreshRuns, s.Corpus, s.Features)
	var kinds []string
	for _, k := range s.Mutations {
		if k.Runs > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d (%d failing, %d new)", k.Kind, k.Runs, k.Failing, k.Entries))
		}
	}
	if len(kinds) > 0 {
		fmt.Fprintf(&b, "runs by kind: %s\n", strings.Join(kinds, ", "))
	}
	if len(classes) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "CLASS\tRUNS\tFIRST AT RUN\tSEED\tREPLAY")
		for _, c := range classes {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", c.Class, c.Count, c.Execs, c.Seed, c.Replay)
		}
		_ = tw.Flush()
	}
	if s.Invalid > 0 {
		fmt.Fprintf(&b, "%d inputs could not run (see above)\n", s.Invalid)
	}
	if s.Failures == 0 {
		fmt.Fprintf(&b, "PASS: no input failed\n")
	} else {
		fmt.Fprintf(&b, "FAIL: %d failing runs in %d classes\n", s.Failures, len(classes))
	}
	_, _ = io.WriteString(w, b.String())
}
