package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zabsim/zabsim/internal/report"
	"github.com/zabsim/zabsim/scenarios"
)

// huntFinds collects hunt --out's finds: each bug's first failing seed gets its artifacts under
// DIR/BUG/seed-S as run --out writes them, and DIR/index.html lists the finds by failure class.
type huntFinds struct {
	entries []report.IndexEntry
}

// add writes a find's artifacts when --out is given; a problem is reported on stderr without
// stopping the hunt, as run --out does.
func (h *huntFinds) add(env *environment, outDir string, target huntTarget, opts scenarios.Options, r seedResult, replay string) {
	if outDir == "" {
		return
	}
	entry := report.IndexEntry{Seed: r.seed, Class: r.class, Label: target.name, Headline: headline(r.explanation), Replay: replay}
	dir, err := writeFailureArtifacts(env, filepath.Join(outDir, target.name), opts, r, replay)
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun hunt: %s seed %d: %v\n", target.name, r.seed, err)
	} else {
		entry.Report = filepath.ToSlash(filepath.Join(target.name, filepath.Base(dir), "report.html"))
	}
	h.entries = append(h.entries, entry)
}

// write writes DIR/index.html.
func (h *huntFinds) write(env *environment, outDir string, summary huntSummary) {
	meta := report.IndexMeta{
		Title: "simrun hunt: the first failing seed of each bug", Build: buildDescription(), CommandLine: env.commandLine(),
		Summary: fmt.Sprintf("%d of %d bugs found, %d seeds per bug at most", summary.Found, summary.Bugs, summary.Seeds),
	}
	var page bytes.Buffer
	err := report.WriteIndex(&page, meta, h.entries)
	if err == nil {
		err = os.WriteFile(filepath.Join(outDir, indexFile), page.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun hunt: --out: writing %s: %v\n", indexFile, err)
	}
}
