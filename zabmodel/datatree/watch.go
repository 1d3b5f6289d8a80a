package datatree

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Watcher receives watch notifications: the server's per-connection object
// (ServerCnxn in Java). Watchers are compared as interface values, so the
// server passes one comparable value per connection, normally a pointer.
//
// Process is called synchronously, from inside the Tree call that fires the
// watch (an Apply, a SetWatches), before that call returns; this is how a
// notification reaches a client before the reply to the request that caused
// it. zxid is what the server puts in the notification's ReplyHeader: 3.8.0's
// NIOServerCnxn.process always sends NotificationZxid (-1).
type Watcher interface {
	Process(event proto.WatcherEvent, zxid int64)
}

// NotificationZxid is the ReplyHeader zxid of every notification in 3.8.0.
const NotificationZxid int64 = -1

// ReadCheckedWatcher is implemented by watchers that stand for a client
// connection with identities. An event fired by a change to a node reaches
// such a watcher only if its identities may READ the node (for NodeCreated,
// NodeDeleted and NodeDataChanged) or the node's parent (for
// NodeChildrenChanged), as NIOServerCnxn.process(event, znodeAcl) checks
// since the fix for CVE-2024-23944 (3.8.4, and Debian's 3.8.0-11+deb12u2,
// the reference server). Without the check, a client could learn of changes
// to nodes it cannot read. The events a SetWatches answers at once carry no
// ACL and are not filtered, as in Java. Watchers without the method get
// every event.
type ReadCheckedWatcher interface {
	Watcher
	WatchAuth() []proto.ID
}

// StaleWatcher is implemented by watchers that can tell they are closed, as a
// ServerCnxn does with isStale: the watch managers ignore a watch added for a
// stale watcher (WatchManager.isDeadWatcher).
type StaleWatcher interface {
	IsStale() bool
}

// watchMode is WatcherMode.
type watchMode int

const (
	modeStandard watchMode = iota
	modePersistent
	modePersistentRecursive
)

func (m watchMode) persistent() bool { return m != modeStandard }
func (m watchMode) recursive() bool  { return m == modePersistentRecursive }

// watchModeFromAddWatch is WatcherMode.fromZooDef.
func watchModeFromAddWatch(mode proto.AddWatchMode) (watchMode, bool) {
	switch mode {
	case proto.AddWatchPersistent:
		return modePersistent, true
	case proto.AddWatchPersistentRecursive:
		return modePersistentRecursive, true
	default:
		return modeStandard, false
	}
}

type watchKey struct {
	watcher Watcher
	path    string
}

// watchManager is WatchManager, the default IWatchManager of 3.8.0; a tree
// has one for data watches and one for child watches. Where Java uses
// HashSets, watchers of a path are kept in registration order and the
// watchers an event reaches are notified in the order they were collected:
// the event's path first, then its ancestors up to "/", each in registration
// order, each watcher once.
type watchManager struct {
	table     map[string]*orderedSet[Watcher]
	paths     map[Watcher]*orderedSet[string]
	modes     map[watchKey]watchMode
	recursive int
}

func newWatchManager() *watchManager {
	return &watchManager{
		table: make(map[string]*orderedSet[Watcher]),
		paths: make(map[Watcher]*orderedSet[string]),
		modes: make(map[watchKey]watchMode),
	}
}

func requireComparable(w Watcher) {
	if t := reflect.TypeOf(w); t == nil || !t.Comparable() {
		panic(fmt.Sprintf("datatree: watcher of type %v is not comparable; pass a pointer", t))
	}
}

// add is WatchManager.addWatch: it registers w on path with mode, replacing
// any earlier mode of w on path (a standard watch turns a persistent one back
// into a one-shot watch).
func (m *watchManager) add(path string, w Watcher, mode watchMode) bool {
	requireComparable(w)
	if stale, ok := w.(StaleWatcher); ok && stale.IsStale() {
		return false
	}
	list := m.table[path]
	if list == nil {
		list = newOrderedSet[Watcher]()
		m.table[path] = list
	}
	list.add(w)
	paths := m.paths[w]
	if paths == nil {
		paths = newOrderedSet[string]()
		m.paths[w] = paths
	}
	m.setMode(w, path, mode)
	return paths.add(path)
}

// setMode is WatcherModeManager.setWatcherMode, which also counts recursive
// watches so that triggers can skip the ancestor walk when there are none.
func (m *watchManager) setMode(w Watcher, path string, mode watchMode) {
	key := watchKey{w, path}
	old, ok := m.modes[key]
	if !ok {
		old = modeStandard
	}
	if mode == modeStandard {
		delete(m.modes, key)
	} else {
		m.modes[key] = mode
	}
	if old.recursive() != mode.recursive() {
		if mode.recursive() {
			m.recursive++
		} else {
			m.recursive--
		}
	}
}

func (m *watchManager) mode(w Watcher, path string) watchMode {
	if mode, ok := m.modes[watchKey{w, path}]; ok {
		return mode
	}
	return modeStandard
}

// removeWatcher drops every watch of w, as when its connection closes.
func (m *watchManager) removeWatcher(w Watcher) {
	paths := m.paths[w]
	if paths == nil {
		return
	}
	delete(m.paths, w)
	for _, path := range paths.keys() {
		if list := m.table[path]; list != nil {
			list.remove(w)
			if list.len() == 0 {
				delete(m.table, path)
			}
		}
		m.setMode(w, path, modeStandard)
	}
}

// ancestry is PathParentIterator: path and, when recursive watches exist,
// its ancestors up to "/" (forAll; forPathOnly otherwise). Java's next()
// computes the following path before returning the current one and throws
// StringIndexOutOfBoundsException on a path without '/', so such a path
// yields an error before any element; "" yields nothing.
func (m *watchManager) ancestry(path string) ([]string, error) {
	var out []string
	maxLevel := 0
	if m.recursive > 0 {
		maxLevel = len(path) + 1 // more levels than path can have
	}
	for level := -1; path != "" && level < maxLevel; level++ {
		current := path
		if path == "/" {
			path = ""
		} else {
			i := strings.LastIndexByte(path, '/')
			if i < 0 {
				return nil, fmt.Errorf("datatree: watch path %q has no '/'", current)
			}
			path = path[:i]
			if path == "" {
				path = "/"
			}
		}
		out = append(out, current)
	}
	return out, nil
}

// trigger is WatchManager.triggerWatch: it collects the watchers that an
// event of type t on path reaches, removes the one-shot ones, and notifies
// every collected watcher that is not in suppress. A standard or persistent
// watch fires only on its own path; a recursive one fires for the path and
// every descendant, for every type but NodeChildrenChanged. It returns the
// collected watchers (suppressed ones included), or nil if there were none.
// acl is the ACL that a ReadCheckedWatcher must be able to read for the
// event to reach it.
func (m *watchManager) trigger(path string, t proto.EventType, acl []proto.ACL, suppress *orderedSet[Watcher]) *orderedSet[Watcher] {
	if len(m.table) == 0 {
		return nil // the common case, and free of allocations
	}
	levels, err := m.ancestry(path)
	if err != nil {
		panic(fmt.Sprintf("datatree: broken invariant: event on a node path without '/': %v", err))
	}
	collected := newOrderedSet[Watcher]()
	for level, localPath := range levels {
		list := m.table[localPath]
		if list == nil {
			continue
		}
		for _, w := range list.keys() {
			mode := m.mode(w, localPath)
			switch {
			case mode.recursive():
				if t != proto.EventNodeChildrenChanged {
					collected.add(w)
				}
			case level == 0:
				collected.add(w)
				if !mode.persistent() {
					list.remove(w)
					if paths := m.paths[w]; paths != nil {
						paths.remove(localPath)
					}
				}
			}
		}
		if list.len() == 0 {
			delete(m.table, localPath)
		}
	}
	if collected.len() == 0 {
		return nil
	}
	event := proto.WatcherEvent{Type: t, State: proto.StateSyncConnected, Path: path}
	for _, w := range collected.keys() {
		if suppress != nil && suppress.contains(w) {
			continue
		}
		if rw, ok := w.(ReadCheckedWatcher); ok && CheckACL(acl, proto.PermRead, rw.WatchAuth()) != nil {
			continue // filtered by ACL, and still counted as collected
		}
		w.Process(event, NotificationZxid)
	}
	return collected
}

// contains is WatchManager.containsWatcher as 3.8.0 has it: at the path
// itself it reports true if any watcher at all watches the path, not only w
// (a known quirk), and a path without '/' makes it throw, which the server
// answers with MarshallingError.
func (m *watchManager) contains(path string, w Watcher) (bool, error) {
	mode := m.mode(w, path)
	levels, err := m.ancestry(path)
	if err != nil {
		return false, err
	}
	for level, localPath := range levels {
		if level == 0 && m.table[localPath] != nil {
			return true, nil
		}
		if mode.recursive() {
			return true, nil
		}
	}
	return false, nil
}

// remove is WatchManager.removeWatcher(path, watcher): it drops w's watch on
// exactly path, whatever its mode.
func (m *watchManager) remove(path string, w Watcher) bool {
	paths := m.paths[w]
	if paths == nil || !paths.remove(path) {
		return false
	}
	list := m.table[path]
	if list == nil || !list.remove(w) {
		return false
	}
	if list.len() == 0 {
		delete(m.table, path)
	}
	m.setMode(w, path, modeStandard)
	return true
}

// size counts watches as WatchManager.size: one per (path, watcher).
func (m *watchManager) size() int {
	n := 0
	for _, list := range m.table { // determinism:ok a sum, order-free
		n += list.len()
	}
	return n
}
