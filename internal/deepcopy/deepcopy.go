package deepcopy

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// ErrUncopyable is wrapped by the error Copy returns when the graph holds a value it cannot copy
// faithfully: a non-nil func value, channel or unsafe.Pointer.
var ErrUncopyable = errors.New("deepcopy: uncopyable value")

// Copier copies object graphs. It keeps per-type plans between copies, so reuse one; it is not
// safe for concurrent use (give each goroutine its own).
type Copier struct {
	shared      []unsafe.Pointer // few: a linear search beats a map
	sharedTypes map[reflect.Type]struct{}
	sharedField map[reflect.Type]map[string]bool
	trim        func(reflect.Type, reflect.StructField) bool
	plans       map[reflect.Type]*plan
	dynamic     wordTable // an interface's type word (type or itab) -> its dynamic type's plan
	scratch     map[*plan][]*mapScratch

	// The state of one copy.
	regions     []region
	seen        pairTable // the targets registered
	starts      []uintptr // the groups' starts, for translate
	bases       wordTable // a group's start -> its copy's memory, for translate
	sliceWalked pairTable // the slices walked: their longest length and largest capacity
	keepLayout  bool      // CopyFrozen: keep the copy's layout in layout
	layout      []group
	keys        []uint64  // scratch of sortRegions
	sorted      []region  // scratch of sortRegions
	mapsSeen    wordTable // the maps walked
	groups      []group
	newMaps     wordTable // a map of the original -> its copy
	collect     bool
	path        []string
	sites       []string
}

// New returns a Copier.
func New() *Copier {
	return &Copier{
		sharedTypes: map[reflect.Type]struct{}{},
		sharedField: map[reflect.Type]map[string]bool{},
		plans:       map[reflect.Type]*plan{},
		scratch:     map[*plan][]*mapScratch{},
	}
}

// Share keeps the object p points to shared between the original and every copy: a pointer to it
// is copied as it is, and nothing behind it is followed. p must be a non-nil pointer. Use it for
// objects outside the state (a model's configuration and caches, a trace writer).
func (c *Copier) Share(p any) {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		panic(fmt.Sprintf("deepcopy: Share needs a non-nil pointer, got %T", p))
	}
	c.shared = append(c.shared, v.UnsafePointer())
}

// ShareType keeps every object of type t shared: pointers to a t are copied as they are. Use it
// for immutable objects.
func (c *Copier) ShareType(t reflect.Type) { c.sharedTypes[t] = struct{}{} }

// ShareField keeps the value of one field of struct type t as it is in every copy (a shallow
// copy: a map or a slice in it is then shared), and follows nothing behind it. Use it for fields
// set once at construction that hold no state, such as a table of stateless functions. It must
// be called before the first copy.
func (c *Copier) ShareField(t reflect.Type, name string) {
	f, ok := t.FieldByName(name)
	if t.Kind() != reflect.Struct || !ok || len(f.Index) != 1 {
		panic(fmt.Sprintf("deepcopy: %s has no field %s", t, name))
	}
	if c.sharedField[t] == nil {
		c.sharedField[t] = map[string]bool{}
	}
	c.sharedField[t][name] = true
}

// TrimSpare marks slice fields whose room past their length is spare: only their owner ever
// uses it, by appending or by reslicing within it, and a smaller room changes nothing but when
// the owner allocates anew (package slab's chunks). A copy of such a field has its capacity cut to
// its length, so the room is neither allocated nor zeroed. It must be called before the first
// copy.
func (c *Copier) TrimSpare(fields func(owner reflect.Type, field reflect.StructField) bool) {
	c.trim = fields
}

// Copy returns a deep copy of the graph reachable from root, a non-nil pointer.
func Copy[T any](c *Copier, root *T) (*T, error) {
	if root == nil {
		return nil, errors.New("deepcopy: nil root")
	}
	p, err := c.copyRoot(reflect.TypeFor[T](), unsafe.Pointer(root))
	if err != nil {
		return nil, err
	}
	return (*T)(p), nil
}

// Scan walks the graph reachable from root as Copy would and returns the path of every value
// Copy would refuse, in the order met (empty when the graph can be copied).
func Scan[T any](c *Copier, root *T) []string {
	c.reset()
	c.collect = true
	defer func() { c.collect, c.path, c.sites = false, nil, nil }()
	c.path = append(c.path, "root")
	_ = c.walkPointer(c.plan(reflect.TypeFor[T]()), unsafe.Pointer(root))
	return slices.Clone(c.sites)
}

func (c *Copier) reset() {
	// The maps are cleared rather than made again, so that they keep their size for the next copy.
	// The slices are only truncated: what they still point to stays alive until the next copy
	// overwrites it, which costs less than zeroing them each time.
	c.regions = c.regions[:0]
	c.seen.reset()
	c.starts = c.starts[:0]
	c.bases.reset()
	c.sliceWalked.reset()
	c.mapsSeen.reset()
	c.groups = c.groups[:0]
	c.newMaps.reset()
}

func (c *Copier) copyRoot(t reflect.Type, root unsafe.Pointer) (unsafe.Pointer, error) {
	c.reset()
	defer c.reset()
	if err := c.walkPointer(c.plan(t), root); err != nil {
		return nil, err
	}
	if err := c.buildGroups(); err != nil {
		return nil, err
	}
	cp := c.copyGroups(root)
	if c.keepLayout {
		c.layout = c.copiedLayout()
	}
	return cp, nil
}

// copyGroups allocates the copy of every group and copies into it; it returns the copy of root.
func (c *Copier) copyGroups(root unsafe.Pointer) unsafe.Pointer {
	for i := range c.groups {
		g := &c.groups[i]
		if g.typ != nil {
			g.base = unsafeNew(g.typ.rtype)
		} else {
			g.base = unsafeNewArray(g.elem.rtype, int(g.count))
		}
		c.starts = append(c.starts, g.start)
		s, _ := c.bases.findKey(g.start)
		s.val = g.base
	}
	for i := range c.groups {
		c.copyGroup(&c.groups[i])
	}
	return c.translate(root)
}

// Frozen is a graph that will not change any more, with its memory layout (the first pass of a
// copy) kept, so that each copy of it is only the second pass. Nothing may write to the graph
// while a Frozen of it is in use. A Frozen may be copied from several goroutines at once, each
// with its own Copier configured alike.
type Frozen[T any] struct {
	root   unsafe.Pointer
	groups []group
}

// Freeze runs the first pass of a copy of root and keeps it.
func Freeze[T any](c *Copier, root *T) (*Frozen[T], error) {
	if root == nil {
		return nil, errors.New("deepcopy: nil root")
	}
	c.reset()
	defer c.reset()
	if err := c.walkPointer(c.plan(reflect.TypeFor[T]()), unsafe.Pointer(root)); err != nil {
		return nil, err
	}
	if err := c.buildGroups(); err != nil {
		return nil, err
	}
	return &Frozen[T]{root: unsafe.Pointer(root), groups: slices.Clone(c.groups)}, nil
}

// CopyFrozen is Copy that also returns the copy frozen, its layout taken from the copy just made
// (the groups at their new addresses) rather than found by a first pass over it. The caller must
// never write to the frozen copy.
func CopyFrozen[T any](c *Copier, root *T) (*T, *Frozen[T], error) {
	if root == nil {
		return nil, nil, errors.New("deepcopy: nil root")
	}
	c.keepLayout = true
	p, err := c.copyRoot(reflect.TypeFor[T](), unsafe.Pointer(root))
	c.keepLayout = false
	layout := c.layout
	c.layout = nil
	if err != nil {
		return nil, nil, err
	}
	return (*T)(p), &Frozen[T]{root: p, groups: layout}, nil
}

// copiedLayout returns the groups of the copy just made: each at its new address, in address
// order.
func (c *Copier) copiedLayout() []group {
	// Sorted by compact keys (the new address and the group's index), as sortRegions does.
	keys := c.keys[:0]
	for i := range c.groups {
		keys = append(keys, uint64(uintptr(c.groups[i].base))<<16|uint64(i))
	}
	if len(c.groups) >= 1<<16 {
		keys = keys[:0]
	}
	slices.Sort(keys)
	out := make([]group, 0, len(c.groups))
	take := func(g group) {
		size := g.end - g.start
		g.start = uintptr(g.base)
		g.end = g.start + size
		g.orig, g.base = g.base, nil
		out = append(out, g)
	}
	for _, k := range keys {
		take(c.groups[k&0xffff])
	}
	if len(keys) == 0 {
		for _, g := range c.groups {
			take(g)
		}
		slices.SortFunc(out, func(a, b group) int { return cmp.Compare(a.start, b.start) })
	}
	c.keys = keys
	return out
}

// Root returns the frozen graph's root.
func (f *Frozen[T]) Root() *T { return (*T)(f.root) }

// Copy returns a deep copy of the frozen graph, as Copy would.
func (f *Frozen[T]) Copy(c *Copier) *T {
	c.reset()
	defer c.reset()
	c.groups = append(c.groups, f.groups...)
	return (*T)(c.copyGroups(f.root))
}

// --- Plans ----------------------------------------------------------------------------------------

// plan is what the copier needs of a type, computed once.
type plan struct {
	t     reflect.Type
	rtype unsafe.Pointer // the runtime's type descriptor, for typedmemmove
	kind  reflect.Kind
	size  uintptr
	ptrs  bool // holds pointers: needs more than a memmove
	asIs  bool // an error: shared, copied as it is and not followed
	// sharedType: ShareType was called for this type; direct: a value of it is stored directly
	// in an interface's data word (pointer-shaped), not boxed.
	sharedType, direct bool
	elem               *plan // Pointer, Slice, Array
	length             int   // Array
	key                *plan // Map
	value              *plan // Map
	// leaves are the parts of a struct, or of a short array, that hold pointers, nested structs
	// and short arrays flattened: a copy moves the whole value and then fixes these.
	leaves []leaf
	// pointerLeaves: a struct or short array whose leaves are all pointers to follow (no shared,
	// trimmed, slice, map or interface part), which the walk of an array of them visits in one
	// loop without a call per element.
	pointerLeaves bool
}

// leaf is one part of a struct or array that holds pointers.
type leaf struct {
	offset uintptr
	p      *plan
	name   string // the path from the enclosing value, for refusals
	shared bool   // ShareField: copied as it is, not followed
	trim   bool   // TrimSpare: a slice copied with its capacity cut to its length
}

// maxInlineArray is the longest array whose elements are flattened into the leaves.
const maxInlineArray = 16

func (c *Copier) plan(t reflect.Type) *plan {
	if p, ok := c.plans[t]; ok {
		return p
	}
	p := &plan{t: t, kind: t.Kind(), size: t.Size(), rtype: (*[2]unsafe.Pointer)(unsafe.Pointer(&t))[1]}
	c.plans[t] = p // before recursing: a type may refer to itself through a pointer
	_, p.sharedType = c.sharedTypes[t]
	// A zero value of a boxed type is stored as a pointer to a zero box, never as nil; a
	// pointer-shaped one is stored as its own (nil) word.
	zero := reflect.New(t).Elem().Interface()
	p.direct = (*iface)(unsafe.Pointer(&zero)).data == nil
	switch p.kind {
	case reflect.Pointer, reflect.Slice:
		p.ptrs = true
		p.elem = c.plan(t.Elem())
	case reflect.Map:
		p.ptrs = true
		p.key, p.value = c.plan(t.Key()), c.plan(t.Elem())
	case reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		p.ptrs = true
		// Errors are immutable values, and sentinel errors are compared by identity (errors.Is):
		// a copied sentinel would no longer be the sentinel. An error is shared as it is.
		p.asIs = t == reflect.TypeFor[error]()
	case reflect.String:
		p.ptrs = false // the bytes are immutable and shared
	case reflect.Array:
		p.elem, p.length = c.plan(t.Elem()), t.Len()
		p.ptrs = p.length > 0 && p.elem.ptrs
		if p.ptrs && p.length <= maxInlineArray {
			for i := range p.length {
				p.leaves = appendLeaves(p.leaves, uintptr(i)*p.elem.size, "["+strconv.Itoa(i)+"]", p.elem)
			}
		}
	case reflect.Struct:
		shared := c.sharedField[t]
		for i := range t.NumField() {
			f := t.Field(i)
			fp := c.plan(f.Type)
			if !fp.ptrs {
				continue
			}
			p.ptrs = true
			if shared[f.Name] || fp.asIs {
				p.leaves = append(p.leaves, leaf{offset: f.Offset, p: fp, name: "." + f.Name, shared: true})
				continue
			}
			if fp.kind == reflect.Slice && c.trim != nil && c.trim(t, f) {
				p.leaves = append(p.leaves, leaf{offset: f.Offset, p: fp, name: "." + f.Name, trim: true})
				continue
			}
			p.leaves = appendLeaves(p.leaves, f.Offset, "."+f.Name, fp)
		}
	}
	if (p.kind == reflect.Struct || p.kind == reflect.Array && p.length <= maxInlineArray) && len(p.leaves) > 0 {
		p.pointerLeaves = true
		for _, l := range p.leaves {
			if l.shared || l.trim || l.p.kind != reflect.Pointer {
				p.pointerLeaves = false
			}
		}
	}
	return p
}

// appendLeaves adds the leaves of a part of type p at offset: the part itself, or its own leaves
// when it is a struct or a short array.
func appendLeaves(leaves []leaf, offset uintptr, name string, p *plan) []leaf {
	if p.asIs {
		return append(leaves, leaf{offset: offset, p: p, name: name, shared: true})
	}
	if (p.kind == reflect.Struct || p.kind == reflect.Array) && (p.kind == reflect.Struct || p.length <= maxInlineArray) {
		for _, l := range p.leaves {
			l.offset += offset
			l.name = name + l.name
			leaves = append(leaves, l)
		}
		return leaves
	}
	return append(leaves, leaf{offset: offset, p: p, name: name})
}

// The runtime's own helpers, as package reflect reaches them: a typed move with write barriers,
// typed allocation from a type descriptor without reflect's lookups, and the runtime's clone of
// a map (maps.Clone).

//go:linkname typedmemmove runtime.typedmemmove
func typedmemmove(typ unsafe.Pointer, dst, src unsafe.Pointer)

//go:linkname unsafeNew reflect.unsafe_New
func unsafeNew(typ unsafe.Pointer) unsafe.Pointer

//go:linkname unsafeNewArray reflect.unsafe_NewArray
func unsafeNewArray(typ unsafe.Pointer, n int) unsafe.Pointer

//go:linkname mapsClone maps.clone
func mapsClone(m any) any

//go:linkname typedslicecopy reflect.typedslicecopy
func typedslicecopy(elemType unsafe.Pointer, dst, src sliceHeader) int

// --- First pass: the memory ranges reached ---------------------------------------------------------

// region is one range of memory the graph reaches: a pointer's target (count 1, or an array's
// elements) or a slice's backing array up to its capacity. live bytes from start must be copied;
// the rest of size only allocated.
type region struct {
	start, size, live uintptr
	ptr               unsafe.Pointer // start as a pointer, which keeps the original alive
	elem              *plan          // the element type of an array-like region, else the target's type
	count             uintptr        // elements of elem; 1 for a plain target
	array             bool
}

// uncopyable reports a refused value: an error in Copy, a collected site in Scan.
func (c *Copier) uncopyable(what string, t reflect.Type) error {
	if c.collect {
		c.sites = append(c.sites, strings.Join(c.path, "")+": "+what+" "+t.String())
		return nil
	}
	return &pathError{what: what + " " + t.String()}
}

// pathError accumulates the path to a refused value as the walk unwinds.
type pathError struct {
	path []string
	what string
}

func (e *pathError) Error() string {
	var b strings.Builder
	b.WriteString("deepcopy: cannot copy ")
	b.WriteString(e.what)
	b.WriteString(" at root")
	for i := len(e.path) - 1; i >= 0; i-- {
		b.WriteString(e.path[i])
	}
	return b.String()
}

func (e *pathError) Unwrap() error { return ErrUncopyable }

// at adds a path step to a refusal on the way up.
func at(err error, step string) error {
	if pe, ok := err.(*pathError); ok {
		pe.path = append(pe.path, step)
	}
	return err
}

func (c *Copier) push(step string) {
	if c.collect {
		c.path = append(c.path, step)
	}
}

func (c *Copier) pop() {
	if c.collect {
		c.path = c.path[:len(c.path)-1]
	}
}

func (c *Copier) isShared(p *plan, addr unsafe.Pointer) bool {
	if p.sharedType {
		return true
	}
	for _, s := range c.shared {
		if s == addr {
			return true
		}
	}
	return false
}

// walkPointer registers the target of a pointer to a value of plan p and walks it.
func (c *Copier) walkPointer(p *plan, addr unsafe.Pointer) error {
	if addr == nil || p.size == 0 || c.isShared(p, addr) {
		return nil
	}
	if _, ok := c.seen.find(addr, p); ok {
		return nil
	}
	r := region{start: uintptr(addr), ptr: addr, size: p.size, live: p.size, elem: p, count: 1}
	if p.kind == reflect.Array {
		r.elem, r.count, r.array = p.elem, uintptr(p.length), true
	}
	c.regions = append(c.regions, r)
	if !p.ptrs {
		return nil
	}
	return c.walk(p, addr)
}

// walk visits the pointers inside the value of plan p at addr.
func (c *Copier) walk(p *plan, addr unsafe.Pointer) error {
	if p.asIs {
		return nil
	}
	switch p.kind {
	case reflect.Pointer:
		c.push(".*")
		err := c.walkPointer(p.elem, *(*unsafe.Pointer)(addr))
		c.pop()
		return at(err, ".*")
	case reflect.Slice:
		return c.walkSlice(p.elem, (*sliceHeader)(addr))
	case reflect.Map:
		return c.walkMap(p, addr)
	case reflect.Interface:
		return c.walkInterface(p, addr)
	case reflect.Func:
		if *(*unsafe.Pointer)(addr) != nil {
			return c.uncopyable("func value", p.t)
		}
	case reflect.Chan:
		if *(*unsafe.Pointer)(addr) != nil {
			return c.uncopyable("channel", p.t)
		}
	case reflect.UnsafePointer:
		if *(*unsafe.Pointer)(addr) != nil {
			return c.uncopyable("unsafe.Pointer", p.t)
		}
	case reflect.Array, reflect.Struct:
		if !p.ptrs {
			return nil
		}
		if p.kind == reflect.Array && p.length > maxInlineArray {
			if !c.collect {
				return c.walkElements(p.elem, addr, 0, uintptr(p.length))
			}
			for i := range p.length {
				if c.collect {
					c.push("[" + strconv.Itoa(i) + "]")
				}
				err := c.walk(p.elem, unsafe.Add(addr, uintptr(i)*p.elem.size))
				c.pop()
				if err != nil {
					return at(err, "["+strconv.Itoa(i)+"]")
				}
			}
			return nil
		}
		for i := range p.leaves {
			l := &p.leaves[i]
			if l.shared {
				continue
			}
			a := unsafe.Add(addr, l.offset)
			if l.p.kind == reflect.Pointer && *(*unsafe.Pointer)(a) == nil {
				continue // the commonest leaf, checked without a call
			}
			c.push(l.name)
			var err error
			if l.trim {
				err = c.walkTrimmed(l.p.elem, (*sliceHeader)(a))
			} else {
				err = c.walk(l.p, a)
			}
			c.pop()
			if err != nil {
				return at(err, l.name)
			}
		}
	}
	return nil
}

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func (c *Copier) walkSlice(elem *plan, h *sliceHeader) error {
	if h.data == nil || h.cap == 0 || elem.size == 0 || c.isShared(elem, h.data) {
		return nil
	}
	return c.walkSliceWithin(elem, h.data, h.len, h.cap)
}

// walkTrimmed walks a TrimSpare slice: its room ends at its length.
func (c *Copier) walkTrimmed(elem *plan, h *sliceHeader) error {
	if h.data == nil || h.len == 0 || elem.size == 0 || c.isShared(elem, h.data) {
		return nil
	}
	return c.walkSliceWithin(elem, h.data, h.len, h.len)
}

func (c *Copier) walkSliceWithin(elem *plan, data unsafe.Pointer, length, capacity int) error {
	h := &sliceHeader{data, length, capacity}
	// Slices of one array may start at one element with different lengths and capacities: each
	// larger one is registered (the group must cover every capacity), and only the elements no
	// earlier one covered are walked.
	known, _ := c.sliceWalked.find(h.data, elem) // a: the longest length, b: the largest capacity
	if uintptr(h.len) <= known.a && uintptr(h.cap) <= known.b {
		return nil
	}
	done := known.a
	known.a, known.b = max(known.a, uintptr(h.len)), max(known.b, uintptr(h.cap))
	live := uintptr(h.len) * elem.size
	c.regions = append(c.regions, region{start: uintptr(h.data), ptr: h.data, size: uintptr(h.cap) * elem.size, live: live, elem: elem, count: uintptr(h.cap), array: true})
	if !elem.ptrs {
		return nil
	}
	if !c.collect {
		return c.walkElements(elem, h.data, done, uintptr(h.len))
	}
	for i := done; i < uintptr(h.len); i++ {
		if c.collect {
			c.push("[" + strconv.Itoa(int(i)) + "]")
		}
		err := c.walk(elem, unsafe.Add(h.data, i*elem.size))
		c.pop()
		if err != nil {
			return at(err, "["+strconv.Itoa(int(i))+"]")
		}
	}
	return nil
}

// walkElements walks elements from to to (exclusive) of an array of elem at data. Elements that
// are pointers, or structs of pointers only, are visited in one loop; a refusal is named as
// walk would name it.
func (c *Copier) walkElements(elem *plan, data unsafe.Pointer, from, to uintptr) error {
	es := elem.size
	switch {
	case elem.kind == reflect.Pointer:
		for i := from; i < to; i++ {
			if q := *(*unsafe.Pointer)(unsafe.Add(data, i*es)); q != nil {
				if err := c.walkPointer(elem.elem, q); err != nil {
					return at(at(err, ".*"), "["+strconv.Itoa(int(i))+"]")
				}
			}
		}
	case elem.pointerLeaves:
		for i := from; i < to; i++ {
			a := unsafe.Add(data, i*es)
			for j := range elem.leaves {
				l := &elem.leaves[j]
				if q := *(*unsafe.Pointer)(unsafe.Add(a, l.offset)); q != nil {
					if err := c.walkPointer(l.p.elem, q); err != nil {
						return at(at(at(err, ".*"), l.name), "["+strconv.Itoa(int(i))+"]")
					}
				}
			}
		}
	default:
		for i := from; i < to; i++ {
			if err := c.walk(elem, unsafe.Add(data, i*es)); err != nil {
				return at(err, "["+strconv.Itoa(int(i))+"]")
			}
		}
	}
	return nil
}

func (c *Copier) walkMap(p *plan, addr unsafe.Pointer) error {
	mp := *(*unsafe.Pointer)(addr)
	if mp == nil {
		return nil
	}
	if _, ok := c.mapsSeen.find(mp); ok {
		return nil
	}
	if !p.key.ptrs && !p.value.ptrs || mapLen(p, mp) == 0 {
		return nil
	}
	sc := c.takeScratch(p)
	defer c.putScratch(p, sc)
	k, v, it := sc.k, sc.v, sc.it
	it.Reset(mapValue(p, mp))
	if !p.key.ptrs && iterSlotsKnown {
		// The values are walked where they lie in the map, not copied out first.
		for it.Next() {
			_, elem := iterSlots(it)
			if c.collect {
				c.push("[" + fmt.Sprint(it.Key()) + "]")
			}
			err := c.walk(p.value, elem)
			c.pop()
			if err != nil {
				return at(err, "["+fmt.Sprint(it.Key())+"]")
			}
		}
		return nil
	}
	// The order of the entries reaches nothing: the walk only gathers memory ranges, and a
	// refusal names the first refused value, which is a diagnosis, not a state.
	for it.Next() {
		if p.key.ptrs {
			k.SetIterKey(it)
			c.push("[key]")
			err := c.walk(p.key, unsafe.Pointer(k.UnsafeAddr()))
			c.pop()
			if err != nil {
				return at(err, "[key]")
			}
		}
		if p.value.ptrs {
			v.SetIterValue(it)
			if c.collect {
				c.push("[" + fmt.Sprint(it.Key()) + "]")
			}
			err := c.walk(p.value, unsafe.Pointer(v.UnsafeAddr()))
			c.pop()
			if err != nil {
				return at(err, "["+fmt.Sprint(it.Key())+"]")
			}
		}
	}
	return nil
}

// iface is the layout of an interface value: a type (or itab) word and a data word.
type iface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// dynamicPlan returns the plan of the dynamic type of the non-nil interface at addr.
func (c *Copier) dynamicPlan(p *plan, addr unsafe.Pointer) *plan {
	s, ok := c.dynamic.find((*iface)(addr).typ)
	if !ok {
		s.val = unsafe.Pointer(c.plan(reflect.NewAt(p.t, addr).Elem().Elem().Type()))
	}
	return (*plan)(s.val)
}

func (c *Copier) walkInterface(p *plan, addr unsafe.Pointer) error {
	if (*iface)(addr).typ == nil {
		return nil
	}
	dp := c.dynamicPlan(p, addr)
	if !dp.ptrs {
		return nil
	}
	if c.collect {
		c.push(".(" + dp.t.String() + ")")
		defer c.pop()
	}
	data := (*iface)(addr).data
	var err error
	switch {
	case dp.kind == reflect.Pointer:
		err = c.walkPointer(dp.elem, data)
	case dp.kind == reflect.Func || dp.kind == reflect.Chan || dp.kind == reflect.UnsafePointer:
		if data != nil {
			err = c.uncopyable(dp.kind.String()+" in an interface", dp.t)
		}
	case dp.direct:
		// A pointer-shaped value (a map, a struct of one pointer) is the data word itself.
		err = c.walk(dp, unsafe.Pointer(&(*iface)(addr).data))
	default:
		// The box is memory nobody else can point into: only what it points to is registered.
		err = c.walk(dp, data)
	}
	if err != nil {
		return at(err, ".("+dp.t.String()+")")
	}
	return nil
}

// --- Grouping: one allocation for each set of overlapping ranges ----------------------------------

// group is one allocation of the copy: overlapping regions merged.
type group struct {
	start, end uintptr
	orig       unsafe.Pointer // the original's memory at start
	base       unsafe.Pointer // the copy's memory
	typ        *plan          // the type allocated, or nil for an array of elem
	elem       *plan
	count      uintptr
	// The ranges to copy, relative to start, sorted and disjoint: one (the common case, kept
	// inline), or more (never written after the group is made, so frozen groups share it).
	one  span
	more []span
}

type span struct{ from, to uintptr }

func (c *Copier) buildGroups() error {
	c.sortRegions()
	rs := c.regions
	for i := 0; i < len(rs); {
		j, end := i+1, rs[i].start+rs[i].size
		for j < len(rs) && rs[j].start < end {
			end = max(end, rs[j].start+rs[j].size)
			j++
		}
		g, err := makeGroup(rs[i:j], end)
		if err != nil {
			for _, r := range rs[i:j] {
				err = fmt.Errorf("%w\n  region %#x size %d live %d %s", err, r.start, r.size, r.live, r.elem.t)
			}
			return err
		}
		c.groups = append(c.groups, g)
		i = j
	}
	return nil
}

// sortRegions orders the regions by start, the largest first among equal starts. It sorts
// compact keys (the start and the region's index) rather than the regions themselves.
func (c *Copier) sortRegions() {
	rs := c.regions
	if len(rs) >= 1<<16 {
		slices.SortFunc(rs, func(a, b region) int {
			switch {
			case a.start < b.start:
				return -1
			case a.start > b.start:
				return 1
			case a.size > b.size:
				return -1
			case a.size < b.size:
				return 1
			}
			return 0
		})
		return
	}
	keys := c.keys[:0]
	for i := range rs {
		keys = append(keys, uint64(rs[i].start)<<16|uint64(i))
	}
	slices.Sort(keys)
	sorted := c.sorted[:0]
	for _, k := range keys {
		sorted = append(sorted, rs[k&0xffff])
	}
	// Among equal starts, the largest first.
	for i := 0; i < len(sorted); {
		j, big := i+1, i
		for j < len(sorted) && sorted[j].start == sorted[i].start {
			if sorted[j].size > sorted[big].size {
				big = j
			}
			j++
		}
		sorted[i], sorted[big] = sorted[big], sorted[i]
		i = j
	}
	c.keys, c.sorted, c.regions = keys, rs, sorted
}

// makeGroup decides the type of one allocation. The regions are sorted by start, the largest
// first among equal starts; they overlap into one range [rs[0].start, end).
func makeGroup(rs []region, end uintptr) (group, error) {
	start := rs[0].start
	g := group{start: start, end: end, orig: rs[0].ptr}
	if len(rs) == 1 {
		if r := rs[0]; r.live > 0 {
			g.one = span{0, r.live}
		}
	} else {
		var live, merged []span
		for _, r := range rs {
			if r.live > 0 {
				live = append(live, span{r.start - start, r.start - start + r.live})
			}
		}
		slices.SortFunc(live, func(a, b span) int { return cmp.Compare(a.from, b.from) })
		for _, s := range live {
			if n := len(merged); n > 0 && s.from <= merged[n-1].to {
				merged[n-1].to = max(merged[n-1].to, s.to)
			} else {
				merged = append(merged, s)
			}
		}
		if len(merged) == 1 {
			g.one = merged[0]
		} else {
			g.more = merged
		}
	}
	top := rs[0]
	if top.start+top.size == end {
		// One region covers the group: its type is the allocation's (the regions inside it are
		// fields or elements of it).
		if top.array {
			g.elem, g.count = top.elem, top.count
		} else {
			g.typ = top.elem
		}
		return g, nil
	}
	// Partial overlaps: slices of one backing array at different offsets. Every region not
	// inside another must then be an array of the same element type, at an element boundary.
	elem := top.elem
	if !top.array {
		return g, fmt.Errorf("deepcopy: a %s at %#x overlaps a later range partially", top.elem.t, top.start)
	}
	es := elem.size
	reach := uintptr(0)
	for _, r := range rs {
		if r.start+r.size <= reach {
			continue // inside an earlier region
		}
		if !r.array || r.elem != elem || (r.start-start)%es != 0 {
			return g, fmt.Errorf("deepcopy: ranges of %s and %s overlap partially at %#x", elem.t, r.elem.t, r.start)
		}
		reach = r.start + r.size
	}
	if (end-start)%es != 0 {
		return g, fmt.Errorf("deepcopy: overlapping arrays of %s end off an element boundary", elem.t)
	}
	g.elem, g.count = elem, (end-start)/es
	return g, nil
}

// translate maps an address of the original graph into the copy.
func (c *Copier) translate(p unsafe.Pointer) unsafe.Pointer {
	a := uintptr(p)
	// Most pointers point to the start of a group (an object allocated alone, a slice from its
	// first element): one probe of a hash table finds its copy.
	if base, ok := c.bases.get(a); ok {
		return base
	}
	// The last group starting at or before a: a binary search over the starts alone (a few KB,
	// where the groups are a hundred bytes each), whose step the compiler makes a conditional
	// move rather than a branch that the random addresses would mispredict half the time.
	st := c.starts
	if len(st) == 0 || a < st[0] {
		return p
	}
	i := 0
	for n := len(st); n > 1; {
		half := n >> 1
		if st[i+half] <= a {
			i += half
		}
		n -= half
	}
	if g := &c.groups[i]; a < g.end {
		return unsafe.Add(g.base, a-g.start)
	}
	// Not reached by the first pass: a zero-size target or a shared object, kept as it is.
	return p
}

// --- Second pass: copying ------------------------------------------------------------------------

func (c *Copier) copyGroup(g *group) {
	if g.typ != nil {
		c.copyValue(g.typ, g.base, g.orig)
		return
	}
	es := g.elem.size
	spans := g.more
	if spans == nil && g.one.to > g.one.from {
		spans = (*[1]span)(unsafe.Pointer(&g.one))[:]
	}
	for _, s := range spans {
		first, last := s.from/es, (s.to+es-1)/es
		if !g.elem.ptrs {
			memmove(unsafe.Add(g.base, first*es), unsafe.Add(g.orig, first*es), (last-first)*es)
			continue
		}
		n := int(last - first)
		d, s := unsafe.Add(g.base, first*es), unsafe.Add(g.orig, first*es)
		if g.elem.kind == reflect.Struct || g.elem.kind == reflect.Array {
			// Move the span at once, then fix the parts that hold pointers.
			typedslicecopy(g.elem.rtype, sliceHeader{d, n, n}, sliceHeader{s, n, n})
			c.fixElements(g.elem, d, s, uintptr(n))
			continue
		}
		for i := range uintptr(n) {
			c.copyValue(g.elem, unsafe.Add(d, i*es), unsafe.Add(s, i*es))
		}
	}
}

// copyValue copies the value of plan p at src into the zeroed memory at dst, translating the
// pointers.
func (c *Copier) copyValue(p *plan, dst, src unsafe.Pointer) {
	if !p.ptrs {
		memmove(dst, src, p.size)
		return
	}
	if p.asIs {
		typedmemmove(p.rtype, dst, src)
		return
	}
	switch p.kind {
	case reflect.Pointer:
		q := *(*unsafe.Pointer)(src)
		if q != nil && !c.isShared(p.elem, q) {
			q = c.translate(q)
		}
		*(*unsafe.Pointer)(dst) = q
	case reflect.Slice:
		s, d := (*sliceHeader)(src), (*sliceHeader)(dst)
		*d = *s
		if s.data != nil && s.cap > 0 && !c.isShared(p.elem, s.data) {
			d.data = c.translate(s.data)
		}
	case reflect.Map:
		*(*unsafe.Pointer)(dst) = c.copyMap(p, src)
	case reflect.Interface:
		c.copyInterface(p, dst, src)
	case reflect.Array, reflect.Struct:
		// Move the whole value (the pointer-free parts and the shared fields are then done),
		// and fix the parts that hold pointers.
		typedmemmove(p.rtype, dst, src)
		c.fixLeaves(p, dst, src)
	default:
		// Func, Chan, UnsafePointer: the first pass refused every non-nil one.
	}
}

// fixLeaves fixes, in a struct or array already moved from src to dst, the parts that hold
// pointers.
func (c *Copier) fixLeaves(p *plan, dst, src unsafe.Pointer) {
	if p.kind != reflect.Struct && p.kind != reflect.Array {
		c.fixPart(p, dst, src)
		return
	}
	if p.kind == reflect.Array && p.length > maxInlineArray {
		c.fixElements(p.elem, dst, src, uintptr(p.length))
		return
	}
	for i := range p.leaves {
		l := &p.leaves[i]
		switch {
		case l.trim:
			d := (*sliceHeader)(unsafe.Add(dst, l.offset))
			if d.len == 0 {
				d.data, d.cap = nil, 0
			} else {
				d.data, d.cap = c.translate(d.data), d.len
			}
		case l.shared:
		case l.p.kind == reflect.Pointer:
			// The commonest leaf, fixed without a call.
			if q := *(*unsafe.Pointer)(unsafe.Add(src, l.offset)); q != nil && !c.isShared(l.p.elem, q) {
				*(*unsafe.Pointer)(unsafe.Add(dst, l.offset)) = c.translate(q)
			}
		default:
			c.fixPart(l.p, unsafe.Add(dst, l.offset), unsafe.Add(src, l.offset))
		}
	}
}

// fixElements fixes n elements of elem already moved from src to dst; elements that are structs
// of pointers only are fixed in one loop.
func (c *Copier) fixElements(elem *plan, dst, src unsafe.Pointer, n uintptr) {
	es := elem.size
	if !elem.pointerLeaves {
		for i := range n {
			c.fixLeaves(elem, unsafe.Add(dst, i*es), unsafe.Add(src, i*es))
		}
		return
	}
	for i := range n {
		d, s := unsafe.Add(dst, i*es), unsafe.Add(src, i*es)
		for j := range elem.leaves {
			l := &elem.leaves[j]
			if q := *(*unsafe.Pointer)(unsafe.Add(s, l.offset)); q != nil && !c.isShared(l.p.elem, q) {
				*(*unsafe.Pointer)(unsafe.Add(d, l.offset)) = c.translate(q)
			}
		}
	}
}

// fixPart fixes one part that holds pointers, already moved from src to dst.
func (c *Copier) fixPart(p *plan, dst, src unsafe.Pointer) {
	switch p.kind {
	case reflect.Pointer:
		if q := *(*unsafe.Pointer)(src); q != nil && !c.isShared(p.elem, q) {
			*(*unsafe.Pointer)(dst) = c.translate(q)
		}
	case reflect.Slice:
		if h := (*sliceHeader)(src); h.data != nil && h.cap > 0 && !c.isShared(p.elem, h.data) {
			(*sliceHeader)(dst).data = c.translate(h.data)
		}
	case reflect.Map:
		*(*unsafe.Pointer)(dst) = c.copyMap(p, src)
	case reflect.Interface:
		c.copyInterface(p, dst, src)
	case reflect.Struct, reflect.Array:
		c.fixLeaves(p, dst, src)
	}
}

func (c *Copier) copyMap(p *plan, src unsafe.Pointer) unsafe.Pointer {
	old := *(*unsafe.Pointer)(src)
	if old == nil {
		return nil
	}
	slot, ok := c.newMaps.find(old)
	if ok {
		return slot.val
	}
	if !p.key.ptrs && !p.value.ptrs || mapLen(p, old) == 0 {
		// Nothing to translate (no pointers, or no entries): the runtime clones the table.
		clone := mapsClone(*(*any)(unsafe.Pointer(&iface{typ: p.rtype, data: old})))
		n := (*iface)(unsafe.Pointer(&clone)).data
		slot.val = n
		return n
	}
	if !p.key.ptrs && iterSlotsKnown {
		return c.cloneMapFixing(p, old, slot)
	}
	m := reflect.NewAt(p.t, src).Elem()
	n := reflect.MakeMapWithSize(p.t, m.Len())
	slot.val = n.UnsafePointer()
	sc := c.takeScratch(p)
	defer c.putScratch(p, sc)
	k, v, nk, nv, it := sc.k, sc.v, sc.nk, sc.nv, sc.it
	it.Reset(m)
	// Entries go into the new map in the old one's iteration order; the new map's own order is
	// randomized by Go as always, so this order reaches nothing.
	for it.Next() {
		k.SetIterKey(it)
		v.SetIterValue(it)
		key, val := k, v
		if p.key.ptrs {
			nk.SetZero()
			c.copyValue(p.key, unsafe.Pointer(nk.UnsafeAddr()), unsafe.Pointer(k.UnsafeAddr()))
			key = nk
		}
		if p.value.ptrs {
			nv.SetZero()
			c.copyValue(p.value, unsafe.Pointer(nv.UnsafeAddr()), unsafe.Pointer(v.UnsafeAddr()))
			val = nv
		}
		n.SetMapIndex(key, val)
	}
	return n.UnsafePointer()
}

// cloneMapFixing copies a map whose keys hold no pointers: the runtime clones the table (the
// keys and values as they are, indirect ones copied), and each value is then fixed where it lies
// in the clone, as a struct's leaves are after it was moved. Neither a new table is grown entry
// by entry nor is any key hashed again. Nothing else can reach the clone meanwhile, and writing a
// value in place changes nothing of the table's structure, so iterating while fixing is safe.
func (c *Copier) cloneMapFixing(p *plan, old unsafe.Pointer, slot *wordSlot) unsafe.Pointer {
	clone := mapsClone(*(*any)(unsafe.Pointer(&iface{typ: p.rtype, data: old})))
	n := (*iface)(unsafe.Pointer(&clone)).data
	slot.val = n
	if !p.value.ptrs {
		return n
	}
	sc := c.takeScratch(p)
	defer c.putScratch(p, sc)
	it := sc.it
	it.Reset(mapValue(p, n))
	for it.Next() {
		_, elem := iterSlots(it)
		// The clone holds the original's value: its pointers still point into the original,
		// and fixPart translates them (it reads each before writing it, so the one slot can be
		// both source and destination).
		c.fixPart(p.value, elem, elem)
	}
	return n
}

// iterSlots returns where the key and the value of a map iterator's current entry lie in the
// map's memory. A reflect.MapIter holds the map's Value and then the runtime's iterator, whose
// first two words are exactly these (the compiler's range loops rely on that position); probeIter
// checks the layout once, and the callers fall back to reflection's copies when it is not so.
func iterSlots(it *reflect.MapIter) (key, elem unsafe.Pointer) {
	words := (*[2]unsafe.Pointer)(unsafe.Add(unsafe.Pointer(it), unsafe.Sizeof(reflect.Value{})))
	return words[0], words[1]
}

// iterSlotsKnown is whether iterSlots reads a reflect.MapIter right in this Go release.
var iterSlotsKnown = probeIter()

func probeIter() bool {
	if unsafe.Sizeof(reflect.MapIter{}) < unsafe.Sizeof(reflect.Value{})+2*unsafe.Sizeof(uintptr(0)) {
		return false
	}
	m := map[int64]int64{7: 9, 11: 13}
	it := reflect.ValueOf(m).MapRange()
	seen := 0
	for it.Next() {
		key, elem := iterSlots(it)
		if key == nil || elem == nil || *(*int64)(key) != it.Key().Int() || *(*int64)(elem) != it.Value().Int() {
			return false
		}
		*(*int64)(elem) += 100 // writing the slot must write the map's value
		seen++
	}
	return seen == 2 && m[7] == 109 && m[11] == 113
}

// mapValue returns the map m of plan p (the map's pointer, as a map variable holds it) as a
// reflect.Value, for iterating: an interface is built from the type and the pointer, as the
// runtime stores a map in one, without reflect.NewAt (which looks the pointer type up in a
// synchronized cache on every call).
func mapValue(p *plan, m unsafe.Pointer) reflect.Value {
	return reflect.ValueOf(*(*any)(unsafe.Pointer(&iface{typ: p.rtype, data: m})))
}

// mapLen returns the number of entries of the non-nil map m of plan p. It reads the map's first
// word, its count, as the compiler's len does; probeMapLen checks that once, and reflection
// answers when it is not so.
func mapLen(p *plan, m unsafe.Pointer) int {
	if mapLenKnown {
		return *(*int)(m)
	}
	return mapValue(p, m).Len()
}

// mapLenKnown is whether mapLen may read the count directly in this Go release.
var mapLenKnown = probeMapLen()

func probeMapLen() bool {
	m := map[int64]string{}
	for i := range int64(40) {
		count := *(*int)(*(*unsafe.Pointer)(unsafe.Pointer(&m)))
		if count != len(m) {
			return false
		}
		m[i] = "x"
	}
	delete(m, 3)
	return *(*int)(*(*unsafe.Pointer)(unsafe.Pointer(&m))) == len(m)
}

// mapScratch is what iterating over a map of one type needs, kept between maps: an iterator and
// values for a key and an element, and for their copies.
type mapScratch struct {
	it           *reflect.MapIter
	k, v, nk, nv reflect.Value
}

func (c *Copier) takeScratch(p *plan) *mapScratch {
	if free := c.scratch[p]; len(free) > 0 {
		sc := free[len(free)-1]
		c.scratch[p] = free[:len(free)-1]
		return sc
	}
	return &mapScratch{
		it: new(reflect.MapIter),
		k:  reflect.New(p.key.t).Elem(), v: reflect.New(p.value.t).Elem(),
		nk: reflect.New(p.key.t).Elem(), nv: reflect.New(p.value.t).Elem(),
	}
}

// putScratch gives a scratch back, holding nothing of the graph.
func (c *Copier) putScratch(p *plan, sc *mapScratch) {
	sc.it.Reset(reflect.Value{})
	sc.k.SetZero()
	sc.v.SetZero()
	sc.nk.SetZero()
	sc.nv.SetZero()
	c.scratch[p] = append(c.scratch[p], sc)
}

func (c *Copier) copyInterface(p *plan, dst, src unsafe.Pointer) {
	s, d := (*iface)(src), (*iface)(dst)
	if s.typ == nil {
		return
	}
	dp := c.dynamicPlan(p, src)
	d.typ = s.typ
	switch {
	case !dp.ptrs:
		// The box holds no pointers and nobody can write to it: share it.
		d.data = s.data
	case dp.kind == reflect.Pointer:
		d.data = s.data
		if !c.isShared(dp.elem, s.data) {
			d.data = c.translate(s.data)
		}
	case dp.direct:
		c.copyValue(dp, unsafe.Pointer(&d.data), unsafe.Pointer(&s.data))
	default:
		// A new box: boxes are immutable and never shared with anything else.
		n := unsafeNew(dp.rtype)
		c.copyValue(dp, n, s.data)
		d.data = n
	}
}

func memmove(dst, src unsafe.Pointer, n uintptr) {
	if n == 0 {
		return
	}
	copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
}
