package modelcheck

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

// benchmarkCheck runs one complete search per iteration and reports distinct states per second
// (per core: the search runs on one worker) and the peak heap per million distinct states,
// sampled every 20 ms.
func benchmarkCheck(b *testing.B, m Model, opts Options) {
	b.Helper()
	var distinct int64
	var elapsed time.Duration
	var peak uint64
	for b.Loop() {
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		var high uint64
		go func() {
			defer wg.Done()
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				high = max(high, ms.HeapAlloc-min(ms.HeapAlloc, base.HeapAlloc))
				select {
				case <-done:
					return
				case <-tick.C:
				}
			}
		}()
		r, err := Check(context.Background(), m, opts)
		close(done)
		wg.Wait()
		if err != nil || r.Violation != nil {
			b.Fatalf("err %v violation %v", err, r.Violation)
		}
		distinct += r.Distinct
		elapsed += r.Elapsed
		peak = max(peak, high)
		b.ReportMetric(float64(r.Distinct), "states")
	}
	b.ReportMetric(float64(distinct)/elapsed.Seconds(), "states/s")
	b.ReportMetric(float64(peak)/float64(distinct/int64(b.N))*1e6/(1<<20), "MiB/Mstates")
}

// BenchmarkFLEThreeServers: three servers without faults, explored completely (354,460 states).
func BenchmarkFLEThreeServers(b *testing.B) {
	m, err := NewFLE(FLEConfig{Servers: 3})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkCheck(b, m, Options{})
}

// BenchmarkZABThreeServers: three servers, two writes, a crash and a restart, from the warm-up,
// the first 2,000 distinct states breadth-first.
func BenchmarkZABThreeServers(b *testing.B) {
	m, err := NewZAB(ZABConfig{Servers: 3, Writes: 2, Crashes: 1, Restarts: 1, Warmup: true})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkCheck(b, m, Options{MaxStates: 2000})
}

// BenchmarkZABCoarse: the same configuration at the coarse granularity (ZABConfig.Coarse), the
// first 2,000 distinct states breadth-first. A state costs about what a fine one does (the world
// is built and warmed up again); the coarse space only spends its depth on faults and timers.
func BenchmarkZABCoarse(b *testing.B) {
	m, err := NewZAB(ZABConfig{Servers: 3, Writes: 2, Crashes: 1, Restarts: 1, Timers: 10, BoundarySkips: 2, Warmup: true, Coarse: true})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkCheck(b, m, Options{MaxStates: 2000})
}

// BenchmarkZABThreeServersDFS: the configuration of BenchmarkZABThreeServers depth-first, the
// first 2,000 distinct states: the first step from each state continues in its live world, so a
// path is re-executed only when the search backtracks.
func BenchmarkZABThreeServersDFS(b *testing.B) {
	m, err := NewZAB(ZABConfig{Servers: 3, Writes: 2, Crashes: 1, Restarts: 1, Warmup: true})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkCheck(b, m, Options{Strategy: DFS, MaxStates: 2000})
}

// BenchmarkZABCoarseDFS: the coarse configuration of BenchmarkZABCoarse depth-first, the first
// 2,000 distinct states.
func BenchmarkZABCoarseDFS(b *testing.B) {
	m, err := NewZAB(ZABConfig{Servers: 3, Writes: 2, Crashes: 1, Restarts: 1, Timers: 10, BoundarySkips: 2, Warmup: true, Coarse: true})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkCheck(b, m, Options{Strategy: DFS, MaxStates: 2000})
}

// BenchmarkZABCopyWorld: one copy of the coarse configuration's world after the warm-up and ten
// steps (copy.go), against re-executing the same path; a copy pays where it is cheaper.
func BenchmarkZABCopyWorld(b *testing.B) {
	m, err := NewZAB(ZABConfig{Servers: 3, Writes: 2, Crashes: 1, Restarts: 1, Timers: 10, BoundarySkips: 2, Warmup: true, Coarse: true})
	if err != nil {
		b.Fatal(err)
	}
	zw, err := m.build(nil)
	if err != nil {
		b.Fatal(err)
	}
	var path []Action
	for range 10 {
		actions, _ := zw.actions(nil)
		if len(actions) == 0 {
			break
		}
		path = append(path, actions[0])
		if err := zw.step(actions[0]); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("copy", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.copyWorld(zw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("frozen", func(b *testing.B) {
		f, err := m.freeze(zw)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			m.copyFrozen(f)
		}
	})
	b.Run("replay", func(b *testing.B) {
		ref, err := NewZAB(ZABConfig{Servers: 3, Writes: 2, Crashes: 1, Restarts: 1, Timers: 10, BoundarySkips: 2, Warmup: true, Coarse: true, NoCopy: true})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := ref.replay(path, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
