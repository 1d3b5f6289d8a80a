package datatree

import (
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// This file holds DataTree's node mutations, which Apply composes. Each
// returns the code of the KeeperException Java would throw (NoNode,
// NodeExists) or an error where Java throws an unchecked exception, having
// made the changes Java makes before that point.

// splitPath is path.substring(0, lastSlash) and substring(lastSlash + 1);
// a path without '/' makes Java throw.
func splitPath(path string) (parent, child string, err error) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", "", fmt.Errorf("%w: path %q has no '/'", errJavaRuntime, path)
	}
	return path[:i], path[i+1:], nil
}

// watchPath maps the parent name of a root child, "", to "/".
func watchPath(parent string) string {
	if parent == "" {
		return "/"
	}
	return parent
}

// createNode is DataTree.createNode.
func (t *Tree) createNode(path string, data []byte, acl []proto.ACL, owner int64, parentCVersion int32,
	zxid, time int64, wantStat bool) (*proto.Stat, proto.Code, error) {
	parentName, childName, err := splitPath(path)
	if err != nil {
		return nil, proto.OK, err
	}
	parent := t.nodes.get(parentName)
	if parent == nil {
		return nil, proto.NoNode, nil
	}
	// The parent's ACL decides who hears of the new child (3.8.4's
	// CVE-2024-23944 fix reads it first thing).
	parentACL, err := t.watchACL(parent)
	if err != nil {
		return nil, proto.OK, err
	}
	// Java counts the ACL reference before the existence check, so a
	// create that fails with NodeExists leaves a reference behind.
	aclIndex := t.acls.convert(acl)
	if t.config.StaleACLOnReplay {
		if parent.hasChild(childName) {
			return nil, proto.NodeExists, nil
		}
	} else if existing := t.nodes.get(path); existing != nil {
		// ZOOKEEPER-4846: only a replay over a fuzzy snapshot creates a node that exists (the
		// PrepRequestProcessor refuses it otherwise), and the txn's ACL list is the node's; the
		// index the snapshot gave the node is local to the server that wrote it.
		previous := existing.acl
		existing.acl = aclIndex
		if t.config.fixes4689() {
			// ZOOKEEPER-4689: the node's reference moves, so that each node counts once.
			t.acls.removeUsage(previous)
		}
		return nil, proto.NodeExists, nil
	}
	t.nodes.preChange(parentName, parent)
	if parentCVersion == -1 {
		parentCVersion = parent.stat.Cversion + 1
	}
	// Replaying a create of a node that a fuzzy snapshot saw deleted must
	// not take the parent's cversion and pzxid backwards.
	if parentCVersion > parent.stat.Cversion {
		parent.stat.Cversion = parentCVersion
		parent.stat.Pzxid = zxid
	}
	child := &node{data: data, acl: aclIndex, stat: createStat(zxid, time, owner)}
	parent.addChild(childName)
	t.nodes.postChange(parentName, parent)
	t.nodes.put(path, child)
	if err := t.indexOwner(path, owner); err != nil {
		return nil, proto.OK, err
	}
	var stat *proto.Stat
	if wantStat {
		s, err := t.clientStat(child)
		if err != nil {
			return nil, proto.OK, fmt.Errorf("%w: %v", errJavaRuntime, err)
		}
		stat = &s
	}
	if err := t.quotaAfterCreate(parentName, childName, path, data); err != nil {
		return nil, proto.OK, err
	}
	t.dataWatches.trigger(path, proto.EventNodeCreated, acl, nil)
	t.childWatches.trigger(watchPath(parentName), proto.EventNodeChildrenChanged, parentACL, nil)
	return stat, proto.OK, nil
}

// watchACL is the ACL a change to n filters its watch events against (DataTree's getACL since
// ZOOKEEPER-4799, getACLForWatchTrigger with ZOOKEEPER-4689's fix): without the fix an index the
// cache lacks throws, as convertLong does.
func (t *Tree) watchACL(n *node) ([]proto.ACL, error) {
	if t.config.fixes4689() {
		return t.acls.lookupForWatch(n.acl), nil
	}
	acl, err := t.acls.lookup(n.acl)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errJavaRuntime, err)
	}
	return acl, nil
}

// createStat is DataTree.createStat.
func createStat(zxid, time, owner int64) proto.StatPersisted {
	return proto.StatPersisted{Czxid: zxid, Mzxid: zxid, Pzxid: zxid, Ctime: time, Mtime: time, EphemeralOwner: owner}
}

// indexOwner files a new node under the containers, the TTL nodes or its
// session's ephemerals.
func (t *Tree) indexOwner(path string, owner int64) error {
	kind, err := t.kind(owner)
	if err != nil {
		return fmt.Errorf("%w: %v", errJavaRuntime, err)
	}
	switch {
	case kind == KindContainer:
		t.containers[path] = struct{}{}
	case kind == KindTTL:
		t.ttls[path] = struct{}{}
	case owner != 0:
		set := t.ephemerals[owner]
		if set == nil {
			set = &javaHashSet{}
			t.ephemerals[owner] = set
		}
		set.add(path)
	}
	return nil
}

// unindexOwner is indexOwner's inverse for a deleted node.
func (t *Tree) unindexOwner(path string, owner int64) error {
	kind, err := t.kind(owner)
	if err != nil {
		return fmt.Errorf("%w: %v", errJavaRuntime, err)
	}
	switch {
	case kind == KindContainer:
		delete(t.containers, path)
	case kind == KindTTL:
		delete(t.ttls, path)
	case owner != 0:
		if set := t.ephemerals[owner]; set != nil {
			set.remove(path)
		}
	}
	return nil
}

// quotaAfterCreate keeps the quota trie and stat nodes up to date after a
// create: a zookeeper_limits node under /zookeeper/quota puts its subtree
// under quota, a zookeeper_stats node is filled with the subtree's current
// counts, and a create inside a quota subtree adds to its stats.
func (t *Tree) quotaAfterCreate(parentName, childName, path string, data []byte) error {
	if strings.HasPrefix(parentName, quotaZookeeper) {
		quotaPath := parentName[len(quotaZookeeper):]
		if childName == quotaLimitNode {
			if err := t.quotas.addPath(quotaPath); err != nil {
				return err
			}
		}
		if childName == quotaStatNode {
			t.updateQuotaForPath(quotaPath)
		}
	}
	if prefix := t.maxPrefixWithQuota(path); prefix != "" {
		return t.updateQuotaStat(prefix, int64(len(data)), 1)
	}
	return nil
}

// maxPrefixWithQuota is getMaxPrefixWithQuota: the deepest quota root
// above or at path, or "" for none (the root never has a quota).
func (t *Tree) maxPrefixWithQuota(path string) string {
	prefix := t.quotas.findMaxPrefix(path)
	if prefix == "/" || prefix == "" {
		return ""
	}
	return prefix
}

// updateQuotaStat is DataTree.updateQuotaStat: it adds to the counts in the
// prefix's zookeeper_stats node, writing its data in place (no stat change;
// Java changes the bytes without a version bump or digest update).
func (t *Tree) updateQuotaStat(prefix string, bytesDiff int64, countDiff int64) error {
	n := t.nodes.get(quotaStatPath(prefix))
	if n == nil {
		return nil
	}
	stats, err := parseStatsTrack(n.data)
	if err != nil {
		return err
	}
	stats.values["count"] = stats.get("count") + countDiff
	stats.values["bytes"] = stats.get("bytes") + bytesDiff
	n.data = []byte(stats.String())
	return nil
}

// updateQuotaForPath is DataTree.updateQuotaForPath: it counts the nodes and
// data bytes of the subtree at path and writes them to its stats node.
func (t *Tree) updateQuotaForPath(path string) {
	var count, size int64
	t.countSubtree(path, &count, &size)
	stats := statsTrack{values: map[string]int64{"count": count, "bytes": size}}
	statPath := quotaStatPath(path)
	n := t.nodes.get(statPath)
	if n == nil {
		return
	}
	t.nodes.preChange(statPath, n)
	n.data = []byte(stats.String())
	t.nodes.postChange(statPath, n)
}

// countSubtree is DataTree.getCounts.
func (t *Tree) countSubtree(path string, count, size *int64) {
	n := t.nodes.get(path)
	if n == nil {
		return
	}
	*count++
	*size += int64(len(n.data))
	for _, child := range n.sortedChildren() {
		t.countSubtree(path+"/"+child, count, size)
	}
}

// deleteNode is DataTree.deleteNode. The parent's pzxid moves forward even
// when the child is already gone (a fuzzy snapshot replay), and only
// forward; its cversion is not touched (it counts creates).
func (t *Tree) deleteNode(path string, zxid int64) (proto.Code, error) {
	parentName, childName, err := splitPath(path)
	if err != nil {
		return proto.OK, err
	}
	parent := t.nodes.get(parentName)
	if parent == nil {
		return proto.NoNode, nil
	}
	t.nodes.preChange(parentName, parent)
	parent.removeChild(childName)
	if zxid > parent.stat.Pzxid {
		parent.stat.Pzxid = zxid
	}
	t.nodes.postChange(parentName, parent)
	n := t.nodes.get(path)
	if n == nil {
		return proto.NoNode, nil
	}
	t.nodes.remove(path)
	// Java reads the ACL the watchers are checked against before it drops
	// the node's reference to it, which may remove it from the cache.
	nodeACL, err := t.watchACL(n)
	if err != nil {
		return proto.OK, err
	}
	t.acls.removeUsage(n.acl)
	if err := t.unindexOwner(path, n.stat.EphemeralOwner); err != nil {
		return proto.OK, err
	}
	if strings.HasPrefix(parentName, procZookeeper) && childName == quotaLimitNode {
		quotaPath, err := trimQuotaPath(parentName)
		if err != nil {
			return proto.OK, err
		}
		if err := t.quotas.deletePath(quotaPath); err != nil {
			return proto.OK, err
		}
	}
	if prefix := t.maxPrefixWithQuota(path); prefix != "" {
		if err := t.updateQuotaStat(prefix, -int64(len(n.data)), -1); err != nil {
			return proto.OK, err
		}
	}
	parentACL, err := t.watchACL(parent)
	if err != nil {
		return proto.OK, err
	}
	processed := t.dataWatches.trigger(path, proto.EventNodeDeleted, nodeACL, nil)
	t.childWatches.trigger(path, proto.EventNodeDeleted, nodeACL, processed)
	t.childWatches.trigger(watchPath(parentName), proto.EventNodeChildrenChanged, parentACL, nil)
	return proto.OK, nil
}

// setData is DataTree.setData: new data, mtime, mzxid and the version the
// txn carries (setData bumps the version even when the data is equal).
func (t *Tree) setData(path string, data []byte, version int32, zxid, time int64) (*proto.Stat, proto.Code, error) {
	n := t.nodes.get(path)
	if n == nil {
		return nil, proto.NoNode, nil
	}
	nodeACL, err := t.watchACL(n)
	if err != nil {
		return nil, proto.OK, err
	}
	lastData := n.data
	t.nodes.preChange(path, n)
	n.data = data
	n.stat.Mtime = time
	n.stat.Mzxid = zxid
	n.stat.Version = version
	stat, err := t.clientStat(n)
	if err != nil {
		return nil, proto.OK, fmt.Errorf("%w: %v", errJavaRuntime, err)
	}
	t.nodes.postChange(path, n)
	if prefix := t.maxPrefixWithQuota(path); prefix != "" {
		if err := t.updateQuotaStat(prefix, int64(len(data))-int64(len(lastData)), 0); err != nil {
			return nil, proto.OK, err
		}
	}
	t.dataWatches.trigger(path, proto.EventNodeDataChanged, nodeACL, nil)
	return &stat, proto.OK, nil
}

// setACL is DataTree.setACL: the new ACL and the aversion the txn carries.
// It fires no watch.
func (t *Tree) setACL(path string, acl []proto.ACL, version int32) (*proto.Stat, proto.Code, error) {
	n := t.nodes.get(path)
	if n == nil {
		return nil, proto.NoNode, nil
	}
	t.acls.removeUsage(n.acl)
	t.nodes.preChange(path, n)
	n.stat.Aversion = version
	n.acl = t.acls.convert(acl)
	stat, err := t.clientStat(n)
	if err != nil {
		return nil, proto.OK, fmt.Errorf("%w: %v", errJavaRuntime, err)
	}
	t.nodes.postChange(path, n)
	return &stat, proto.OK, nil
}

// setCversionPzxid is DataTree.setCversionPzxid (a trailing '/' ignored):
// cversion and pzxid move to the given values only if that raises cversion.
func (t *Tree) setCversionPzxid(path string, cversion int32, zxid int64) error {
	path = strings.TrimSuffix(path, "/")
	n := t.nodes.get(path)
	if n == nil {
		return proto.NoNode
	}
	if cversion == -1 {
		cversion = n.stat.Cversion + 1
	}
	if cversion > n.stat.Cversion {
		t.nodes.preChange(path, n)
		n.stat.Cversion = cversion
		n.stat.Pzxid = zxid
		t.nodes.postChange(path, n)
	}
	return nil
}

// killSession is DataTree.killSession: it forgets the session's ephemeral
// set, deletes the paths the txn lists (if it has a list), in the list's
// order, then any of the session's ephemerals the list missed, in the set's
// (Java HashSet) order. A path that no longer exists is skipped, as Java
// logs and ignores NoNode.
func (t *Tree) killSession(session, zxid int64, listed []string, hasList bool) error {
	local := t.ephemerals[session]
	delete(t.ephemerals, session)
	if hasList {
		if err := t.deleteNodes(zxid, listed); err != nil {
			return err
		}
	}
	if local == nil {
		return nil
	}
	for _, path := range listed {
		local.remove(path)
	}
	return t.deleteNodes(zxid, local.keys())
}

func (t *Tree) deleteNodes(zxid int64, paths []string) error {
	for _, path := range paths {
		if _, err := t.deleteNode(path, zxid); err != nil {
			return err
		}
	}
	return nil
}

// InitConfig is ZKDatabase.initConfigInZKDatabase, which a quorum peer calls
// with its configuration: it recreates /zookeeper/config if missing, then
// sets its data with version -1 and the configuration's version (a zxid) as
// mzxid, firing data watches on the node.
func (t *Tree) InitConfig(data []byte, configVersion int64, timeMilliseconds int64) error {
	if t.nodes.get(configZookeeper) == nil {
		t.addConfigNode()
	}
	_, code, err := t.setData(configZookeeper, data, -1, configVersion, timeMilliseconds)
	if err != nil {
		return err
	}
	return code.Err()
}
