// Package slab copies byte slices into large shared chunks, so that the many small copies the
// simulation makes (every payload sent over the network, every record written to a disk) cost a
// bump of an offset rather than an allocation each.
//
// A copy is never handed out twice and never written again by the slab: the slab only appends to
// a chunk past every copy already made, and each copy's capacity ends at its length, so that an
// append by its owner moves to a new array instead of writing over the next copy. Owners of copies
// from one chunk therefore share no bytes, only the chunk's allocation, which lives while any copy
// does.
//
// Objects does the same for values of one type: New returns a pointer to a zero value that no
// other call returns, carved from a chunk of such values.
//
// Usage:
//
//	var copies slab.Bytes
//	owned := copies.Copy(payload) // as slices.Clone(payload), from a shared chunk
//
//	var proposals slab.Objects[proposal]
//	p := proposals.New() // as new(proposal), from a shared chunk
package slab
