package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/zabmodel"
)

// fuzzHuntRecord is what simrun fuzz took to find one bug: runs and wall time to the first failing
// input that passes without the bug, counted as the swarm's hunt counts seeds.
type fuzzHuntRecord struct {
	Found       bool    `json:"found"`
	Runs        int64   `json:"runs"`
	WallSeconds float64 `json:"wall_seconds"`
	Seed        uint64  `json:"seed,omitempty"`
	Edits       string  `json:"edits,omitempty"`
	Mutation    string  `json:"mutation,omitempty"`
	Class       string  `json:"class,omitempty"`
	Corpus      int     `json:"corpus"`
	Features    int     `json:"features"`
	NotCounted  int     `json:"not_counted"`
}

// fuzzComparison is hunt --fuzz's account of one bug: each trial's swarm hunt and fuzz hunt, from
// the same first seed (trial k starts at --seed-start + k*--seeds), with their medians.
type fuzzComparison struct {
	Swarm []trialRecord `json:"swarm"`
	Fuzz  []trialRecord `json:"fuzz"`
	// Medians over the trials; a trial that did not find the bug counts as its whole budget, so a
	// median that is a budget is a lower bound (SwarmFound / FuzzFound say how many found it).
	SwarmMedianRuns int64   `json:"swarm_median_runs"`
	FuzzMedianRuns  int64   `json:"fuzz_median_runs"`
	SwarmMedianWall float64 `json:"swarm_median_wall_seconds"`
	FuzzMedianWall  float64 `json:"fuzz_median_wall_seconds"`
	SwarmFound      int     `json:"swarm_found"`
	FuzzFound       int     `json:"fuzz_found"`
}

// trialRecord is one hunt of one bug by one search.
type trialRecord struct {
	Found       bool    `json:"found"`
	Runs        int64   `json:"runs"`
	WallSeconds float64 `json:"wall_seconds"`
	Seed        uint64  `json:"seed,omitempty"`
	Edits       string  `json:"edits,omitempty"`
	// Mutation is the kind of input that found the bug (fresh, site, directed, ...), for a fuzzing
	// trial.
	Mutation string `json:"mutation,omitempty"`
	Class    string `json:"class,omitempty"`
}

// compareWithFuzzing runs the trials of one bug; first is the swarm's hunt from --seed-start,
// already run, which is trial 0's swarm side.
func compareWithFuzzing(env *environment, f *huntFlags, target huntTarget, first huntRecord) (*fuzzComparison, error) {
	c := &fuzzComparison{}
	for trial := 0; trial < f.trials; trial++ {
		start := f.seedStart.value + uint64(trial)*uint64(f.seeds)
		swarm := first
		if trial > 0 && !f.fuzzOnly {
			trialFlags := *f
			trialFlags.seedStart.value = start
			trialFlags.outDir = "" // --out keeps the first trial's find only.
			var err error
			if swarm, err = hunt(env, &trialFlags, target, &huntFinds{}); err != nil {
				return nil, err
			}
		}
		c.Swarm = append(c.Swarm, trialRecord{Found: swarm.Found, Runs: swarm.SeedsRun, WallSeconds: swarm.WallSeconds, Seed: swarm.Seed, Class: swarm.Class})
		fuzzed, err := huntByFuzzing(env, f, target, start)
		if err != nil {
			return nil, err
		}
		c.Fuzz = append(c.Fuzz, trialRecord{Found: fuzzed.Found, Runs: fuzzed.Runs, WallSeconds: fuzzed.WallSeconds, Seed: fuzzed.Seed,
			Edits: fuzzed.Edits, Mutation: fuzzed.Mutation, Class: fuzzed.Class})
	}
	c.SwarmMedianRuns, c.SwarmMedianWall, c.SwarmFound = medians(c.Swarm)
	c.FuzzMedianRuns, c.FuzzMedianWall, c.FuzzFound = medians(c.Fuzz)
	return c, nil
}

// medians returns the median runs and wall time of some trials, and how many found the bug.
func medians(trials []trialRecord) (int64, float64, int) {
	runs := make([]int64, len(trials))
	walls := make([]float64, len(trials))
	found := 0
	for i, t := range trials {
		runs[i], walls[i] = t.Runs, t.WallSeconds
		if t.Found {
			found++
		}
	}
	slices.Sort(runs)
	slices.Sort(walls)
	return runs[len(runs)/2], walls[len(walls)/2], found
}

// huntByFuzzing hunts one bug with the fuzzing loop: fresh seeds from the hunt's first seed, the
// same run options as the swarm's hunt, at most --seeds runs. A failing input is judged as the
// swarm's finds are, by running the same input (seed and script) without the bug; the judging
// time is not counted.
func huntByFuzzing(env *environment, f *huntFlags, target huntTarget, seedStart uint64) (fuzzHuntRecord, error) {
	var record fuzzHuntRecord
	withBug, err := target.scenario.options()
	if err != nil {
		return record, err
	}
	withoutBug := withBug
	withoutBug.Bugs, withoutBug.RecipeBugs = zabmodel.Bugs{}, lockmodel.Bugs{}
	fuzzer := scenarios.NewFuzzer(scenarios.FuzzerOptions{SeedStart: seedStart, Duration: withBug.Duration, RandomSeed: seedStart})
	var judging time.Duration
	var setupErr error
	fuzzLoop(env, fuzzLoopConfig{opts: withBug, fuzzer: fuzzer, parallel: f.parallel, maxExecs: f.seeds}, func(run fuzzRun) bool {
		switch {
		case record.Found || setupErr != nil:
			return false
		case run.err != nil && run.class == "":
			setupErr = run.err
			return false
		}
		record.Runs, record.Features, record.Corpus = run.execs, run.features, len(fuzzer.Corpus())
		record.WallSeconds = (run.wall - judging).Seconds()
		if run.class == "" {
			return true
		}
		judged := time.Now()
		without := withoutBug
		without.Script = run.report.Script
		withoutClass, err := classWithout(env, without, run.candidate.Seed)
		judging += time.Since(judged)
		if err != nil {
			setupErr = err
			return false
		}
		if withoutClass != "" {
			record.NotCounted++
			return true
		}
		record.Found, record.Seed, record.Class = true, run.candidate.Seed, run.class
		record.Edits, record.Mutation = describeEdits(run.candidate.Edits), run.candidate.Mutation
		return false
	})
	return record, setupErr
}

// writeFuzzHuntTable prints hunt --fuzz: per bug, the median runs and wall time of each search over
// the trials, and the ratio of the swarm's median wall time to the fuzzer's (above 1: the fuzzer
// was faster).
func writeFuzzHuntTable(w io.Writer, f *huntFlags, records []huntRecord, s huntSummary) {
	var b strings.Builder
	fmt.Fprintf(&b, "hunt --fuzz: %d trial(s) per bug, at most %d runs each, from seed %d, %v fault phase, %d clients, %d in parallel\n",
		f.trials, f.seeds, f.seedStart.value, f.duration, f.clients, f.parallel)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BUG\tSWARM RUNS\tSWARM WALL\tFUZZ RUNS\tFUZZ WALL\tSPEEDUP (WALL)\tFOUND (SWARM / FUZZ)\tCAUGHT BY (FUZZ)")
	for _, r := range records {
		c := r.Fuzz
		if c == nil {
			continue
		}
		runs := func(median int64, found int) string {
			if found*2 <= len(c.Swarm) {
				return fmt.Sprintf(">=%d", median) // The median trial did not find it: a lower bound.
			}
			return fmt.Sprint(median)
		}
		speedup := "-"
		if c.FuzzMedianWall > 0 {
			speedup = fmt.Sprintf("%.2fx", c.SwarmMedianWall/c.FuzzMedianWall)
		}
		class := "not found"
		for _, t := range c.Fuzz {
			if t.Found {
				class = t.Class
				break
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d/%d / %d/%d\t%s\n", r.Bug, runs(c.SwarmMedianRuns, c.SwarmFound), seconds(c.SwarmMedianWall),
			runs(c.FuzzMedianRuns, c.FuzzFound), seconds(c.FuzzMedianWall), speedup, c.SwarmFound, len(c.Swarm), c.FuzzFound, len(c.Fuzz), class)
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "done in %s\n", seconds(s.WallSeconds))
	_, _ = io.WriteString(w, b.String())
}
