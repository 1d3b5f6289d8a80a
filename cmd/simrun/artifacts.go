package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/internal/report"
	"github.com/zabsim/zabsim/scenarios"
)

// determinismError says that a seed replayed to a different trace than its first run: a bug in
// zabsim's determinism, never in the system under test.
type determinismError struct {
	seed         uint64
	first, again uint64
	what         string
}

func (e *determinismError) Error() string {
	return fmt.Sprintf("DETERMINISM BUG: seed %d gave trace hash %016x, then %016x when %s; "+
		"the same seed must give the same run (please report it with the replay command)", e.seed, e.first, e.again, e.what)
}

// writeFailureArtifacts writes one failing seed's directory under outDir: the script, the
// explanation with the replay command, the text trace of the seed replayed with the trace on, and
// report.html, the run drawn for a person (package internal/report). The replay must reach the
// sweep's trace hash; a different hash is a determinism bug. The same replay also asks for
// porcupine's HTML visualization of every linearizability check of the run, failing or not, one
// file per model and prefix, annotated with the run's faults and leader changes.
func writeFailureArtifacts(env *environment, outDir string, opts scenarios.Options, r seedResult, replay string) (string, error) {
	dir := filepath.Join(outDir, fmt.Sprintf("seed-%d", r.seed))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return dir, fmt.Errorf("--out: %w", err)
	}
	visualizations := &visualizationSet{}
	opts.Visualization = visualizations.writer
	recorder := report.NewRecorder()
	recorder.Attach(&opts)
	header := fmt.Sprintf("# seed %d fails with %s; replay: %s\n%s", r.seed, r.class, replay, scriptHeader(env))
	if err := os.WriteFile(filepath.Join(dir, "script.txt"), []byte(header+r.script), 0o644); err != nil {
		return dir, fmt.Errorf("--out: %w", err)
	}
	run, err := writeTraceFile(env, filepath.Join(dir, "trace.txt"), opts, r.seed)
	if err != nil {
		return dir, err
	}
	var explanation strings.Builder
	fmt.Fprintf(&explanation, "class: %s\nreplay: %s\n%s\n%s", r.class, replay, provenance(env), r.explanation)
	names, err := visualizations.save(dir)
	if err != nil {
		return dir, err
	}
	if len(names) > 0 {
		fmt.Fprintf(&explanation, "\nporcupine visualizations (open in a browser): %s\n", strings.Join(names, ", "))
	}
	fmt.Fprintf(&explanation, "\nreport (open in a browser): report.html\n")
	if err := os.WriteFile(filepath.Join(dir, "explanation.txt"), []byte(explanation.String()), 0o644); err != nil {
		return dir, fmt.Errorf("--out: %w", err)
	}
	if err := writeHTMLReport(env, filepath.Join(dir, "report.html"), recorder, run, replay, names, "trace.txt"); err != nil {
		return dir, err
	}
	if run.Outcome.TraceHash != r.traceHash {
		return dir, &determinismError{seed: r.seed, first: r.traceHash, again: run.Outcome.TraceHash, what: "replayed with the text trace on for --out"}
	}
	return dir, nil
}

// writeHTMLReport writes a run's HTML report to path.
func writeHTMLReport(env *environment, path string, recorder *report.Recorder, run *scenarios.Report, replay string, visualizations []string, trace string) error {
	var page bytes.Buffer
	meta := report.Meta{Replay: replay, Build: buildDescription(), CommandLine: env.commandLine(),
		Visualizations: visualizations, Trace: trace}
	if err := report.Write(&page, recorder, run, meta); err != nil {
		return err
	}
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the HTML report: %w", err)
	}
	return nil
}

// linearizabilityClass reports whether a failure class is a linearizability check's verdict
// (a violation, or "unknown:" when porcupine ran out of time) or their cross-check, inside the
// fault model or not.
func linearizabilityClass(class string) bool {
	class = strings.TrimPrefix(class, outsidePrefix)
	class = strings.TrimPrefix(class, "unknown:")
	return strings.HasPrefix(class, "linearizability/") || strings.HasPrefix(class, "zxid-order/") ||
		strings.HasPrefix(class, checkers.CheckerCrossCheck)
}

// visualizationSet collects the porcupine visualizations a run writes, in memory, so that they
// are saved only once the run is over and an error writing one can be reported with context.
type visualizationSet struct {
	files []visualizationFile
}

type visualizationFile struct {
	name string
	html *bytes.Buffer
}

// maxVisualizations bounds the files one run may write; a workload has a handful of checks.
const maxVisualizations = 64

// writer is the scenarios.Options.Visualization hook: it names the file by model and prefix and
// hands out its buffer. Past maxVisualizations, further checks are visualized into nothing.
func (v *visualizationSet) writer(model checkers.ModelKind, prefix string) io.Writer {
	if len(v.files) >= maxVisualizations {
		return io.Discard
	}
	base := "porcupine-" + modelName(model) + "-" + prefixName(prefix)
	name := base + ".html"
	for i := 2; v.has(name); i++ {
		name = fmt.Sprintf("%s-%d.html", base, i)
	}
	file := visualizationFile{name: name, html: &bytes.Buffer{}}
	v.files = append(v.files, file)
	return file.html
}

func (v *visualizationSet) has(name string) bool {
	return slices.ContainsFunc(v.files, func(f visualizationFile) bool { return f.name == name })
}

// save writes the collected visualizations into dir and returns their file names.
func (v *visualizationSet) save(dir string) ([]string, error) {
	var names []string
	for _, f := range v.files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.html.Bytes(), 0o644); err != nil {
			return names, fmt.Errorf("--out: writing a porcupine visualization: %w", err)
		}
		names = append(names, f.name)
	}
	return names, nil
}

// modelName names a linearizability model in a file name.
func modelName(model checkers.ModelKind) string {
	switch model {
	case checkers.RegisterModel:
		return "register"
	case checkers.TreeModel:
		return "tree"
	case checkers.QueueModel:
		return "queue"
	}
	return fmt.Sprintf("model%d", model)
}

// prefixName turns a znode prefix into a file name part: "/" is "root", and "/a/b" is "a-b".
// Characters a file name should not hold become "_".
func prefixName(prefix string) string {
	trimmed := strings.Trim(prefix, "/")
	if trimmed == "" {
		return "root"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '/':
			return '-'
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, trimmed)
}

// writeTraceFile runs a seed with its text trace going to path (beside any structured sink opts
// already has) and returns the run's report.
func writeTraceFile(env *environment, path string, opts scenarios.Options, seed uint64) (*scenarios.Report, error) {
	file, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	buffered := bufio.NewWriterSize(file, 1<<16)
	opts.Trace.Text = buffered
	run, runErr := env.runSeed(opts, seed)
	flushErr := buffered.Flush()
	closeErr := file.Close()
	switch {
	case runErr != nil:
		return nil, fmt.Errorf("replaying for --out: %w", runErr)
	case flushErr != nil:
		return nil, fmt.Errorf("--out: writing the trace: %w", flushErr)
	case closeErr != nil:
		return nil, fmt.Errorf("--out: writing the trace: %w", closeErr)
	}
	return run, nil
}
