package scenarios

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/checkers/zab"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// standardEvents records the protocol events of the standard scenario (5 servers, 10 clients,
// registers, 60 s of every fault family, as simrun bench runs it) for the given seeds. The
// transactions' bodies are dropped: the invariant checker reads only the events' scalar fields.
func standardEvents(tb testing.TB, seeds int) ([]recordedStream, []*checkers.History) {
	tb.Helper()
	var streams []recordedStream
	var histories []*checkers.History
	for seed := 1; seed <= seeds; seed++ {
		var events []zabmodel.Event
		opts := Options{
			Seed: uint64(seed), Servers: 5, Clients: 10, Workload: "registers",
			Duration: 60 * clock.Second, Faults: append([]string(nil), FaultFamilies...),
			Watch: &Watch{Protocol: func(e zabmodel.Event) {
				e.Txn, e.TxnData = nil, nil
				events = append(events, e)
			}},
		}
		report, err := Run(opts)
		require.NoError(tb, err)
		require.Empty(tb, report.Zab, "seed %d", seed)
		require.NotNil(tb, report.Script)
		config := zab.Config{Voters: []int64{1, 2, 3, 4, 5}, InitialZxidCounter: report.Script.InitialZxidCounter}
		streams = append(streams, recordedStream{config: config, events: events})
		histories = append(histories, report.History)
	}
	return streams, histories
}

// recordedStream is one run's protocol events and the checker configuration that judges them.
type recordedStream struct {
	config zab.Config
	events []zabmodel.Event
}

// BenchmarkZabCheckerStandard replays the recorded protocol events of ten seeds of the standard
// scenario through a fresh streaming ZAB invariant checker per seed and reports the cost per
// event: the part of the checker share of a run that the invariant checker takes (a run of the
// standard scenario dispatches about 55,000 events per seed).
func BenchmarkZabCheckerStandard(b *testing.B) {
	streams, _ := standardEvents(b, 10)
	events := 0
	for _, s := range streams {
		events += len(s.events)
	}
	b.ReportAllocs()
	cpu := processCPUTime()
	for b.Loop() {
		for _, stream := range streams {
			c, err := zab.New(stream.config)
			require.NoError(b, err)
			for _, e := range stream.events {
				c.Observe(e)
			}
			require.False(b, c.Failed(), "%v", c.Violations())
		}
	}
	// On a shared machine wall time overstates the cost; the process's CPU time (with -cpu 1, the
	// collector included) is the figure to compare.
	b.ReportMetric(float64((processCPUTime()-cpu).Nanoseconds())/float64(b.N*events), "cpu-ns/event")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}

// BenchmarkClientCheckersStandard runs the client-visible checkers, as a run of the standard
// scenario configures them, on the histories of ten of its seeds and reports the cost per
// history: the other part of the checker share of a run.
func BenchmarkClientCheckersStandard(b *testing.B) {
	_, histories := standardEvents(b, 10)
	opts := checkers.Options{
		Linearizability: (&registers{}).checks(),
		Liveness:        checkers.LivenessOptions{LeaderBound: DefaultLivenessBound, OperationBound: DefaultLivenessBound},
	}
	b.ReportAllocs()
	cpu := processCPUTime()
	for b.Loop() {
		for _, h := range histories {
			report, err := checkers.Run(h, opts)
			require.NoError(b, err)
			require.False(b, report.Failed(), "%s", report)
		}
	}
	b.ReportMetric(float64((processCPUTime()-cpu).Nanoseconds())/float64(b.N*len(histories)), "cpu-ns/history")
}

// processCPUTime is the CPU time this process has used, user and system.
func processCPUTime() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
