package modelcheck

// fingerprintSet is an open-addressing hash table from fingerprints to a 32-bit value (a state's
// index or its depth). It stores 20 bytes a slot, against about 50 for a Go map of the same
// types, which decides how many states fit in memory.
type fingerprintSet struct {
	keys   []Fingerprint
	values []int32
	used   []bool
	n      int
	mask   uint64
}

func newFingerprintSet() *fingerprintSet {
	const initial = 1 << 12
	return &fingerprintSet{
		keys: make([]Fingerprint, initial), values: make([]int32, initial), used: make([]bool, initial),
		mask: initial - 1,
	}
}

func (t *fingerprintSet) len() int { return t.n }

// slot returns where fp is, or the empty slot where it would go.
func (t *fingerprintSet) slot(fp Fingerprint) uint64 {
	i := fp[0] & t.mask
	for t.used[i] && t.keys[i] != fp {
		i = (i + 1) & t.mask
	}
	return i
}

func (t *fingerprintSet) contains(fp Fingerprint) bool { return t.used[t.slot(fp)] }

func (t *fingerprintSet) get(fp Fingerprint) (int32, bool) {
	i := t.slot(fp)
	return t.values[i], t.used[i]
}

// insert adds fp with value v, or replaces the value of a present fp.
func (t *fingerprintSet) insert(fp Fingerprint, v int32) {
	i := t.slot(fp)
	if t.used[i] {
		t.values[i] = v
		return
	}
	t.keys[i], t.values[i], t.used[i] = fp, v, true
	t.n++
	if uint64(t.n)*4 > (t.mask+1)*3 {
		t.grow()
	}
}

func (t *fingerprintSet) grow() {
	keys, values, used := t.keys, t.values, t.used
	size := 2 * len(keys)
	t.keys, t.values, t.used = make([]Fingerprint, size), make([]int32, size), make([]bool, size)
	t.mask = uint64(size - 1)
	t.n = 0
	for i := range keys {
		if used[i] {
			t.insert(keys[i], values[i])
		}
	}
}
