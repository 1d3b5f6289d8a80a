package slab

import "slices"

// ChunkBytes is the size of a chunk. Small enough that a copy kept for long (a record in a txn
// log, a message a server holds) pins little memory, large enough that a chunk serves a few hundred
// of the simulation's typical messages of tens of bytes.
const ChunkBytes = 8 << 10

// largeBytes is the size from which a copy gets its own allocation: a large copy would waste the
// rest of a chunk, and its allocation is rare enough not to matter.
const largeBytes = ChunkBytes / 8

// Bytes hands out copies of byte slices carved from shared chunks. The zero value is ready to use.
// It is not safe for concurrent use; a simulated world is single-threaded.
type Bytes struct {
	// chunk is the current chunk: bytes before len(chunk) belong to copies already handed out,
	// bytes from len(chunk) to cap(chunk) are free.
	chunk []byte
}

// Copy returns a copy of p with the semantics of slices.Clone (nil for nil), whose capacity is its
// length.
func (s *Bytes) Copy(p []byte) []byte {
	n := len(p)
	if n == 0 {
		return slices.Clone(p)
	}
	if n >= largeBytes {
		c := make([]byte, n)
		copy(c, p)
		return c
	}
	if cap(s.chunk)-len(s.chunk) < n {
		s.chunk = make([]byte, 0, ChunkBytes)
	}
	start := len(s.chunk)
	s.chunk = append(s.chunk, p...)
	// The three-index slice caps the copy at its own bytes: appending to it reallocates.
	return s.chunk[start : start+n : start+n]
}

// objectsPerChunk is the number of values in a chunk of Objects: enough to make allocation rare,
// few enough that one value kept for long pins little memory.
const objectsPerChunk = 64

// Objects hands out new zero values of T carved from shared chunks, as new(T) does without an
// allocation each. Every value is its own: the chunk is never handed out twice, and the values
// share only the chunk's allocation, which lives while any of them does. The zero value is ready
// to use. It is not safe for concurrent use; a simulated world is single-threaded.
type Objects[T any] struct {
	chunk []T
}

// New returns a pointer to a new zero T.
func (s *Objects[T]) New() *T {
	if len(s.chunk) == cap(s.chunk) {
		s.chunk = make([]T, 0, objectsPerChunk)
	}
	s.chunk = s.chunk[:len(s.chunk)+1]
	return &s.chunk[len(s.chunk)-1]
}

// slicesChunkElements is the length of a chunk of Slices.
const slicesChunkElements = 256

// Slices hands out empty slices of T with room for a given number of elements, carved from shared
// chunks. Each slice's capacity ends where the next one's begins, so that an owner appending past
// it moves to a new array instead of writing into its neighbour's room. The zero value is ready
// to use. It is not safe for concurrent use; a simulated world is single-threaded.
type Slices[T any] struct {
	chunk []T
}

// Make returns a slice of length 0 and capacity n, as make([]T, 0, n) does.
func (s *Slices[T]) Make(n int) []T {
	if n <= 0 || n > slicesChunkElements/4 {
		return make([]T, 0, n)
	}
	if cap(s.chunk)-len(s.chunk) < n {
		s.chunk = make([]T, 0, slicesChunkElements)
	}
	start := len(s.chunk)
	s.chunk = s.chunk[:start+n]
	return s.chunk[start : start : start+n]
}
