package zabmodel_test

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// This file is the reference model of the state-machine test (statemachine_test.go): a znode tree
// with ZooKeeper 3.8's semantics, written from PrepRequestProcessor and DataTree in Java and
// deliberately independent of zabmodel/datatree, so that comparing the two can find a bug in either.
// It knows only what a client can observe: data, the Stat fields other than the times, children and
// ephemeral owners. Every write takes the zxid the ensemble's reply carried; the model cannot predict
// zxids, but once it has one it predicts czxid, mzxid and pzxid exactly.

// refFlaw is a deliberate mistake in the model, switched on only by the tests that show a wrong
// model is caught (a test that could not fail would prove nothing).
type refFlaw uint8

const (
	// flawSetDataKeepsVersion: the model forgets that setData bumps the node's version.
	flawSetDataKeepsVersion refFlaw = 1 << iota
	// flawMultiFailureReportsOK: the model reports OK, not RUNTIMEINCONSISTENCY, for the ops of a
	// failed multi that come after the failing op.
	flawMultiFailureReportsOK
)

// refNode is one znode.
type refNode struct {
	data           []byte
	czxid          int64
	mzxid          int64
	pzxid          int64
	version        int32
	cversion       int32 // child creates, as persisted (see stat)
	ephemeralOwner int64
	children       map[string]bool
}

// refModel is the tree, keyed by full path ("/" is the root).
type refModel struct {
	nodes map[string]*refNode
	flaws refFlaw
	// lastZxid is the zxid of the last write applied; every later write must carry a larger one.
	lastZxid int64
}

// refSystemChild is the root's child that the server creates itself (/zookeeper, with quota and
// config below it). The model knows it is there, for the root's numChildren, and never looks inside.
const refSystemChild = "zookeeper"

func newRefModel(flaws refFlaw) *refModel {
	root := &refNode{data: []byte{}, children: map[string]bool{refSystemChild: true}}
	return &refModel{nodes: map[string]*refNode{"/": root}, flaws: flaws}
}

// clone returns a deep copy, which a multi works on so that a failure can leave the model untouched.
func (m *refModel) clone() *refModel {
	out := &refModel{nodes: make(map[string]*refNode, len(m.nodes)), flaws: m.flaws, lastZxid: m.lastZxid}
	for path, n := range m.nodes { // determinism:ok copying a map; the order cannot matter
		c := *n
		c.data = slices.Clone(n.data)
		c.children = maps.Clone(n.children)
		out.nodes[path] = &c
	}
	return out
}

// paths returns every znode the model holds, sorted, without the server's own /zookeeper subtree.
func (m *refModel) paths() []string {
	return slices.Sorted(maps.Keys(m.nodes))
}

// parentOf splits a path into its parent's path and the child's name.
func parentOf(path string) (parent, name string) {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "/", path[i+1:]
	}
	return path[:i], path[i+1:]
}

func childPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}

// stat renders a node's Stat as the server reports it, times aside. The node keeps cversion as the
// server persists it, the number of child creates (which also names sequential children); a client
// sees DataNode.copyStat's translation to creates plus deletes, 2*cversion - numChildren, so that
// the root, with /zookeeper added without a create, shows -1.
func (n *refNode) stat() proto.Stat {
	children := int32(len(n.children))
	return proto.Stat{
		Czxid: n.czxid, Mzxid: n.mzxid, Pzxid: n.pzxid,
		Version: n.version, Cversion: 2*n.cversion - children, EphemeralOwner: n.ephemeralOwner,
		DataLength: int32(len(n.data)), NumChildren: children,
	}
}

// sortedChildren returns the node's children's names in byte order.
func (n *refNode) sortedChildren() []string { return slices.Sorted(maps.Keys(n.children)) }

// checkCreate is pRequest2TxnCreate's checks in their order: the parent must exist (NONODE), a
// sequential name takes the parent's cversion as a ten-digit suffix, the node must not exist
// (NODEEXISTS), and the parent must not be ephemeral (NOCHILDRENFOREPHEMERALS). It returns the path
// the create would make. It changes nothing.
func (m *refModel) checkCreate(path string, mode proto.CreateMode) (proto.Code, string) {
	parentPath, _ := parentOf(path)
	parent, ok := m.nodes[parentPath]
	if !ok {
		return proto.NoNode, ""
	}
	if mode.IsSequential() {
		path += fmt.Sprintf("%010d", parent.cversion)
	}
	if _, exists := m.nodes[path]; exists {
		return proto.NodeExists, ""
	}
	if parent.ephemeralOwner != 0 {
		return proto.NoChildrenForEphemerals, ""
	}
	return proto.OK, path
}

// applyCreate makes the node checkCreate accepted: the parent's cversion goes up by one and its
// pzxid becomes the create's zxid; the new node's three zxids are the create's.
func (m *refModel) applyCreate(path string, data []byte, mode proto.CreateMode, session, zxid int64) {
	parentPath, name := parentOf(path)
	parent := m.nodes[parentPath]
	parent.cversion++
	parent.pzxid = zxid
	parent.children[name] = true
	owner := int64(0)
	if mode.IsEphemeral() {
		owner = session
	}
	m.nodes[path] = &refNode{data: slices.Clone(data), czxid: zxid, mzxid: zxid, pzxid: zxid,
		ephemeralOwner: owner, children: map[string]bool{}}
}

// checkVersion is checkAndIncVersion: -1 matches any version.
func checkVersion(current, expected int32) bool { return expected == -1 || expected == current }

// checkDelete is the delete case of pRequest2Txn: NONODE (for the parent, then the node),
// BADVERSION, then NOTEMPTY.
func (m *refModel) checkDelete(path string, version int32) proto.Code {
	parentPath, _ := parentOf(path)
	if _, ok := m.nodes[parentPath]; !ok {
		return proto.NoNode
	}
	n, ok := m.nodes[path]
	switch {
	case !ok:
		return proto.NoNode
	case !checkVersion(n.version, version):
		return proto.BadVersion
	case len(n.children) > 0:
		return proto.NotEmpty
	}
	return proto.OK
}

// applyDelete removes the node. The parent's pzxid moves to the delete's zxid; its cversion does not
// change (DataTree.deleteNode in 3.8 only touches pzxid).
func (m *refModel) applyDelete(path string, zxid int64) {
	parentPath, name := parentOf(path)
	parent := m.nodes[parentPath]
	delete(parent.children, name)
	if zxid > parent.pzxid {
		parent.pzxid = zxid
	}
	delete(m.nodes, path)
}

// checkSetData is the setData case of pRequest2Txn: NONODE, then BADVERSION. The check op of a
// multi has the same two checks.
func (m *refModel) checkSetData(path string, version int32) proto.Code {
	n, ok := m.nodes[path]
	switch {
	case !ok:
		return proto.NoNode
	case !checkVersion(n.version, version):
		return proto.BadVersion
	}
	return proto.OK
}

// applySetData replaces the data, bumps the version and moves mzxid.
func (m *refModel) applySetData(path string, data []byte, zxid int64) {
	n := m.nodes[path]
	n.data = slices.Clone(data)
	n.mzxid = zxid
	if m.flaws&flawSetDataKeepsVersion == 0 {
		n.version++
	}
}

// closeSession removes every ephemeral node of the session, as killSession does with the
// closeSession's zxid, and returns how many it removed.
func (m *refModel) closeSession(session, zxid int64) int {
	removed := 0
	for _, path := range m.paths() {
		if n, ok := m.nodes[path]; ok && n.ephemeralOwner == session {
			m.applyDelete(path, zxid)
			removed++
		}
	}
	return removed
}

// refOp is one write op of a multi, in the model's terms.
type refOp struct {
	typ     proto.OpCode // OpCreate, OpDelete, OpSetData or OpCheck
	path    string
	data    []byte
	mode    proto.CreateMode
	version int32
}

func (o refOp) String() string {
	switch o.typ {
	case proto.OpCreate:
		return fmt.Sprintf("create %s %v %q", o.path, o.mode, o.data)
	case proto.OpSetData:
		return fmt.Sprintf("setData %s %q v%d", o.path, o.data, o.version)
	default:
		return fmt.Sprintf("%v %s v%d", o.typ, o.path, o.version)
	}
}

// refOpResult is what the model expects one op of a multi to report.
type refOpResult struct {
	typ  proto.OpCode
	err  proto.Code
	path string     // create: the path made
	stat proto.Stat // setData: the Stat after it
}

// step runs one op on m, which must be a scratch copy: it checks, and if the op passes, applies.
func (m *refModel) step(op refOp, session, zxid int64) refOpResult {
	switch op.typ {
	case proto.OpCreate:
		code, path := m.checkCreate(op.path, op.mode)
		if code == proto.OK {
			m.applyCreate(path, op.data, op.mode, session, zxid)
		}
		return refOpResult{typ: op.typ, err: code, path: path}
	case proto.OpDelete:
		code := m.checkDelete(op.path, op.version)
		if code == proto.OK {
			m.applyDelete(op.path, zxid)
		}
		return refOpResult{typ: op.typ, err: code}
	case proto.OpSetData:
		code := m.checkSetData(op.path, op.version)
		out := refOpResult{typ: op.typ, err: code}
		if code == proto.OK {
			m.applySetData(op.path, op.data, zxid)
			out.stat = m.nodes[op.path].stat()
		}
		return out
	case proto.OpCheck:
		return refOpResult{typ: op.typ, err: m.checkSetData(op.path, op.version)}
	}
	panic(fmt.Sprintf("refModel: op type %v is not a multi write", op.typ))
}

// multi runs ops all or nothing, as PrepRequestProcessor and DataTree.processTxn do: the ops are
// checked in order against the state the earlier ops left; if one fails, nothing is applied, the ops
// before it report OK, it reports its own code and the ops after it RUNTIMEINCONSISTENCY, each as an
// error result. It returns the results and the multi's code (the first error, or OK).
func (m *refModel) multi(ops []refOp, session, zxid int64) ([]refOpResult, proto.Code) {
	scratch := m.clone()
	results := make([]refOpResult, len(ops))
	for i, op := range ops {
		results[i] = scratch.step(op, session, zxid)
		if results[i].err == proto.OK {
			continue
		}
		failed := results[i].err
		for j := range results {
			switch {
			case j < i:
				results[j] = refOpResult{typ: proto.OpError, err: proto.OK}
			case j == i:
				results[j] = refOpResult{typ: proto.OpError, err: failed}
			case m.flaws&flawMultiFailureReportsOK != 0:
				results[j] = refOpResult{typ: proto.OpError, err: proto.OK}
			default:
				results[j] = refOpResult{typ: proto.OpError, err: proto.RuntimeInconsistency}
			}
		}
		return results, failed
	}
	m.nodes = scratch.nodes
	return results, proto.OK
}

// --- Comparing what a server said with what the model expects ---------------------------------------

// diffStat names every Stat field (times aside) that differs. Aversion is always 0: no ACL changes.
func diffStat(got, want proto.Stat) string {
	var out []string
	field := func(name string, g, w int64) {
		if g != w {
			out = append(out, fmt.Sprintf("%s=%#x want %#x", name, g, w))
		}
	}
	field("czxid", got.Czxid, want.Czxid)
	field("mzxid", got.Mzxid, want.Mzxid)
	field("pzxid", got.Pzxid, want.Pzxid)
	field("version", int64(got.Version), int64(want.Version))
	field("cversion", int64(got.Cversion), int64(want.Cversion))
	field("aversion", int64(got.Aversion), int64(want.Aversion))
	field("ephemeralOwner", got.EphemeralOwner, want.EphemeralOwner)
	field("dataLength", int64(got.DataLength), int64(want.DataLength))
	field("numChildren", int64(got.NumChildren), int64(want.NumChildren))
	return strings.Join(out, ", ")
}

// expectNode compares a read of path (code, data, Stat) with the model. A nil data pointer skips the
// data (exists has none).
func (m *refModel) expectNode(what, path string, code proto.Code, data *[]byte, stat proto.Stat) error {
	n, ok := m.nodes[path]
	if !ok {
		if code != proto.NoNode {
			return fmt.Errorf("%s %s: got %s, the model has no such node", what, path, code.String())
		}
		return nil
	}
	if code != proto.OK {
		return fmt.Errorf("%s %s: got %s, the model has the node", what, path, code.String())
	}
	if data != nil && !bytes.Equal(*data, n.data) {
		return fmt.Errorf("%s %s: data %q, want %q", what, path, *data, n.data)
	}
	if d := diffStat(stat, n.stat()); d != "" {
		return fmt.Errorf("%s %s: stat differs: %s", what, path, d)
	}
	return nil
}

// expectChildren compares a getChildren of path with the model, in sorted order (the server's order
// is its hash set's).
func (m *refModel) expectChildren(what, path string, code proto.Code, children []string) error {
	n, ok := m.nodes[path]
	if !ok {
		if code != proto.NoNode {
			return fmt.Errorf("%s %s: got %s, the model has no such node", what, path, code.String())
		}
		return nil
	}
	if code != proto.OK {
		return fmt.Errorf("%s %s: got %s, the model has the node", what, path, code.String())
	}
	got := slices.Sorted(slices.Values(children))
	if want := n.sortedChildren(); !slices.Equal(got, want) {
		return fmt.Errorf("%s %s: children %q, want %q", what, path, got, want)
	}
	return nil
}

// acceptZxid checks that a write's zxid is later than every write before it (writes here never
// overlap, so the commit order is the order they were issued in) and remembers it.
func (m *refModel) acceptZxid(what string, zxid int64) error {
	if zxid <= m.lastZxid {
		return fmt.Errorf("%s: zxid %#x is not after the last write's %#x", what, zxid, m.lastZxid)
	}
	m.lastZxid = zxid
	return nil
}
