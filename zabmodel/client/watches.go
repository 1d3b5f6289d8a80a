package client

import (
	"slices"
	"strconv"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Event is a watch notification or a connection state change, Java's WatchedEvent. A state change
// has Type proto.EventNone and an empty Path.
type Event struct {
	Type  proto.EventType
	State proto.KeeperState
	Path  string
}

// Watcher receives events, as org.apache.zookeeper.Watcher does. Watchers are compared by identity
// (Go's ==), as Java's HashSet<Watcher> compares them: registering one watcher twice for the same
// path and kind registers it once, and it hears the event once.
type Watcher interface {
	Process(Event)
}

type funcWatcher struct{ fn func(Event) }

func (w *funcWatcher) Process(e Event) { w.fn(e) }

// WatcherFunc returns a Watcher that calls fn. Each call returns a distinct watcher, as each Java
// lambda object is distinct.
func WatcherFunc(fn func(Event)) Watcher { return &funcWatcher{fn: fn} }

// watcherSet is a set of watchers kept in order of first registration, so that delivery order is
// deterministic (Java's HashSet order is not, so any fixed order is as faithful as another).
type watcherSet []Watcher

func (s watcherSet) add(w Watcher) watcherSet {
	if slices.Contains(s, w) {
		return s
	}
	return append(s, w)
}

// watchTable maps a path to its watchers, one of ZKWatchManager's five maps.
type watchTable map[string]watcherSet

func (t watchTable) add(path string, w Watcher) { t[path] = t[path].add(w) }

// paths returns the table's paths sorted, for SetWatches and for state events.
func (t watchTable) paths() []string {
	keys := make([]string, 0, len(t))
	for path := range t { // determinism:ok the keys are sorted before use
		keys = append(keys, path)
	}
	slices.Sort(keys)
	return keys
}

// watchManager is ZKWatchManager: the client's record of the watches it has set.
type watchManager struct {
	data, exist, child, persistent, recursive watchTable
	defaultWatcher                            Watcher
	disableAutoWatchReset                     bool
	// goZookeeper switches materialize to go-zookeeper's rules (see GoZookeeper).
	goZookeeper bool
}

func (m *watchManager) table(kind watchKind) *watchTable {
	switch kind {
	case watchData:
		return &m.data
	case watchExist:
		return &m.exist
	case watchChild:
		return &m.child
	case watchPersistent:
		return &m.persistent
	case watchRecursive:
		return &m.recursive
	default:
		panic("client: unknown watch kind " + strconv.Itoa(int(kind)))
	}
}

func (m *watchManager) add(kind watchKind, path string, w Watcher) {
	t := m.table(kind)
	if *t == nil {
		*t = watchTable{}
	}
	t.add(path, w)
}

// empty reports whether no watch at all is registered.
func (m *watchManager) empty() bool {
	return len(m.data) == 0 && len(m.exist) == 0 && len(m.child) == 0 && len(m.persistent) == 0 && len(m.recursive) == 0
}

// watchKind names ZKWatchManager's five tables.
type watchKind uint8

const (
	watchData watchKind = iota
	watchExist
	watchChild
	watchPersistent
	watchRecursive
)

// resultSet collects the watchers an event goes to, each once, in order of insertion.
type resultSet struct {
	list watcherSet
	seen map[Watcher]struct{}
}

func (r *resultSet) add(ws watcherSet) {
	for _, w := range ws {
		if r.seen == nil {
			r.seen = map[Watcher]struct{}{}
		}
		if _, dup := r.seen[w]; !dup {
			r.seen[w] = struct{}{}
			r.list = append(r.list, w)
		}
	}
}

// materialize is ZKWatchManager.materialize: the watchers an event goes to. One-shot watches are
// removed as they are taken; persistent and recursive ones stay. A state change goes to the default
// watcher and to every registered watcher, and clears the one-shot watches when automatic watch
// reset is disabled and the new state is not SyncConnected. ok is false for an event type that
// Java's materialize refuses with a RuntimeException (the removal types, or an unknown one).
func (m *watchManager) materialize(state proto.KeeperState, typ proto.EventType, path string) (watchers []Watcher, ok bool) {
	if m.goZookeeper {
		return m.materializeGoZookeeper(typ, path), true
	}
	var r resultSet
	switch typ {
	case proto.EventNone:
		if m.defaultWatcher != nil {
			r.add(watcherSet{m.defaultWatcher})
		}
		clear := m.disableAutoWatchReset && state != proto.StateSyncConnected
		for _, kind := range []watchKind{watchData, watchExist, watchChild, watchPersistent, watchRecursive} {
			t := m.table(kind)
			for _, p := range t.paths() {
				r.add((*t)[p])
			}
			if clear && kind <= watchChild {
				*t = nil
			}
		}
		return r.list, true
	case proto.EventNodeDataChanged, proto.EventNodeCreated:
		r.add(m.take(watchData, path))
		r.add(m.take(watchExist, path))
	case proto.EventNodeChildrenChanged:
		r.add(m.take(watchChild, path))
	case proto.EventNodeDeleted:
		r.add(m.take(watchData, path))
		// Java keeps this "just in case" branch and logs that an exists watch fired for a delete.
		r.add(m.take(watchExist, path))
		r.add(m.take(watchChild, path))
	default:
		return nil, false
	}
	r.add(m.persistent[path])
	for p := path; p != ""; p = proto.ParentPath(p) {
		// PathParentIterator.forAll: the path itself, then each ancestor up to the root.
		r.add(m.recursive[p])
	}
	return r.list, true
}

// materializeGoZookeeper is go-zookeeper's delivery: sendEvent hands every event to the event
// callback (the default watcher), then notifyWatches empties the watch tables the event type
// consumes and tells their channels (the other watchers). State changes reach the callback only.
func (m *watchManager) materializeGoZookeeper(typ proto.EventType, path string) []Watcher {
	var r resultSet
	if m.defaultWatcher != nil {
		r.add(watcherSet{m.defaultWatcher})
	}
	var kinds []watchKind
	switch typ {
	case proto.EventNodeCreated:
		kinds = []watchKind{watchExist}
	case proto.EventNodeDataChanged:
		kinds = []watchKind{watchExist, watchData}
	case proto.EventNodeChildrenChanged:
		kinds = []watchKind{watchChild}
	case proto.EventNodeDeleted:
		kinds = []watchKind{watchExist, watchData, watchChild}
	}
	for _, kind := range kinds {
		r.add(m.take(kind, path))
	}
	return r.list
}

// take removes and returns the one-shot watchers of path in a table.
func (m *watchManager) take(kind watchKind, path string) watcherSet {
	t := m.table(kind)
	ws, ok := (*t)[path]
	if ok {
		delete(*t, path)
	}
	return ws
}

// watchRegistration is ZooKeeper.WatchRegistration and its subclasses: what a request adds to the
// watch tables when its reply arrives.
type watchRegistration struct {
	watcher Watcher
	path    string
	// kind is the table for an OK reply. An exists registration (watchExist) adds to the data
	// table on OK and to the exist table on NONODE; persistent and recursive registrations (addWatch)
	// also register on NONODE.
	kind watchKind
}

// register is WatchRegistration.register(rc).
func (r *watchRegistration) register(m *watchManager, rc proto.Code) {
	switch {
	case r.kind == watchExist && rc == proto.OK:
		m.add(watchData, r.path, r.watcher)
	case r.kind == watchExist && rc == proto.NoNode:
		m.add(watchExist, r.path, r.watcher)
	case rc == proto.OK, rc == proto.NoNode && (r.kind == watchPersistent || r.kind == watchRecursive):
		m.add(r.kind, r.path, r.watcher)
	}
}

// watchDeregistration is WatchDeregistration: the local half of checkWatches / removeWatches.
type watchDeregistration struct {
	path        string
	watcher     Watcher // nil: every watcher (removeAllWatches)
	watcherType proto.WatcherType
	local       bool
}

// removedWatchers are the watchers a removal took, by the event type they are told with.
type removedWatchers struct {
	typ      proto.EventType
	watchers watcherSet
}

// unregister is ZKWatchManager.removeWatcher(path, watcher, type, local, rc). It returns the removed
// watchers grouped by event type (data, child, persistent, in that order; Java iterates a HashMap)
// and the code the request finishes with: rc itself, or NOWATCHER when there was nothing to remove.
func (m *watchManager) unregister(d *watchDeregistration, rc proto.Code) ([]removedWatchers, proto.Code) {
	if !m.contains(d) {
		return nil, proto.NoWatcher
	}
	var kinds [3][]watchKind // data, child, persistent removal events
	switch d.watcherType {
	case proto.WatcherChildren:
		kinds[1] = []watchKind{watchChild}
	case proto.WatcherData:
		kinds[0] = []watchKind{watchData, watchExist}
	default: // proto.WatcherAny
		kinds = [3][]watchKind{{watchData, watchExist}, {watchChild}, {watchPersistent, watchRecursive}}
	}
	if !d.local && rc != proto.OK {
		// removeWatches throws KeeperException.create(rc) before touching anything.
		return nil, rc
	}
	types := [3]proto.EventType{proto.EventDataWatchRemoved, proto.EventChildWatchRemoved, proto.EventPersistentWatchRemoved}
	var out []removedWatchers
	removed := false
	for i, list := range kinds {
		group := removedWatchers{typ: types[i]}
		for _, kind := range list {
			ws, ok := m.removeFrom(kind, d)
			removed = removed || ok
			for _, w := range ws {
				group.watchers = group.watchers.add(w)
			}
		}
		if len(group.watchers) > 0 {
			out = append(out, group)
		}
	}
	if !removed {
		return nil, proto.NoWatcher
	}
	return out, rc
}

// removeFrom removes d's watcher (or all watchers) of d.path from one table.
func (m *watchManager) removeFrom(kind watchKind, d *watchDeregistration) (watcherSet, bool) {
	t := m.table(kind)
	ws, ok := (*t)[d.path]
	if !ok {
		return nil, false
	}
	if d.watcher == nil {
		delete(*t, d.path)
		return ws, true
	}
	i := slices.Index(ws, d.watcher)
	if i < 0 {
		return nil, false
	}
	rest := slices.Delete(slices.Clone(ws), i, i+1)
	if len(rest) == 0 {
		delete(*t, d.path)
	} else {
		(*t)[d.path] = rest
	}
	return watcherSet{d.watcher}, true
}

// contains is ZKWatchManager.containsWatcher. Note that Java checks the persistent tables for the
// Children and Data types too, although removal for those types never looks at them.
func (m *watchManager) contains(d *watchDeregistration) bool {
	var kinds []watchKind
	switch d.watcherType {
	case proto.WatcherChildren:
		kinds = []watchKind{watchChild, watchPersistent, watchRecursive}
	case proto.WatcherData:
		kinds = []watchKind{watchData, watchExist, watchPersistent, watchRecursive}
	default:
		kinds = []watchKind{watchChild, watchData, watchExist, watchPersistent, watchRecursive}
	}
	for _, kind := range kinds {
		ws := (*m.table(kind))[d.path]
		if (d.watcher == nil && len(ws) > 0) || (d.watcher != nil && slices.Contains(ws, d.watcher)) {
			return true
		}
	}
	return false
}

// watchLists returns the paths of each table, sorted, for SetWatches.
func (m *watchManager) watchLists() [5][]string {
	var lists [5][]string
	for kind := watchData; kind <= watchRecursive; kind++ {
		lists[kind] = m.table(kind).paths()
	}
	return lists
}
