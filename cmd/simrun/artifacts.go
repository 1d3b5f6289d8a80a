package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/sim"
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
// explanation with the replay command, and the text trace of the seed replayed with the trace on.
// The replay must reach the sweep's trace hash; a different hash is a determinism bug.
//
// The porcupine visualization of a failed linearizability check is not written yet: scenarios has
// no way to request it (see the explanation file).
func writeFailureArtifacts(env *environment, outDir string, opts scenarios.Options, r seedResult, replay string) (string, error) {
	dir := filepath.Join(outDir, fmt.Sprintf("seed-%d", r.seed))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return dir, fmt.Errorf("--out: %w", err)
	}
	var explanation strings.Builder
	fmt.Fprintf(&explanation, "class: %s\nreplay: %s\n\n%s", r.class, replay, r.explanation)
	if strings.HasPrefix(strings.TrimPrefix(r.class, outsidePrefix), "linearizability") {
		explanation.WriteString("\nThe porcupine visualization is not written: scenarios.Options cannot request it yet.\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "explanation.txt"), []byte(explanation.String()), 0o644); err != nil {
		return dir, fmt.Errorf("--out: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "script.txt"), []byte(r.script), 0o644); err != nil {
		return dir, fmt.Errorf("--out: %w", err)
	}
	hash, err := writeTraceFile(env, filepath.Join(dir, "trace.txt"), opts, r.seed)
	if err != nil {
		return dir, err
	}
	if hash != r.traceHash {
		return dir, &determinismError{seed: r.seed, first: r.traceHash, again: hash, what: "replayed with the text trace on for --out"}
	}
	return dir, nil
}

// writeTraceFile runs a seed with its text trace going to path and returns the trace hash.
func writeTraceFile(env *environment, path string, opts scenarios.Options, seed uint64) (uint64, error) {
	file, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("--out: %w", err)
	}
	buffered := bufio.NewWriterSize(file, 1<<16)
	opts.Trace = sim.TraceConfig{Text: buffered}
	report, runErr := env.runSeed(opts, seed)
	flushErr := buffered.Flush()
	closeErr := file.Close()
	switch {
	case runErr != nil:
		return 0, fmt.Errorf("replaying for --out: %w", runErr)
	case flushErr != nil:
		return 0, fmt.Errorf("--out: writing the trace: %w", flushErr)
	case closeErr != nil:
		return 0, fmt.Errorf("--out: writing the trace: %w", closeErr)
	}
	return report.Outcome.TraceHash, nil
}
