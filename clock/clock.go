package clock

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Duration is a span of virtual time in nanoseconds.
type Duration = time.Duration

// Units of Duration, re-exported so that simulated code need not import package time at all.
const (
	Nanosecond  = time.Nanosecond
	Microsecond = time.Microsecond
	Millisecond = time.Millisecond
	Second      = time.Second
	Minute      = time.Minute
	Hour        = time.Hour
)

// Time is an instant of global virtual time: nanoseconds since the start of the run.
type Time int64

// Never is later than every reachable instant; it marks "no deadline".
const Never Time = math.MaxInt64

// Add returns t+d, saturating at Never instead of overflowing.
func (t Time) Add(d Duration) Time {
	sum := t + Time(d)
	if d > 0 && sum < t {
		return Never
	}
	return sum
}

// Sub returns the duration t-u.
func (t Time) Sub(u Time) Duration { return Duration(t - u) }

// Before reports whether t is earlier than u.
func (t Time) Before(u Time) bool { return t < u }

// After reports whether t is later than u.
func (t Time) After(u Time) bool { return t > u }

// String renders t as seconds with nanosecond precision, fixed width for the common range so that
// trace lines align: "   12.000345678".
func (t Time) String() string {
	if t == Never {
		return "never"
	}
	sign := ""
	v := int64(t)
	if v < 0 {
		sign = "-"
		v = -v
	}
	return fmt.Sprintf("%s%5d.%09d", sign, v/int64(Second), v%int64(Second))
}

// ppmScale is one million: drift rates are expressed in parts per million of elapsed time.
const ppmScale = 1_000_000

// MaxDriftPPM bounds the drift rate. Real oscillators drift by tens of ppm; a rate of ±50% is far
// beyond any real clock but still keeps time moving forwards, which every timer conversion relies on.
const MaxDriftPPM = 500_000

// DefaultWallEpochMillis is the wall-clock reading, in milliseconds since the Unix epoch, at global
// time zero. It is a fixed constant so that runs never depend on when they were executed.
const DefaultWallEpochMillis = 1_767_225_600_000 // 2026-01-01T00:00:00Z

// Local is one node's clock. The zero value is a perfect clock: its monotonic reading equals global
// time and its wall clock reads DefaultWallEpochMillis at global time zero.
//
// The monotonic reading is piecewise linear in global time: it is anchored at (anchorGlobal,
// anchorElapsed) and advances at (1 + driftPPM/1e6) times the global rate from there. Changing the
// drift re-anchors it, so that the reading stays continuous. The wall reading is the monotonic reading
// plus wallOffset, which steps change.
type Local struct {
	anchorGlobal  Time
	anchorElapsed Time
	driftPPM      int64
	wallOffset    Duration
}

// Elapsed returns the node's monotonic clock reading at global time now. It never goes backwards as
// now advances, whatever drift is set.
func (c *Local) Elapsed(now Time) Time {
	delta := int64(now - c.anchorGlobal)
	return c.anchorElapsed + Time(delta) + Time(scalePPM(delta, c.driftPPM))
}

// WallMillis returns the node's wall clock in milliseconds since the Unix epoch, as Java's
// System.currentTimeMillis would. Unlike Elapsed it can go backwards after StepWall.
func (c *Local) WallMillis(now Time) int64 {
	wall := int64(c.Elapsed(now)) + int64(c.wallOffset)
	return DefaultWallEpochMillis + floorDiv(wall, int64(Millisecond))
}

// Drift returns the current drift rate in parts per million.
func (c *Local) Drift() int64 { return c.driftPPM }

// WallOffset returns how far the wall clock has been stepped away from the monotonic clock.
func (c *Local) WallOffset() Duration { return c.wallOffset }

// SetDrift makes the clock run fast (ppm > 0) or slow (ppm < 0) from global time now on. The reading
// at now is unchanged.
func (c *Local) SetDrift(now Time, ppm int64) error {
	if ppm > MaxDriftPPM || ppm < -MaxDriftPPM {
		return fmt.Errorf("clock: drift %d ppm outside [-%d, %d]", ppm, MaxDriftPPM, MaxDriftPPM)
	}
	c.anchorElapsed = c.Elapsed(now)
	c.anchorGlobal = now
	c.driftPPM = ppm
	return nil
}

// StepWall moves the wall clock by d (forwards or backwards), as an NTP step or an operator would.
// The monotonic clock is not affected, exactly as on a real machine.
func (c *Local) StepWall(now Time, d Duration) {
	_ = now // The step takes effect immediately; now is accepted for symmetry with SetDrift.
	c.wallOffset += d
}

// GlobalDelay converts a duration measured by this node's monotonic clock into the global duration
// after which the local clock will have advanced by at least d. A node that sets a timer for d of its
// own time is woken after GlobalDelay(d) of global time: a fast clock fires early, a slow one late.
func (c *Local) GlobalDelay(d Duration) Duration {
	if d <= 0 {
		return 0
	}
	if c.driftPPM == 0 {
		return d
	}
	// Solve d = g + g*ppm/1e6 for the smallest integer g: g = ceil(d * 1e6 / (1e6 + ppm)).
	rate := uint64(ppmScale + c.driftPPM)
	hi, lo := bits.Mul64(uint64(d), ppmScale)
	if hi >= rate {
		return Duration(math.MaxInt64)
	}
	q, r := bits.Div64(hi, lo, rate)
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return Duration(math.MaxInt64)
	}
	return Duration(q)
}

// scalePPM returns delta*ppm/1e6 without overflowing for any delta and |ppm| <= MaxDriftPPM, rounding
// towards negative infinity so that the reading is monotonic in delta.
func scalePPM(delta, ppm int64) int64 {
	if ppm == 0 || delta == 0 {
		return 0
	}
	neg := (delta < 0) != (ppm < 0)
	hi, lo := bits.Mul64(uint64(abs64(delta)), uint64(abs64(ppm)))
	q, r := bits.Div64(hi, lo, ppmScale)
	if neg {
		if r != 0 {
			q++
		}
		return -int64(q)
	}
	return int64(q)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// floorDiv divides rounding towards negative infinity, so that wall readings before the epoch anchor
// still fall into the right millisecond.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
