package deepcopy

import (
	"errors"
	"reflect"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

type node struct {
	name     string
	next     *node
	children []*node
	peer     *node
	attrs    map[string]int
	index    map[int]*node
	any      any
	field    *int // may point into another node's counter
	counter  int
	ring     []int
	window   []int // may share ring's backing array
	err      error
	fixed    [3]*node
	hook     func()
	stream   chan int
}

func TestCopyKeepsAliasing(t *testing.T) {
	a := &node{name: "a", attrs: map[string]int{"x": 1}}
	b := &node{name: "b", next: a, peer: a, attrs: a.attrs}
	a.next = b // a cycle
	a.children = []*node{b, a}
	a.ring = []int{1, 2, 3, 4, 5, 6}
	a.window = a.ring[2:5]
	b.field = &a.counter // an interior pointer into a
	b.any = a
	b.fixed[1] = b
	a.index = map[int]*node{1: a, 2: b}
	sentinel := errors.New("sentinel")
	a.err = sentinel

	c := New()
	cb, err := Copy(c, b)
	require.NoError(t, err)
	require.NotSame(t, b, cb)
	ca := cb.next
	assert.NotSame(t, a, ca)
	assert.Same(t, ca, cb.peer, "a pointer reached twice maps to one copy")
	assert.Same(t, cb, ca.next, "the cycle is kept")
	assert.Same(t, cb, ca.children[0])
	assert.Same(t, ca, ca.children[1])
	assert.Same(t, ca, cb.any.(*node), "an interface's pointer maps to the same copy")
	assert.Same(t, cb, cb.fixed[1])
	assert.Same(t, &ca.counter, cb.field, "an interior pointer points into the copy of its struct")
	assert.Same(t, ca, ca.index[1])
	assert.Same(t, cb, ca.index[2])
	assert.ErrorIs(t, ca.err, sentinel, "errors are shared: a sentinel stays itself")

	// Slices sharing a backing array share its copy.
	assert.Equal(t, []int{3, 4, 5}, ca.window)
	ca.window[0] = 30
	assert.Equal(t, 30, ca.ring[2], "the window and the ring share the copied array")
	assert.Equal(t, 3, a.ring[2], "the original is untouched")

	// Maps are copied, and two references to one map share the copy.
	ca.attrs["y"] = 2
	assert.Equal(t, 2, cb.attrs["y"])
	assert.NotContains(t, a.attrs, "y")

	// Mutating the copy leaves the original as it was.
	ca.counter = 7
	assert.Equal(t, 7, *cb.field)
	assert.Zero(t, a.counter)
	ca.name = "changed"
	assert.Equal(t, "a", a.name)
}

func TestCopyRefusesWhatItCannotCopy(t *testing.T) {
	for name, n := range map[string]*node{
		"func":              {next: &node{hook: func() {}}},
		"func in interface": {any: func() {}},
		"channel":           {index: map[int]*node{1: {stream: make(chan int)}}},
	} {
		_, err := Copy(New(), n)
		require.Error(t, err, name)
		assert.ErrorIs(t, err, ErrUncopyable, name)
		assert.Len(t, Scan(New(), n), 1, name)
	}
	var pe *pathError
	_, err := Copy(New(), &node{next: &node{hook: func() {}}})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "deepcopy: cannot copy func value func() at root.next.*.hook", err.Error())
	_, err = Copy(New(), &node{children: []*node{{}, {hook: func() {}}}})
	require.Error(t, err)
	assert.Equal(t, "deepcopy: cannot copy func value func() at root.children[1].*.hook", err.Error(), "an element of a slice of pointers")
	_, err = Copy(New(), &node{fixed: [3]*node{nil, {hook: func() {}}}})
	require.Error(t, err)
	assert.Equal(t, "deepcopy: cannot copy func value func() at root.fixed[1].*.hook", err.Error(), "an element of a short array")
	_, err = Copy(New(), &struct{ long [20]struct{ a, b *node } }{long: [20]struct{ a, b *node }{19: {b: &node{hook: func() {}}}}})
	require.Error(t, err)
	assert.Equal(t, "deepcopy: cannot copy func value func() at root.long[19].b.*.hook", err.Error(), "a long array of structs of pointers")
	_, err = Copy(New(), &struct{ list []struct{ a, b *node } }{list: []struct{ a, b *node }{{}, {a: &node{hook: func() {}}}}})
	require.Error(t, err)
	assert.Equal(t, "deepcopy: cannot copy func value func() at root.list[1].a.*.hook", err.Error(), "a slice of structs of pointers")

	// Nil funcs and channels are copied as nil.
	cp, err := Copy(New(), &node{name: "x"})
	require.NoError(t, err)
	assert.Equal(t, "x", cp.name)
}

type holder struct {
	shared   *node
	table    map[int]func() int
	elements []int
}

func TestShareAndShareField(t *testing.T) {
	s := &node{name: "shared"}
	h := &holder{shared: s, table: map[int]func() int{1: func() int { return 1 }}, elements: make([]int, 2, 8)}
	c := New()
	_, err := Copy(c, h)
	require.Error(t, err, "the table holds funcs")

	c = New()
	c.Share(s)
	c.ShareField(reflect.TypeFor[holder](), "table")
	cp, err := Copy(c, h)
	require.NoError(t, err)
	assert.Same(t, s, cp.shared, "a shared object is not copied")
	assert.Equal(t, 1, cp.table[1](), "a shared field is copied as it is")
	assert.Equal(t, 8, cap(cp.elements), "the capacity is kept")
	cp.elements = append(cp.elements, 5)
	assert.Equal(t, []int{0, 0, 5}, cp.elements)
	assert.Len(t, h.elements, 2)
}

// tree is a random graph for the property: nodes with values, and edges as pointers, slices and
// maps among them.
type tree struct {
	Values []int
	Nodes  []*vertex
}

type vertex struct {
	Value int
	Out   []*vertex
	Named map[string]*vertex
	Box   any
	Data  []byte
}

func TestCopyProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "nodes")
		g := &tree{Values: rapid.SliceOf(rapid.Int()).Draw(t, "values")}
		for i := range n {
			g.Nodes = append(g.Nodes, &vertex{Value: i, Named: map[string]*vertex{}, Data: rapid.SliceOf(rapid.Byte()).Draw(t, "data")})
		}
		edges := rapid.IntRange(0, 30).Draw(t, "edges")
		for range edges {
			from := g.Nodes[rapid.IntRange(0, n-1).Draw(t, "from")]
			to := g.Nodes[rapid.IntRange(0, n-1).Draw(t, "to")]
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 0:
				from.Out = append(from.Out, to)
			case 1:
				from.Named[rapid.StringN(1, 3, 3).Draw(t, "name")] = to
			case 2:
				from.Box = to
			}
		}
		c := New()
		cp, err := Copy(c, g)
		require.NoError(t, err)
		if rapid.Bool().Draw(t, "frozen") {
			// A copy of a frozen copy of the graph.
			_, frozen, err := CopyFrozen(c, g)
			require.NoError(t, err)
			cp = frozen.Copy(c)
			again := frozen.Copy(New())
			require.True(t, reflect.DeepEqual(cp, again), "copies of one frozen graph are equal")
		}
		require.True(t, reflect.DeepEqual(g, cp), "the copy equals the original")
		// The copy's identities mirror the original's.
		index := map[*vertex]int{}
		for i, v := range g.Nodes {
			index[v] = i
		}
		for i, v := range cp.Nodes {
			require.NotSame(t, g.Nodes[i], v)
			for j, out := range v.Out {
				require.Same(t, cp.Nodes[index[g.Nodes[i].Out[j]]], out)
			}
			for name, to := range v.Named {
				require.Same(t, cp.Nodes[index[g.Nodes[i].Named[name]]], to)
			}
		}
		// Changing the copy leaves the original as it was.
		before, err := Copy(New(), g)
		require.NoError(t, err)
		for _, v := range cp.Nodes {
			v.Value = -1
			v.Named["mutated"] = v
			for i := range v.Data {
				v.Data[i]++
			}
		}
		for i := range cp.Values {
			cp.Values[i]++
		}
		require.True(t, reflect.DeepEqual(g, before), "the original is unchanged")
	})
}

// big is larger than the runtime keeps inline in a map's slot (128 bytes), so a map stores it
// indirectly.
type big struct {
	Pad  [20]int64
	Next *vertex
}

type mapHolder struct {
	Nodes    []*vertex
	Pointers map[int64]*vertex
	Slices   map[string][]*vertex
	Nested   map[int]map[string]*vertex
	Boxes    map[int]any
	Structs  map[int]big
	Large    map[int]*vertex // more entries than one group of the table holds
	Empty    map[*vertex]int // pointer keys, no entries: cloned
	Keyed    map[*vertex]int // pointer keys: copied entry by entry
}

// TestCopyMapsInPlace covers the maps whose keys hold no pointers, which are cloned by the
// runtime and fixed where their values lie in the clone (cloneMapFixing): each kind of value
// that holds pointers, indirect values, tables of several groups, and deleted entries.
func TestCopyMapsInPlace(t *testing.T) {
	require.True(t, iterSlotsKnown, "the iterator's layout is known in this Go release: the in-place path is the one tested")
	h := &mapHolder{
		Pointers: map[int64]*vertex{}, Slices: map[string][]*vertex{}, Nested: map[int]map[string]*vertex{},
		Boxes: map[int]any{}, Structs: map[int]big{}, Large: map[int]*vertex{}, Empty: map[*vertex]int{}, Keyed: map[*vertex]int{},
	}
	for i := range 40 {
		h.Nodes = append(h.Nodes, &vertex{Value: i})
	}
	for i, v := range h.Nodes[:10] {
		h.Pointers[int64(i)] = v
		h.Slices[v.String()] = h.Nodes[i : i+3]
		h.Nested[i] = map[string]*vertex{"self": v}
		h.Boxes[i] = v
		h.Structs[i] = big{Pad: [20]int64{int64(i)}, Next: v}
		h.Keyed[v] = i
	}
	h.Boxes[100] = big{Next: h.Nodes[0]} // a boxed value holding a pointer
	h.Nested[100] = h.Nested[0]          // one map reached twice
	for i, v := range h.Nodes {
		h.Large[i] = v
	}
	for i := range 20 {
		delete(h.Large, i) // deleted entries are not copied back in
	}
	h.Empty[h.Nodes[0]] = 1
	delete(h.Empty, h.Nodes[0])

	before, err := Copy(New(), h)
	require.NoError(t, err)
	cp, err := Copy(New(), h)
	require.NoError(t, err)
	requireSameMaps(t, h, cp)
	index := map[*vertex]int{}
	for i, v := range h.Nodes {
		index[v] = i
	}
	node := func(v *vertex) *vertex { return cp.Nodes[index[v]] }
	for k, v := range h.Pointers {
		assert.Same(t, node(v), cp.Pointers[k])
	}
	for k, s := range h.Slices {
		for i := range s {
			assert.Same(t, node(s[i]), cp.Slices[k][i])
		}
		assert.Same(t, &cp.Nodes[index[s[0]]], &cp.Slices[k][0], "a slice of the nodes points into their copied array")
	}
	for k, v := range h.Nested {
		assert.Same(t, node(v["self"]), cp.Nested[k]["self"])
	}
	for k, v := range h.Boxes {
		if p, ok := v.(*vertex); ok {
			assert.Same(t, node(p), cp.Boxes[k].(*vertex))
		}
	}
	assert.Same(t, cp.Nodes[0], cp.Boxes[100].(big).Next)
	for k, v := range h.Structs {
		assert.Same(t, node(v.Next), cp.Structs[k].Next)
	}
	for k, v := range h.Large {
		assert.Same(t, node(v), cp.Large[k])
	}
	for k, v := range h.Keyed {
		assert.Equal(t, v, cp.Keyed[node(k)])
	}

	// Changing the copy's maps, and what their values reach, leaves the original as it was.
	cp.Nested[0]["other"] = cp.Nodes[1]
	assert.Same(t, cp.Nodes[1], cp.Nested[100]["other"], "the map reached twice is one copy")
	cp.Pointers[99] = cp.Nodes[2]
	cp.Slices[cp.Nodes[0].String()][0] = cp.Nodes[5]
	s := cp.Structs[1]
	s.Pad[0] = 77
	cp.Structs[1] = s
	cp.Empty[cp.Nodes[0]] = 3
	cp.Large[0] = cp.Nodes[0]
	for _, v := range cp.Nodes {
		v.Value = -1
	}
	requireSameMaps(t, h, before)
}

// requireSameMaps compares two mapHolders field by field; Keyed, whose keys are pointers (equal
// only to themselves), is compared by the nodes' positions.
func requireSameMaps(t *testing.T, a, b *mapHolder) {
	t.Helper()
	for _, f := range []string{"Nodes", "Pointers", "Slices", "Nested", "Boxes", "Structs", "Large", "Empty"} {
		require.True(t, reflect.DeepEqual(reflect.ValueOf(a).Elem().FieldByName(f).Interface(), reflect.ValueOf(b).Elem().FieldByName(f).Interface()), "%s differs", f)
	}
	require.Len(t, b.Keyed, len(a.Keyed))
	for i, v := range a.Nodes {
		require.Equal(t, a.Keyed[v], b.Keyed[b.Nodes[i]])
	}
}

func (v *vertex) String() string { return strconv.Itoa(v.Value) }

// manyMaps holds more maps than the copier's map tables start with room for, each reached twice.
type manyMaps struct {
	Maps    []map[int]*vertex
	Again   []map[int]*vertex
	Counted []map[string]int
}

// TestCopyManyMapsKeepsAliasing: the tables that record the maps walked and the copy of each map
// grow past their first size and keep every map's two references on one copy; mapLen reads the
// count the map holds, after insertions and deletions.
func TestCopyManyMapsKeepsAliasing(t *testing.T) {
	require.True(t, mapLenKnown, "the map's count is its first word in this Go release: the direct path is the one tested")
	h := &manyMaps{}
	for i := range 300 {
		m := map[int]*vertex{}
		for j := range i % 5 {
			m[j] = &vertex{Value: i*10 + j}
		}
		h.Maps = append(h.Maps, m)
		counted := map[string]int{}
		for j := range i % 30 {
			counted[strconv.Itoa(j)] = j
		}
		delete(counted, "0")
		h.Counted = append(h.Counted, counted)
		require.Equal(t, len(counted), mapLen(New().plan(reflect.TypeFor[map[string]int]()), *(*unsafe.Pointer)(unsafe.Pointer(&counted))))
	}
	for i := len(h.Maps) - 1; i >= 0; i-- {
		h.Again = append(h.Again, h.Maps[i])
	}
	cp, err := Copy(New(), h)
	require.NoError(t, err)
	assert.Equal(t, h, cp)
	for i, m := range cp.Maps {
		m[99] = &vertex{Value: -i}
		assert.Equal(t, -i, cp.Again[len(cp.Again)-1-i][99].Value, "map %d keeps its second reference", i)
		assert.NotContains(t, h.Maps[i], 99, "the original map %d is not the copy", i)
	}
}
