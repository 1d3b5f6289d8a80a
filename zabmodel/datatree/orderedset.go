package datatree

// orderedSet is a set that iterates in insertion order. Java keeps watches
// and similar collections in HashSets, whose order a simulator cannot
// reproduce; this set gives every such collection a documented, deterministic
// order (first insertion wins; re-adding an element keeps its place) with
// constant-time insertion and removal.
type orderedSet[K comparable] struct {
	entries    map[K]*setEntry[K]
	head, tail *setEntry[K]
}

type setEntry[K comparable] struct {
	key        K
	prev, next *setEntry[K]
}

func newOrderedSet[K comparable]() *orderedSet[K] {
	return &orderedSet[K]{entries: make(map[K]*setEntry[K])}
}

// add inserts k at the end and reports whether it was absent.
func (s *orderedSet[K]) add(k K) bool {
	if _, ok := s.entries[k]; ok {
		return false
	}
	e := &setEntry[K]{key: k, prev: s.tail}
	if s.tail == nil {
		s.head = e
	} else {
		s.tail.next = e
	}
	s.tail = e
	s.entries[k] = e
	return true
}

// remove deletes k and reports whether it was present.
func (s *orderedSet[K]) remove(k K) bool {
	e, ok := s.entries[k]
	if !ok {
		return false
	}
	if e.prev == nil {
		s.head = e.next
	} else {
		e.prev.next = e.next
	}
	if e.next == nil {
		s.tail = e.prev
	} else {
		e.next.prev = e.prev
	}
	delete(s.entries, k)
	return true
}

func (s *orderedSet[K]) contains(k K) bool {
	_, ok := s.entries[k]
	return ok
}

func (s *orderedSet[K]) len() int { return len(s.entries) }

// keys returns the elements in insertion order, as a new slice that the
// caller may keep while the set changes.
func (s *orderedSet[K]) keys() []K {
	out := make([]K, 0, len(s.entries))
	for e := s.head; e != nil; e = e.next {
		out = append(out, e.key)
	}
	return out
}
