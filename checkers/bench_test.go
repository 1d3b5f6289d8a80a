package checkers

import (
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// processCPUTime is the CPU time this process has used, user and system.
func processCPUTime() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// prngSource drives the history generator from a seeded PRNG, for benchmarks.
type prngSource struct {
	r  *rand.Rand
	tb testing.TB
}

func (s prngSource) intRange(min, max int, _ string) int { return min + s.r.IntN(max-min+1) }

func (s prngSource) int64Range(min, max int64, _ string) int64 { return min + s.r.Int64N(max-min+1) }

func (s prngSource) Fatalf(format string, args ...any) { s.tb.Fatalf(format, args...) }

func benchHistory(tb testing.TB, clients, paths, n int) *History {
	gen := generateHistory(prngSource{r: rand.New(rand.NewPCG(1, uint64(n))), tb: tb}, clients, paths, n)
	if err := Validate(gen.h); err != nil {
		tb.Fatalf("generated an invalid history: %v", err)
	}
	return gen.h
}

func countOps(h *History) int {
	n := 0
	for i := range h.Clients {
		n += len(h.Clients[i].Ops)
	}
	return n
}

// BenchmarkRegister10k checks a 10,000-operation register history (8 clients, 10 znodes, a tenth
// of the writes lost) for linearizability, and reports the cost per operation of the history.
func BenchmarkRegister10k(b *testing.B) {
	h := benchHistory(b, 8, 10, 10_000)
	opts := LinearizabilityOptions{Model: RegisterModel, Prefix: "/r", TimeLimit: time.Minute}
	for b.Loop() {
		res, err := CheckLinearizability(h, opts)
		if err != nil || res.Status != Pass {
			b.Fatalf("%v %s", err, res)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*countOps(h)), "ns/history-op")
}

// BenchmarkRun10k runs every checker (register linearizability with reads, sequential
// consistency, watches, sessions, liveness) on the same 10,000-operation history.
func BenchmarkRun10k(b *testing.B) {
	h := benchHistory(b, 8, 10, 10_000)
	opts := Options{
		Linearizability: []LinearizabilityOptions{{Model: RegisterModel, Prefix: "/r", IncludeReads: true, TimeLimit: time.Minute}},
		Reads:           ReadOptions{LinearizableReadsAfterSync: true},
	}
	for b.Loop() {
		report, err := Run(h, opts)
		if err != nil || report.Failed() {
			b.Fatalf("%v\n%s", err, report)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*countOps(h)), "ns/history-op")
}

// BenchmarkLargestWithinOneSecond doubles the size of a single-register history (8 clients, one
// znode: no partitioning helps) until porcupine can no longer decide it within one second, and
// reports the largest size it decided.
func BenchmarkLargestWithinOneSecond(b *testing.B) {
	for _, reads := range []bool{false, true} {
		name := "writes"
		if reads {
			name = "writes+reads"
		}
		b.Run(name, func(b *testing.B) {
			largest := 0
			for b.Loop() {
				largest = largestDecided(b, reads, time.Second)
			}
			b.ReportMetric(float64(largest), "ops")
		})
	}
}

func largestDecided(tb testing.TB, reads bool, limit time.Duration) int {
	const maxOps = 1 << 20
	largest := 0
	for n := 1000; n <= maxOps; n *= 2 {
		h := benchHistory(tb, 8, 1, n)
		res, err := CheckLinearizability(h, LinearizabilityOptions{Model: RegisterModel, Prefix: "/r", IncludeReads: reads, TimeLimit: limit})
		if err != nil {
			tb.Fatal(err)
		}
		if res.Status != Pass {
			break
		}
		largest = countOps(h)
	}
	return largest
}

// BenchmarkZxidOrderMillion decides a history of about a million operations (8 clients, writes
// and reads on 100 znodes, a tenth of the writes lost) with the zxid-order checker, validation
// included, and reports the cost per operation; porcupine's figure for comparison is
// BenchmarkLargestWithinOneSecond's.
func BenchmarkZxidOrderMillion(b *testing.B) {
	for _, bench := range []struct {
		name  string
		paths int
	}{{"100-znodes", 100}, {"1-znode", 1}} {
		b.Run(bench.name, func(b *testing.B) {
			h := benchHistory(b, 8, bench.paths, 1_000_000)
			opts := LinearizabilityOptions{Model: RegisterModel, Prefix: "/r", IncludeReads: true}
			// The generator leaves hundreds of megabytes of garbage; collected during the first check,
			// it would be counted as the checker's (with -benchtime 1x, as all of the figure).
			runtime.GC()
			b.ResetTimer()
			cpu := processCPUTime()
			for b.Loop() {
				res, err := CheckZxidOrder(h, opts)
				if err != nil || res.Status != Pass {
					b.Fatalf("%v %s", err, res)
				}
			}
			// On a shared machine wall time per check overstates the cost; the process's CPU time
			// (with -cpu 1, the collector included) is the figure to compare with one second.
			b.ReportMetric((processCPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/check")
			b.ReportMetric(float64(countOps(h)), "ops")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*countOps(h)), "ns/history-op")
		})
	}
}
