package main

import (
	"sync"
	"sync/atomic"

	"github.com/zabsim/zabsim/scenarios"
)

// seedRange is the seeds a sweep covers and the part of them this worker runs.
type seedRange struct {
	start uint64
	count int64
	shard shard
}

// next returns the first index at or after k that belongs to this shard, and whether it is in the
// range.
func (r seedRange) next(k int64) (int64, bool) {
	if k < r.shard.index {
		k = r.shard.index
	} else if rem := k % r.shard.count; rem != r.shard.index {
		k += (r.shard.index - rem + r.shard.count) % r.shard.count
	}
	return k, k < r.count
}

// sweep runs the range's seeds on parallel goroutines, one seed per goroutine at a time, and hands
// the results to emit in seed order. emit returns false to stop the sweep: no further seed starts,
// and the seeds already running finish and are emitted. Results arrive out of order; a window
// bounds how far the fastest worker may run ahead of the oldest unfinished seed, and so bounds the
// memory that reordering takes.
func sweep(env *environment, opts scenarios.Options, seeds seedRange, parallel int, emit func(seedResult) bool) {
	window := parallel * 16
	tokens := make(chan struct{}, window)
	jobs := make(chan int64, parallel) // indexes in the range
	results := make(chan seedResult, parallel)
	var stopped atomic.Bool

	go func() {
		defer close(jobs)
		for k, ok := seeds.next(0); ok && !stopped.Load(); k, ok = seeds.next(k + 1) {
			tokens <- struct{}{}
			if stopped.Load() {
				return
			}
			jobs <- k
		}
	}()
	var workers sync.WaitGroup
	for range parallel {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for k := range jobs {
				results <- measureSeed(env, opts, k, seeds.start+uint64(k))
			}
		}()
	}
	go func() {
		workers.Wait()
		close(results)
	}()
	collect(seeds, results, tokens, &stopped, emit)
}

// collect reorders the results and emits them in index order, releasing a window token for each.
func collect(seeds seedRange, results <-chan seedResult, tokens <-chan struct{}, stopped *atomic.Bool, emit func(seedResult) bool) {
	pending := map[int64]seedResult{}
	want, _ := seeds.next(0)
	for result := range results {
		pending[result.index] = result
		for {
			ready, ok := pending[want]
			if !ok {
				break
			}
			delete(pending, want)
			<-tokens
			if !emit(ready) {
				stopped.Store(true)
			}
			want, _ = seeds.next(want + 1)
		}
	}
	if len(pending) > 0 {
		// Every dispatched seed finishes, so the reordering buffer must drain completely.
		panic("simrun: sweep ended with results that were never emitted")
	}
}
