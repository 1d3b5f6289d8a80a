package datatree

// javaHashSet is a java.util.HashSet<String> made with the default
// constructor, reproducing its iteration order: HashMap's power-of-two table
// (allocated at 16 buckets on the first add), its hash spreading
// (h ^ h>>>16 of String.hashCode), appending to a bucket's list, doubling
// past three quarters full (or when a bucket in a table under 64 buckets
// reaches the treeify threshold) with lists split in order, and clone
// re-inserting into a table sized for the current count. DataTree keeps each
// session's ephemeral paths in such a set, and the order decides in which
// order a closing session's nodes are deleted, and so the order of the watch
// events that follow. A bucket Java would turn into a red-black tree (9
// colliding paths in a table of at least 64 buckets, which the HashMap
// documentation puts at odds below one in ten million) keeps list order
// here, which may differ from Java's.
type javaHashSet struct {
	bins      [][]hashEntry
	size      int
	threshold int
}

type hashEntry struct {
	hash int32
	key  string
}

// The HashMap constants that shape its layout.
const (
	hashDefaultCapacity    = 16
	hashTreeifyThreshold   = 8
	hashMinTreeifyCapacity = 64
	hashMaximumCapacity    = 1 << 30
)

func hashMapHash(key string) int32 {
	h := javaStringHash(key)
	return h ^ int32(uint32(h)>>16)
}

func (s *javaHashSet) indexFor(hash int32) int { return int(uint32(hash) & uint32(len(s.bins)-1)) }

func (s *javaHashSet) len() int {
	if s == nil {
		return 0
	}
	return s.size
}

func (s *javaHashSet) contains(key string) bool {
	if s == nil || s.bins == nil {
		return false
	}
	h := hashMapHash(key)
	for _, e := range s.bins[s.indexFor(h)] {
		if e.hash == h && e.key == key {
			return true
		}
	}
	return false
}

// add is HashMap.putVal for a new key; it reports whether key was absent.
func (s *javaHashSet) add(key string) bool {
	if s.bins == nil {
		s.resize()
	}
	h := hashMapHash(key)
	i := s.indexFor(h)
	for _, e := range s.bins[i] {
		if e.hash == h && e.key == key {
			return false
		}
	}
	existing := len(s.bins[i])
	s.bins[i] = append(s.bins[i], hashEntry{hash: h, key: key})
	if existing >= hashTreeifyThreshold && len(s.bins) < hashMinTreeifyCapacity {
		s.resize() // treeifyBin on a small table resizes instead
	}
	s.size++
	if s.size > s.threshold {
		s.resize()
	}
	return true
}

// remove unlinks key, keeping the order of the rest.
func (s *javaHashSet) remove(key string) bool {
	if s.bins == nil {
		return false
	}
	h := hashMapHash(key)
	i := s.indexFor(h)
	for j, e := range s.bins[i] {
		if e.hash == h && e.key == key {
			s.bins[i] = append(s.bins[i][:j:j], s.bins[i][j+1:]...)
			s.size--
			return true
		}
	}
	return false
}

// keys returns the elements in iteration order.
func (s *javaHashSet) keys() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, s.size)
	for _, bin := range s.bins {
		for _, e := range bin {
			out = append(out, e.key)
		}
	}
	return out
}

// resize is HashMap.resize: allocate the first table (16 buckets, or the
// threshold a clone computed) or double, splitting each list into the
// entries that stay and those that move up by the old size, in order.
func (s *javaHashSet) resize() {
	oldCapacity := len(s.bins)
	var capacity int
	switch {
	case oldCapacity >= hashMaximumCapacity:
		s.threshold = 1<<31 - 1
		return
	case oldCapacity > 0:
		capacity = oldCapacity * 2
	case s.threshold > 0:
		capacity = s.threshold
	default:
		capacity = hashDefaultCapacity
	}
	next := make([][]hashEntry, capacity)
	for i, bin := range s.bins {
		for _, e := range bin {
			if int(uint32(e.hash)&uint32(oldCapacity)) == 0 {
				next[i] = append(next[i], e)
			} else {
				next[i+oldCapacity] = append(next[i+oldCapacity], e)
			}
		}
	}
	s.bins = next
	s.threshold = capacity * 3 / 4
}

// clone is HashSet.clone (HashMap.clone and putMapEntries): a new set whose
// table is sized for the current count, filled in this set's order.
func (s *javaHashSet) clone() *javaHashSet {
	out := &javaHashSet{}
	if s == nil || s.size == 0 {
		return out
	}
	wanted := int(float32(s.size)/0.75 + 1)
	out.threshold = tableSizeFor(wanted)
	for _, key := range s.keys() {
		out.add(key)
	}
	return out
}
