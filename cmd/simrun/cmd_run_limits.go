package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// jobCompletionIndexVariable is the environment variable in which a Kubernetes Indexed Job gives
// each pod its index, 0 to completions-1 (batch/v1 Job, completionMode: Indexed).
const jobCompletionIndexVariable = "JOB_COMPLETION_INDEX"

// maxTimeLimit bounds --time-limit: a week is far past any CI budget or overnight farm.
const maxTimeLimit = 7 * 24 * time.Hour

// registerDistributedRunFlags adds the run flags for sweeps spread over machines: a time budget,
// and a shard taken from the environment of a Kubernetes Indexed Job.
func registerDistributedRunFlags(fs *flag.FlagSet, f *runFlags) {
	fs.DurationVar(&f.timeLimit, "time-limit", 0, "start no new seed after this long (e.g. 10m); without --seeds the range is unbounded, so the sweep runs fresh seeds until the limit")
	fs.Int64Var(&f.shardFromEnv, "shard-from-env", 0, "run shard i/`N`, i read from $"+jobCompletionIndexVariable+" (a Kubernetes Indexed Job's pod index); instead of --shard")
}

// validateDistributed checks --time-limit and --shard-from-env and applies the latter to the range.
func (f *runFlags) validateDistributed(set map[string]bool, r *seedRange) error {
	var problems []error
	if f.timeLimit < 0 || f.timeLimit > maxTimeLimit {
		problems = append(problems, fmt.Errorf("--time-limit must be 0 (none) to %v, not %v", maxTimeLimit, f.timeLimit))
	}
	if set["shard-from-env"] {
		if set["shard"] {
			problems = append(problems, errors.New("--shard-from-env and --shard both choose the shard: give one"))
		}
		s, err := shardFromEnvironment(f.shardFromEnv, os.LookupEnv)
		if err != nil {
			problems = append(problems, err)
		} else {
			f.shard, r.shard = s, s
		}
	}
	return errors.Join(problems...)
}

// shardFromEnvironment builds shard i/count with i read from $JOB_COMPLETION_INDEX. A missing or
// malformed index is an error, never shard 0: a pod that silently ran shard 0 would run it twice
// and leave its own seeds unrun.
func shardFromEnvironment(count int64, lookup func(string) (string, bool)) (shard, error) {
	if count < 1 || count > maxShards {
		return shard{}, fmt.Errorf("--shard-from-env takes the shard count N, 1 to %d, not %d", maxShards, count)
	}
	text, ok := lookup(jobCompletionIndexVariable)
	if !ok {
		return shard{}, fmt.Errorf("--shard-from-env: $%s is not set (it is set in the pods of a Kubernetes Job with completionMode: Indexed)", jobCompletionIndexVariable)
	}
	index, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil {
		return shard{}, fmt.Errorf("--shard-from-env: $%s is %q, not an integer", jobCompletionIndexVariable, text)
	}
	var s shard
	if err := s.Set(fmt.Sprintf("%d/%d", index, count)); err != nil {
		return shard{}, fmt.Errorf("--shard-from-env: $%s: %w (is the Job's completions equal to N?)", jobCompletionIndexVariable, err)
	}
	return s, nil
}

// unboundedSeeds is the range length of a time-limited sweep without --seeds: as many seeds as a
// sweep may have, cut short where the seeds run out.
func unboundedSeeds(start uint64) int64 {
	count := int64(maxSeedsPerSweep)
	if room := math.MaxUint64 - start; room < uint64(count-1) {
		count = int64(room) + 1
	}
	return count
}
