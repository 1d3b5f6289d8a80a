package deepcopy

import "unsafe"

// pairTable is a set of (address, plan) pairs, each with an extent of two words, for the first
// pass's bookkeeping (the targets already registered, the slices already walked). A copy looks
// it up once or twice for every pointer of the graph, and a Go map with a two-word key hashes
// each key with the general hash; this open-addressing table with a multiplicative hash costs a
// fraction of that. The addresses are only compared, never followed: the graph they lie in is
// kept alive by the regions, which hold them as pointers.
type pairTable struct {
	slots []pairSlot // a power of two long; a zero addr is an empty slot
	used  int
	shift uint // 64 minus the log2 of len(slots)
}

type pairSlot struct {
	addr uintptr
	p    *plan
	a, b uintptr
}

const minPairTableSlots = 256

// find returns the slot of (addr, p), and whether it was there; an absent pair is inserted with
// zero extents. addr must not be 0.
func (t *pairTable) find(addr unsafe.Pointer, p *plan) (*pairSlot, bool) {
	return t.findAddr(uintptr(addr), p)
}

func (t *pairTable) findAddr(a uintptr, p *plan) (*pairSlot, bool) {
	if 2*(t.used+1) > len(t.slots) {
		t.grow()
	}
	mask := uintptr(len(t.slots) - 1)
	i := uintptr((uint64(a)^uint64(uintptr(unsafe.Pointer(p)))>>4)*0x9E3779B97F4A7C15>>t.shift) & mask
	for {
		s := &t.slots[i]
		if s.addr == a && s.p == p {
			return s, true
		}
		if s.addr == 0 {
			s.addr, s.p = a, p
			t.used++
			return s, false
		}
		i = (i + 1) & mask
	}
}

func (t *pairTable) grow() {
	old := t.slots
	n := max(minPairTableSlots, 2*len(old))
	t.slots = make([]pairSlot, n)
	t.shift = tableShift(n)
	t.used = 0
	for _, s := range old {
		if s.addr != 0 {
			d, _ := t.findAddr(s.addr, s.p)
			d.a, d.b = s.a, s.b
		}
	}
}

// reset empties the table, keeping its size.
func (t *pairTable) reset() {
	if t.used > 0 {
		clear(t.slots)
		t.used = 0
	}
}

// wordTable maps one-word keys (a map's address, an interface's type word) to one pointer, for
// the bookkeeping that a Go map keyed by a pointer did at two lookups per map of the graph (the
// maps walked, the copy of each map, the plan of each dynamic type). Like pairTable it hashes
// with one multiplication; keys are only compared, never followed, and values are kept as
// pointers, so that the collector sees a new map while only the table holds it.
type wordTable struct {
	slots []wordSlot // a power of two long; a zero key is an empty slot
	used  int
	shift uint // 64 minus the log2 of len(slots)
}

type wordSlot struct {
	key uintptr
	val unsafe.Pointer
}

const minWordTableSlots = 64

// find returns the slot of key, and whether it was there; an absent key is inserted with a nil
// value. key must not be 0.
func (t *wordTable) find(key unsafe.Pointer) (*wordSlot, bool) {
	return t.findKey(uintptr(key))
}

func (t *wordTable) findKey(k uintptr) (*wordSlot, bool) {
	if 2*(t.used+1) > len(t.slots) {
		t.grow()
	}
	mask := uintptr(len(t.slots) - 1)
	i := t.home(k) & mask
	for {
		s := &t.slots[i]
		if s.key == k {
			return s, true
		}
		if s.key == 0 {
			s.key = k
			t.used++
			return s, false
		}
		i = (i + 1) & mask
	}
}

// home is key k's first slot before the mask: a multiplicative hash of the word without its
// alignment bits.
func (t *wordTable) home(k uintptr) uintptr {
	return uintptr((uint64(k) >> 3) * 0x9E3779B97F4A7C15 >> t.shift)
}

// get returns the value of key without inserting it.
func (t *wordTable) get(k uintptr) (unsafe.Pointer, bool) {
	if t.used == 0 {
		return nil, false
	}
	mask := uintptr(len(t.slots) - 1)
	i := t.home(k) & mask
	for {
		s := &t.slots[i]
		if s.key == k {
			return s.val, true
		}
		if s.key == 0 {
			return nil, false
		}
		i = (i + 1) & mask
	}
}

func (t *wordTable) grow() {
	old := t.slots
	n := max(minWordTableSlots, 2*len(old))
	t.slots = make([]wordSlot, n)
	t.shift = tableShift(n)
	t.used = 0
	for _, s := range old {
		if s.key != 0 {
			d, _ := t.findKey(s.key)
			d.val = s.val
		}
	}
}

// reset empties the table, keeping its size.
func (t *wordTable) reset() {
	if t.used > 0 {
		clear(t.slots)
		t.used = 0
	}
}

// tableShift is 64 minus the log2 of n, a power of two: the shift that turns a 64-bit
// multiplicative hash into a slot index of a table of n slots.
func tableShift(n int) uint {
	shift := uint(64)
	for m := n; m > 1; m >>= 1 {
		shift--
	}
	return shift
}
