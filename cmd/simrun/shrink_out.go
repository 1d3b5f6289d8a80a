package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/zabsim/zabsim/scenarios"
)

// sweepShrinkRuns bounds the runs 'run --shrink' spends on each failing seed it shrinks.
const sweepShrinkRuns = 300

// shrunkFile is the name of a failing seed's shrunk script in its --out directory.
const shrunkFile = "shrunk.script"

// shrinkIntoDir shrinks a failing seed of a sweep (run --shrink) and saves the minimal script
// beside its trace, as dir/shrunk.script. The shrinker's progress lines are not printed: a sweep
// shrinks many seeds.
func shrinkIntoDir(env *environment, flags scenarioFlags, opts scenarios.Options, seed uint64, dir string) error {
	quiet := *env
	quiet.stdout, quiet.stderr = io.Discard, io.Discard
	opts.Seed = seed
	s := &shrinker{env: &quiet, opts: opts, maxRuns: sweepShrinkRuns, reseeds: 0, originalSeed: seed}
	script, code := s.reproduce()
	if code != exitPass {
		return fmt.Errorf("--shrink: seed %d's failure did not reproduce as a script", seed)
	}
	minimal := s.shrink(script)
	path := filepath.Join(dir, shrunkFile)
	if err := os.WriteFile(path, []byte(s.text(minimal, flags, path)), 0o644); err != nil {
		return fmt.Errorf("--shrink: %w", err)
	}
	return nil
}
