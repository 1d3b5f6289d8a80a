package datatree

// ContainerCandidates is ContainerManager.getCandidates: the nodes the
// leader's container manager would now ask to delete (with deleteContainer
// requests, one per candidate, at most zookeeper.containerMaxPerMinute a
// minute). A container is a candidate once it has no children and has had
// one (cversion > 0), or, if maxNeverUsedIntervalMilliseconds is not 0
// (zookeeper.containerMaxNeverUsedIntervalMs, default 0), once it has stayed
// childless for longer than that since its last setData. A TTL node is a
// candidate once it has no children and more than its TTL has passed since
// its last setData (mtime). nowMilliseconds is the leader's wall clock; the
// server runs the check on its own timer (zookeeper.containerCheckIntervalMs,
// default one minute). The result is in the iteration order of the HashSet
// Java collects the candidates in, containers added before TTL nodes: the
// order in which the manager submits the deletes, and so their zxids.
func (t *Tree) ContainerCandidates(nowMilliseconds, maxNeverUsedIntervalMilliseconds int64) []string {
	var out []string
	for _, path := range t.Containers() {
		n := t.nodes.get(path)
		if n == nil || n.numChildren() != 0 {
			continue
		}
		elapsed := nowMilliseconds - n.stat.Mtime
		if n.stat.Cversion > 0 || (maxNeverUsedIntervalMilliseconds != 0 && elapsed > maxNeverUsedIntervalMilliseconds) {
			out = append(out, path)
		}
	}
	for _, path := range t.TTLs() {
		n := t.nodes.get(path)
		if n == nil || n.numChildren() != 0 {
			continue
		}
		if kind, err := t.kind(n.stat.EphemeralOwner); err != nil || kind != KindTTL {
			continue
		}
		ttl := TTLOf(n.stat.EphemeralOwner)
		if ttl != 0 && nowMilliseconds-n.stat.Mtime > ttl {
			out = append(out, path)
		}
	}
	var candidates javaHashSet
	for _, path := range out {
		candidates.add(path)
	}
	return candidates.keys()
}
