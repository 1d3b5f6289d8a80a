package datatree

import (
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// AddWatch serves addWatch (3.6+): a persistent or persistent-recursive
// watch on path, registered in both the data and the child watch manager
// (DataTree.addWatch). The path need not exist and is not validated, and no
// ACL applies. An unknown mode makes Java's WatcherMode.fromZooDef throw,
// which the server answers with MarshallingError.
//
// A persistent watch fires NodeCreated, NodeDeleted, NodeDataChanged and
// NodeChildrenChanged for its own path and stays; a recursive one fires
// NodeCreated, NodeDeleted and NodeDataChanged for its path and every
// descendant, never NodeChildrenChanged, and stays. A later one-shot watch by
// the same watcher on the same path turns it back into a one-shot watch.
func (t *Tree) AddWatch(path string, mode proto.AddWatchMode, w Watcher) error {
	watchMode, ok := watchModeFromAddWatch(mode)
	if !ok {
		return proto.MarshallingError
	}
	t.dataWatches.add(path, w, watchMode)
	t.childWatches.add(path, w, watchMode)
	return nil
}

// CheckWatches serves checkWatches (DataTree.containsWatcher): nil if a
// watch of the given type is found, proto.NoWatcher if not,
// proto.MarshallingError for an unknown type or a path without '/' (on which
// 3.8.0's WatchManager.containsWatcher throws). Note 3.8.0's quirk, kept
// here: a watch by any watcher on exactly path counts, not only w's.
func (t *Tree) CheckWatches(path string, typ proto.WatcherType, w Watcher) error {
	managers, ok := t.managersFor(typ)
	if !ok {
		return proto.MarshallingError
	}
	found := false
	for _, m := range managers {
		contains, err := m.contains(path, w)
		if err != nil {
			return proto.MarshallingError
		}
		found = found || contains
	}
	if !found {
		return proto.NoWatcher
	}
	return nil
}

// RemoveWatches serves removeWatches (DataTree.removeWatch): it removes w's
// watches of the given type on exactly path, of any mode, and returns
// proto.NoWatcher if there was none, proto.MarshallingError for an unknown
// type. The removal sends no notification.
func (t *Tree) RemoveWatches(path string, typ proto.WatcherType, w Watcher) error {
	managers, ok := t.managersFor(typ)
	if !ok {
		return proto.MarshallingError
	}
	removed := false
	for _, m := range managers {
		if m.remove(path, w) {
			removed = true
		}
	}
	if !removed {
		return proto.NoWatcher
	}
	return nil
}

// managersFor is the WatcherType switch of DataTree: children, data, or
// both (children first).
func (t *Tree) managersFor(typ proto.WatcherType) ([]*watchManager, bool) {
	switch typ {
	case proto.WatcherChildren:
		return []*watchManager{t.childWatches}, true
	case proto.WatcherData:
		return []*watchManager{t.dataWatches}, true
	case proto.WatcherAny:
		return []*watchManager{t.childWatches, t.dataWatches}, true
	default:
		return nil, false
	}
}

// RemoveWatcher drops every watch of w, as DataTree.removeCnxn does when its
// connection closes.
func (t *Tree) RemoveWatcher(w Watcher) {
	t.dataWatches.removeWatcher(w)
	t.childWatches.removeWatcher(w)
}

// SetWatches is DataTree.setWatches, which serves setWatches and
// setWatches2 for a reconnecting client. For each data watch it notifies at
// once NodeDeleted if the node is gone or NodeDataChanged if its mzxid is
// after relativeZxid, else re-registers it; for each exist watch it notifies
// NodeCreated if the node exists (whatever its czxid), else re-registers it;
// for each child watch NodeDeleted if the node is gone or
// NodeChildrenChanged if its pzxid is after relativeZxid, else re-registers
// it; persistent and recursive watches are re-registered as AddWatch does.
// The notifications go straight to w, in list order.
func (t *Tree) SetWatches(relativeZxid int64, data, exist, child, persistent, recursive []string, w Watcher) {
	notify := func(typ proto.EventType, path string) {
		w.Process(proto.WatcherEvent{Type: typ, State: proto.StateSyncConnected, Path: path}, NotificationZxid)
	}
	for _, path := range data {
		switch n := t.nodes.get(path); {
		case n == nil:
			notify(proto.EventNodeDeleted, path)
		case n.stat.Mzxid > relativeZxid:
			notify(proto.EventNodeDataChanged, path)
		default:
			t.dataWatches.add(path, w, modeStandard)
		}
	}
	for _, path := range exist {
		if t.nodes.get(path) != nil {
			notify(proto.EventNodeCreated, path)
		} else {
			t.dataWatches.add(path, w, modeStandard)
		}
	}
	for _, path := range child {
		switch n := t.nodes.get(path); {
		case n == nil:
			notify(proto.EventNodeDeleted, path)
		case n.stat.Pzxid > relativeZxid:
			notify(proto.EventNodeChildrenChanged, path)
		default:
			t.childWatches.add(path, w, modeStandard)
		}
	}
	for _, path := range persistent {
		t.childWatches.add(path, w, modePersistent)
		t.dataWatches.add(path, w, modePersistent)
	}
	for _, path := range recursive {
		t.childWatches.add(path, w, modePersistentRecursive)
		t.dataWatches.add(path, w, modePersistentRecursive)
	}
}
