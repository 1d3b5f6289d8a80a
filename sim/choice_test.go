package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func draw(c Chooser, n, count int) []int {
	out := make([]int, count)
	for i := range out {
		out[i] = c.Choose(n)
	}
	return out
}

func TestPCGIsDecidedBySeedAlone(t *testing.T) {
	a, b, c := NewPCG(7), NewPCG(7), NewPCG(8)
	seqA := draw(a, 1000, 100)
	assert.Equal(t, seqA, draw(b, 1000, 100))
	assert.NotEqual(t, seqA, draw(c, 1000, 100))
}

func TestPCGForcedChoiceConsumesNothing(t *testing.T) {
	a, b := NewPCG(7), NewPCG(7)
	assert.Equal(t, 0, a.Choose(1))
	assert.Equal(t, b.Choose(100), a.Choose(100), "a one-way choice must not shift later choices")
}

func TestChoosersStayInRange(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 1<<40).Draw(t, "n")
		data := rapid.SliceOf(rapid.Byte()).Draw(t, "data")
		seed := rapid.Uint64().Draw(t, "seed")
		for _, c := range []Chooser{NewPCG(seed), NewBytes(data), NewReplay([]int{-5, n + 3, 2})} {
			for i := 0; i < 4; i++ {
				if v := c.Choose(n); v < 0 || v >= n {
					t.Fatalf("%T.Choose(%d) = %d", c, n, v)
				}
			}
		}
	})
}

func TestChoosePanicsOnEmptyRange(t *testing.T) {
	for _, c := range []Chooser{NewPCG(1), NewBytes(nil), NewReplay(nil)} {
		assert.Panics(t, func() { c.Choose(0) }, "%T", c)
	}
}

func TestReplayRepeatsARecording(t *testing.T) {
	rec := NewRecorder(NewPCG(3), 0)
	want := draw(rec, 50, 20)
	assert.Len(t, rec.Choices(), 20)
	assert.Equal(t, Choice{N: 50, Value: want[0]}, rec.Choices()[0])
	r := NewReplay(rec.Values())
	assert.Equal(t, want, draw(r, 50, 20))
	assert.Equal(t, 20, r.Consumed())
	assert.Zero(t, r.Exhausted())
	assert.Zero(t, r.Clamped())
	assert.Equal(t, 0, r.Choose(50), "an exhausted replay answers 0")
	assert.Equal(t, 1, r.Exhausted())
}

func TestReplayCountsDivergence(t *testing.T) {
	r := NewReplay([]int{9, 1})
	assert.Equal(t, 1, r.Choose(4), "9 does not fit [0,4): clamped")
	assert.Equal(t, 1, r.Clamped())
	assert.Equal(t, 1, r.Choose(4))
}

func TestBytesConsumesAsFewBytesAsTheRangeNeeds(t *testing.T) {
	b := NewBytes([]byte{0x05, 0x01, 0x02, 0xff})
	assert.Equal(t, 5, b.Choose(256))            // one byte
	assert.Equal(t, 0x0102%1000, b.Choose(1000)) // two bytes
	assert.Equal(t, 0xff%3, b.Choose(3))         // one byte
	assert.Equal(t, 0, b.Choose(10))             // exhausted
	assert.Equal(t, 1, b.Exhausted())
	assert.Equal(t, 0, NewBytes([]byte{9}).Choose(1), "a forced choice reads nothing")
}

func TestRecorderLimitIsEnforced(t *testing.T) {
	rec := NewRecorder(NewPCG(1), 3)
	draw(rec, 10, 3)
	assert.Panics(t, func() { rec.Choose(10) })
}

func TestWorldChoiceHelpers(t *testing.T) {
	w := newWorld(t, Config{Chooser: NewReplay([]int{3, 0, 999, 0, 0})})
	assert.Equal(t, 3*1000+100, int(w.Between(100, 10_000, 1000)))
	assert.True(t, w.Chance(1, 2), "answer 0 < 1")
	assert.False(t, w.Chance(1, 1000), "answer 999 >= 1")
	assert.False(t, w.Chance(0, 10), "probability zero asks nothing")
	assert.True(t, w.Chance(10, 10), "probability one asks nothing")
	items := []string{"a", "b", "c"}
	w.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	assert.Equal(t, []string{"b", "c", "a"}, items, "Fisher-Yates: swap(2,0) then swap(1,0)")
}

// EncodeBytes inverts Bytes: the encoded stream answers every recorded question with the recorded
// value, whatever the ranges, and then runs out exactly.
func TestEncodeBytesReplaysTheRecordedAnswers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ranges := rapid.SliceOf(rapid.OneOf(rapid.IntRange(1, 300), rapid.IntRange(1, 1<<20), rapid.IntRange(1, 1<<40))).Draw(t, "ranges")
		rec := NewRecorder(NewPCG(rapid.Uint64().Draw(t, "seed")), 0)
		for _, n := range ranges {
			rec.Choose(n)
		}
		data, err := EncodeBytes(rec.Choices())
		require.NoError(t, err)
		b := NewBytes(data)
		for i, c := range rec.Choices() {
			require.Equal(t, c.Value, b.Choose(c.N), "choice %d of range %d", i, c.N)
		}
		require.Zero(t, b.Exhausted())
		b.Choose(2)
		require.Equal(t, 1, b.Exhausted(), "the stream holds nothing more")
	})
	_, err := EncodeBytes([]Choice{{N: 4, Value: 4}})
	require.ErrorContains(t, err, "does not fit")
}
