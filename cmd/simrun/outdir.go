package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zabsim/zabsim/internal/report"
)

// indexFile is the page --out writes at the top of its directory: every failing seed by class.
const indexFile = "index.html"

// prepareOutDir checks --out before any seed runs: the directory is created if need be, must be
// writable, and must be empty, so that two sweeps never mix their seeds (and their index) in one
// directory. A sweep's seed-S directories are only meaningful with the flags that made them.
func prepareOutDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("--out: %s is not empty (%d entries, e.g. %s): give a new or empty directory, so that two sweeps never mix",
			dir, len(entries), entries[0].Name())
	}
	probe, err := os.CreateTemp(dir, ".simrun-probe-*")
	if err != nil {
		return fmt.Errorf("--out: %s is not writable: %w", dir, err)
	}
	return errors.Join(probe.Close(), os.Remove(probe.Name()))
}

// writeIndex writes DIR/index.html; a problem is reported on stderr, as for the seeds' artifacts.
func (p *sweepPrinter) writeIndex(s summaryRecord) {
	last := s.SeedStart + uint64(s.Seeds) - 1
	meta := report.IndexMeta{
		Title: fmt.Sprintf("simrun run: seeds %d..%d, shard %s", s.SeedStart, last, s.Shard),
		Build: buildDescription(), CommandLine: p.env.commandLine(),
		Summary: fmt.Sprintf("%d seeds run, %d passed, %d failed%s", s.SeedsRun, s.Passed, s.Failed, stoppedNote(s.StoppedEarly)),
	}
	var page bytes.Buffer
	err := report.WriteIndex(&page, meta, p.index)
	if err == nil {
		err = os.WriteFile(filepath.Join(p.flags.outDir, indexFile), page.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintf(p.env.stderr, "simrun run: --out: writing %s: %v\n", indexFile, err)
	}
}

func stoppedNote(stopped bool) string {
	if stopped {
		return " (the sweep stopped early)"
	}
	return ""
}
