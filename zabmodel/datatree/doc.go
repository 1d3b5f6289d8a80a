// Package datatree is the data layer of a simulated ZooKeeper 3.8.0 server,
// split as ZooKeeper splits it: the znode tree with its digest, watches and
// snapshots (DataTree, ZKDatabase, WatchManager, FileSnap), and request
// preparation (PrepRequestProcessor), with the parts of
// FinalRequestProcessor that read the tree and check ACLs.
//
// Fidelity to the Java code is the point: error codes, their order, stats,
// sequential names, digests, watch triggers and snapshot bytes follow 3.8.0,
// including its quirks (each documented where it is kept). Where Java's
// behaviour depends on HashSet or HashMap iteration order, this package
// picks a documented deterministic order instead: children, ephemerals and
// close-session paths sorted, watch notifications in collection order. The
// one exception is a connection's identities, whose Java order decides the
// ACL an "auth" entry expands to: AuthInfo reproduces it exactly.
//
// A leader's write path:
//
//	tree := datatree.New(datatree.Config{})
//	prep, err := datatree.NewPreparer(tree, sessionTracker) // the server's Sessions
//	req := datatree.Request{SessionID: id, Cxid: xid, Type: proto.OpCreate, Body: body,
//		Auth: auth.IDs(), Owner: conn, TimeMilliseconds: now}
//	if datatree.TakesZxid(req.Type, req.Body) {
//		req.Zxid = nextZxid() // zks.getNextZxid()
//	}
//	prepared, err := prep.Prepare(req) // err: a broken contract only
//	if prepared.Txn == nil {
//		reply(prepared.Err) // reads go on to the tree, with prepared.Err as the session check
//	}
//	// propose prepared.Txn, log it, wait for the quorum, then:
//	result := tree.Apply(prepared.Txn) // fires watches via Watcher.Process
//	prep.Applied(prepared.Txn.Header.Zxid)
//	if result.DigestMismatch { ... } // surface to the checkers
//
// A follower applies the txns it is sent with Apply alone. Reads go
// straight to the tree, after the Preparer's session check:
//
//	data, stat, err := tree.GetData(path, auth.IDs(), watcherOrNil)
//	stat, err = tree.Exists(path, watcherOrNil) // leaves the watch even on NoNode
//
// Snapshots, and the state a SNAP sync carries:
//
//	b := tree.Serialize(sessions)                       // a FileSnap file's bytes
//	restored, sessions, err := datatree.Deserialize(b, snapshotZxid, config)
//	b = tree.SerializeSync(sessions)                    // what LearnerHandler streams
//	restored, sessions, err = datatree.DeserializeSync(b, snapZxid, config)
//
// Everything here is deterministic and single-threaded: no clock (times
// arrive in txn headers and arguments), no randomness, no goroutines, and no
// unsorted map iteration that can reach a result.
package datatree
