package datatree

import (
	"bytes"
	"fmt"
	"slices"
)

// maxDifferences bounds the differences Diff lists.
const maxDifferences = 20

// Equal reports whether two trees hold the same state: the same nodes with
// the same data (null and empty told apart), stats, ACLs and children, the
// same ephemerals, containers, TTL nodes, quota roots, digest
// and lastProcessedZxid. Watches, ACL cache indices and the digest history
// are not compared.
func (t *Tree) Equal(o *Tree) bool { return len(t.Diff(o)) == 0 }

// Diff lists the differences Equal looks for, at most 20, in a fixed order.
func (t *Tree) Diff(o *Tree) []string {
	var out []string
	add := func(format string, args ...any) {
		if len(out) < maxDifferences {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	if t.lastProcessedZxid != o.lastProcessedZxid {
		add("lastProcessedZxid %#x != %#x", t.lastProcessedZxid, o.lastProcessedZxid)
	}
	if t.Digest() != o.Digest() {
		add("digest %d != %d", t.Digest(), o.Digest())
	}
	t.diffNodes(o, add)
	for _, session := range mergedKeys(t.ephemerals, o.ephemerals) {
		if a, b := t.Ephemerals(session), o.Ephemerals(session); !slices.Equal(a, b) {
			add("ephemerals of %#x: %q != %q", session, a, b)
		}
	}
	if a, b := t.Containers(), o.Containers(); !slices.Equal(a, b) {
		add("containers %q != %q", a, b)
	}
	if a, b := t.TTLs(), o.TTLs(); !slices.Equal(a, b) {
		add("ttl nodes %q != %q", a, b)
	}
	if a, b := t.quotas.properties(), o.quotas.properties(); !slices.Equal(a, b) {
		add("quota roots %q != %q", a, b)
	}
	return out
}

func (t *Tree) diffNodes(o *Tree, add func(string, ...any)) {
	for _, path := range mergedKeys(t.nodes.nodes, o.nodes.nodes) {
		a, b := t.nodes.get(path), o.nodes.get(path)
		switch {
		case a == nil:
			add("node %q missing on the left", path)
		case b == nil:
			add("node %q missing on the right", path)
		default:
			if (a.data == nil) != (b.data == nil) || !bytes.Equal(a.data, b.data) {
				add("node %q data %q != %q", path, a.data, b.data)
			}
			if a.stat != b.stat {
				add("node %q stat %+v != %+v", path, a.stat, b.stat)
			}
			aclA, errA := t.nodeACL(a)
			aclB, errB := o.nodeACL(b)
			if errA != nil || errB != nil || !slices.Equal(aclA, aclB) {
				add("node %q acl %v != %v", path, aclA, aclB)
			}
			if ca, cb := a.sortedChildren(), b.sortedChildren(); !slices.Equal(ca, cb) {
				add("node %q children %q != %q", path, ca, cb)
			}
		}
	}
}

// mergedKeys returns the keys of both maps, sorted, each once; keys whose
// value is an empty set in one map and absent in the other are skipped when
// the values are sets, since Java leaves empty ephemeral sets behind.
func mergedKeys[K interface{ ~int64 | ~string }, V any](a, b map[K]V) []K {
	keys := append(sortedKeys(a), sortedKeys(b)...)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	out := keys[:0]
	for _, k := range keys {
		if !emptySet(a[k]) || !emptySet(b[k]) {
			out = append(out, k)
		}
	}
	return out
}

func emptySet(v any) bool {
	set, ok := v.(*javaHashSet)
	return ok && set.len() == 0
}
