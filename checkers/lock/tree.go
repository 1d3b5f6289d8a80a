package lock

import (
	"slices"
	"strings"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// node is the life of one lock node, replayed from the committed log.
type node struct {
	path      string
	lock      string
	czxid     int64
	created   clock.Time
	owner     int64 // the session whose create made it
	ephemeral bool
	// generation is the czxid of the queue's parent when the node was created (0 if the log does
	// not show the parent's create). The parent of a queued lock is a container, which the server
	// deletes once it is empty; made again, it numbers its children from 0 again, so the queue's
	// order is by generation, then sequence number.
	generation int64
	// deleted is the zxid that deleted it, 0 while it lives; deletedAt its commit time, byClose
	// says the owner's closeSession deleted it.
	deleted   int64
	deletedAt clock.Time
	byClose   bool
	// deletedBy is the session whose delete removed it (0 for a closeSession, a multi, or the
	// container manager).
	deletedBy int64
}

func (n *node) aliveAt(t clock.Time) bool { return n.deleted == 0 || n.deletedAt > t }

// change is one committed change that fires watches on path: a create or delete of a child
// (child), or a delete or setData of the node itself (data).
type change struct {
	zxid  int64
	at    clock.Time
	child bool
	// gone says the node itself was deleted, which also fires a child watch on it.
	gone bool
	what string // for messages: "the delete of /locks/m/x" and the like
}

// closeInfo is a session's first committed closeSession.
type closeInfo struct {
	zxid int64
	at   clock.Time
}

// lockTree is the checkers' replay of the committed log, restricted to the locks' nodes: each lock
// node's life, the changes that fire watches on lock paths, and the sessions' ends. It follows
// DataTree.processTxn for what matters here: creates (of containers too: the recipes make a lock's
// parent as one), deletes (also the deleteContainer of the leader's container manager, which no
// session issued, when it removes an empty parent), closeSession deleting the session's ephemeral
// nodes, and multi transactions (all or nothing).
type lockTree struct {
	locks   []Lock
	nodes   []*node          // in czxid order
	byToken map[int64]*node  // czxid to node
	byPath  map[string]*node // path to the last node created there
	alive   map[string]*node // path to the node that lives there now
	owned   map[int64][]*node
	changes map[string][]change
	closes  map[int64]closeInfo
	parents map[string]int64 // a queued lock's path to the czxid of its live parent node
}

func newLockTree(locks []Lock, log []checkers.CommittedTxn) *lockTree {
	t := &lockTree{locks: locks, byToken: map[int64]*node{}, byPath: map[string]*node{}, alive: map[string]*node{},
		owned: map[int64][]*node{}, changes: map[string][]change{}, closes: map[int64]closeInfo{}, parents: map[string]int64{}}
	for i := range log {
		t.apply(&log[i].Entry, log[i].Time)
	}
	return t
}

// lockFor returns the lock a path is a node of, if any.
func (t *lockTree) lockFor(path string) (string, bool) {
	for _, l := range t.locks {
		if l.Kind.queued() && strings.HasPrefix(path, l.Path+"/") && !strings.Contains(path[len(l.Path)+1:], "/") {
			return l.Path, true
		}
		if !l.Kind.queued() && path == l.Path {
			return l.Path, true
		}
	}
	return "", false
}

// watched reports whether changes at path may fire a lock watch: a lock node, or a queue's parent.
func (t *lockTree) watched(path string) bool {
	if _, ok := t.lockFor(path); ok {
		return true
	}
	return slices.ContainsFunc(t.locks, func(l Lock) bool { return l.Path == path })
}

// isQueue reports whether path is the parent of a queued lock.
func (t *lockTree) isQueue(path string) bool {
	return slices.ContainsFunc(t.locks, func(l Lock) bool { return l.Kind.queued() && l.Path == path })
}

func (t *lockTree) apply(e *proto.TxnEntry, at clock.Time) {
	h := e.Header
	switch body := e.Txn.(type) {
	case *proto.CreateTxn:
		t.create(body.Path, body.Ephemeral, h, at)
	case *proto.CreateContainerTxn:
		t.create(body.Path, false, h, at)
	case *proto.DeleteTxn:
		t.delete(body.Path, h.Zxid, at, false)
		if n := t.byPath[body.Path]; n != nil && n.deleted == h.Zxid {
			n.deletedBy = h.ClientID
		}
	case *proto.SetDataTxn:
		t.record(body.Path, change{zxid: h.Zxid, at: at, what: "the setData of " + body.Path})
	case *proto.CloseSessionTxn:
		t.closeSession(h.ClientID, h.Zxid, at)
	case *proto.MultiTxn:
		t.multi(body, h, at)
	case nil:
		if h.Type == proto.OpCloseSession {
			t.closeSession(h.ClientID, h.Zxid, at)
		}
	}
}

func (t *lockTree) create(path string, ephemeral bool, h proto.TxnHeader, at clock.Time) {
	t.record(parentOf(path), change{zxid: h.Zxid, at: at, child: true, what: "the create of " + path})
	t.record(path, change{zxid: h.Zxid, at: at, what: "the create of " + path})
	if t.isQueue(path) {
		t.parents[path] = h.Zxid
	}
	lock, ok := t.lockFor(path)
	if !ok {
		return
	}
	n := &node{path: path, lock: lock, czxid: h.Zxid, created: at, owner: h.ClientID, ephemeral: ephemeral, generation: t.parents[lock]}
	t.nodes = append(t.nodes, n)
	t.byToken[n.czxid] = n
	t.byPath[path] = n
	t.alive[path] = n
	if ephemeral {
		t.owned[h.ClientID] = append(t.owned[h.ClientID], n)
	}
}

func (t *lockTree) delete(path string, zxid int64, at clock.Time, byClose bool) {
	t.record(parentOf(path), change{zxid: zxid, at: at, child: true, what: "the delete of " + path})
	t.record(path, change{zxid: zxid, at: at, gone: true, what: "the delete of " + path})
	delete(t.parents, path)
	n, ok := t.alive[path]
	if !ok {
		return
	}
	delete(t.alive, path)
	n.deleted, n.deletedAt, n.byClose = zxid, at, byClose
}

func (t *lockTree) closeSession(session, zxid int64, at clock.Time) {
	if _, seen := t.closes[session]; !seen {
		t.closes[session] = closeInfo{zxid: zxid, at: at}
	}
	for _, n := range t.owned[session] {
		if n.deleted == 0 {
			t.delete(n.path, zxid, at, true)
		}
	}
	delete(t.owned, session)
}

// multi applies a multi's creates and deletes, unless it failed (an error sub-txn), in which case
// DataTree applies nothing.
func (t *lockTree) multi(m *proto.MultiTxn, h proto.TxnHeader, at clock.Time) {
	var bodies []proto.Record
	for i := range m.Txns {
		body, err := m.Txns[i].Body()
		if err != nil {
			return
		}
		if _, failed := body.(*proto.ErrorTxn); failed {
			return
		}
		bodies = append(bodies, body)
	}
	for _, body := range bodies {
		switch b := body.(type) {
		case *proto.CreateTxn:
			t.create(b.Path, b.Ephemeral, h, at)
		case *proto.CreateContainerTxn:
			t.create(b.Path, false, h, at)
		case *proto.DeleteTxn:
			t.delete(b.Path, h.Zxid, at, false)
		case *proto.SetDataTxn:
			t.record(b.Path, change{zxid: h.Zxid, at: at, what: "the setData of " + b.Path})
		}
	}
}

func (t *lockTree) record(path string, c change) {
	if t.watched(path) {
		t.changes[path] = append(t.changes[path], c)
	}
}

// trigger returns the first committed change after zxid that fires a watch on path (a child watch
// if children), unless the session closed first, when the watch dies with it.
func (t *lockTree) trigger(path string, children bool, zxid, session int64) (change, bool) {
	list := t.changes[path]
	i, _ := slices.BinarySearchFunc(list, zxid+1, func(c change, z int64) int {
		switch {
		case c.zxid < z:
			return -1
		case c.zxid > z:
			return 1
		}
		return 0
	})
	for ; i < len(list); i++ {
		c := list[i]
		if c.child != children && !(children && c.gone) {
			continue
		}
		if end, closed := t.closes[session]; closed && end.zxid <= c.zxid {
			return change{}, false
		}
		return c, true
	}
	return change{}, false
}

// lowestAlive returns the first live node in the queue of a queued lock at the end of the log.
func (t *lockTree) lowestAlive(lock string) *node {
	var best *node
	for _, n := range t.nodes {
		if n.lock != lock || n.deleted != 0 {
			continue
		}
		if best == nil || queueBefore(n.generation, sequenceKey(n.path), best.generation, sequenceKey(best.path)) {
			best = n
		}
	}
	return best
}

// firstAliveAt returns the first node in the queue of a queued lock (or the node of a lock that
// is one node) alive at time at, or nil.
func (t *lockTree) firstAliveAt(lock string, at clock.Time) *node {
	var best *node
	for _, n := range t.nodes {
		if n.lock != lock || n.created > at || !n.aliveAt(at) {
			continue
		}
		if best == nil || queueBefore(n.generation, sequenceKey(n.path), best.generation, sequenceKey(best.path)) {
			best = n
		}
	}
	return best
}

// heldNode returns the node on which a leader's belief rests at time at, starting from the node it
// was granted on: while that node had been deleted by the holder's own session by then, and a node
// of the same session that replaced it was first in the queue when it was deleted, the
// replacement. LeaderLatch does this (Curator 5.x): a create that completes while the participant
// leads replaces its node (setNode deletes the one before), and when the new node is first,
// checkLeadership's owner check keeps it leading, with no new grant for anyone to see.
func (t *lockTree) heldNode(n *node, session int64, at clock.Time) *node {
	for n != nil && n.deleted != 0 && n.deletedAt <= at && !n.byClose && n.deletedBy == session {
		r := t.replacement(n)
		if r == nil || t.firstAliveAt(n.lock, n.deletedAt) != r {
			return n
		}
		n = r
	}
	return n
}

// replacement returns the node of n's session in n's lock created last before n's delete, after
// n: the one that setNode put in n's place, or nil.
func (t *lockTree) replacement(n *node) *node {
	var r *node
	for _, m := range t.nodes {
		if m != n && m.owner == n.owner && m.ephemeral && m.lock == n.lock && m.created >= n.created && m.created <= n.deletedAt && (r == nil || m.created > r.created) {
			r = m
		}
	}
	return r
}

// blockedByEndingSessions returns how much of [from, to) the first node of a lock was an ephemeral
// node that the close of its owner's session removed, rather than its owner's delete: a node no
// participant could remove, which blocked the lock until its session ended.
func (t *lockTree) blockedByEndingSessions(lock string, from, to clock.Time) clock.Duration {
	cuts := []clock.Time{from, to}
	for _, n := range t.nodes {
		if n.lock != lock {
			continue
		}
		if n.created > from && n.created < to {
			cuts = append(cuts, n.created)
		}
		if n.deleted != 0 && n.deletedAt > from && n.deletedAt < to {
			cuts = append(cuts, n.deletedAt)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var blocked clock.Duration
	for i := 0; i+1 < len(cuts); i++ {
		if n := t.firstAliveAt(lock, cuts[i]); n != nil && n.ephemeral && n.byClose {
			blocked += cuts[i+1].Sub(cuts[i])
		}
	}
	return blocked
}

// queueBefore reports whether a node of generation g1 with sequence number s1 comes before one of
// generation g2 with s2 in a queue whose parent may have been deleted and made again.
func queueBefore(g1, s1, g2, s2 int64) bool {
	if g1 != g2 {
		return g1 < g2
	}
	return s1 < s2
}

// generationOf returns the generation of the node a grant's token names (0 if unknown).
func (t *lockTree) generationOf(token int64) int64 {
	if n, ok := t.byToken[token]; ok {
		return n.generation
	}
	return 0
}

func parentOf(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "/"
	}
	return path[:i]
}

// sequenceKey is the sequence number a sequential create appended, or -1.
func sequenceKey(path string) int64 {
	name := path[strings.LastIndexByte(path, '/')+1:]
	if len(name) < 10 {
		return -1
	}
	var n int64
	for _, c := range name[len(name)-10:] {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
