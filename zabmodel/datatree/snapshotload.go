package datatree

import (
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// maxSnapshotSessions bounds the session table Deserialize reserves room
// for up front; the table itself is bounded by the input's length.
const maxSnapshotSessions = 1 << 16

// deserializeSnapshot is SerializeUtils.deserializeSnapshot: the session
// table, then DataTree.deserialize.
func deserializeSnapshot(d *proto.Decoder, config Config) (*Tree, []Session, error) {
	count := d.ReadInt32()
	sessions := make([]Session, 0, min(max(int(count), 0), maxSnapshotSessions))
	for ; count > 0 && d.Err() == nil; count-- {
		id := d.ReadInt64()
		timeout := d.ReadInt32()
		sessions = append(sessions, Session{ID: id, TimeoutMilliseconds: timeout})
	}
	if err := d.Err(); err != nil {
		return nil, nil, corrupt("sessions", err)
	}
	t := New(config)
	if err := t.deserializeTree(d); err != nil {
		return nil, nil, err
	}
	return t, sessions, nil
}

// deserializeTree is DataTree.deserialize: the ACL cache, then the nodes
// until the path "/", each attached to its parent and filed by owner; then
// the quota trie and stat nodes are rebuilt and unused ACLs dropped.
func (t *Tree) deserializeTree(d *proto.Decoder) error {
	if err := t.acls.deserialize(d); err != nil {
		return corrupt("ACL cache", err)
	}
	t.nodes = nodeMap{nodes: make(map[string]*node)}
	t.quotas = newPathTrie()
	var root *node
	for path := d.ReadString(); path != "/"; path = d.ReadString() {
		if err := d.Err(); err != nil {
			return corrupt("node path", err)
		}
		n := &node{data: d.ReadBuffer(), acl: d.ReadInt64()}
		n.stat.Decode(d)
		if err := d.Err(); err != nil {
			return corrupt(fmt.Sprintf("node %q", path), err)
		}
		if err := t.attachNode(path, n, root == nil); err != nil {
			return err
		}
		if root == nil {
			root = n
		}
	}
	if err := d.Err(); err != nil {
		return corrupt("node path", err)
	}
	if root == nil {
		return corrupt("nodes", fmt.Errorf("no root node"))
	}
	t.nodes.putWithoutDigest("/", root)
	if err := t.setupQuota(); err != nil {
		return corrupt("quota", err)
	}
	t.acls.purgeUnused()
	return nil
}

// attachNode files one deserialized node.
func (t *Tree) attachNode(path string, n *node, first bool) error {
	if _, dup := t.nodes.nodes[path]; dup {
		return corrupt("nodes", fmt.Errorf("node %q appears twice", path))
	}
	i := strings.LastIndexByte(path, '/')
	switch {
	case first && path != "":
		return corrupt("nodes", fmt.Errorf("the first node is %q, not the root", path))
	case !first && i < 0:
		return corrupt("nodes", fmt.Errorf("node %q is not under the root", path))
	}
	t.nodes.put(path, n)
	// A node may refer to an ACL the cache before it lacks: a fuzzy snapshot writes the cache
	// first and a node created with a new ACL list afterwards. Java loads it all the same
	// (ReferenceCountedACLCache.addUsage: "Ignoring acl ... as it does not exist in the cache"),
	// and the replay of its create adds the list again (DataTree.createNode converts the ACL
	// before it finds the node exists).
	if t.config.fixes4689() {
		t.acls.reserve(n.acl)
	}
	t.acls.addUsage(n.acl)
	if first {
		return nil
	}
	parent := t.nodes.get(path[:i])
	if parent == nil {
		return corrupt("nodes", fmt.Errorf("invalid Datatree, unable to find parent %s of path %s", path[:i], path))
	}
	parent.addChild(path[i+1:])
	if err := t.indexOwner(path, n.stat.EphemeralOwner); err != nil {
		return corrupt("nodes", err)
	}
	return nil
}

// setupQuota is DataTree.setupQuota: every leaf under /zookeeper/quota
// whose path ends with /zookeeper_limits puts the path before the first
// "/zookeeper_limits" under quota and recounts its stats.
func (t *Tree) setupQuota() error {
	if t.nodes.get(quotaZookeeper) == nil {
		return nil
	}
	return t.traverseQuota(quotaZookeeper)
}

func (t *Tree) traverseQuota(path string) error {
	n := t.nodes.get(path)
	if n == nil {
		return fmt.Errorf("%w: quota node %q vanished", errJavaRuntime, path)
	}
	children := n.sortedChildren()
	if len(children) == 0 {
		end := "/" + quotaLimitNode
		if strings.HasSuffix(path, end) {
			realPath := path[len(quotaZookeeper):strings.Index(path, end)]
			t.updateQuotaForPath(realPath)
			return t.quotas.addPath(realPath)
		}
		return nil
	}
	for _, child := range children {
		if err := t.traverseQuota(path + "/" + child); err != nil {
			return err
		}
	}
	return nil
}
