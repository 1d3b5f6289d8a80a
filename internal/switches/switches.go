// Package switches is the machinery behind zabsim's bug and self-test switches: a table of named
// bits, listing, naming and parsing, and Set, the set of one table's switches. zabmodel.Bugs,
// zabmodel.SelfTests, lockmodel.Bugs and lockmodel.SelfTests each keep their own bit type and table
// and are aliases of Set, so that all four parse, print, list and validate alike.
//
//	var table = switches.NewTable("bug",
//		switches.Switch[Bug]{Bit: BugA, Name: "ZK-1", Description: "..."},
//		switches.Switch[Bug]{Bit: BugB, Name: "ZK-2", Description: "..."},
//	)
//	mask, err := table.Parse("ZK-1,zk-2") // names are case-insensitive
//	fmt.Println(table.String(mask))         // "ZK-1,ZK-2", or "none"
//
//	func (Bug) Table() *switches.Table[Bug] { return &table }
//	type Bugs = switches.Set[Bug] // Has, With, Union, Empty, Names, String, Validate
//	bugs, err := switches.ParseSet[Bug]("ZK-1")
package switches

import (
	"fmt"
	"strings"
)

// Bits is the type of a switch's bit.
type Bits interface{ ~uint32 | ~uint64 }

// Switch is one named bit.
type Switch[B Bits] struct {
	Bit         B
	Name        string
	Description string
}

// Table is the ordered list of the switches of one kind.
type Table[B Bits] struct {
	kind     string // what an unknown name is called in errors ("bug", "recipe bug")
	switches []Switch[B]
}

// NewTable makes a table; kind names the switches in error messages.
func NewTable[B Bits](kind string, switches ...Switch[B]) Table[B] {
	return Table[B]{kind: kind, switches: switches}
}

// List returns the switches in table order.
func (t Table[B]) List() []Switch[B] { return append([]Switch[B](nil), t.switches...) }

// Known returns every bit the table names.
func (t Table[B]) Known() B {
	var known B
	for _, s := range t.switches {
		known |= s.Bit
	}
	return known
}

// Names returns the names of the switches set in mask, in table order.
func (t Table[B]) Names(mask B) []string {
	var out []string
	for _, s := range t.switches {
		if mask&s.Bit != 0 {
			out = append(out, s.Name)
		}
	}
	return out
}

// String returns the names set in mask joined by commas, or "none".
func (t Table[B]) String(mask B) string {
	if mask == 0 {
		return "none"
	}
	return strings.Join(t.Names(mask), ",")
}

// Parse reads a comma-separated list of names (case-insensitive); "" and "none" are the empty set.
// An unknown name is an error that lists the known ones.
func (t Table[B]) Parse(list string) (B, error) {
	var mask B
	list = strings.TrimSpace(list)
	if list == "" || list == "none" {
		return 0, nil
	}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		bit, ok := t.lookup(name)
		if !ok {
			known := make([]string, len(t.switches))
			for i, s := range t.switches {
				known[i] = s.Name
			}
			return 0, fmt.Errorf("unknown %s %q (known: %s)", t.kind, name, strings.Join(known, ", "))
		}
		mask |= bit
	}
	return mask, nil
}

func (t Table[B]) lookup(name string) (B, bool) {
	for _, s := range t.switches {
		if strings.EqualFold(s.Name, name) {
			return s.Bit, true
		}
	}
	return 0, false
}
