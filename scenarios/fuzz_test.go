package scenarios

import (
	"testing"

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
// The checked-in corpus runs as ordinary test cases with plain `go test`.
func FuzzRun(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte("a leader crash during broadcast, then a partition"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Run(Options{
			Seed: 1, Chooser: sim.NewBytes(data), Observers: -1,
			Clients: 3, Duration: 10 * clock.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed() {
			t.Fatalf("%s\nscript:\n%s", rep.Explain(), rep.Script)
		}
	})
}
