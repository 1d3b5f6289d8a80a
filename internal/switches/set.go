package switches

import "fmt"

// Named is a switch's bit type that names its table: any of its values (the zero value too)
// returns the table, so that a Set finds its names from its type alone and the zero Set is ready
// to use.
type Named[B Bits] interface {
	Bits
	Table() *Table[B]
}

// Set is a set of the switches of B's table. The zero value switches nothing on. A package exports
// it under its own name, as an alias:
//
//	func (Bug) Table() *switches.Table[Bug] { return &bugTable }
//
//	type Bugs = switches.Set[Bug]
type Set[B Named[B]] struct{ mask B }

// ParseSet reads a comma-separated list of names (case-insensitive) into a set; "" and "none" are
// the empty set. An unknown name is an error that lists the known ones (Table.Parse).
func ParseSet[B Named[B]](list string) (Set[B], error) {
	mask, err := B(0).Table().Parse(list)
	return Set[B]{mask: mask}, err
}

// List returns the switches of B's table in table order.
func List[B Named[B]]() []Switch[B] { return B(0).Table().List() }

func (s Set[B]) table() *Table[B] { return s.mask.Table() }

// Has reports whether b is switched on.
func (s Set[B]) Has(b B) bool { return s.mask&b != 0 }

// With returns the set with b switched on.
func (s Set[B]) With(b B) Set[B] { return Set[B]{mask: s.mask | b} }

// Union returns the switches on in either set.
func (s Set[B]) Union(o Set[B]) Set[B] { return Set[B]{mask: s.mask | o.mask} }

// Empty reports whether no switch is on.
func (s Set[B]) Empty() bool { return s.mask == 0 }

// Names returns the names of the switches on, in table order.
func (s Set[B]) Names() []string { return s.table().Names(s.mask) }

// String returns the names joined by commas, or "none".
func (s Set[B]) String() string { return s.table().String(s.mask) }

// Validate refuses bits that the table does not name (a set built from a raw bit, not a name),
// wrapping kind: "<kind>: unknown <table kind> bits 0x...".
func (s Set[B]) Validate(kind error) error {
	t := s.table()
	if unknown := s.mask &^ t.Known(); unknown != 0 {
		return fmt.Errorf("%w: unknown %s bits %#x", kind, t.kind, unknown)
	}
	return nil
}
