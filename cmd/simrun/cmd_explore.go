package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/zabmodel"
)

const exploreUsage = `Usage: simrun explore [flags]

Explores a small configuration exhaustively, crash point by crash point, the way crash-consistency
tools enumerate crash states. A crash point is a place between two persistence steps where a
server can die (--points below lists them). The base run (a seed and a script) runs once and
records every crash point a server reaches during the fault phase. Then, for each of those hits,
the same seed runs again with the crash at exactly that hit: the base script plus
"at 0s crashpoint zkSID POINT K restart DUR" (the server dies at its K-th hit of POINT and starts
again DUR later). Every run is judged by every checker, and every crash is checked to have landed
at its hit.

The base is --script FILE, or the built-in one: 3 servers, 0 observers, 2 clients, the registers
workload, 20s, with the leader crashed at 4s and 11s and every server restarted at 7s and 14s (so
that elections, discovery, DIFF syncs and broadcast all happen and every point is reached).
--servers, --clients, --workload and --duration change the built-in base; with --script, the
script decides them and the flags are refused. A --duration shorter than the built-in base's
actions drops the actions past it.

At most --max-runs crashes are explored. With more hits than that, an evenly spaced subset is, and
the summary says so (explored X of Y, one in every Z): never read such a pass as exhaustive.

--out DIR writes the base script as DIR/base.script and, for each failing crash, a directory
DIR/crash-I-zkS-POINT-K/ with its script and its explanation with the replay command
(simrun replay --script DIR/crash-.../script.txt --seed S).

Exit status: 0 when every explored crash passed, 1 when one failed (or the base failed without any
crash, or a crash missed its hit), 2 on bad usage.

Examples:
  simrun explore                                       # every hit of the built-in base, seed 1
  simrun explore --seed 7 --points newleader-before-epoch,newleader-appended
  simrun explore --bug ZK-1653 --points epoch-file-renamed:currentEpoch --out crashes/
  simrun explore --script scenarios/testdata/named/crash-inside-newleader.script --seed 3 --max-runs 500 --json > explore.json
`

// exploreFlags are the explore command's flags.
type exploreFlags struct {
	seed         seedFlag
	scriptPath   string
	servers      int
	clients      int
	workload     string
	duration     time.Duration
	points       string
	restartAfter time.Duration
	maxRuns      int
	parallel     int
	bugs         bugFlag
	outDir       string
	json         bool
	set          map[string]bool
}

func newExploreFlags() (*flag.FlagSet, *exploreFlags) {
	base := scenarios.DefaultExploreScript()
	f := &exploreFlags{seed: seedFlag{value: 1}}
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	fs.Var(&f.seed, "seed", "the seed `S` of the base run and of every explored run")
	fs.StringVar(&f.scriptPath, "script", "", "the base scenario script `FILE` (default: the built-in base described above)")
	fs.IntVar(&f.servers, "servers", base.Servers, "voting servers of the built-in base: 1 to 7")
	fs.IntVar(&f.clients, "clients", base.Clients, "client applications of the built-in base, 1 to 100")
	fs.StringVar(&f.workload, "workload", base.Workload, "workload of the built-in base: "+strings.Join(scenarios.Workloads(), ", "))
	fs.DurationVar(&f.duration, "duration", time.Duration(base.Duration), "fault phase of the built-in base (at most 1h)")
	fs.StringVar(&f.points, "points", "all", "crash points to explore, comma-separated ("+strings.Join(scenarios.CrashPoints(), ", ")+"), or all")
	fs.DurationVar(&f.restartAfter, "restart-after", time.Duration(scenarios.DefaultExploreRestartAfter), "how long after its crash a server starts again")
	fs.IntVar(&f.maxRuns, "max-runs", scenarios.DefaultExploreMaxRuns, "explore at most this many crashes (an evenly spaced subset past it)")
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once, one goroutine each")
	fs.Var(&f.bugs, "bug", "re-introduce a real bug by `NAME` in every run (repeatable or comma-separated; see 'simrun bugs')")
	fs.StringVar(&f.outDir, "out", "", "write the base script and each failing crash's script and explanation under `DIR`")
	fs.BoolVar(&f.json, "json", false, "print the result as one JSON object on stdout")
	return fs, f
}

func cmdExplore(env *environment, args []string) int {
	fs, f := newExploreFlags()
	if err := parseFlags(env, "explore", fs, args); err != nil {
		return flagExit(err)
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	opts, err := f.options()
	if err != nil {
		usageFailed(env, "explore", err)
		return exitUsage
	}
	if f.outDir != "" {
		if err := os.MkdirAll(f.outDir, 0o755); err != nil {
			usageFailed(env, "explore", fmt.Errorf("--out: %w", err))
			return exitUsage
		}
	}
	printer := &explorePrinter{env: env, flags: f, progress: env.stderrIsTerminal && !f.json}
	opts.Execute = workerPool(f.parallel, printer.drawProgress)
	began := time.Now()
	opts.Stopwatch = func() time.Duration { return time.Since(began) }
	result, err := scenarios.Explore(opts)
	printer.clearProgress()
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun explore: %v\n", err)
		return exitUsage
	}
	return printer.print(result)
}

// options validates the flags and builds the exploration's options.
func (f *exploreFlags) options() (scenarios.ExploreOptions, error) {
	opts := scenarios.ExploreOptions{Seed: f.seed.value, Bugs: f.bugs.bugs, RecipeBugs: f.bugs.recipe,
		RestartAfter: clock.Duration(f.restartAfter), MaxRuns: f.maxRuns}
	var problems []error
	if f.parallel < 1 || f.parallel > maxParallel {
		problems = append(problems, fmt.Errorf("--parallel must be 1 to %d, not %d", maxParallel, f.parallel))
	}
	if f.maxRuns < 1 || f.maxRuns > maxExploreRuns {
		problems = append(problems, fmt.Errorf("--max-runs must be 1 to %d, not %d", maxExploreRuns, f.maxRuns))
	}
	problems = append(problems, positiveDuration("--restart-after", f.restartAfter))
	points, err := parsePoints(f.points)
	problems = append(problems, err)
	opts.Points = points
	base, err := f.base()
	problems = append(problems, err)
	opts.Script = base
	return opts, errors.Join(problems...)
}

// maxExploreRuns bounds --max-runs: a million runs of a small configuration is hours of work.
const maxExploreRuns = 1_000_000

// parsePoints reads --points: "all" or known crash point names.
func parsePoints(value string) ([]string, error) {
	if strings.TrimSpace(value) == "all" {
		return scenarios.CrashPoints(), nil
	}
	var points []string
	for _, name := range strings.Split(value, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(scenarios.CrashPoints(), name) {
			return nil, fmt.Errorf("--points: unknown crash point %q (known: %s, or all)", name, strings.Join(scenarios.CrashPoints(), ", "))
		}
		if !slices.Contains(points, name) {
			points = append(points, name)
		}
	}
	return points, nil
}

// base reads --script, or builds the built-in base with the shape flags applied. The shape flags
// are refused with --script, whose own statements decide the shape.
func (f *exploreFlags) base() (*scenarios.Script, error) {
	if f.scriptPath != "" {
		var conflicts []error
		for _, name := range []string{"servers", "clients", "workload", "duration"} {
			if f.set[name] {
				conflicts = append(conflicts, fmt.Errorf("--%s cannot be used with --script: %s", name, scriptConflictAdvice))
			}
		}
		if err := errors.Join(conflicts...); err != nil {
			return nil, err
		}
		return readScript(f.scriptPath)
	}
	base := scenarios.DefaultExploreScript()
	var problems []error
	if f.servers < 1 || f.servers > zabmodel.MaxVoters {
		problems = append(problems, fmt.Errorf("--servers must be 1 to %d, not %d", zabmodel.MaxVoters, f.servers))
	}
	if f.clients < 1 || f.clients > 100 {
		problems = append(problems, fmt.Errorf("--clients must be 1 to 100, not %d", f.clients))
	}
	if !slices.Contains(scenarios.Workloads(), f.workload) {
		problems = append(problems, fmt.Errorf("--workload must be one of %s, not %q", strings.Join(scenarios.Workloads(), ", "), f.workload))
	}
	problems = append(problems, positiveDuration("--duration", f.duration))
	base.Servers, base.Clients, base.Workload, base.Duration = f.servers, f.clients, f.workload, clock.Duration(f.duration)
	// An action past the fault phase would strike during the liveness phase, which must be calm.
	base.Actions = slices.DeleteFunc(base.Actions, func(a scenarios.Action) bool { return a.At >= base.Duration })
	return base, errors.Join(problems...)
}

func readScript(path string) (*scenarios.Script, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--script: %w", err)
	}
	defer file.Close()
	script, err := scenarios.ParseScript(file)
	if err != nil {
		return nil, fmt.Errorf("malformed script %s: %w", path, err)
	}
	return script, nil
}

// workerPool is the ExploreOptions.Execute of simrun: parallel goroutines, each running whole runs
// one after another. finished, if given, is told of each finished run, one call at a time.
func workerPool(parallel int, finished func(done, jobs int)) func(jobs int, run func(job int)) {
	return func(jobs int, run func(job int)) {
		work := make(chan int)
		var workers sync.WaitGroup
		var mu sync.Mutex
		done := 0
		for range min(parallel, jobs) {
			workers.Add(1)
			go func() {
				defer workers.Done()
				for job := range work {
					run(job)
					mu.Lock()
					done++
					if finished != nil {
						finished(done, jobs)
					}
					mu.Unlock()
				}
			}()
		}
		for job := range jobs {
			work <- job
		}
		close(work)
		workers.Wait()
	}
}

// explorePrinter prints an exploration's result and writes its artifacts.
type explorePrinter struct {
	env          *environment
	flags        *exploreFlags
	progress     bool
	lastProgress time.Time
}

func (p *explorePrinter) drawProgress(done, jobs int) {
	if !p.progress || (done < jobs && time.Since(p.lastProgress) < progressInterval) {
		return
	}
	p.lastProgress = time.Now()
	fmt.Fprintf(p.env.stderr, "\r\033[K%d/%d crashes explored", done, jobs)
}

func (p *explorePrinter) clearProgress() {
	if p.progress {
		fmt.Fprint(p.env.stderr, "\r\033[K")
	}
}

// print writes the result (and --out) and returns the exit code.
func (p *explorePrinter) print(res *scenarios.ExploreResult) int {
	record := p.record(res)
	var artifactsErr error
	if p.flags.outDir != "" {
		if artifactsErr = p.writeArtifacts(&record); artifactsErr != nil {
			fmt.Fprintf(p.env.stderr, "simrun explore: %v\n", artifactsErr)
		}
	}
	if p.flags.json {
		writeJSON(p.env.stdout, record)
	} else {
		writeExploreText(p.env.stdout, record, p.flags.parallel)
	}
	if record.Passed && artifactsErr == nil {
		return exitPass
	}
	return exitFailure
}

// exploreRecord is the result as printed: the JSON object, and what the text form reads.
type exploreRecord struct {
	Type         string            `json:"type"`
	Seed         uint64            `json:"seed"`
	BaseScript   string            `json:"base_script"`
	BaseFile     string            `json:"base_file,omitempty"`
	Bugs         string            `json:"bugs"`
	Points       []string          `json:"points"`
	RestartAfter string            `json:"restart_after"`
	BaseFailure  string            `json:"base_failure,omitempty"`
	BaseExplain  string            `json:"base_explanation,omitempty"`
	HitsByPoint  []pointRecord     `json:"hits_by_point"`
	Hits         int               `json:"hits"`
	Candidates   int               `json:"candidates"`
	Explored     int               `json:"explored"`
	Exhaustive   bool              `json:"exhaustive"`
	Stride       float64           `json:"stride"`
	Passed       bool              `json:"passed"`
	Failed       int               `json:"failed"`
	Misplaced    int               `json:"misplaced"`
	Classes      map[string]int    `json:"failures_by_class"`
	Failures     []crashRecord     `json:"failures"`
	WallSeconds  float64           `json:"wall_seconds"`
	RunsPerSec   float64           `json:"runs_per_second"`
	Flags        []string          `json:"flags"`
	baseScript   *scenarios.Script // for the text form; the JSON has its text
}

type pointRecord struct {
	Point string `json:"point"`
	Hits  int    `json:"hits"`
}

// crashRecord is one failing explored crash.
type crashRecord struct {
	Sid         int64   `json:"sid"`
	Point       string  `json:"point"`
	Occurrence  int     `json:"occurrence"`
	AtSeconds   float64 `json:"at_seconds"`
	Seed        uint64  `json:"seed"`
	Class       string  `json:"class"`
	Headline    string  `json:"headline"`
	Explanation string  `json:"explanation"`
	Action      string  `json:"action"`
	Script      string  `json:"script"`
	Replay      string  `json:"replay,omitempty"`
	Artifacts   string  `json:"artifacts,omitempty"`
}

func (p *explorePrinter) record(res *scenarios.ExploreResult) exploreRecord {
	r := exploreRecord{
		Type: "explore", Seed: res.Seed, BaseScript: res.Script.String(), Bugs: cmp.Or(p.flags.bugs.String(), "none"),
		Points: res.Points, RestartAfter: time.Duration(res.RestartAfter).String(), BaseFailure: res.BaseFailure,
		BaseExplain: res.BaseExplanation, Hits: len(res.Hits), Candidates: res.Candidates, Explored: res.Explored,
		Exhaustive: res.Exhaustive, Stride: res.Stride, Passed: res.Passed(), Classes: map[string]int{},
		Failures: []crashRecord{}, WallSeconds: res.Wall.Seconds(), RunsPerSec: ratio(float64(res.Explored), res.Wall.Seconds()),
		Flags: p.replayFlags(), baseScript: res.Script,
	}
	for _, count := range res.HitsByPoint() {
		r.HitsByPoint = append(r.HitsByPoint, pointRecord{Point: count.Point, Hits: count.Hits})
	}
	for _, run := range res.Failures() {
		r.Failed++
		r.Classes[run.Class]++
		if run.Class == scenarios.ClassMisplaced {
			r.Misplaced++
		}
		r.Failures = append(r.Failures, crashRecord{
			Sid: run.Hit.Sid, Point: run.Hit.Point, Occurrence: run.Hit.Occurrence, AtSeconds: clock.Duration(run.Hit.At).Seconds(),
			Seed: run.Seed, Class: run.Class, Headline: headline(run.Explanation), Explanation: run.Explanation,
			Action: run.Script.Actions[0].String(), Script: run.Script.String(),
		})
	}
	return r
}

// replayFlags are the flags a replay of any of this exploration's runs needs besides the script
// and the seed: the bugs.
func (p *explorePrinter) replayFlags() []string {
	if p.flags.bugs.empty() {
		return []string{}
	}
	return []string{"--bug", shellQuote(p.flags.bugs.String())}
}

func replayScriptCommand(path string, seed uint64, flags []string) string {
	return strings.Join(append([]string{"simrun", "replay", "--script", shellQuote(path), "--seed", strconv.FormatUint(seed, 10)}, flags...), " ")
}

// writeArtifacts writes --out: the base script, and a directory per failing crash with its script
// and its explanation with the replay command.
func (p *explorePrinter) writeArtifacts(r *exploreRecord) error {
	if err := os.MkdirAll(p.flags.outDir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	r.BaseFile = filepath.Join(p.flags.outDir, "base.script")
	if err := os.WriteFile(r.BaseFile, []byte(r.BaseScript), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	for i := range r.Failures {
		c := &r.Failures[i]
		dir := filepath.Join(p.flags.outDir, fmt.Sprintf("crash-%d-zk%d-%s-%d", i+1, c.Sid, strings.ReplaceAll(c.Point, ":", "-"), c.Occurrence))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		script := filepath.Join(dir, "script.txt")
		c.Replay, c.Artifacts = replayScriptCommand(script, c.Seed, r.Flags), dir
		explanation := fmt.Sprintf("class: %s\ncrash: zk%d at %s, hit #%d, at %.6fs (%s)\nreplay: %s\n\n%s",
			c.Class, c.Sid, c.Point, c.Occurrence, c.AtSeconds, c.Action, c.Replay, c.Explanation)
		if err := os.WriteFile(script, []byte(c.Script), 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "explanation.txt"), []byte(explanation), 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return nil
}

// writeExploreText prints the result for a person: the base, its hits, each failing crash, and a
// summary whose last line is the verdict.
func writeExploreText(w io.Writer, r exploreRecord, parallel int) {
	var b strings.Builder
	s := r.baseScript
	fmt.Fprintf(&b, "base: seed %d, %d servers, %d observers, %d clients, %s, %s, %d actions, bugs: %s\n",
		r.Seed, s.Servers, s.Observers, s.Clients, s.Workload, time.Duration(s.Duration), len(s.Actions), r.Bugs)
	if r.BaseFile != "" {
		fmt.Fprintf(&b, "  saved as %s\n", r.BaseFile)
	}
	if r.BaseFailure != "" {
		fmt.Fprintf(&b, "FAIL base: %s\n  %s\n", r.BaseFailure, headline(r.BaseExplain))
		if r.BaseFile != "" {
			fmt.Fprintf(&b, "  replay: %s\n", replayScriptCommand(r.BaseFile, r.Seed, r.Flags))
		}
		b.WriteString("FAIL: the base run fails without any injected crash; nothing was explored (fix or change the base)\n")
		_, _ = io.WriteString(w, b.String())
		return
	}
	b.WriteString("crash point hits in the base run's fault phase:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, count := range r.HitsByPoint {
		fmt.Fprintf(tw, "  %s\t%d\n", count.Point, count.Hits)
	}
	fmt.Fprintf(tw, "  total\t%d\n", r.Hits)
	_ = tw.Flush()
	for i, c := range r.Failures {
		if i == maxListedFailures {
			fmt.Fprintf(&b, "... and %d more failing crashes (use --json to list every one)\n", len(r.Failures)-i)
			break
		}
		fmt.Fprintf(&b, "FAIL zk%d %s #%d at %.6fs: %s\n  %s\n  crash: %s\n", c.Sid, c.Point, c.Occurrence, c.AtSeconds, c.Class, c.Headline, c.Action)
		if c.Replay != "" {
			fmt.Fprintf(&b, "  replay: %s\n", c.Replay)
		}
	}
	writeExploreSummary(&b, r, parallel)
	_, _ = io.WriteString(w, b.String())
}

func writeExploreSummary(b *strings.Builder, r exploreRecord, parallel int) {
	points := "every crash point"
	if len(r.Points) < len(scenarios.CrashPoints()) {
		points = strings.Join(r.Points, ", ")
	}
	fmt.Fprintf(b, "summary: %d of %d hits of %s explored, %d in parallel\n", r.Explored, r.Candidates, points, parallel)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  runs\t%d\n", r.Explored)
	fmt.Fprintf(tw, "  passed\t%d\n", r.Explored-r.Failed)
	fmt.Fprintf(tw, "  failed\t%d\n", r.Failed)
	classes := make([]string, 0, len(r.Classes))
	for class := range r.Classes {
		classes = append(classes, class)
	}
	slices.Sort(classes)
	for _, class := range classes {
		fmt.Fprintf(tw, "    %s\t%d\n", class, r.Classes[class])
	}
	fmt.Fprintf(tw, "  runs/s\t%.1f\n", r.RunsPerSec)
	fmt.Fprintf(tw, "  wall time\t%s\n", time.Duration(r.WallSeconds*float64(time.Second)).Round(time.Millisecond))
	_ = tw.Flush()
	coverage := "exhaustive: every hit of the explored points"
	if !r.Exhaustive {
		coverage = fmt.Sprintf("NOT exhaustive: an evenly spaced sample of %d of %d hits, one in every %.2f (raise --max-runs for all)",
			r.Explored, r.Candidates, r.Stride)
	}
	fmt.Fprintf(b, "coverage: %s\n", coverage)
	if r.Failed > 0 && r.Failures[0].Replay == "" {
		b.WriteString("note: --out DIR saves each failing crash's script with the command that replays it\n")
	}
	if r.Misplaced > 0 {
		fmt.Fprintf(b, "EXPLORER BUG: %d crashes did not land at their hit (class %s; please report it)\n", r.Misplaced, scenarios.ClassMisplaced)
	}
	switch {
	case r.Failed > 0:
		fmt.Fprintf(b, "FAIL: %d of %d explored crashes failed\n", r.Failed, r.Explored)
	case r.Explored == 0:
		b.WriteString("PASS, VACUOUSLY: the base run reached none of the explored points, so no crash was explored\n")
	case r.Exhaustive:
		fmt.Fprintf(b, "PASS: all %d explored crashes passed\n", r.Explored)
	default:
		fmt.Fprintf(b, "PASS: all %d explored crashes passed (a sample, not every hit)\n", r.Explored)
	}
}
