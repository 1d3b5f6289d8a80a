package deepcopy

import (
	"errors"
	"reflect"
	"testing"

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
