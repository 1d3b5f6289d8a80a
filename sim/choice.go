package sim

import (
	"fmt"
	"math/rand/v2"
)

// A Chooser is the single door through which every nondeterministic decision of a run passes: each
// latency, each fault, each client's pick of a server, each jitter. A run is a pure function of its
// Chooser's answers, which is what makes seeds replayable, choice lists shrinkable, fuzz inputs
// meaningful and small configurations explorable exhaustively.
//
// Choose returns an integer in [0, n). n must be at least 1. Implementations must be deterministic
// given their construction arguments; none may be shared between worlds.
type Chooser interface {
	Choose(n int) int
}

// PCG is the Chooser of random simulation: a permuted congruential generator from math/rand/v2,
// seeded from the run seed alone.
type PCG struct {
	rng *rand.Rand
}

// pcgStream is the second PCG word. It is a fixed constant so that the seed alone decides the stream.
const pcgStream = 0x5a4253494d2d5a41 // "ZBSIM-ZA"

// NewPCG returns a Chooser seeded with seed.
func NewPCG(seed uint64) *PCG {
	return &PCG{rng: rand.New(rand.NewPCG(seed, pcgStream))}
}

// Choose implements Chooser.
func (p *PCG) Choose(n int) int {
	mustPositive(n)
	if n == 1 {
		// A forced choice consumes no randomness, so that adding a one-way branch somewhere does not
		// shift every later decision of the run.
		return 0
	}
	return p.rng.IntN(n)
}

// Replay answers from a recorded list of choices, as produced by a Recorder, in order. When the list
// is exhausted it answers 0, the "least eventful" choice by convention, which is what lets a shrinker
// cut a list short. A recorded value that does not fit the current question (the run diverged from
// the recording) is clamped into range and counted.
type Replay struct {
	choices   []int
	pos       int
	exhausted int
	clamped   int
}

// NewReplay returns a Chooser that replays choices. The slice is not modified.
func NewReplay(choices []int) *Replay { return &Replay{choices: choices} }

// Choose implements Chooser.
func (r *Replay) Choose(n int) int {
	mustPositive(n)
	if r.pos >= len(r.choices) {
		r.exhausted++
		return 0
	}
	v := r.choices[r.pos]
	r.pos++
	if v < 0 || v >= n {
		r.clamped++
		v = ((v % n) + n) % n
	}
	return v
}

// Consumed returns how many recorded choices have been used.
func (r *Replay) Consumed() int { return r.pos }

// Exhausted returns how many questions were answered after the list ran out.
func (r *Replay) Exhausted() int { return r.exhausted }

// Clamped returns how many recorded answers did not fit their question: a non-zero value means the
// replayed run is not the recorded one.
func (r *Replay) Clamped() int { return r.clamped }

// Bytes answers from a byte stream, so that `go test -fuzz` input can drive a run and the fuzzer's
// coverage guidance can steer it. Each answer consumes as few bytes as n needs (one byte for n <= 256,
// two for n <= 65536, and so on), taken big-endian and reduced modulo n. An exhausted stream answers 0.
type Bytes struct {
	data      []byte
	pos       int
	exhausted int
}

// NewBytes returns a Chooser reading from data. The slice is not modified.
func NewBytes(data []byte) *Bytes { return &Bytes{data: data} }

// Choose implements Chooser.
func (b *Bytes) Choose(n int) int {
	mustPositive(n)
	if n == 1 {
		return 0
	}
	if b.pos >= len(b.data) {
		b.exhausted++
		return 0
	}
	var v uint64
	for span := uint64(n - 1); span > 0 && b.pos < len(b.data); span >>= 8 {
		v = v<<8 | uint64(b.data[b.pos])
		b.pos++
	}
	return int(v % uint64(n))
}

// Exhausted returns how many questions were answered after the stream ran out.
func (b *Bytes) Exhausted() int { return b.exhausted }

// EncodeBytes is the inverse of Bytes: the byte stream from which Bytes gives exactly the recorded
// answers to the recorded questions. A fuzz corpus made of a seeded run's recorded choices starts
// the fuzzer from that realistic run instead of from a stream that soon answers only 0. It fails
// on a choice whose value does not fit its range.
func EncodeBytes(choices []Choice) ([]byte, error) {
	var out []byte
	for i, c := range choices {
		if c.N < 1 || c.Value < 0 || c.Value >= c.N {
			return nil, fmt.Errorf("sim: choice %d: value %d does not fit its range %d", i, c.Value, c.N)
		}
		// As many bytes as Choose reads for n: one per byte of n-1, big-endian.
		width := 0
		for span := uint64(c.N - 1); span > 0; span >>= 8 {
			width++
		}
		for shift := 8 * (width - 1); shift >= 0; shift -= 8 {
			out = append(out, byte(uint64(c.Value)>>shift))
		}
	}
	return out, nil
}

// Choice is one recorded decision: the question's range and the answer.
type Choice struct {
	N     int
	Value int
}

// Recorder wraps a Chooser and records every question and answer, so that a run driven by a PCG can
// be replayed, or shrunk, from its choice list alone.
type Recorder struct {
	inner Chooser
	log   []Choice
	limit int
}

// NewRecorder records the choices made by inner. limit bounds the recording (0 means 16 Mi choices);
// past it the recorder panics, because a truncated recording would silently replay a different run.
func NewRecorder(inner Chooser, limit int) *Recorder {
	if limit <= 0 {
		limit = 16 << 20
	}
	return &Recorder{inner: inner, limit: limit}
}

// Choose implements Chooser.
func (r *Recorder) Choose(n int) int {
	v := r.inner.Choose(n)
	if len(r.log) >= r.limit {
		panic(fmt.Sprintf("sim: choice recording exceeded its limit of %d choices", r.limit))
	}
	r.log = append(r.log, Choice{N: n, Value: v})
	return v
}

// Choices returns the recorded choices.
func (r *Recorder) Choices() []Choice { return r.log }

// Values returns the recorded answers, the form Replay takes.
func (r *Recorder) Values() []int {
	out := make([]int, len(r.log))
	for i, c := range r.log {
		out[i] = c.Value
	}
	return out
}

func mustPositive(n int) {
	if n < 1 {
		panic(fmt.Sprintf("sim: Choose(%d): the range must hold at least one value", n))
	}
}
