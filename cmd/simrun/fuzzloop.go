package main

import (
	"sync"
	"time"

	"github.com/zabsim/zabsim/scenarios"
)

// fuzzRun is one run of the fuzzing loop: the candidate, and what came of it.
type fuzzRun struct {
	candidate scenarios.FuzzCandidate
	report    *scenarios.Report // nil when err is set
	class     string
	coverage  []scenarios.Feature
	sites     []scenarios.Site
	writes    []scenarios.WriteSite
	err       error
	// entry is the corpus entry the run made, if it reached a new situation; fresh counts those
	// situations.
	entry *scenarios.FuzzEntry
	fresh int
	// execs and features are the loop's totals after this run.
	execs    int64
	features int
	wall     time.Duration
}

// fuzzLoopConfig is what the loop runs.
type fuzzLoopConfig struct {
	opts     scenarios.Options // every run's options, without seed and script
	fuzzer   *scenarios.Fuzzer
	parallel int
	// initial are corpus entries to run first (a corpus directory read back), so that the fuzzer
	// learns their situations before it mutates them.
	initial []*scenarios.FuzzEntry
	// maxExecs and timeLimit bound the loop (0: no bound of that kind).
	maxExecs  int64
	timeLimit time.Duration
}

// fuzzLoop runs candidates on parallel goroutines until a bound is reached or emit returns false.
// emit is called for every run, one at a time, in the order the runs finish. The fuzzer is shared
// under a mutex: proposing and learning are cheap next to a run. With one worker the loop is
// deterministic: the same options propose and run the same inputs in the same order.
func fuzzLoop(env *environment, c fuzzLoopConfig, emit func(fuzzRun) bool) {
	began := time.Now()
	var mu sync.Mutex
	initial := c.initial
	var execs int64
	stopped := false
	next := func() (scenarios.FuzzCandidate, bool) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case stopped:
			return scenarios.FuzzCandidate{}, false
		case c.maxExecs > 0 && execs >= c.maxExecs:
			return scenarios.FuzzCandidate{}, false
		case c.timeLimit > 0 && time.Since(began) >= c.timeLimit:
			return scenarios.FuzzCandidate{}, false
		}
		execs++
		if len(initial) > 0 {
			e := initial[0]
			initial = initial[1:]
			return scenarios.FuzzCandidate{Seed: e.Seed, Script: e.Script}, true
		}
		return c.fuzzer.Next(), true
	}
	var done int64
	var workers sync.WaitGroup
	for range c.parallel {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				candidate, ok := next()
				if !ok {
					return
				}
				run := runCandidate(env, c.opts, candidate)
				mu.Lock()
				if run.report != nil {
					// A failing run's situations are counted, but it joins neither the corpus nor
					// the runs that site injections start from: its mutants would mostly fail the
					// same way again, spending the campaign on a failure already found (AFL keeps
					// its crashes out of its queue for the same reason).
					script := run.report.Script
					if run.class != "" {
						script = nil
					}
					run.entry, run.fresh = c.fuzzer.Learn(candidate, script, run.coverage, run.sites, run.writes)
				}
				done++
				run.execs, run.features, run.wall = done, c.fuzzer.Features(), time.Since(began)
				if !stopped && !emit(run) {
					stopped = true
				}
				mu.Unlock()
			}
		}()
	}
	workers.Wait()
}

// runCandidate runs one candidate with coverage on.
func runCandidate(env *environment, opts scenarios.Options, c scenarios.FuzzCandidate) fuzzRun {
	coverage := scenarios.NewCoverage()
	opts.Coverage, opts.Script = coverage, c.Script
	report, err := env.runSeed(opts, c.Seed)
	run := fuzzRun{candidate: c, report: report, err: err}
	switch err.(type) {
	case nil:
		run.class, run.coverage, run.sites, run.writes = classify(report), coverage.Features(), coverage.Sites(), coverage.Writes()
	case *setupPanic:
		run.class = "panic:setup" // The class a sweep gives such a seed.
	}
	return run
}
