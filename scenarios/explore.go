package scenarios

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/zabmodel"
)

// Explore is systematic crash-point exploration of one small configuration, the way
// crash-consistency tools (ALICE, FoundationDB's and TigerBeetle's storage fault testing) enumerate
// crash states: a base run (a seed and a script) is run once while every crash point that a server
// reaches is recorded; then, for each of those hits, the same seed is run again with the base
// script plus "at 0s crashpoint zkSID POINT k restart DUR", which crashes that server at exactly
// that hit (the run is deterministic and an armed crash point only counts hits until its own) and
// starts it again DUR later. Every such run is judged by every checker.
//
// The runs are independent worlds: Execute may run them on as many goroutines as it likes. Each
// run's verdict is kept by its index, so the result does not depend on how they were scheduled.
type ExploreOptions struct {
	// Seed decides the base run, and with it every explored run.
	Seed uint64
	// Script is the base configuration; nil means DefaultExploreScript(). Explore does not modify
	// it.
	Script *Script
	// Bugs re-introduces real ZooKeeper bugs in every server of every run.
	Bugs zabmodel.Bugs
	// RecipeBugs re-introduces lock recipe bugs (for the lock workloads).
	RecipeBugs lockmodel.Bugs
	// Points restricts exploration to these crash points (see CrashPoints); empty means all.
	Points []string
	// RestartAfter is how long after its crash an explored server starts again (default 2 s).
	RestartAfter clock.Duration
	// MaxRuns bounds the explored runs (default 2000). With more hits than that, an evenly spaced
	// subset is explored and the result says so.
	MaxRuns int
	// LivenessBound is each run's liveness bound (default DefaultLivenessBound).
	LivenessBound clock.Duration
	// Execute runs run(0), ..., run(jobs-1), each exactly once, in any order and on any
	// goroutines, and returns when all have returned. nil runs them one after another. Simulated
	// packages start no goroutines; a caller outside the simulation (simrun, a test) supplies a
	// worker pool here.
	Execute func(jobs int, run func(job int))
	// Stopwatch, if set, reads the host's monotonic clock for the result's wall time.
	Stopwatch func() time.Duration
}

// Exploration defaults and bounds.
const (
	DefaultExploreRestartAfter = 2 * clock.Second
	DefaultExploreMaxRuns      = 2000
	maxExploreRuns             = 1_000_000
)

// ClassMisplaced is the class of an explored run whose crash did not happen at the hit it was
// aimed at: a bug in the explorer or in zabsim's determinism, never in the system under test.
const ClassMisplaced = "explore:misplaced"

// DefaultExploreScript is the default base: a small ensemble whose leader crashes twice and comes
// back, so that elections, discovery, DIFF syncs and broadcast all happen and every crash point
// is reached.
func DefaultExploreScript() *Script {
	s, err := ParseScript(strings.NewReader(defaultExploreScript))
	if err != nil {
		panic("scenarios: the default exploration script does not parse: " + err.Error())
	}
	return s
}

const defaultExploreScript = `# The default base of 'simrun explore': two leader crashes with restarts.
servers 3
observers 0
clients 2
workload registers
duration 20s
at 4s crash leader
at 7s restart all
at 11s crash leader
at 14s restart all
`

// ExploreHit is one crash point the base run reached during its fault phase: the Occurrence-th
// time (from 1) that server Sid reached Point, at virtual time At.
type ExploreHit struct {
	Sid        int64
	Point      string
	Occurrence int
	At         clock.Time
}

func (h ExploreHit) String() string {
	return fmt.Sprintf("zk%d %s #%d at %s", h.Sid, h.Point, h.Occurrence, strings.TrimSpace(h.At.String()))
}

// ExploreRun is the verdict on one explored crash.
type ExploreRun struct {
	Hit ExploreHit
	// Script is the base script with the crashpoint action first; run it with Seed to replay.
	Script *Script
	Seed   uint64
	// Class is the run's Report.Failure ("" for a pass), or ClassMisplaced.
	Class       string
	Explanation string
	// CrashedAt is when the server crashed at the hit's occurrence of its point, clock.Never if it
	// did not crash there.
	CrashedAt clock.Time
	// Landed says that the crash happened at the hit: the same server, point, occurrence and
	// virtual time as in the base run. (Crashes that the base script arms itself may come too.)
	Landed bool
}

// Failed reports whether the explored run failed a check or missed its hit.
func (r ExploreRun) Failed() bool { return r.Class != "" }

// PointCount is how often the base run reached one crash point.
type PointCount struct {
	Point string
	Hits  int
}

// ExploreResult is what an exploration found.
type ExploreResult struct {
	Seed         uint64
	Script       *Script // the base
	Bugs         string
	Points       []string // the points explored
	RestartAfter clock.Duration
	// BaseFailure is the base run's failure class. When it is not "", nothing was explored: a
	// crash cannot be blamed for what fails without it.
	BaseFailure     string
	BaseExplanation string
	// Hits lists every crash point hit of the base run's fault phase, of every point, in order.
	Hits []ExploreHit
	// Candidates counts the hits of the explored points; Explored counts the runs made. When
	// Candidates exceeded MaxRuns, an evenly spaced subset was explored, one hit in every Stride.
	Candidates int
	Explored   int
	Exhaustive bool
	Stride     float64
	Runs       []ExploreRun
	Wall       time.Duration
}

// HitsByPoint counts the base run's hits of each crash point, in CrashPoints order.
func (r *ExploreResult) HitsByPoint() []PointCount {
	counts := make([]PointCount, len(crashPointNames))
	for i, point := range crashPointNames {
		counts[i].Point = point
	}
	for _, h := range r.Hits {
		i := slices.Index(crashPointNames, h.Point)
		if i < 0 {
			panic(fmt.Sprintf("scenarios: the base run reached crash point %q, which CrashPoints does not list", h.Point))
		}
		counts[i].Hits++
	}
	return counts
}

// Failures returns the explored runs that failed, misplaced ones included, in hit order.
func (r *ExploreResult) Failures() []ExploreRun {
	var out []ExploreRun
	for _, run := range r.Runs {
		if run.Failed() {
			out = append(out, run)
		}
	}
	return out
}

// Passed reports whether the base passed and every explored crash landed and passed.
func (r *ExploreResult) Passed() bool { return r.BaseFailure == "" && len(r.Failures()) == 0 }

// Explore runs the base, then one run per selected crash point hit; see ExploreOptions. An error
// means the options or the base could not be run at all; failures of runs are in the result.
func Explore(o ExploreOptions) (*ExploreResult, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	res := &ExploreResult{Seed: o.Seed, Script: cloneScript(o.Script), Bugs: o.Bugs.String(), Points: o.Points,
		RestartAfter: o.RestartAfter}
	var hits []CrashPointHit
	base, err := Run(o.runOptions(o.Script, func(h CrashPointHit) { hits = append(hits, h) }))
	if err != nil {
		return nil, fmt.Errorf("scenarios: the base run: %w", err)
	}
	res.Hits = numberHits(hits)
	if res.BaseFailure = base.Failure(); res.BaseFailure != "" {
		res.BaseExplanation = base.Explain()
		res.Wall = o.elapsed()
		return res, nil
	}
	selected := res.selectHits(o.Points, o.MaxRuns)
	res.Runs = make([]ExploreRun, len(selected))
	errs := make([]error, len(selected))
	execute := o.Execute
	if execute == nil {
		execute = runInOrder
	}
	execute(len(selected), func(job int) {
		res.Runs[job], errs[job] = o.exploreHit(selected[job])
	})
	res.Wall = o.elapsed()
	if failed := slices.DeleteFunc(errs, func(err error) bool { return err == nil }); len(failed) > 0 {
		return nil, fmt.Errorf("%w (and %d more runs could not be made)", failed[0], len(failed)-1)
	}
	return res, nil
}

func runInOrder(jobs int, run func(job int)) {
	for job := range jobs {
		run(job)
	}
}

// withDefaults fills the defaults and checks the options.
func (o ExploreOptions) withDefaults() (ExploreOptions, error) {
	if o.Script == nil {
		o.Script = DefaultExploreScript()
	}
	// The base as the runner will run it, so that the result and every saved script say what ran.
	o.Script = cloneScript(o.Script)
	o.Script.Clients = cmp.Or(o.Script.Clients, DefaultClients)
	o.Script.Duration = cmp.Or(o.Script.Duration, DefaultDuration)
	o.Script.Workload = cmp.Or(o.Script.Workload, "registers")
	if o.RestartAfter == 0 {
		o.RestartAfter = DefaultExploreRestartAfter
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = DefaultExploreMaxRuns
	}
	if o.LivenessBound == 0 {
		o.LivenessBound = DefaultLivenessBound
	}
	if len(o.Points) == 0 {
		o.Points = CrashPoints()
	}
	var problems []error
	for _, p := range o.Points {
		if !slices.Contains(crashPointNames, p) {
			problems = append(problems, fmt.Errorf("%w: unknown crash point %q (known: %s)", ErrOptions, p, strings.Join(crashPointNames, ", ")))
		}
	}
	if o.RestartAfter < 0 || o.RestartAfter > clock.Hour {
		problems = append(problems, fmt.Errorf("%w: restart-after %v must be between 0 and 1h", ErrOptions, o.RestartAfter))
	}
	if o.MaxRuns < 1 || o.MaxRuns > maxExploreRuns {
		problems = append(problems, fmt.Errorf("%w: max runs must be 1 to %d, not %d", ErrOptions, maxExploreRuns, o.MaxRuns))
	}
	if o.Script.Servers == 0 {
		problems = append(problems, fmt.Errorf("%w: the base script sets no servers", ErrOptions))
	}
	if err := recipeBugsApply(o.RecipeBugs, o.Script.Workload); err != nil {
		problems = append(problems, fmt.Errorf("the base script: %w", err))
	}
	return o, errors.Join(problems...)
}

func (o ExploreOptions) elapsed() time.Duration {
	if o.Stopwatch == nil {
		return 0
	}
	return o.Stopwatch()
}

// runOptions are the options of one run of script (a copy of it: the runner fills in a script's
// missing fields). The script's duration and clients are the run's, as with simrun --script, so
// that a run and its replay from the saved script are the same run.
func (o ExploreOptions) runOptions(script *Script, observe func(CrashPointHit)) Options {
	s := cloneScript(script)
	return Options{Seed: o.Seed, Script: s, Duration: s.Duration, Clients: s.Clients, Bugs: o.Bugs,
		RecipeBugs: o.RecipeBugs, LivenessBound: o.LivenessBound, OnCrashPoint: observe}
}

func cloneScript(s *Script) *Script {
	c := *s
	c.Actions = slices.Clone(s.Actions)
	return &c
}

// numberHits gives each hit its occurrence among the hits of the same server and point.
func numberHits(hits []CrashPointHit) []ExploreHit {
	type key struct {
		sid   int64
		point string
	}
	seen := map[key]int{}
	out := make([]ExploreHit, len(hits))
	for i, h := range hits {
		k := key{h.Sid, h.Point}
		seen[k]++
		out[i] = ExploreHit{Sid: h.Sid, Point: h.Point, Occurrence: seen[k], At: h.At}
	}
	return out
}

// selectHits picks the hits to explore: every hit of the chosen points, or, past maxRuns, maxRuns
// of them evenly spaced (the i-th at index i*candidates/maxRuns), and records which it was.
func (r *ExploreResult) selectHits(points []string, maxRuns int) []ExploreHit {
	var candidates []ExploreHit
	for _, h := range r.Hits {
		if slices.Contains(points, h.Point) {
			candidates = append(candidates, h)
		}
	}
	r.Candidates = len(candidates)
	r.Exhaustive = len(candidates) <= maxRuns
	if r.Exhaustive {
		r.Explored, r.Stride = len(candidates), 1
		return candidates
	}
	selected := make([]ExploreHit, maxRuns)
	for i := range selected {
		selected[i] = candidates[i*len(candidates)/maxRuns]
	}
	r.Explored, r.Stride = maxRuns, float64(len(candidates))/float64(maxRuns)
	return selected
}

// CrashScript returns the base script with, first of all, the action that crashes the hit's
// server at that hit and restarts it restartAfter later.
func CrashScript(base *Script, hit ExploreHit, restartAfter clock.Duration) *Script {
	spec := crashpointSpec{target: fmt.Sprintf("zk%d", hit.Sid), point: hit.Point, count: hit.Occurrence,
		restart: true, restartAfter: restartAfter}
	s := cloneScript(base)
	// First among the actions at 0 s: the hit's occurrence counts from the fault phase's start.
	s.Actions = append([]Action{{At: 0, Verb: "crashpoint", Args: crashpointArgs(spec)}}, s.Actions...)
	return s
}

// exploreHit runs the base with a crash at hit and judges it. A panic while setting the run up is
// an error of the exploration (the simulated world's own panics are failed runs).
func (o ExploreOptions) exploreHit(hit ExploreHit) (run ExploreRun, err error) {
	defer func() {
		if value := recover(); value != nil {
			err = fmt.Errorf("scenarios: exploring %s: panic: %v", hit, value)
		}
	}()
	run = ExploreRun{Hit: hit, Script: CrashScript(o.Script, hit, o.RestartAfter), Seed: o.Seed, CrashedAt: clock.Never}
	occurrences := 0 // of the hit's server and point, so far
	var aimed CrashPointHit
	observe := func(h CrashPointHit) {
		if h.Sid == hit.Sid && h.Point == hit.Point {
			if occurrences++; occurrences == hit.Occurrence {
				aimed = h
			}
		}
	}
	report, err := Run(o.runOptions(run.Script, observe))
	if err != nil {
		return run, fmt.Errorf("scenarios: exploring %s: %w", hit, err)
	}
	if aimed.Crashed {
		run.CrashedAt = aimed.At
	}
	run.Landed = aimed.Crashed && aimed.At == hit.At
	run.Class = report.Failure()
	if run.Class != "" {
		run.Explanation = report.Explain()
	}
	if !run.Landed {
		what := fmt.Sprintf("zk%d reached %s only %d times", hit.Sid, hit.Point, occurrences)
		switch {
		case occurrences >= hit.Occurrence && !aimed.Crashed:
			what = fmt.Sprintf("that hit came at %s without a crash", strings.TrimSpace(aimed.At.String()))
		case occurrences >= hit.Occurrence:
			what = fmt.Sprintf("that hit came at %s", strings.TrimSpace(aimed.At.String()))
		}
		run.Explanation = fmt.Sprintf("explorer: the crash was aimed at %s, but %s\n", hit, what) + run.Explanation
		run.Class = ClassMisplaced
	}
	return run, nil
}
