package datatree

import (
	"bytes"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Config holds the server properties that change what the data layer does.
// The zero value is a stock 3.8.0 server. Digests
// (zookeeper.digest.enabled) and close-session txns
// (zookeeper.closeSessionTxn.enabled) are always on, as by default; quota
// enforcement (zookeeper.enforceQuota) and skipACL are always off, as by
// default.
type Config struct {
	// ExtendedTypes is zookeeper.extendedTypesEnabled: without it TTL
	// creates fail with Unimplemented and TTL-shaped owners are plain
	// session owners.
	ExtendedTypes bool
	// ReconfigEnabled is zookeeper.reconfigEnabled. Only its default,
	// false, is modelled: a reconfig request is logged as an error txn
	// with ReconfigDisabled. Preparer refuses to run with it set.
	ReconfigEnabled bool
	// StaleACLOnReplay is DataTree.createNode before ZOOKEEPER-4846 (3.8.0 to 3.8.4, 3.9.0 to
	// 3.9.3): replaying the create of a node that a fuzzy snapshot already holds leaves the node
	// with the ACL index the snapshot gave it. The snapshot writes the ACL cache before it walks
	// the nodes, so a node created during the walk with an ACL list new to the cache refers to an
	// index the loaded cache lacks, or that it gave another list; the replay interns the txn's list
	// under an index of its own and throws NodeExists without using it, and the next read of that
	// node's ACL (every setData and delete reads it since ZOOKEEPER-4799) throws "Failed to fetch
	// acls". Without it, the node takes the index the replay interned, as master does.
	StaleACLOnReplay bool
	// ThrowingWatchACL is DataTree on master without ZOOKEEPER-4689's fix (an open pull request
	// upstream): the ACL lookups that filter watch events throw for an index the cache lacks, a
	// loaded snapshot does not reserve the indexes its nodes refer to, and a replayed create that
	// moves a node to a new index keeps counting the old one. A fuzzy snapshot's node whose ACL
	// list was dropped and interned again during the walk then makes the replay of any change to
	// it before its re-create throw. Without it the model has the fix: the lookup fails closed
	// (a no-permissions ACL), every index a node names is reserved, and the reference moves.
	ThrowingWatchACL bool
}

// fixes4689 reports whether the tree has ZOOKEEPER-4689's fix, which builds on ZOOKEEPER-4846's:
// a tree with the older createNode (StaleACLOnReplay) has neither.
func (c Config) fixes4689() bool { return !c.ThrowingWatchACL && !c.StaleACLOnReplay }

// Session is one entry of a snapshot's session table: an id and its
// negotiated timeout.
type Session struct {
	ID                  int64
	TimeoutMilliseconds int32
}

// Tree is a server's in-memory database: DataTree and the tree-related parts
// of ZKDatabase. It is not safe for concurrent use; the simulator runs one
// world on one goroutine.
type Tree struct {
	config            Config
	nodes             nodeMap
	acls              aclCache
	ephemerals        map[int64]*javaHashSet
	containers        map[string]struct{}
	ttls              map[string]struct{}
	quotas            *pathTrie
	dataWatches       *watchManager
	childWatches      *watchManager
	lastProcessedZxid int64
	// lastZxidDigest is DataTree.lastProcessedZxidDigest, what a snapshot
	// stores after the tree; hasLastZxidDigest is false (Java's null) until a
	// txn has been applied. It is kept by value: it changes with every txn.
	lastZxidDigest    ZxidDigest
	hasLastZxidDigest bool
	// snapshotDigest is digestFromLoadedSnapshot: the digest a loaded
	// snapshot promises for a later zxid, pending until that zxid is applied.
	snapshotDigest *ZxidDigest
	// mismatchOnLoad records a loaded snapshot whose digest, taken at the
	// snapshot's zxid, did not match the loaded tree.
	mismatchOnLoad bool
}

// ZxidDigest is DataTree.ZxidDigest: the tree digest after a zxid.
type ZxidDigest struct {
	Zxid    int64
	Version int32
	Digest  int64
}

// New returns the tree a 3.8.0 server starts with: "/", "/zookeeper",
// "/zookeeper/quota" and "/zookeeper/config", all with zero stats and empty
// data; the first three with the open ACL, the config node readable by
// anyone only and, because DataTree sets that ACL with version -1, an
// aversion of -1.
func New(config Config) *Tree {
	t := &Tree{
		config:       config,
		nodes:        nodeMap{nodes: make(map[string]*node)},
		acls:         newACLCache(),
		ephemerals:   make(map[int64]*javaHashSet),
		containers:   make(map[string]struct{}),
		ttls:         make(map[string]struct{}),
		quotas:       newPathTrie(),
		dataWatches:  newWatchManager(),
		childWatches: newWatchManager(),
	}
	root := &node{data: []byte{}, acl: openUnsafeACLIndex}
	t.nodes.put("", root)
	t.nodes.putWithoutDigest("/", root)
	proc := &node{data: []byte{}, acl: openUnsafeACLIndex}
	root.addChild(procZookeeper[1:])
	t.nodes.put(procZookeeper, proc)
	proc.addChild(quotaZookeeper[len(procZookeeper)+1:])
	t.nodes.put(quotaZookeeper, &node{data: []byte{}, acl: openUnsafeACLIndex})
	t.addConfigNode()
	return t
}

// addConfigNode is DataTree.addConfigNode.
func (t *Tree) addConfigNode() {
	proc := t.nodes.get(procZookeeper)
	if proc == nil {
		panic("datatree: broken invariant: no /zookeeper node")
	}
	proc.addChild(configZookeeper[len(procZookeeper)+1:])
	t.nodes.put(configZookeeper, &node{data: []byte{}, acl: openUnsafeACLIndex})
	if _, code, err := t.setACL(configZookeeper, proto.ReadACLUnsafe, -1); code != proto.OK || err != nil {
		panic("datatree: broken invariant: no /zookeeper/config node")
	}
}

// Config returns the configuration the tree was made with.
func (t *Tree) Config() Config { return t.config }

// kind classifies an owner under the tree's configuration.
func (t *Tree) kind(owner int64) (EphemeralKind, error) {
	return KindOf(owner, t.config.ExtendedTypes)
}

// clientStat is DataNode.copyStat: the persisted stat as a client sees it,
// with the node's data length and child count, cversion translated from
// creates to creates plus deletes (2*cversion - numChildren) and the owner of
// containers and TTL nodes shown as 0.
func (t *Tree) clientStat(n *node) (proto.Stat, error) {
	kind, err := t.kind(n.stat.EphemeralOwner)
	if err != nil {
		return proto.Stat{}, err
	}
	owner := n.stat.EphemeralOwner
	if kind != KindNormal {
		owner = 0
	}
	children := n.numChildren()
	return proto.Stat{
		Czxid: n.stat.Czxid, Mzxid: n.stat.Mzxid, Ctime: n.stat.Ctime, Mtime: n.stat.Mtime,
		Version: n.stat.Version, Cversion: n.stat.Cversion*2 - children, Aversion: n.stat.Aversion,
		EphemeralOwner: owner, DataLength: int32(len(n.data)), NumChildren: children, Pzxid: n.stat.Pzxid,
	}, nil
}

// nodeACL returns a node's ACL list (shared; copy before handing out).
func (t *Tree) nodeACL(n *node) ([]proto.ACL, error) { return t.acls.lookup(n.acl) }

// isSpecialPath is DataTree.isSpecialPath: the paths no client may delete.
func isSpecialPath(path string) bool {
	return path == "/" || path == procZookeeper || path == quotaZookeeper || path == configZookeeper
}

// LastProcessedZxid is the zxid of the last txn applied (never lowered by
// Apply), or what SetLastProcessedZxid set.
func (t *Tree) LastProcessedZxid() int64 { return t.lastProcessedZxid }

// SetLastProcessedZxid is ZKDatabase.setlastProcessedZxid, used after a
// snapshot sync or when a new leader starts its epoch. It sets the value as
// given, also downwards.
func (t *Tree) SetLastProcessedZxid(zxid int64) { t.lastProcessedZxid = zxid }

// Digest is the tree digest (NodeHashMap.getDigest): the wrapping sum of the
// node digests of every node outside "/zookeeper/", the root counted once.
func (t *Tree) Digest() int64 { return t.nodes.hash }

// LastZxidDigest returns the digest recorded with the last applied txn
// (DataTree.getLastProcessedZxidDigest), and false if there is none yet.
func (t *Tree) LastZxidDigest() (ZxidDigest, bool) {
	if !t.hasLastZxidDigest {
		return ZxidDigest{}, false
	}
	return t.lastZxidDigest, true
}

// DigestMismatchOnLoad reports that the tree came from a snapshot whose
// stored digest, taken at the snapshot's zxid, differs from the loaded tree's
// (Java logs and counts it).
func (t *Tree) DigestMismatchOnLoad() bool { return t.mismatchOnLoad }

// NodeCount is DataTree.getNodeCount: the size of the path index, in which
// the root appears twice (as "" and "/"), so a fresh tree counts 5.
func (t *Tree) NodeCount() int { return len(t.nodes.nodes) }

// WatchCount is DataTree.getWatchCount: data watches plus child watches, one
// per (path, watcher).
func (t *Tree) WatchCount() int { return t.dataWatches.size() + t.childWatches.size() }

// Ephemerals returns the paths of a session's ephemeral nodes, sorted.
func (t *Tree) Ephemerals(session int64) []string {
	paths := t.ephemerals[session].keys()
	slices.Sort(paths)
	return paths
}

// EphemeralSessions is DataTree.getSessions: the sessions that have had
// ephemeral nodes since their last closeSession (a session whose ephemerals
// were all deleted one by one stays listed), sorted.
func (t *Tree) EphemeralSessions() []int64 {
	return sortedKeys(t.ephemerals)
}

// Containers returns the paths of all container nodes, sorted.
func (t *Tree) Containers() []string { return sortedKeys(t.containers) }

// TTLs returns the paths of all TTL nodes, sorted.
func (t *Tree) TTLs() []string { return sortedKeys(t.ttls) }

func sortedKeys[K interface{ ~int64 | ~string }, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m { // determinism:ok sorted below
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Exists is the exists request as FinalRequestProcessor and
// DataTree.statNode serve it: a path containing NUL is BadArguments, the
// watch (if w is not nil) is left even when the node is missing, so that it
// fires on a later create, and a missing node is NoNode. No ACL applies.
func (t *Tree) Exists(path string, w Watcher) (proto.Stat, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return proto.Stat{}, proto.BadArguments
	}
	n := t.nodes.get(path)
	if w != nil {
		t.dataWatches.add(path, w, modeStandard)
	}
	if n == nil {
		return proto.Stat{}, proto.NoNode
	}
	return t.readStat(n)
}

// readStat is clientStat for a read reply: an owner Java cannot classify
// makes copyStat throw, which FinalRequestProcessor answers with
// MarshallingError.
func (t *Tree) readStat(n *node) (proto.Stat, error) {
	stat, err := t.clientStat(n)
	if err != nil {
		return proto.Stat{}, proto.MarshallingError
	}
	return stat, nil
}

// readableNode looks a node up and checks perm on it for a read, as
// FinalRequestProcessor does before each read: NoNode, then NoAuth.
func (t *Tree) readableNode(path string, perm proto.Perm, auth []proto.ID) (*node, []proto.ACL, error) {
	n := t.nodes.get(path)
	if n == nil {
		return nil, nil, proto.NoNode
	}
	acl, err := t.nodeACL(n)
	if err != nil {
		return nil, nil, proto.MarshallingError
	}
	if err := CheckACL(acl, perm, auth); err != nil {
		return nil, nil, err
	}
	return n, acl, nil
}

// GetData serves getData: NoNode, then NoAuth without READ, then the data (a
// copy; nil if the node was created with null data) and stat, leaving a data
// watch if w is not nil.
func (t *Tree) GetData(path string, auth []proto.ID, w Watcher) ([]byte, proto.Stat, error) {
	n, _, err := t.readableNode(path, proto.PermRead, auth)
	if err != nil {
		return nil, proto.Stat{}, err
	}
	stat, err := t.readStat(n)
	if err != nil {
		return nil, proto.Stat{}, err
	}
	if w != nil {
		t.dataWatches.add(path, w, modeStandard)
	}
	return bytes.Clone(n.data), stat, nil
}

// GetChildren serves getChildren and getChildren2: NoNode, then NoAuth
// without READ, then the child names (sorted; Java's order is its HashSet's)
// and the stat that getChildren2 returns, leaving a child watch if w is not
// nil.
func (t *Tree) GetChildren(path string, auth []proto.ID, w Watcher) ([]string, proto.Stat, error) {
	n, _, err := t.readableNode(path, proto.PermRead, auth)
	if err != nil {
		return nil, proto.Stat{}, err
	}
	stat, err := t.readStat(n)
	if err != nil {
		return nil, proto.Stat{}, err
	}
	children := n.sortedChildren()
	if w != nil {
		t.childWatches.add(path, w, modeStandard)
	}
	return children, stat, nil
}

// GetACL serves getACL: NoNode, then NoAuth unless the identities have READ
// or ADMIN, then the ACL and stat; without ADMIN every digest id is shown
// with its hash replaced by "x" ("user:x").
func (t *Tree) GetACL(path string, auth []proto.ID) ([]proto.ACL, proto.Stat, error) {
	n, acl, err := t.readableNode(path, proto.PermRead|proto.PermAdmin, auth)
	if err != nil {
		return nil, proto.Stat{}, err
	}
	stat, err := t.readStat(n)
	if err != nil {
		return nil, proto.Stat{}, err
	}
	if CheckACL(acl, proto.PermAdmin, auth) != nil {
		return maskDigestACL(acl), stat, nil
	}
	return slices.Clone(acl), stat, nil
}

// GetAllChildrenNumber serves getAllChildrenNumber: NoNode, then NoAuth
// without READ, then DataTree.getAllChildrenNumber, which for "/" is the
// index size minus the root's two names and otherwise the number of indexed
// paths that start with path + "/".
func (t *Tree) GetAllChildrenNumber(path string, auth []proto.ID) (int32, error) {
	if _, _, err := t.readableNode(path, proto.PermRead, auth); err != nil {
		return 0, err
	}
	if path == "/" {
		return int32(len(t.nodes.nodes) - 2), nil
	}
	prefix := path + "/"
	count := 0
	for p := range t.nodes.nodes { // determinism:ok a count, order-free
		if strings.HasPrefix(p, prefix) {
			count++
		}
	}
	return int32(count), nil
}

// GetEphemerals serves getEphemerals for the requesting session: all of its
// ephemeral paths when prefix is blank or "/" (after String.trim), else
// those that start with prefix as given, in the order Java's server sends
// them (that of a clone of the session's HashSet).
func (t *Tree) GetEphemerals(session int64, prefix string) []string {
	all := t.ephemerals[session].clone().keys()
	if trimmed := javaTrim(prefix); trimmed == "" || trimmed == "/" {
		return all
	}
	out := make([]string, 0, len(all))
	for _, p := range all {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}
