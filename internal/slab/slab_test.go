package slab

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCopyIsEqualAndOwned(t *testing.T) {
	var s Bytes
	src := []byte("hello")
	c := s.Copy(src)
	require.Equal(t, src, c)
	src[0] = 'j'
	assert.Equal(t, []byte("hello"), c, "a copy does not follow its source")
	assert.Equal(t, len(c), cap(c), "a copy's capacity ends at its length")
}

func TestCopiesDoNotOverlap(t *testing.T) {
	var s Bytes
	var copies [][]byte
	for i := range 3000 {
		copies = append(copies, s.Copy(bytes.Repeat([]byte{byte(i)}, 1+i%100)))
	}
	// An owner appending to its copy must not reach its neighbour's bytes.
	for i := range copies {
		copies[i] = append(copies[i], 0xff)
	}
	for i, c := range copies {
		want := append(bytes.Repeat([]byte{byte(i)}, 1+i%100), 0xff)
		require.Equal(t, want, c, "copy %d", i)
	}
}

func TestCopyKeepsCloneSemantics(t *testing.T) {
	var s Bytes
	assert.Nil(t, s.Copy(nil))
	empty := s.Copy([]byte{})
	assert.NotNil(t, empty)
	assert.Empty(t, empty)
	large := bytes.Repeat([]byte{7}, largeBytes)
	c := s.Copy(large)
	assert.Equal(t, large, c)
	assert.Equal(t, len(c), cap(c))
}

func BenchmarkCopy(b *testing.B) {
	var s Bytes
	p := make([]byte, 48)
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Copy(p)
	}
}

func TestObjectsAreDistinctAndZero(t *testing.T) {
	type record struct {
		a, b int
		p    *int
	}
	var s Objects[record]
	seen := map[*record]bool{}
	for i := range 3 * objectsPerChunk {
		r := s.New()
		require.Equal(t, record{}, *r, "value %d is zero", i)
		require.False(t, seen[r], "value %d is new", i)
		seen[r] = true
		r.a, r.b = i, -i
	}
	for r := range seen { // determinism:ok a test's assertion, order cannot matter
		assert.Equal(t, r.a, -r.b, "no value was written through another")
	}
}

func TestSlicesKeepToTheirRoom(t *testing.T) {
	var s Slices[int64]
	var slices [][]int64
	for i := range 200 {
		v := s.Make(1 + i%7)
		require.Empty(t, v)
		require.Equal(t, 1+i%7, cap(v))
		slices = append(slices, v)
	}
	// Filling each slice to its capacity, and one past it, leaves every other slice as it was.
	for i := range slices {
		for range cap(slices[i]) + 1 {
			slices[i] = append(slices[i], int64(i))
		}
	}
	for i, v := range slices {
		for _, x := range v {
			require.Equal(t, int64(i), x, "slice %d", i)
		}
	}
}
