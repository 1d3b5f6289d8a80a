package checkers

import (
	"slices"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// watchIndex lists, for every (path, event type), the zxids of the committed changes that trigger
// that event on that path, in zxid order. A multi that changes a path twice lists its zxid twice.
type watchIndex struct {
	zxids map[pathEvent][]int64
	last  int64
}

type pathEvent struct {
	path  string
	event proto.EventType
}

// buildWatchIndex replays the committed log and records every watch trigger. Transactions that
// fail to apply are skipped here; the sequential-consistency checker reports them.
func buildWatchIndex(h *History) *watchIndex {
	x := &watchIndex{zxids: map[pathEvent][]int64{}}
	tree := newRefTree()
	record := func(c change) {
		key := pathEvent{c.Path, c.Event}
		x.zxids[key] = append(x.zxids[key], c.Zxid)
	}
	for i := range h.Committed {
		_ = tree.apply(&h.Committed[i].Entry, record)
	}
	x.last = tree.lastZxid
	return x
}

// nextAfter returns the first zxid above after at which event happens on path, or 0.
func (x *watchIndex) nextAfter(path string, event proto.EventType, after int64) int64 {
	list := x.zxids[pathEvent{path, event}]
	i, _ := slices.BinarySearch(list, after+1)
	if i < len(list) {
		return list[i]
	}
	return 0
}

// firstAfter returns the first zxid above after at which any of events happens on path, or 0.
func (x *watchIndex) firstAfter(path string, after int64, events ...proto.EventType) int64 {
	var first int64
	for _, e := range events {
		if z := x.nextAfter(path, e, after); z != 0 && (first == 0 || z < first) {
			first = z
		}
	}
	return first
}

// at reports whether any of events happens on path at exactly zxid.
func (x *watchIndex) at(path string, zxid int64, events ...proto.EventType) bool {
	for _, e := range events {
		if _, found := slices.BinarySearch(x.zxids[pathEvent{path, e}], zxid); found {
			return true
		}
	}
	return false
}

// compatibleChanges returns the changes that can explain an event of type t. Besides the change
// of the same type, ZooKeeper's re-registration after a reconnect (DataTree.setWatches) fires
// NodeDataChanged and NodeChildrenChanged on a node re-created since, whose mzxid and pzxid are
// its create's.
func compatibleChanges(t proto.EventType) []proto.EventType {
	switch t {
	case proto.EventNodeDataChanged:
		return []proto.EventType{proto.EventNodeDataChanged, proto.EventNodeCreated}
	case proto.EventNodeChildrenChanged:
		return []proto.EventType{proto.EventNodeChildrenChanged, proto.EventNodeCreated}
	default:
		return []proto.EventType{t}
	}
}

// firstCreateSurviving returns the first create of path after after whose node is not deleted at
// or before horizon, or 0: the create an exist watch re-registered after a reconnect must report.
// A node created and deleted while the client was away leaves no trace setWatches can see.
func (x *watchIndex) firstCreateSurviving(path string, after, horizon int64) int64 {
	for c := x.nextAfter(path, proto.EventNodeCreated, after); c != 0; c = x.nextAfter(path, proto.EventNodeCreated, c) {
		d := x.nextAfter(path, proto.EventNodeDeleted, c)
		if d == 0 || d > horizon {
			return c
		}
	}
	return 0
}
