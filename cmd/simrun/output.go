package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zabsim/zabsim/internal/report"
	"github.com/zabsim/zabsim/scenarios"
)

// maxListedFailures bounds the failing seeds printed in human form; --json lists every one.
const maxListedFailures = 200

// maxListedKnown bounds the passing seeds with known findings printed in human form; the summary
// counts every one, and --json lists every one.
const maxListedKnown = 20

// progressInterval is how often the progress line is redrawn at most.
const progressInterval = 200 * time.Millisecond

// outsideModelWarning is printed at the top and in the summary of a sweep with datagram faults.
const outsideModelWarning = `WARNING: --datagram-faults injects loss, duplication and reordering INSIDE TCP connections.
WARNING: that is OUTSIDE ZAB's fault model: failures of such runs are not ZooKeeper bugs, and are
WARNING: counted under the class prefix "` + outsidePrefix + `".`

// sweepPrinter prints a sweep as it runs: JSON lines or failing seeds on stdout, a progress line on
// a terminal, and the summary at the end.
type sweepPrinter struct {
	env             *environment
	flags           *runFlags
	seeds           seedRange
	totals          totals
	listed          int
	knownListed     int
	artifacts       int
	determinismBugs int
	meter           *progressMeter
	interrupted     bool // SIGINT stopped the sweep
	began           time.Time
	expected        int64
	// timeUp records that --time-limit stopped the sweep, which is its planned end, not an early one.
	timeUp bool
	// index lists the failing seeds for DIR/index.html when --out is given.
	index []report.IndexEntry
	// classesListed are the failure classes printed so far: the first seed of every class is
	// printed even past maxListedFailures, so that the list never hides a class.
	classesListed map[string]bool
	// classesWritten are the failure classes with artifacts written: the first seed of each class
	// gets them even past --out-max, so that index.html links a report for every class.
	classesWritten map[string]bool
}

func newSweepPrinter(env *environment, f *runFlags, seeds seedRange) *sweepPrinter {
	expected := seeds.count / seeds.shard.count
	if seeds.count%seeds.shard.count > seeds.shard.index {
		expected++
	}
	return &sweepPrinter{
		env: env, flags: f, seeds: seeds, totals: totals{failures: map[string]int64{}},
		meter: newProgressMeter(env.stderr, env.stderrIsTerminal, f.quiet, expected), expected: expected, classesListed: map[string]bool{},
		classesWritten: map[string]bool{},
	}
}

func (p *sweepPrinter) start() {
	p.began = time.Now()
	if p.flags.scenario.datagramFaults && !(p.flags.quiet && p.flags.json) {
		fmt.Fprintln(p.env.stderr, outsideModelWarning)
	}
}

// seed handles one result, in seed order.
func (p *sweepPrinter) seed(opts scenarios.Options, r seedResult) {
	p.totals.add(r)
	replay, artifacts := "", ""
	if r.failed() {
		replay = p.flags.scenario.replayCommand(r.seed)
		artifacts = p.writeArtifacts(opts, r, replay)
	}
	if r.failed() && p.flags.outDir != "" {
		entry := report.IndexEntry{Seed: r.seed, Class: r.class, Headline: headline(r.explanation), Replay: replay}
		if artifacts != "" {
			entry.Report = filepath.ToSlash(filepath.Join(filepath.Base(artifacts), "report.html"))
		}
		p.index = append(p.index, entry)
	}
	if p.flags.json {
		record := p.record(r, replay)
		record.Artifacts = artifacts
		writeJSON(p.env.stdout, record)
	} else if r.failed() && (p.listed < maxListedFailures || !p.classesListed[r.class]) {
		p.clearProgress()
		p.listed++
		p.classesListed[r.class] = true
		fmt.Fprintf(p.env.stdout, "FAIL seed %d: %s\n", r.seed, r.class)
		if !p.flags.quiet {
			fmt.Fprintf(p.env.stdout, "  %s\n", headline(r.explanation))
		}
		fmt.Fprintf(p.env.stdout, "  replay: %s\n", replay)
		if artifacts != "" && !p.flags.quiet {
			fmt.Fprintf(p.env.stdout, "  artifacts: %s\n", artifacts)
		}
	} else if !r.failed() && len(r.known) > 0 && p.knownListed < maxListedKnown {
		// A known finding passes, and is listed all the same, so that it stays visible.
		p.clearProgress()
		p.knownListed++
		fmt.Fprintf(p.env.stdout, "KNOWN seed %d: %s\n", r.seed, strings.Join(r.known, ", "))
		if !p.flags.quiet {
			fmt.Fprintf(p.env.stdout, "  %s\n", headline(r.explanation))
		}
		fmt.Fprintf(p.env.stdout, "  replay: %s\n", p.flags.scenario.replayCommand(r.seed))
	}
	p.drawProgress()
}

func (p *sweepPrinter) record(r seedResult, replay string) seedRecord {
	record := seedRecord{
		Type: "seed", Seed: r.seed, Passed: !r.failed(), Class: r.class, Known: r.known, BeyondGuarantee: r.beyondGuarantee,
		Events: r.events, VirtualSeconds: r.virtual.Seconds(), WallSeconds: r.wall.Seconds(),
		CheckerSeconds: r.checkers.Seconds(), TraceHash: fmt.Sprintf("%016x", r.traceHash),
		OutsideFaultModel: r.outside, Replay: replay,
	}
	if r.failed() {
		record.Explanation = r.explanation
		record.Script = r.script
	}
	return record
}

// writeArtifacts writes --out for the first --out-max failing seeds, and for the first seed of
// every failure class, and returns the directory, or
// "" when it wrote none. A problem is reported on stderr without stopping the sweep: the seed's
// failure is already counted.
func (p *sweepPrinter) writeArtifacts(opts scenarios.Options, r seedResult, replay string) string {
	if p.flags.outDir == "" || (p.artifacts >= p.flags.outMax && p.classesWritten[r.class]) {
		return ""
	}
	p.artifacts++
	p.classesWritten[r.class] = true
	dir, err := writeFailureArtifacts(p.env, p.flags.outDir, opts, r, replay)
	if err == nil && p.flags.shrink {
		err = shrinkIntoDir(p.env, p.flags.scenario, opts, r.seed, dir)
	}
	if err != nil {
		p.clearProgress()
		fmt.Fprintf(p.env.stderr, "simrun run: seed %d: %v\n", r.seed, err)
		if _, ok := err.(*determinismError); ok {
			p.determinismBugs++
		}
		return ""
	}
	return dir
}

func (p *sweepPrinter) drawProgress() { p.meter.update(p.totals.run, p.totals.failed) }

func (p *sweepPrinter) clearProgress() { p.meter.clear() }

// finish prints the summary: as a JSON object with --json, as a table otherwise.
func (p *sweepPrinter) finish(wall time.Duration, aborted bool) {
	p.meter.finish()
	s := p.summary(wall, aborted)
	if p.flags.outDir != "" {
		p.writeIndex(s)
	}
	if p.flags.json {
		writeJSON(p.env.stdout, s)
		if !p.flags.quiet {
			writeSummaryTable(p.env.stderr, s, p.flags)
		}
		return
	}
	if hidden := p.totals.failed - int64(p.listed); hidden > 0 {
		fmt.Fprintf(p.env.stdout, "... and %d more failing seeds, of classes listed above (use --json to list every one)\n", hidden)
	}
	writeSummaryTable(p.env.stdout, s, p.flags)
}

func (p *sweepPrinter) summary(wall time.Duration, aborted bool) summaryRecord {
	t := p.totals
	s := summaryRecord{
		Type: "summary", SeedStart: p.seeds.start, Seeds: p.seeds.count, Shard: p.seeds.shard.String(),
		SeedsRun: t.run, Passed: t.passed, Failed: t.failed, Failures: t.failures, KnownSeeds: t.knownSeeds, Known: t.known, Events: t.events,
		VirtualSeconds: t.virtual.Seconds(), BusySeconds: t.busy.Seconds(), CheckerSeconds: t.checkers.Seconds(),
		WallSeconds: wall.Seconds(), SeedsPerSecond: ratio(float64(t.run), wall.Seconds()),
		VirtualPerWall: ratio(t.virtual.Seconds(), wall.Seconds()), MeanEventsPerSeed: ratio(float64(t.events), float64(t.run)),
		OutsideFaultModel: p.flags.scenario.datagramFaults, StoppedEarly: aborted || t.run < p.expected && !p.timeUp,
		Flags: p.flags.scenario.replayArgs(), DeterminismBugs: p.determinismBugs, Interrupted: p.interrupted,
		Build: currentBuild(), Parallel: p.flags.parallel, TimeLimitReached: p.timeUp, Command: p.env.commandLine(),
	}
	if p.flags.timeLimit > 0 {
		s.TimeLimit = p.flags.timeLimit.String()
	}
	return s
}

// writeSummaryTable prints the summary for a person.
func writeSummaryTable(w io.Writer, s summaryRecord, f *runFlags) {
	var b strings.Builder
	if s.OutsideFaultModel {
		b.WriteString(outsideModelWarning + "\n")
	}
	last := s.SeedStart + uint64(s.Seeds) - 1
	if s.TimeLimit != "" && s.SeedsRun < s.Seeds {
		fmt.Fprintf(&b, "summary: seeds from %d for %s, shard %s, %d in parallel\n", s.SeedStart, s.TimeLimit, s.Shard, f.parallel)
	} else {
		fmt.Fprintf(&b, "summary: seeds %d..%d, shard %s, %d in parallel\n", s.SeedStart, last, s.Shard, f.parallel)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  seeds run\t%d\n", s.SeedsRun)
	fmt.Fprintf(tw, "  passed\t%d\n", s.Passed)
	fmt.Fprintf(tw, "  failed\t%d\n", s.Failed)
	for _, class := range sortedKeys(s.Failures) {
		fmt.Fprintf(tw, "    %s\t%d\n", class, s.Failures[class])
	}
	if s.KnownSeeds > 0 {
		fmt.Fprintf(tw, "  passed with known findings\t%d\n", s.KnownSeeds)
		for _, class := range sortedKeys(s.Known) {
			fmt.Fprintf(tw, "    %s\t%d\n", class, s.Known[class])
		}
	}
	fmt.Fprintf(tw, "  seeds/s\t%.2f\n", s.SeedsPerSecond)
	fmt.Fprintf(tw, "  virtual s per wall s\t%.1f\n", s.VirtualPerWall)
	fmt.Fprintf(tw, "  mean events per seed\t%.0f\n", s.MeanEventsPerSeed)
	fmt.Fprintf(tw, "  checker share of busy time\t%.1f%%\n", 100*ratio(s.CheckerSeconds, s.BusySeconds))
	fmt.Fprintf(tw, "  wall time\t%s\n", time.Duration(s.WallSeconds*float64(time.Second)).Round(time.Millisecond))
	_ = tw.Flush()
	if f.scenario.linearizableReadsAfterSync {
		b.WriteString("note: --linearizable-reads-after-sync checks more than ZooKeeper promises (ZOOKEEPER-1675)\n")
	}
	if s.Interrupted {
		fmt.Fprintf(&b, "note: interrupted (SIGINT) after %d of this shard's seeds: the summary is partial\n", s.SeedsRun)
	} else if s.StoppedEarly {
		fmt.Fprintf(&b, "note: the sweep stopped early, after %d of this shard's seeds\n", s.SeedsRun)
	}
	if s.TimeLimitReached {
		fmt.Fprintf(&b, "note: --time-limit %s ran out after %d seeds\n", s.TimeLimit, s.SeedsRun)
	}
	if s.DeterminismBugs > 0 {
		fmt.Fprintf(&b, "DETERMINISM BUG: %d failing seeds replayed differently for --out (see stderr)\n", s.DeterminismBugs)
	}
	b.WriteString(verdictLine(s) + "\n")
	_, _ = io.WriteString(w, b.String())
}

// sortedKeys returns a failure-count map's classes in order, so that output never depends on map
// order.
func sortedKeys(counts map[string]int64) []string {
	keys := make([]string, 0, len(counts))
	for key := range counts {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// verdictLine is the sweep's last line, the one a person reads first: whether every seed passed.
func verdictLine(s summaryRecord) string {
	switch {
	case s.Failed > 0:
		return fmt.Sprintf("FAIL: %d of %d seeds failed; each FAIL line above has the command that replays it", s.Failed, s.SeedsRun)
	case s.DeterminismBugs > 0:
		return fmt.Sprintf("FAIL: every seed passed, but %d replayed differently", s.DeterminismBugs)
	case s.StoppedEarly:
		return fmt.Sprintf("INCOMPLETE: the %d seeds run passed, but the sweep stopped early", s.SeedsRun)
	}
	if s.KnownSeeds > 0 {
		return fmt.Sprintf("PASS: all %d seeds passed (%d with known findings of the modelled software, listed above as KNOWN; --fail-on-known fails on them)", s.SeedsRun, s.KnownSeeds)
	}
	return fmt.Sprintf("PASS: all %d seeds passed", s.SeedsRun)
}
