package datatree

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// openUnsafeACLIndex is the index of a node created with a null ACL list
// (ReferenceCountedACLCache.OPEN_UNSAFE_ACL_ID): it reads back as
// proto.OpenACLUnsafe and is never stored in the cache. The initial nodes "/",
// "/zookeeper" and "/zookeeper/quota" carry it.
const openUnsafeACLIndex int64 = -1

// aclCache is ReferenceCountedACLCache: every distinct ACL list is stored once
// under an index, nodes refer to the index, and a list is dropped when its
// last reference goes. Indices are never reused within a tree's life.
type aclCache struct {
	lists      map[int64][]proto.ACL
	indexByKey map[string]int64
	references map[int64]int64
	lastIndex  int64
	// scratch encodes the key of a list being looked up; see key.
	scratch proto.Encoder
}

func newACLCache() aclCache {
	return aclCache{
		lists:      make(map[int64][]proto.ACL),
		indexByKey: make(map[string]int64),
		references: make(map[int64]int64),
	}
}

// aclKey encodes a list so that equal lists (List<ACL>.equals: same entries
// in the same order) have equal keys.
func aclKey(acl []proto.ACL) string {
	var e proto.Encoder
	proto.WriteVector(&e, acl)
	return string(e.Bytes())
}

// key is aclKey encoded in the cache's scratch encoder, valid until the next call: a lookup
// indexes the map with string(key), which Go does without allocating, so that only a new list's
// key becomes a string of its own.
func (c *aclCache) key(acl []proto.ACL) []byte {
	c.scratch.Reset()
	proto.WriteVector(&c.scratch, acl)
	return c.scratch.Bytes()
}

// convert is convertAcls: it returns the list's index, adding the list if
// new, and counts one more reference. A nil list is the open ACL.
func (c *aclCache) convert(acl []proto.ACL) int64 {
	if acl == nil {
		return openUnsafeACLIndex
	}
	key := c.key(acl)
	index, ok := c.indexByKey[string(key)]
	if !ok {
		c.lastIndex++
		index = c.lastIndex
		c.lists[index] = slices.Clone(acl)
		c.indexByKey[string(key)] = index
	}
	c.addUsage(index)
	return index
}

// lookup is convertLong. The returned slice is shared: callers copy it
// before handing it out.
func (c *aclCache) lookup(index int64) ([]proto.ACL, error) {
	if index == openUnsafeACLIndex {
		return proto.OpenACLUnsafe, nil
	}
	acl, ok := c.lists[index]
	if !ok {
		return nil, fmt.Errorf("datatree: failed to fetch acls for %d", index)
	}
	return acl, nil
}

// noPermissionsACL is what a watch is filtered against when its node's ACL index is not in the
// cache (ZOOKEEPER-4689's NO_PERMISSIONS_ACL): nobody may read, so the event fails closed. A nil
// or empty list would count as unrestricted.
var noPermissionsACL = []proto.ACL{{Perms: 0, ID: proto.AnyoneID}}

// lookupForWatch is getACLForWatchTrigger with ZOOKEEPER-4689's fix (convertLongIfCached): an
// index the cache lacks yields noPermissionsACL instead of an exception.
func (c *aclCache) lookupForWatch(index int64) []proto.ACL {
	if acl, err := c.lookup(index); err == nil {
		return acl
	}
	return noPermissionsACL
}

// reserve is ZOOKEEPER-4689's addition to addUsage, for the nodes of a loaded snapshot: an index a
// node names is never handed out again, even when the cache lacks it, so that replay cannot give
// it to another list before the node is repaired.
func (c *aclCache) reserve(index int64) {
	c.lastIndex = max(c.lastIndex, index)
}

// addUsage counts a reference; unknown indices are ignored, as Java does.
func (c *aclCache) addUsage(index int64) {
	if index == openUnsafeACLIndex {
		return
	}
	if _, ok := c.lists[index]; ok {
		c.references[index]++
	}
}

// removeUsage drops a reference and the list with its last one.
func (c *aclCache) removeUsage(index int64) {
	if index == openUnsafeACLIndex {
		return
	}
	acl, ok := c.lists[index]
	if !ok {
		return
	}
	c.references[index]--
	if c.references[index] <= 0 {
		delete(c.references, index)
		delete(c.indexByKey, string(c.key(acl)))
		delete(c.lists, index)
	}
}

// indices returns the stored indices in ascending order. Java writes its
// HashMap's order; ascending is the deterministic choice made here.
func (c *aclCache) indices() []int64 {
	out := make([]int64, 0, len(c.lists))
	for index := range c.lists { // determinism:ok sorted below
		out = append(out, index)
	}
	slices.Sort(out)
	return out
}

// serialize writes the cache as ReferenceCountedACLCache.serialize: a count,
// then each index and its ACL vector.
func (c *aclCache) serialize(e *proto.Encoder) {
	indices := c.indices()
	e.WriteInt32(int32(len(indices)))
	for _, index := range indices {
		e.WriteInt64(index)
		proto.WriteVector(e, c.lists[index])
	}
}

// deserialize reads what serialize writes, replacing the lists with zero
// references (addUsage then counts the nodes' references and purgeUnused
// drops the rest). As in Java the last index only grows. A null ACL vector,
// on which Java throws a RuntimeException, is an error.
func (c *aclCache) deserialize(d *proto.Decoder) error {
	c.lists = make(map[int64][]proto.ACL)
	c.indexByKey = make(map[string]int64)
	c.references = make(map[int64]int64)
	for count := d.ReadInt32(); count > 0 && d.Err() == nil; count-- {
		index := d.ReadInt64()
		acl := proto.ReadVector[proto.ACL](d)
		if d.Err() != nil {
			break
		}
		if acl == nil {
			return fmt.Errorf("datatree: snapshot ACL %d has a null list", index)
		}
		c.lastIndex = max(c.lastIndex, index)
		c.lists[index] = acl
		c.indexByKey[aclKey(acl)] = index
		c.references[index] = 0
	}
	return d.Err()
}

// purgeUnused drops the lists that no node refers to.
func (c *aclCache) purgeUnused() {
	for index, count := range c.references { // determinism:ok deletes only, order-free
		if count <= 0 {
			delete(c.indexByKey, aclKey(c.lists[index]))
			delete(c.lists, index)
			delete(c.references, index)
		}
	}
}
