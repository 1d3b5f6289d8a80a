// Package bad holds one of every construct the determinism checker must report.
package bad

import (
	crand "crypto/rand"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"time"
)

func Leaks(m map[string]int) {
	_ = time.Now()               // wall-clock
	time.Sleep(time.Millisecond) // wall-clock
	_ = rand.Intn(3)             // global-randomness (and the import)
	_ = randv2.IntN(3)           // global-randomness
	_, _ = crand.Read(nil)       // crypto-randomness (and the import)
	_ = os.Getenv("HOME")        // environment
	go func() {}()               // goroutine
	for k := range m {           // map-range
		_ = k
	}
	for range m { // determinism:ok
	}
}

type world struct{}

func (world) Tracing() bool { return true }
func (world) Note(string)   {}

func RenderedOnly(w world) {
	if w.Tracing() {
		w.Note("only when rendered") // trace-hash
	}
	if w.Tracing() {
		w.Note("rich") // trace-hash: a Note hashes its text
	} else {
		w.Note("") // trace-hash
	}
}
