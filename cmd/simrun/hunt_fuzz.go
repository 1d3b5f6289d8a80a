package main

import (
	"fmt"
	"io"
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
	Class       string  `json:"class,omitempty"`
	Corpus      int     `json:"corpus"`
	Features    int     `json:"features"`
	NotCounted  int     `json:"not_counted"`
}

// huntByFuzzing hunts one bug with the fuzzing loop: fresh seeds from the hunt's first seed, the
// same run options as the swarm's hunt, at most --seeds runs. A failing input is judged as the
// swarm's finds are, by running the same input (seed and script) without the bug; the judging
// time is not counted.
func huntByFuzzing(env *environment, f *huntFlags, target huntTarget) (fuzzHuntRecord, error) {
	var record fuzzHuntRecord
	withBug, err := target.scenario.options()
	if err != nil {
		return record, err
	}
	withoutBug := withBug
	withoutBug.Bugs, withoutBug.RecipeBugs = zabmodel.Bugs{}, lockmodel.Bugs{}
	fuzzer := scenarios.NewFuzzer(scenarios.FuzzerOptions{SeedStart: f.seedStart.value, Duration: withBug.Duration, RandomSeed: f.seedStart.value})
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
		record.Edits = describeEdits(run.candidate.Edits)
		return false
	})
	return record, setupErr
}

// writeFuzzHuntTable prints hunt --fuzz: per bug, what the swarm and the fuzzer took, and the
// ratio of their wall times (above 1: the fuzzer was faster).
func writeFuzzHuntTable(w io.Writer, f *huntFlags, records []huntRecord, s huntSummary) {
	var b strings.Builder
	fmt.Fprintf(&b, "hunt --fuzz: at most %d runs per bug from seed %d, %v fault phase, %d clients, %d in parallel\n",
		f.seeds, f.seedStart.value, f.duration, f.clients, f.parallel)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BUG\tSWARM RUNS\tSWARM WALL\tFUZZ RUNS\tFUZZ WALL\tSPEEDUP\tCAUGHT BY (SWARM / FUZZ)")
	fuzzFound := 0
	for _, r := range records {
		swarmRuns, swarmWall, fuzzRuns, fuzzWall, speedup := "-", "-", "-", "-", "-"
		swarmClass, fuzzClass := "not found", "not found"
		if r.Found {
			swarmRuns, swarmWall, swarmClass = fmt.Sprint(r.SeedsRun), seconds(r.WallSeconds), r.Class
		} else {
			swarmRuns = fmt.Sprintf(">%d", r.SeedsRun)
		}
		if z := r.Fuzz; z != nil {
			if z.Found {
				fuzzFound++
				fuzzRuns, fuzzWall, fuzzClass = fmt.Sprint(z.Runs), seconds(z.WallSeconds), z.Class
				if r.Found && z.WallSeconds > 0 {
					speedup = fmt.Sprintf("%.2fx", r.WallSeconds/z.WallSeconds)
				}
			} else {
				fuzzRuns = fmt.Sprintf(">%d", z.Runs)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s / %s\n", r.Bug, swarmRuns, swarmWall, fuzzRuns, fuzzWall, speedup, swarmClass, fuzzClass)
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "swarm found %d of %d bugs, fuzz found %d, in %s\n", s.Found, s.Bugs, fuzzFound, seconds(s.WallSeconds))
	_, _ = io.WriteString(w, b.String())
}
