// Package good uses only what the determinism checker allows, or marks its exemptions with reasons.
package good

import (
	"math/rand/v2"
	"os"
	"time"
)

// Seeded builds a generator from a seed: allowed, it is deterministic.
func Seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

// Uses shows allowed uses of time and os, and marked exemptions.
func Uses(m map[string]int) time.Duration {
	_ = os.Args
	count := 0
	for range m { // determinism:ok counting is order-independent
		count++
	}
	// determinism:ok the marker may also stand on the line above
	for k := range m {
		delete(m, k)
	}
	return time.Duration(count) * time.Millisecond
}

type world struct{}

func (world) Tracing() bool     { return true }
func (world) TraceEvent(string) {}

// BothWays writes the same structured record either way: only its unhashed detail depends on
// rendering.
func BothWays(w world) {
	if w.Tracing() {
		w.TraceEvent("rich detail")
	} else {
		w.TraceEvent("")
	}
}
