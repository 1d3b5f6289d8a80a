package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

const mergeUsage = `Usage: simrun merge [flags] [FILE...]

Merges the --json output of the shards of one sweep ('simrun run --shard i/n --json', or
--shard-from-env) into the result of the whole range: the failing seeds in seed order, the summary,
and the exit status that one machine sweeping the whole range would have printed. With no FILE, or
FILE "-", it reads standard input. A file may hold several shards one after the other (each ends
with its summary line), so 'cat shard-*.jsonl | simrun merge' works as well as naming the files.

It refuses to merge (exit status 2, naming the file and the problem):
  - a line that is not a seed or summary line of 'simrun run --json';
  - a shard whose seed lines are not followed by its summary (a shard that was killed: rerun it);
  - shards of different builds (module version and git commit), different sweep parameters
    (seed range, scenario flags, --time-limit) or different shard counts;
  - a shard given twice, a missing shard, or a seed outside its shard's part of the range: the
    shards must cover the range exactly once. A shard that stopped early (--stop-on-failure) or ran
    out of --time-limit covers a prefix of its seeds; the merge says which seeds were covered.

Exit status: 0 when every seed passed, 1 when a seed failed, 2 on bad usage or input.

Examples:
  simrun merge shard-*.jsonl
  simrun merge --json shard-0.jsonl shard-1.jsonl > sweep.jsonl
  kubectl logs -l job-name=simrun-sweep --tail=-1 | simrun merge    # see deploy/k8s/README.md
`

type mergeFlags struct {
	json  bool
	quiet bool
}

func newMergeFlags() (*flag.FlagSet, *mergeFlags) {
	f := &mergeFlags{}
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.BoolVar(&f.json, "json", false, "print the merged seed lines in seed order, then the merged summary, as 'simrun run --json' does")
	fs.BoolVar(&f.quiet, "quiet", false, "no explanations; failing seeds and the summary only")
	return fs, f
}

// cmdMerge reads shards, checks that they belong together and cover their range exactly once, and
// prints the whole sweep's result.
func cmdMerge(env *environment, args []string) int {
	fs, f := newMergeFlags()
	files, err := parseFlagsAndFiles(env, "merge", fs, args)
	if err != nil {
		return flagExit(err)
	}
	shards, err := readShardInputs(env, files, f.json)
	if err == nil {
		var merged *mergedSweep
		merged, err = mergeShards(shards)
		if err == nil {
			return merged.print(env, f)
		}
	}
	fmt.Fprintf(env.stderr, "simrun merge: %v\n", err)
	return exitUsage
}

// parseFlagsAndFiles parses flags that may come before, between or after file names, which is what
// a shell glob needs; "--" ends the flags.
func parseFlagsAndFiles(env *environment, name string, fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var files []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			return nil, parseFlags(env, name, fs, []string{"-h"})
		}
		if err != nil {
			usageFailed(env, name, err)
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return files, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(files, rest...), nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}

// shardInput is one shard as read: its summary and its seed lines, in the order it printed them.
type shardInput struct {
	// where names the shard for messages: the file and the line of its summary.
	where   string
	summary summaryRecord
	index   int64 // the shard's i of i/n
	count   int64 // the shard's n
	seeds   []mergedSeed
}

// mergedSeed is what the merge keeps of a seed line: the seed, the record of a failing seed (for
// the failure list), and the line itself when the merged output is JSON.
type mergedSeed struct {
	seed    uint64
	failure *seedRecord
	line    []byte
}

// maxMergeLine bounds one JSON line: a seed line holds a failure's explanation and script.
const maxMergeLine = 64 << 20

// readShardInputs reads every named file ("-" or none: standard input).
func readShardInputs(env *environment, files []string, keepLines bool) ([]*shardInput, error) {
	if len(files) == 0 {
		files = []string{"-"}
	}
	var shards []*shardInput
	for _, name := range files {
		var reader io.Reader
		if name == "-" {
			reader, name = env.stdin, "standard input"
		} else {
			file, err := os.Open(name)
			if err != nil {
				return nil, fmt.Errorf("reading a shard: %w", err)
			}
			defer file.Close()
			reader = file
		}
		read, err := readShards(reader, name, keepLines)
		if err != nil {
			return nil, err
		}
		shards = append(shards, read...)
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("no shard in %s: expected the output of 'simrun run --json'", strings.Join(files, ", "))
	}
	return shards, nil
}

// readShards splits one input into shards: each shard is the seed lines up to and including its
// summary line.
func readShards(reader io.Reader, name string, keepLines bool) ([]*shardInput, error) {
	scanner := bufio.NewScanner(reader)
	scanner.Buffer(make([]byte, 0, 64<<10), maxMergeLine)
	var shards []*shardInput
	current := &shardInput{}
	lineNumber := 0
	for scanner.Scan() {
		lineNumber++
		line := bytes.TrimSpace(scanner.Bytes())
		if len(line) == 0 {
			continue
		}
		where := fmt.Sprintf("%s:%d", name, lineNumber)
		var kind struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &kind); err != nil {
			return nil, fmt.Errorf("%s: not a JSON line of 'simrun run --json' (%v): %s", where, err, clip(line))
		}
		switch kind.Type {
		case "seed":
			var record seedRecord
			if err := json.Unmarshal(line, &record); err != nil {
				return nil, fmt.Errorf("%s: malformed seed line: %w", where, err)
			}
			seed := mergedSeed{seed: record.Seed}
			if !record.Passed {
				seed.failure = &record
			}
			if keepLines {
				seed.line = slices.Clone(line)
			}
			current.seeds = append(current.seeds, seed)
		case "summary":
			current.where = where
			if err := json.Unmarshal(line, &current.summary); err != nil {
				return nil, fmt.Errorf("%s: malformed summary line: %w", where, err)
			}
			var s shard
			if err := s.Set(current.summary.Shard); err != nil {
				return nil, fmt.Errorf("%s: the summary's shard: %w", where, err)
			}
			current.index, current.count = s.index, s.count
			shards = append(shards, current)
			current = &shardInput{}
		default:
			return nil, fmt.Errorf("%s: a line of type %q, not a seed or summary line of 'simrun run --json'", where, kind.Type)
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(current.seeds) > 0 {
		return nil, fmt.Errorf("%s: %d seed lines after the last summary line: that shard did not finish (was it killed?); rerun it",
			name, len(current.seeds))
	}
	return shards, nil
}

// clip shortens a line for an error message.
func clip(line []byte) string {
	if len(line) > 80 {
		return string(line[:80]) + "..."
	}
	return string(line)
}

// mergedSweep is the whole sweep put back together.
type mergedSweep struct {
	summary summaryRecord
	seeds   []mergedSeed // in seed order
	// contiguous counts the seeds from the range's start that every shard covered; the seeds run
	// beyond it are those of shards that got further than others.
	contiguous int64
}

// mergeShards checks the shards against each other and puts them together.
func mergeShards(shards []*shardInput) (*mergedSweep, error) {
	first := shards[0]
	var problems []error
	for _, s := range shards[1:] {
		if err := sameSweep(first, s); err != nil {
			problems = append(problems, err)
		}
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	byIndex := make([]*shardInput, first.count)
	for _, s := range shards {
		if other := byIndex[s.index]; other != nil {
			problems = append(problems, fmt.Errorf("overlap: shard %s appears twice (%s and %s)", s.summary.Shard, other.where, s.where))
			continue
		}
		byIndex[s.index] = s
	}
	r := seedRange{start: first.summary.SeedStart, count: first.summary.Seeds}
	for index, s := range byIndex {
		if s == nil {
			problems = append(problems, fmt.Errorf("gap: shard %d/%d is missing, so the seeds %s were not run", index, first.count,
				describeShardSeeds(r, int64(index), first.count)))
			continue
		}
		if err := checkShardSeeds(r, s); err != nil {
			problems = append(problems, err)
		}
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	return combine(r, byIndex), nil
}

// sameSweep checks that two shards come from the same build and the same sweep.
func sameSweep(a, b *shardInput) error {
	x, y := a.summary, b.summary
	var problems []error
	differ := func(what, left, right string) {
		if left != right {
			problems = append(problems, fmt.Errorf("%s: %s is %s, but %s has %s", what, b.where, right, a.where, left))
		}
	}
	differ("mixed builds", x.Build.String(), y.Build.String())
	differ("different sweeps", fmt.Sprintf("seeds %d from %d", x.Seeds, x.SeedStart), fmt.Sprintf("seeds %d from %d", y.Seeds, y.SeedStart))
	differ("different sweeps", "flags ["+strings.Join(x.Flags, " ")+"]", "flags ["+strings.Join(y.Flags, " ")+"]")
	differ("different sweeps", "--time-limit "+cmp.Or(x.TimeLimit, "none"), "--time-limit "+cmp.Or(y.TimeLimit, "none"))
	if a.count != b.count {
		differ("different shard counts", fmt.Sprintf("shard %s (of %d)", x.Shard, a.count), fmt.Sprintf("shard %s (of %d)", y.Shard, b.count))
	}
	return errors.Join(problems...)
}

// checkShardSeeds checks that a shard's seed lines are its own seeds, in order, each once: all of
// them, or for a shard that stopped early or ran out of time, the first ones. It also checks that
// the summary counts them.
func checkShardSeeds(r seedRange, s *shardInput) error {
	r.shard = shard{index: s.index, count: s.count}
	expected := seedRange{start: r.start, count: r.count, shard: r.shard}
	k, ok := expected.next(0)
	for _, seed := range s.seeds {
		if !ok || seed.seed != r.start+uint64(k) {
			if seed.seed < r.start || seed.seed-r.start >= uint64(r.count) {
				return fmt.Errorf("shard %s (%s): seed %d is outside the range %s", s.summary.Shard, s.where, seed.seed, describeRange(r))
			}
			if (seed.seed-r.start)%uint64(s.count) != uint64(s.index) {
				return fmt.Errorf("overlap: shard %s (%s) has seed %d, which belongs to shard %d/%d", s.summary.Shard, s.where,
					seed.seed, (seed.seed-r.start)%uint64(s.count), s.count)
			}
			if seed.seed < r.start+uint64(k) {
				return fmt.Errorf("overlap: shard %s (%s) lists seed %d twice or out of order", s.summary.Shard, s.where, seed.seed)
			}
			return fmt.Errorf("gap: shard %s (%s) has no line for seed %d, but has seed %d", s.summary.Shard, s.where, r.start+uint64(k), seed.seed)
		}
		k, ok = expected.next(k + 1)
	}
	if int64(len(s.seeds)) != s.summary.SeedsRun {
		return fmt.Errorf("shard %s (%s): its summary counts %d seeds, but %d seed lines precede it", s.summary.Shard, s.where,
			s.summary.SeedsRun, len(s.seeds))
	}
	if ok && !s.summary.StoppedEarly && !s.summary.TimeLimitReached {
		return fmt.Errorf("gap: shard %s (%s) ends at seed line %d without having stopped early; seed %d and later are missing",
			s.summary.Shard, s.where, len(s.seeds), r.start+uint64(k))
	}
	return nil
}

// describeShardSeeds names the seeds of one shard of a range, for a gap message.
func describeShardSeeds(r seedRange, index, count int64) string {
	if index >= r.count {
		return "(none: the range is shorter than the shard count)"
	}
	firstSeed := r.start + uint64(index)
	if count == 1 {
		return describeRange(r)
	}
	return fmt.Sprintf("%d, %d, ... (one seed in %d from %d)", firstSeed, firstSeed+uint64(count), count, firstSeed)
}

func describeRange(r seedRange) string {
	return fmt.Sprintf("%d..%d", r.start, r.start+uint64(r.count)-1)
}

// combine adds the shards' summaries up and puts their seeds in seed order. Counts and machine
// times add up; the wall time of the whole sweep is that of its slowest shard, since the shards
// run side by side.
func combine(r seedRange, shards []*shardInput) *mergedSweep {
	m := &mergedSweep{contiguous: r.count}
	s := &m.summary
	first := shards[0].summary
	*s = summaryRecord{
		Type: "summary", SeedStart: r.start, Seeds: r.count, Shard: "0/1", Failures: map[string]int64{},
		OutsideFaultModel: first.OutsideFaultModel, Flags: first.Flags, Build: first.Build, TimeLimit: first.TimeLimit,
	}
	total := 0
	for index, shard := range shards {
		summary := shard.summary
		s.SeedsRun += summary.SeedsRun
		s.Passed += summary.Passed
		s.Failed += summary.Failed
		for class, n := range summary.Failures {
			s.Failures[class] += n
		}
		s.KnownSeeds += summary.KnownSeeds
		for class, n := range summary.Known {
			if s.Known == nil {
				s.Known = map[string]int64{}
			}
			s.Known[class] += n
		}
		s.Events += summary.Events
		s.VirtualSeconds += summary.VirtualSeconds
		s.BusySeconds += summary.BusySeconds
		s.CheckerSeconds += summary.CheckerSeconds
		s.WallSeconds = max(s.WallSeconds, summary.WallSeconds)
		s.StoppedEarly = s.StoppedEarly || summary.StoppedEarly
		s.TimeLimitReached = s.TimeLimitReached || summary.TimeLimitReached
		s.DeterminismBugs += summary.DeterminismBugs
		s.Parallel += summary.Parallel
		// The shard's seeds are its first len(seeds) indexes, index, index+n, ...: every index
		// below index + len*n is covered by this shard or belongs to another.
		m.contiguous = min(m.contiguous, int64(index)+int64(len(shard.seeds))*int64(len(shards)))
		total += len(shard.seeds)
	}
	s.SeedsPerSecond = ratio(float64(s.SeedsRun), s.WallSeconds)
	s.VirtualPerWall = ratio(s.VirtualSeconds, s.WallSeconds)
	s.MeanEventsPerSeed = ratio(float64(s.Events), float64(s.SeedsRun))
	m.seeds = make([]mergedSeed, 0, total)
	for _, shard := range shards {
		m.seeds = append(m.seeds, shard.seeds...)
	}
	slices.SortFunc(m.seeds, func(a, b mergedSeed) int {
		switch {
		case a.seed < b.seed:
			return -1
		case a.seed > b.seed:
			return 1
		}
		return 0
	})
	return m
}

// print writes the merged sweep as 'simrun run' writes a sweep, with the same flags, and returns
// its exit status.
func (m *mergedSweep) print(env *environment, f *mergeFlags) int {
	// The summary table reads these two of the run flags.
	run := &runFlags{parallel: m.summary.Parallel, quiet: f.quiet, json: f.json}
	run.scenario.linearizableReadsAfterSync = slices.Contains(m.summary.Flags, "--linearizable-reads-after-sync")
	if m.summary.TimeLimitReached || m.summary.StoppedEarly {
		m.summary.ContiguousSeeds = m.contiguous
	}
	notes := m.coverageNote()
	if f.json {
		for _, seed := range m.seeds {
			_, _ = env.stdout.Write(append(seed.line, '\n'))
		}
		writeJSON(env.stdout, m.summary)
		if !f.quiet {
			writeSummaryTable(env.stderr, m.summary, run)
			_, _ = io.WriteString(env.stderr, notes)
		}
	} else {
		listed := int64(0)
		for _, seed := range m.seeds {
			if seed.failure == nil || listed >= maxListedFailures {
				continue
			}
			listed++
			writeFailureLines(env.stdout, seed.failure, f.quiet)
		}
		if hidden := m.summary.Failed - listed; hidden > 0 {
			fmt.Fprintf(env.stdout, "... and %d more failing seeds (use --json to list every one)\n", hidden)
		}
		_, _ = io.WriteString(env.stdout, notes)
		writeSummaryTable(env.stdout, m.summary, run)
	}
	if m.summary.Failed > 0 || m.summary.DeterminismBugs > 0 {
		return exitFailure
	}
	return exitPass
}

// coverageNote says which seeds a merge of shards that stopped early or ran out of time covered.
func (m *mergedSweep) coverageNote() string {
	if !m.summary.TimeLimitReached && !m.summary.StoppedEarly {
		return ""
	}
	start := m.summary.SeedStart
	var b strings.Builder
	if m.contiguous > 0 {
		fmt.Fprintf(&b, "covered: every seed of %d..%d", start, start+uint64(m.contiguous)-1)
	} else {
		fmt.Fprintf(&b, "covered: not even seed %d by every shard", start)
	}
	if beyond := m.summary.SeedsRun - m.contiguous; beyond > 0 {
		fmt.Fprintf(&b, ", and %d seeds after it that some shards reached", beyond)
	}
	b.WriteString("\n")
	return b.String()
}

// writeFailureLines prints a failing seed as 'simrun run' does in its failure list (output.go).
func writeFailureLines(w io.Writer, record *seedRecord, quiet bool) {
	fmt.Fprintf(w, "FAIL seed %d: %s\n", record.Seed, record.Class)
	if !quiet {
		fmt.Fprintf(w, "  %s\n", headline(record.Explanation))
	}
	fmt.Fprintf(w, "  replay: %s\n", record.Replay)
	if record.Artifacts != "" && !quiet {
		fmt.Fprintf(w, "  artifacts: %s\n", record.Artifacts)
	}
}
