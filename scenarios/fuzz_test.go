package scenarios

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
)

// FuzzRun drives a whole run from the fuzzer's bytes: every choice of the world (the scenario drawn,
// each latency, each client's pick of a server, each fault) is read from them, so that coverage
// guidance steers the run towards new protocol paths. A run that fails any checker fails the
// fuzzer, which saves the input under testdata/fuzz/FuzzRun as a regression case.
//
//	go test ./scenarios -run XXX -fuzz FuzzRun -fuzztime 60s
//
// The checked-in corpus runs as ordinary test cases with plain `go test`. Besides the fuzzer's own
// finds it holds seed-N files: the recorded choices of seed N's run, encoded so that these bytes
// replay that very run (see TestFuzzCorpusReplaysItsSeeds). They start the fuzzer from realistic
// runs, whose mutations stay realistic, rather than from short inputs after which every choice is 0.
func FuzzRun(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte("a leader crash during broadcast, then a partition"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Run(fuzzOptions(sim.NewBytes(data)))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed() {
			t.Fatalf("%s\nscript:\n%s", rep.Explain(), rep.Script)
		}
	})
}

// fuzzOptions are FuzzRun's runs: a short swarm run whose every choice comes from chooser.
func fuzzOptions(chooser sim.Chooser) Options {
	return Options{Seed: 1, Chooser: chooser, Observers: -1, Clients: 3, Duration: 10 * clock.Second}
}

var writeFuzzCorpus = flag.Bool("write-fuzz-corpus", false, "rewrite testdata/fuzz/FuzzRun/seed-N from the seeds' recorded runs")

// fuzzCorpusSeeds are the seeds whose runs make the checked-in corpus.
const fuzzCorpusSeeds = 12

const fuzzCorpusDir = "testdata/fuzz/FuzzRun"

// seedRunBytes records the choices of seed's run under FuzzRun's options and encodes them as the
// fuzzer's bytes; it returns them with the run's trace hash.
func seedRunBytes(t *testing.T, seed uint64) ([]byte, uint64) {
	rec := sim.NewRecorder(sim.NewPCG(seed), 0)
	rep, err := Run(fuzzOptions(rec))
	require.NoError(t, err)
	require.False(t, rep.Failed(), "seed %d: %s", seed, rep.Explain())
	data, err := sim.EncodeBytes(rec.Choices())
	require.NoError(t, err)
	return data, rep.Outcome.TraceHash
}

// TestFuzzCorpusReplaysItsSeeds: a seed's recorded choices, encoded as the fuzzer's bytes and read
// back as FuzzRun reads them, run exactly that seed's run (same trace hash); and every seed-N file
// of the corpus is there and well formed. A file recorded before the model changed still drives a
// realistic run, only no longer seed N's; the test fails until -write-fuzz-corpus rewrites them:
//
//	go test ./scenarios -run TestFuzzCorpusReplaysItsSeeds -args -write-fuzz-corpus
func TestFuzzCorpusReplaysItsSeeds(t *testing.T) {
	var stale []string
	for seed := uint64(1); seed <= fuzzCorpusSeeds; seed++ {
		path := filepath.Join(fuzzCorpusDir, "seed-"+strconv.FormatUint(seed, 10))
		want, hash := seedRunBytes(t, seed)
		rep, err := Run(fuzzOptions(sim.NewBytes(want)))
		require.NoError(t, err)
		require.Equal(t, hash, rep.Outcome.TraceHash, "seed %d's encoded choices replay its run", seed)
		if *writeFuzzCorpus {
			require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", want)), 0o644))
			continue
		}
		text, err := os.ReadFile(path)
		require.NoError(t, err, "rewrite the corpus with -write-fuzz-corpus")
		if data := parseFuzzBytes(t, string(text)); !bytes.Equal(data, want) {
			stale = append(stale, path)
		}
	}
	// A stale file still drives some run, but no longer the realistic run the corpus promises
	// fuzzing starts from: it fails the test until rewritten.
	if len(stale) > 0 {
		t.Errorf("%d corpus files predate the current model (%s); rewrite them with -write-fuzz-corpus",
			len(stale), strings.Join(stale, ", "))
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
