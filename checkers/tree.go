package checkers

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// refTree is the checkers' own replay of the committed log: the znode tree a ZooKeeper 3.8.0
// server holds after applying a prefix of it, written independently of the server under test so
// that it can judge it. It follows DataTree.processTxn: the stat bookkeeping (the persisted
// cversion that counts child creates, the pzxid a delete moves forward, the client view of
// cversion), closeSession deleting the session's ephemerals, and multi transactions.
type refTree struct {
	nodes      map[string]*refNode
	ephemerals map[int64]map[string]struct{}
	lastZxid   int64
}

type refNode struct {
	data     []byte
	stat     proto.StatPersisted
	children map[string]struct{}
}

// change is one watch trigger a transaction causes, as DataTree fires them: NodeCreated and
// NodeDeleted on a created or deleted node, NodeDataChanged on setData, and NodeChildrenChanged on
// the parent of a created or deleted node.
type change struct {
	Zxid  int64
	Path  string
	Event proto.EventType
}

// The reserved subtree, whose content (the quorum configuration) the server writes without a
// committed transaction; the checkers never judge reads under it.
const reservedPath = "/zookeeper"

func isReserved(path string) bool {
	return path == reservedPath || len(path) > len(reservedPath) && path[:len(reservedPath)+1] == reservedPath+"/"
}

// newRefTree returns the tree a fresh 3.8.0 server starts with: "/", "/zookeeper",
// "/zookeeper/quota" and "/zookeeper/config" (whose ACL version DataTree sets to -1).
func newRefTree() *refTree {
	t := &refTree{nodes: map[string]*refNode{}, ephemerals: map[int64]map[string]struct{}{}}
	t.nodes["/"] = &refNode{data: []byte{}, children: map[string]struct{}{"zookeeper": {}}}
	t.nodes["/zookeeper"] = &refNode{children: map[string]struct{}{"quota": {}, "config": {}}}
	t.nodes["/zookeeper/quota"] = &refNode{children: map[string]struct{}{}}
	config := &refNode{data: []byte{}, children: map[string]struct{}{}}
	config.stat.Aversion = -1
	t.nodes["/zookeeper/config"] = config
	return t
}

// clientStat returns the stat a client sees for a node, as DataNode.copyStat computes it.
func (n *refNode) clientStat() proto.Stat {
	return n.stat.ClientStat(int32(len(n.data)), int32(len(n.children)))
}

// sortedChildren returns the node's child names in order.
func (n *refNode) sortedChildren() []string {
	out := make([]string, 0, len(n.children))
	for name := range n.children { // determinism:ok the names are sorted before use
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// apply applies one committed transaction and reports the watch triggers it causes through emit.
// A transaction that fails to apply (a create whose node exists, a delete of a missing node) is
// reported as an error with the code DataTree would record; the tree keeps whatever part of it
// applied, as DataTree does.
func (t *refTree) apply(entry *proto.TxnEntry, emit func(change)) error {
	h := &entry.Header
	if h.Zxid > t.lastZxid {
		t.lastZxid = h.Zxid
	}
	switch h.Type {
	case proto.OpCreateSession, proto.OpError:
		return nil
	case proto.OpCloseSession:
		t.closeSession(h, entry.Txn, emit)
		return nil
	case proto.OpMulti:
		return t.applyMulti(h, entry.Txn, emit)
	default:
		return t.applyOne(h, h.Type, entry.Txn, emit)
	}
}

// applyOne applies a single transaction body of type op (also a multi's sub-transaction).
func (t *refTree) applyOne(h *proto.TxnHeader, op proto.OpCode, body proto.Record, emit func(change)) error {
	var code proto.Code
	switch txn := body.(type) {
	case *proto.CreateTxn:
		owner := int64(0)
		if txn.Ephemeral {
			owner = h.ClientID
		}
		code = t.create(h, txn.Path, txn.Data, owner, txn.ParentCVersion, emit)
	case *proto.CreateContainerTxn:
		code = t.create(h, txn.Path, txn.Data, proto.ContainerEphemeralOwner, txn.ParentCVersion, emit)
	case *proto.CreateTTLTxn:
		// A TTL node's owner field encodes its time to live, which clients see as 0; the reference
		// tree stores 0 so that it never counts as some session's ephemeral.
		code = t.create(h, txn.Path, txn.Data, 0, txn.ParentCVersion, emit)
	case *proto.DeleteTxn:
		code = t.delete(h.Zxid, txn.Path, emit)
	case *proto.SetDataTxn:
		code = t.setData(h, txn, emit)
	case *proto.SetACLTxn:
		if n := t.nodes[txn.Path]; n != nil {
			n.stat.Aversion = txn.Version
		} else {
			code = proto.NoNode
		}
	case *proto.CheckVersionTxn, *proto.ErrorTxn:
	default:
		return fmt.Errorf("txn %s: %v with body %T cannot be applied", hexID(h.Zxid), op, body)
	}
	if code != proto.OK {
		return fmt.Errorf("txn %s of session %s: %v failed to apply with %s", hexID(h.Zxid), hexID(h.ClientID), describeTxnBody(op, body), code.String())
	}
	return nil
}

func (t *refTree) create(h *proto.TxnHeader, path string, data []byte, owner int64, parentCVersion int32, emit func(change)) proto.Code {
	parentPath := proto.ParentPath(path)
	parent := t.nodes[parentPath]
	if parent == nil {
		return proto.NoNode
	}
	name := proto.BaseName(path)
	if _, exists := parent.children[name]; exists {
		return proto.NodeExists
	}
	if parentCVersion == -1 {
		parentCVersion = parent.stat.Cversion + 1
	}
	if parentCVersion > parent.stat.Cversion {
		parent.stat.Cversion = parentCVersion
		parent.stat.Pzxid = h.Zxid
	}
	parent.children[name] = struct{}{}
	t.nodes[path] = &refNode{
		data:     data,
		children: map[string]struct{}{},
		stat: proto.StatPersisted{
			Czxid: h.Zxid, Mzxid: h.Zxid, Pzxid: h.Zxid, Ctime: h.Time, Mtime: h.Time, EphemeralOwner: owner,
		},
	}
	if owner != 0 && owner != proto.ContainerEphemeralOwner {
		set := t.ephemerals[owner]
		if set == nil {
			set = map[string]struct{}{}
			t.ephemerals[owner] = set
		}
		set[path] = struct{}{}
	}
	emit(change{Zxid: h.Zxid, Path: path, Event: proto.EventNodeCreated})
	emit(change{Zxid: h.Zxid, Path: parentPath, Event: proto.EventNodeChildrenChanged})
	return proto.OK
}

// delete follows DataTree.deleteNode, which moves the parent's pzxid forward before it finds out
// whether the child exists.
func (t *refTree) delete(zxid int64, path string, emit func(change)) proto.Code {
	parentPath := proto.ParentPath(path)
	parent := t.nodes[parentPath]
	if parent == nil {
		return proto.NoNode
	}
	delete(parent.children, proto.BaseName(path))
	if zxid > parent.stat.Pzxid {
		parent.stat.Pzxid = zxid
	}
	n := t.nodes[path]
	if n == nil {
		return proto.NoNode
	}
	delete(t.nodes, path)
	if set := t.ephemerals[n.stat.EphemeralOwner]; set != nil {
		delete(set, path)
	}
	emit(change{Zxid: zxid, Path: path, Event: proto.EventNodeDeleted})
	emit(change{Zxid: zxid, Path: parentPath, Event: proto.EventNodeChildrenChanged})
	return proto.OK
}

func (t *refTree) setData(h *proto.TxnHeader, txn *proto.SetDataTxn, emit func(change)) proto.Code {
	n := t.nodes[txn.Path]
	if n == nil {
		return proto.NoNode
	}
	n.data = txn.Data
	n.stat.Mtime = h.Time
	n.stat.Mzxid = h.Zxid
	n.stat.Version = txn.Version
	emit(change{Zxid: h.Zxid, Path: txn.Path, Event: proto.EventNodeDataChanged})
	return proto.OK
}

// closeSession follows DataTree.killSession: it deletes the paths the txn lists (ignoring missing
// ones), then every other ephemeral the session still owns locally.
func (t *refTree) closeSession(h *proto.TxnHeader, body proto.Record, emit func(change)) {
	if txn, ok := body.(*proto.CloseSessionTxn); ok {
		for _, path := range txn.PathsToDelete {
			_ = t.delete(h.Zxid, path, emit) // DataTree ignores NoNode here.
		}
	}
	for _, path := range t.ownedBy(h.ClientID) {
		_ = t.delete(h.Zxid, path, emit)
	}
	delete(t.ephemerals, h.ClientID)
}

// ownedBy returns the paths of the session's ephemeral nodes, sorted.
func (t *refTree) ownedBy(session int64) []string {
	set := t.ephemerals[session]
	out := make([]string, 0, len(set))
	for path := range set { // determinism:ok the paths are sorted before use
		out = append(out, path)
	}
	slices.Sort(out)
	return out
}

// applyMulti follows DataTree.processTxn for multi: if any sub-transaction is an error (the multi
// failed in PrepRequestProcessor), none applies; otherwise each applies in order with the multi's
// header.
func (t *refTree) applyMulti(h *proto.TxnHeader, body proto.Record, emit func(change)) error {
	multi, ok := body.(*proto.MultiTxn)
	if !ok {
		return fmt.Errorf("txn %s: multi with body %T", hexID(h.Zxid), body)
	}
	subs := make([]proto.Record, len(multi.Txns))
	for i := range multi.Txns {
		if multi.Txns[i].Type == proto.OpError {
			return nil
		}
		rec, err := multi.Txns[i].Body()
		if err != nil {
			return fmt.Errorf("txn %s: %w", hexID(h.Zxid), err)
		}
		subs[i] = rec
	}
	// Like DataTree, a sub-transaction that fails to apply does not stop the ones after it; the
	// first failure is the one reported.
	var first error
	for i, rec := range subs {
		if err := t.applyOne(h, multi.Txns[i].Type, rec, emit); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// describeTxnBody renders a txn body for explanations, such as "create /a".
func describeTxnBody(op proto.OpCode, body proto.Record) string {
	if body == nil {
		return op.String()
	}
	return proto.Describe(body)
}

// txnPath returns the path a single-path txn body acts on, or "".
func txnPath(body proto.Record) string {
	switch txn := body.(type) {
	case *proto.CreateTxn:
		return txn.Path
	case *proto.CreateContainerTxn:
		return txn.Path
	case *proto.CreateTTLTxn:
		return txn.Path
	case *proto.DeleteTxn:
		return txn.Path
	case *proto.SetDataTxn:
		return txn.Path
	case *proto.SetACLTxn:
		return txn.Path
	case *proto.CheckVersionTxn:
		return txn.Path
	default:
		return ""
	}
}
