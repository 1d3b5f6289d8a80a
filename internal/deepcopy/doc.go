// Package deepcopy copies an object graph by reflection, so that the model checker (package
// modelcheck) can keep a simulated world at a state and continue from it later instead of
// re-executing the path that reached it.
//
// Usage:
//
//	c := deepcopy.New()
//	c.Share(model)                 // pointers kept as they are, not copied
//	copied, err := deepcopy.Copy(c, world)
//	if err != nil { ... }          // the graph holds a func value, a channel or an unsafe.Pointer
//
// Copy follows every pointer, slice, map and interface reachable from the root, unexported
// fields included, and returns a graph that shares no mutable memory with the original:
//
//   - Aliasing is kept. A pointer reached twice maps to one copy, a pointer into a struct's field
//     or a slice's element points into the copy of that struct or slice, and slices sharing a
//     backing array share the copy of it (the first pass gathers every memory range reached and
//     merges overlapping ones into one allocation, so the order in which they are met does not
//     matter).
//   - A slice's elements between its length and its capacity that no other slice reaches are
//     zeroed, not copied: append overwrites them before they can be read, and copying them would
//     copy dead objects. A program that reslices past a length reads zeros there in the copy;
//     that is the same only for room never written, such as package slab's fresh chunks.
//   - A map is copied into a new map; two references to one map keep sharing the copy.
//   - Strings are shared (immutable), and so are interface boxes holding values without pointers,
//     and errors (immutable by convention; a sentinel error must stay itself for errors.Is).
//   - Every other pointer is copied, a pointer to a package-level variable too: code inside the
//     graph must not compare such a pointer for identity (zabmodel's ownerLocal is a value for
//     that reason).
//   - A non-nil func value, channel or unsafe.Pointer cannot be copied faithfully (a closure's
//     captured variables are invisible to reflection), and Copy refuses it with an error that
//     names the path to it. Scan lists every such site, for converting them to data.
//
// Frozen keeps a graph that will not change any more with its layout (the first pass), so that
// each further copy of it is only the second pass: deepcopy.Freeze(c, root), or
// deepcopy.CopyFrozen(c, root) for a copy that is frozen as it is made; then f.Copy(c). ShareField
// and TrimSpare adjust single fields: one kept as it is (a table of stateless functions set at
// construction), one whose room past its length only its owner uses (package slab's chunks), cut
// to its length in the copy.
//
// Map iteration order never reaches the copy: each map's entries are inserted into a new map,
// whose own iteration order Go randomizes as always.
package deepcopy
