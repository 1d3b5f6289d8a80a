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
