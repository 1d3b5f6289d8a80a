package datatree

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// DigestVersion is DigestCalculator.DIGEST_VERSION in 3.8.0, the version a
// TxnDigest carries.
const DigestVersion int32 = 2

// zookeeperSubtree is ZooDefs.ZOOKEEPER_NODE_SUBTREE: nodes below it are
// left out of the digest (quota stat nodes change locally on each server).
// "/zookeeper" itself is included.
const zookeeperSubtree = "/zookeeper/"

// nodeDigest is DigestCalculator.calculateDigest: the CRC-32 of the path's
// UTF-8 bytes, the data, and 60 bytes of stat (czxid, mzxid, pzxid, ctime,
// mtime as longs, version, cversion, aversion as ints, ephemeralOwner as a
// long, big-endian). "/" is digested as "", the root's other name, and nodes
// under "/zookeeper/" digest to 0.
func nodeDigest(path string, data []byte, stat *proto.StatPersisted) int64 {
	if strings.HasPrefix(path, zookeeperSubtree) {
		return 0
	}
	if path == "/" {
		path = ""
	}
	var b [60]byte
	binary.BigEndian.PutUint64(b[0:], uint64(stat.Czxid))
	binary.BigEndian.PutUint64(b[8:], uint64(stat.Mzxid))
	binary.BigEndian.PutUint64(b[16:], uint64(stat.Pzxid))
	binary.BigEndian.PutUint64(b[24:], uint64(stat.Ctime))
	binary.BigEndian.PutUint64(b[32:], uint64(stat.Mtime))
	binary.BigEndian.PutUint32(b[40:], uint32(stat.Version))
	binary.BigEndian.PutUint32(b[44:], uint32(stat.Cversion))
	binary.BigEndian.PutUint32(b[48:], uint32(stat.Aversion))
	binary.BigEndian.PutUint64(b[52:], uint64(stat.EphemeralOwner))
	// The CRC of the three parts in a row is the CRC of their concatenation. The path and the
	// stat go through a plain table loop, which lets them stay on the stack (crc32.Update would
	// move both to the heap); the data, which may be large, gets crc32's fast path.
	crc := crcUpdateString(0, path)
	crc = crc32.Update(crc, crc32.IEEETable, data)
	crc = crcUpdate(crc, b[:])
	return int64(crc)
}

// crcUpdateString is crc32.Update with the IEEE table over a string, one byte at a time.
func crcUpdateString(crc uint32, s string) uint32 {
	crc = ^crc
	for i := 0; i < len(s); i++ {
		crc = crc32.IEEETable[byte(crc)^s[i]] ^ (crc >> 8)
	}
	return ^crc
}

// crcUpdate is crc32.Update with the IEEE table, one byte at a time.
func crcUpdate(crc uint32, p []byte) uint32 {
	crc = ^crc
	for _, v := range p {
		crc = crc32.IEEETable[byte(crc)^v] ^ (crc >> 8)
	}
	return ^crc
}

// node is DataNode: data, an ACL index, the persisted stat, the child names,
// and a cached digest.
type node struct {
	data         []byte
	acl          int64
	stat         proto.StatPersisted
	children     map[string]struct{} // nil until the first child, as in Java
	digest       int64
	digestCached bool
}

func (n *node) numChildren() int32 { return int32(len(n.children)) }

func (n *node) addChild(name string) {
	if n.children == nil {
		n.children = make(map[string]struct{}, 8)
	}
	n.children[name] = struct{}{}
}

func (n *node) removeChild(name string) { delete(n.children, name) }

func (n *node) hasChild(name string) bool {
	_, ok := n.children[name]
	return ok
}

// sortedChildren returns the child names in ascending byte order. Java
// answers in its HashSet's order; sorting is the deterministic choice made
// here, and what the conformance harness compares.
func (n *node) sortedChildren() []string {
	out := make([]string, 0, len(n.children))
	for name := range n.children { // determinism:ok sorted below
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// nodeMap is NodeHashMapImpl: the path index of all nodes, with the tree
// digest (an AdHash: the wrapping sum of node digests) kept up to date by
// every mutation. The root is stored under both "" and "/", and digested
// once, under "".
type nodeMap struct {
	nodes map[string]*node
	hash  int64
}

func (m *nodeMap) get(path string) *node { return m.nodes[path] }

func (m *nodeMap) put(path string, n *node) *node {
	old := m.nodes[path]
	m.nodes[path] = n
	m.addDigest(path, n)
	if old != nil {
		m.removeDigest(path, old)
	}
	return old
}

func (m *nodeMap) putWithoutDigest(path string, n *node) { m.nodes[path] = n }

func (m *nodeMap) remove(path string) *node {
	old := m.nodes[path]
	if old != nil {
		delete(m.nodes, path)
		m.removeDigest(path, old)
	}
	return old
}

// preChange and postChange bracket every change to a node's data or stat, so
// that its digest leaves the sum before and re-enters after.
func (m *nodeMap) preChange(path string, n *node) { m.removeDigest(path, n) }

func (m *nodeMap) postChange(path string, n *node) {
	n.digestCached = false
	m.addDigest(path, n)
}

func (m *nodeMap) addDigest(path string, n *node) {
	if !strings.HasPrefix(path, zookeeperSubtree) {
		m.hash += cachedDigest(path, n)
	}
}

func (m *nodeMap) removeDigest(path string, n *node) {
	if !strings.HasPrefix(path, zookeeperSubtree) {
		m.hash -= cachedDigest(path, n)
	}
}

// cachedDigest is DigestCalculator.calculateDigest(path, node), which reuses
// the node's digest until postChange invalidates it.
func cachedDigest(path string, n *node) int64 {
	if !n.digestCached {
		n.digest = nodeDigest(path, n.data, &n.stat)
		n.digestCached = true
	}
	return n.digest
}
