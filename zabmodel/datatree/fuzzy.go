package datatree

import (
	"cmp"
	"slices"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// SnapshotWriter serializes a live tree a few nodes at a time, as ZooKeeper's snapshot thread
// does: DataTree.serialize walks the tree from its own thread (SyncRequestProcessor's "Snapshot
// Thread" calling ZooKeeperServer.takeSnapshot, FileTxnSnapLog.save and FileSnap.serialize, or a
// LearnerHandler streaming a SNAP through ZKDatabase.serializeSnapshot) while the request
// processors keep applying transactions. The caller applies transactions to the same tree between
// two calls to Step, and the result is a fuzzy snapshot, exactly as Java's:
//
//   - the session table (SerializeUtils.serializeSnapshot copies it first) and the ACL cache
//     (DataTree.serialize writes it before any node) are as they were at NewSnapshotWriter;
//   - each node is written as it is when the walk reaches it (DataTree.serializeNode copies the
//     stat and the child names under the node's lock), so a node may reflect transactions applied
//     after the snapshot's zxid, a child created after its parent was written is missing, and a
//     child deleted after its parent was written is skipped (serializeNode returns on a null node);
//   - the digest that ends a snapshot file is the one of the last transaction applied when the
//     walk ends (DataTree.serializeZxidDigest reads lastProcessedZxidDigest then), so that a load
//     compares it only once log replay has reached that zxid (DataTree.compareSnapshotDigests) and
//     compares no transaction's digest before (DataTree.compareDigest: "do not compare digest if
//     we're still in fuzzy state").
//
// The file's zxid, which Java puts in its name, is the caller's: FileTxnSnapLog.save reads
// lastProcessedZxid before serializing.
type SnapshotWriter struct {
	t    *Tree
	e    proto.Encoder
	file bool
	// stack holds the paths still to write, the next one last: the walk's recursion, unrolled.
	stack []string
	nodes int
}

// NewSnapshotWriter starts a snapshot of t: a snapshot file (FileSnap.serialize) when file is
// true, otherwise the stream a leader sends after SNAP (ZKDatabase.serializeSnapshot and the
// "BenWasHere" signature). It writes the header, the session table and the ACL cache now.
func (t *Tree) NewSnapshotWriter(sessions []Session, file bool) *SnapshotWriter {
	w := &SnapshotWriter{t: t, file: file, stack: []string{""}}
	if file {
		header := proto.FileHeader{Magic: proto.SnapshotMagic, Version: snapshotVersion, DBID: snapshotDBID}
		header.Encode(&w.e)
	}
	sorted := slices.Clone(sessions)
	slices.SortFunc(sorted, func(a, b Session) int { return cmp.Compare(a.ID, b.ID) })
	w.e.WriteInt32(int32(len(sorted)))
	for _, s := range sorted {
		w.e.WriteInt64(s.ID)
		w.e.WriteInt32(s.TimeoutMilliseconds)
	}
	t.acls.serialize(&w.e)
	return w
}

// Step writes up to n more nodes, depth first from the root with children in sorted order, each
// as the tree holds it now, and reports whether the walk is over.
func (w *SnapshotWriter) Step(n int) bool {
	for ; n > 0 && len(w.stack) > 0; n-- {
		last := len(w.stack) - 1
		path := w.stack[last]
		w.stack = w.stack[:last]
		node := w.t.nodes.get(path)
		if node == nil {
			continue // Deleted since its parent was written: DataTree.serializeNode returns.
		}
		w.e.WriteString(path)
		w.e.WriteBuffer(node.data)
		w.e.WriteInt64(node.acl)
		node.stat.Encode(&w.e)
		w.nodes++
		children := node.sortedChildren()
		for i := len(children) - 1; i >= 0; i-- {
			w.stack = append(w.stack, path+"/"+children[i])
		}
	}
	return len(w.stack) == 0
}

// Written returns how many nodes the walk has written so far.
func (w *SnapshotWriter) Written() int { return w.nodes }

// Finish writes the nodes the walk has not reached yet, then the end of the snapshot: the "/" that
// ends the nodes, and for a file a seal, the digest of the last applied transaction and a second
// seal (FileSnap.serialize), for a SNAP stream the signature. It returns the bytes; the writer must
// not be used afterwards.
func (w *SnapshotWriter) Finish() []byte {
	for !w.Step(len(w.stack)) {
	}
	w.e.WriteString("/")
	if !w.file {
		w.e.WriteString(syncSignature)
		return w.e.Bytes()
	}
	seal(&w.e)
	digest := ZxidDigest{Version: DigestVersion}
	if w.t.hasLastZxidDigest {
		digest = w.t.lastZxidDigest
	}
	w.e.WriteInt64(digest.Zxid)
	w.e.WriteInt32(digest.Version)
	w.e.WriteInt64(digest.Digest)
	seal(&w.e)
	return w.e.Bytes()
}
