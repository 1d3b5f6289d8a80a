package scenarios

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
)

// FuzzRun fuzzes whole runs with structure-aware inputs: the fuzzer's bytes are a seed and a few
// edits of the scenario that seed draws (DecodeFuzzBytes), so every input is a whole swarm run, at
// least as eventful as a random seed's, and a mutation moves, adds, drops, retargets or stretches a
// fault instead of shifting raw choice bytes. A run that fails any checker fails the fuzzer, which
// saves the input under testdata/fuzz/FuzzRun; the failure message carries the edited script and
// its seed, which `simrun replay --script F --seed S` runs.
//
//	go test ./scenarios -run XXX -fuzz FuzzRun -fuzztime 60s
//
// Go's fuzzer is guided by code coverage, which a protocol saturates early; `simrun fuzz` shares
// this encoding and is guided by the protocol situations a run reaches (Coverage). The checked-in
// corpus runs as ordinary test cases with plain `go test`: seed-N files are seed N with no edit.
func FuzzRun(f *testing.F) {
	// The checked-in seed-N files start the search from the first seeds' runs.
	f.Fuzz(func(t *testing.T, data []byte) {
		opts, err := fuzzRunOptions(data)
		if err != nil {
			t.Skip(err) // A scenario the edits made invalid for its cluster: not a run.
		}
		rep, err := Run(opts)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed() {
			t.Fatalf("%s\nreplay with: simrun replay --clients 3 --duration 10s --seed %d --script F, F holding:\n%s",
				rep.Explain(), opts.Seed, FormatFuzzScript(opts.Seed, rep.Script))
		}
	})
}

// fuzzDuration and fuzzClients are FuzzRun's runs: short, with few clients, so that a fuzzing
// campaign runs many.
const (
	fuzzDuration = 10 * clock.Second
	fuzzClients  = 3
)

// fuzzRunOptions decodes a fuzzer's bytes into a run: the seed's drawn scenario with the edits.
func fuzzRunOptions(data []byte) (Options, error) {
	in := DecodeFuzzBytes(data, fuzzDuration)
	base := Options{Seed: in.Seed, Observers: -1, Clients: fuzzClients, Duration: fuzzDuration}
	script, err := DrawScript(base)
	if err != nil {
		return Options{}, err
	}
	base.Script = ApplyEdits(script, in.Edits)
	return base, nil
}

// fuzzCorpusSeeds are the seeds whose inputs make the checked-in corpus.
const fuzzCorpusSeeds = 12

const fuzzCorpusDir = "testdata/fuzz/FuzzRun"

var writeFuzzCorpus = flag.Bool("write-fuzz-corpus", false, "rewrite testdata/fuzz/FuzzRun/seed-N")

// TestFuzzCorpusIsTheSeeds: every seed-N file of the corpus is seed N with no edit, and its run is
// exactly seed N's swarm run under FuzzRun's options (same trace hash): an input without edits is
// the random swarm itself. Rewrite the files with
//
//	go test ./scenarios -run TestFuzzCorpusIsTheSeeds -args -write-fuzz-corpus
func TestFuzzCorpusIsTheSeeds(t *testing.T) {
	for seed := uint64(1); seed <= fuzzCorpusSeeds; seed++ {
		path := filepath.Join(fuzzCorpusDir, "seed-"+strconv.FormatUint(seed, 10))
		want := EncodeFuzzBytes(FuzzInput{Seed: seed}, fuzzDuration)
		if *writeFuzzCorpus {
			require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", want)), 0o644))
		}
		text, err := os.ReadFile(path)
		require.NoError(t, err, "rewrite the corpus with -write-fuzz-corpus")
		data := parseFuzzBytes(t, string(text))
		require.Equal(t, want, data, "%s is seed %d with no edit", path, seed)

		opts, err := fuzzRunOptions(data)
		require.NoError(t, err)
		fromBytes, err := Run(opts)
		require.NoError(t, err)
		plain, err := Run(Options{Seed: seed, Observers: -1, Clients: fuzzClients, Duration: fuzzDuration})
		require.NoError(t, err)
		assert.Equal(t, plain.Outcome.TraceHash, fromBytes.Outcome.TraceHash, "seed %d: the input without edits is the seed's own run", seed)
	}
}

// parseFuzzBytes reads a one-value corpus file of the form go test writes: a version line, then
// []byte("...") as a Go string literal.
func parseFuzzBytes(t *testing.T, text string) []byte {
	lines := strings.SplitN(strings.TrimSpace(text), "\n", 2)
	require.Len(t, lines, 2)
	require.Equal(t, "go test fuzz v1", lines[0])
	literal, ok := strings.CutPrefix(lines[1], "[]byte(")
	require.True(t, ok, lines[1])
	literal, ok = strings.CutSuffix(literal, ")")
	require.True(t, ok)
	s, err := strconv.Unquote(literal)
	require.NoError(t, err)
	return []byte(s)
}

// TestCommittedFuzzCorpusRuns: every script of the committed fuzz corpus (the starting point of
// the CI campaign, see .github/workflows/fuzz.yml) parses with its seed and passes on the correct
// build; so it is also a regression suite of eventful runs.
func TestCommittedFuzzCorpusRuns(t *testing.T) {
	names, err := filepath.Glob("testdata/fuzzcorpus/*.script")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(names), 20, "the committed corpus is there")
	for _, name := range names {
		text, err := os.ReadFile(name)
		require.NoError(t, err)
		seed, script, err := ParseFuzzScript(string(text))
		require.NoError(t, err, name)
		rep, err := Run(Options{Seed: seed, Script: script, Duration: script.Duration, Clients: script.Clients})
		require.NoError(t, err, name)
		assert.False(t, rep.Failed(), "%s: %s", name, rep.Explain())
	}
}
