package clock

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestZeroLocalIsPerfect(t *testing.T) {
	var c Local
	assert.Equal(t, Time(5*Second), c.Elapsed(Time(5*Second)))
	assert.Equal(t, int64(DefaultWallEpochMillis), c.WallMillis(0))
	assert.Equal(t, int64(DefaultWallEpochMillis+1500), c.WallMillis(Time(1500*Millisecond)))
	assert.Equal(t, 3*Second, c.GlobalDelay(3*Second))
}

func TestDriftRunsFastAndSlow(t *testing.T) {
	var fast, slow Local
	require.NoError(t, fast.SetDrift(0, 100_000)) // 10% fast
	require.NoError(t, slow.SetDrift(0, -100_000))
	assert.Equal(t, Time(11*Second), fast.Elapsed(Time(10*Second)))
	assert.Equal(t, Time(9*Second), slow.Elapsed(Time(10*Second)))
	// A 10% fast clock reaches 11 s of its own time after 10 s of global time.
	assert.Equal(t, 10*Second, fast.GlobalDelay(11*Second))
	assert.Equal(t, 10*Second, slow.GlobalDelay(9*Second))
}

func TestChangingDriftKeepsReadingContinuous(t *testing.T) {
	var c Local
	require.NoError(t, c.SetDrift(0, 200_000))
	at := Time(5 * Second)
	before := c.Elapsed(at)
	require.NoError(t, c.SetDrift(at, -300_000))
	assert.Equal(t, before, c.Elapsed(at), "re-anchoring must not jump the clock")
	assert.Equal(t, before+Time(700*Millisecond), c.Elapsed(at+Time(Second)))
}

func TestStepWallLeavesMonotonicClockAlone(t *testing.T) {
	var c Local
	now := Time(10 * Second)
	wallBefore := c.WallMillis(now)
	c.StepWall(now, -3*Second)
	assert.Equal(t, wallBefore-3000, c.WallMillis(now), "the wall clock goes back")
	assert.Equal(t, now, c.Elapsed(now), "the monotonic clock does not")
	assert.Equal(t, -3*Second, c.WallOffset())
}

func TestSetDriftRejectsImpossibleRates(t *testing.T) {
	var c Local
	assert.Error(t, c.SetDrift(0, MaxDriftPPM+1))
	assert.Error(t, c.SetDrift(0, -MaxDriftPPM-1))
	assert.Equal(t, int64(0), c.Drift(), "a rejected rate leaves the clock as it was")
}

func TestTimeArithmeticAndRendering(t *testing.T) {
	assert.Equal(t, Never, Time(math.MaxInt64-5).Add(Second), "Add saturates")
	assert.Equal(t, Time(-1), Time(1).Add(-2))
	assert.Equal(t, 2*Second, Time(3*Second).Sub(Time(Second)))
	assert.Equal(t, "   12.000345678", (Time(12*Second) + Time(345678)).String())
	assert.Equal(t, "never", Never.String())
	assert.True(t, Time(1).Before(2))
	assert.True(t, Time(2).After(1))
}

// GlobalDelay must be the exact inverse of Elapsed: after GlobalDelay(d) of global time the local
// clock has advanced by at least d, and one nanosecond earlier it had not. Timers depend on both
// halves: too early breaks timeouts, too late makes skew faults stronger than asked.
func TestGlobalDelayInvertsElapsed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ppm := rapid.Int64Range(-MaxDriftPPM, MaxDriftPPM).Draw(t, "ppm")
		start := Time(rapid.Int64Range(0, int64(24*Hour)).Draw(t, "start"))
		d := Duration(rapid.Int64Range(1, int64(Hour)).Draw(t, "d"))
		var c Local
		if err := c.SetDrift(start, ppm); err != nil {
			t.Fatal(err)
		}
		g := c.GlobalDelay(d)
		base := c.Elapsed(start)
		if got := c.Elapsed(start + Time(g)); got-base < Time(d) {
			t.Fatalf("after %v global the clock advanced %v < %v", g, got-base, d)
		}
		if got := c.Elapsed(start + Time(g) - 1); got-base >= Time(d) {
			t.Fatalf("after %v global the clock already advanced %v >= %v", g-1, got-base, d)
		}
	})
}

func TestElapsedIsMonotonic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c Local
		now := Time(0)
		last := c.Elapsed(now)
		for i := 0; i < 20; i++ {
			now += Time(rapid.Int64Range(0, int64(Second)).Draw(t, "step"))
			if rapid.Bool().Draw(t, "redrift") {
				if err := c.SetDrift(now, rapid.Int64Range(-MaxDriftPPM, MaxDriftPPM).Draw(t, "ppm")); err != nil {
					t.Fatal(err)
				}
			}
			got := c.Elapsed(now)
			if got < last {
				t.Fatalf("elapsed went back from %v to %v", last, got)
			}
			last = got
		}
	})
}
