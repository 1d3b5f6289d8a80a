package zabmodel

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/datatree"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// tree adapts datatree.Tree, the data layer, to the server: every call the server makes into the
// tree goes through here.
type tree struct{ t *datatree.Tree }

func treeConfig(cfg *Config) datatree.Config {
	return datatree.Config{ExtendedTypes: cfg.ExtendedTypes, StaleACLOnReplay: cfg.Bugs.Has(BugZK4846)}
}

func newTree(cfg *Config) *tree { return &tree{t: datatree.New(treeConfig(cfg))} }

func (t *tree) lastProcessedZxid() int64        { return t.t.LastProcessedZxid() }
func (t *tree) setLastProcessedZxid(z int64)    { t.t.SetLastProcessedZxid(z) }
func (t *tree) digest() int64                   { return t.t.Digest() }
func (t *tree) removeWatcher(w *clientConn)     { t.t.RemoveWatcher(w) }
func (t *tree) sessionsWithEphemerals() []int64 { return t.t.EphemeralSessions() }

// killSession is DataTree.killSession outside a txn: the leader's cleanup of dead sessions.
func (t *tree) killSession(session, zxid int64) { _ = t.t.KillSession(session, zxid) }

// applyResult is what the server needs of DataTree.ProcessTxnResult.
type applyResult struct {
	res            datatree.Result
	digestMismatch bool
}

func (t *tree) apply(entry *proto.TxnEntry) applyResult {
	res := t.t.Apply(entry)
	return applyResult{res: res, digestMismatch: res.DigestMismatch}
}

func (r applyResult) errOrNil() error {
	if r.res.Err == proto.OK {
		return nil
	}
	return r.res.Err
}

// --- Reads ------------------------------------------------------------------------------------------

func watcherOf(w *clientConn) datatree.Watcher {
	if w == nil {
		return nil
	}
	return w
}

func (t *tree) exists(path string, w *clientConn) (proto.Stat, error) {
	return t.t.Exists(path, watcherOf(w))
}

func (t *tree) getData(path string, auth []proto.ID, w *clientConn) ([]byte, proto.Stat, error) {
	return t.t.GetData(path, auth, watcherOf(w))
}

func (t *tree) getChildren(path string, auth []proto.ID, w *clientConn) ([]string, proto.Stat, error) {
	return t.t.GetChildren(path, auth, watcherOf(w))
}

func (t *tree) getACL(path string, auth []proto.ID) ([]proto.ACL, proto.Stat, error) {
	return t.t.GetACL(path, auth)
}

func (t *tree) allChildrenNumber(path string, auth []proto.ID) (int32, error) {
	return t.t.GetAllChildrenNumber(path, auth)
}

func (t *tree) ephemeralsWithPrefix(session int64, prefix string) []string {
	if strings.TrimSpace(prefix) == "/" {
		prefix = ""
	}
	return t.t.GetEphemerals(session, prefix)
}

func (t *tree) setWatches(relativeZxid int64, data, exist, child, persistent, recursive []string, w *clientConn) {
	t.t.SetWatches(relativeZxid, data, exist, child, persistent, recursive, w)
}

func (t *tree) addWatch(path string, mode proto.AddWatchMode, w *clientConn) {
	_ = t.t.AddWatch(path, mode, w)
}

func (t *tree) containsWatcher(path string, typ proto.WatcherType, w *clientConn) bool {
	return t.t.CheckWatches(path, typ, w) == nil
}

func (t *tree) removeWatch(path string, typ proto.WatcherType, w *clientConn) bool {
	return t.t.RemoveWatches(path, typ, w) == nil
}

// --- Snapshots ----------------------------------------------------------------------------------------

// serializeTree is a snapshot file: FileSnap's format, with the database's session table.
func serializeTree(t *tree, sessions map[int64]int32) []byte {
	return t.t.Serialize(sessionList(sessions))
}

// deserializeTree loads a snapshot file taken at zxid, and its session table.
func deserializeTree(b []byte, zxid int64, cfg *Config) (*tree, map[int64]int32, error) {
	t, sessions, err := datatree.Deserialize(b, zxid, treeConfig(cfg))
	if err != nil {
		return nil, nil, err
	}
	return &tree{t: t}, sessionTable(sessions), nil
}

// deserializeSync reads a SNAP sync's stream.
func deserializeSync(b []byte, zxid int64, cfg *Config) (*tree, map[int64]int32, error) {
	t, sessions, err := datatree.DeserializeSync(b, zxid, treeConfig(cfg))
	if err != nil {
		return nil, nil, err
	}
	return &tree{t: t}, sessionTable(sessions), nil
}

// sessionList is a session table in id order, as snapshots write it.
func sessionList(sessions map[int64]int32) []datatree.Session {
	out := make([]datatree.Session, 0, len(sessions))
	for _, id := range sortedKeys(sessions) {
		out = append(out, datatree.Session{ID: id, TimeoutMilliseconds: sessions[id]})
	}
	return out
}

func sessionTable(list []datatree.Session) map[int64]int32 {
	out := make(map[int64]int32, len(list))
	for _, s := range list {
		out[s.ID] = s.TimeoutMilliseconds
	}
	return out
}

// --- Preparation ----------------------------------------------------------------------------------------

// preparer is PrepRequestProcessor over the role's tree and session tracker.
type preparer struct {
	zk *zkServer
	pr *datatree.Preparer
}

func newPreparer(zk *zkServer) *preparer {
	pr, err := datatree.NewPreparer(zk.p.db.tree.t, trackerSessions{zk.global})
	if err != nil {
		panic(err)
	}
	return &preparer{zk: zk, pr: pr}
}

func (pr *preparer) applied(zxid int64) { pr.pr.Applied(zxid) }

// prepare turns a request into its txn, or attaches the session check's error to it.
func (pr *preparer) prepare(r *request) {
	zk := pr.zk
	var body proto.Record
	if r.op == proto.OpDeleteContainer {
		// The container manager's request carries the bare UTF-8 path, which PrepRequestProcessor
		// reads as new String(request.request.array()).
		body = &proto.DeleteRequest{Path: string(r.body)}
	} else if r.op != proto.OpCreateSession && r.op != proto.OpCloseSession {
		if rec := proto.NewRequest(r.op); rec != nil {
			if zk.p.mem.decodeLenient(r.body, rec) == nil {
				body = rec
			}
		}
	}
	req := datatree.Request{
		SessionID: r.sessionID, Cxid: r.cxid, Type: r.op, Body: body,
		SessionTimeoutMilliseconds: r.createTimeoutMs, Auth: r.auth, Owner: r.owner,
		TimeMilliseconds: zk.p.h.wallMillis(),
	}
	if datatree.TakesZxid(r.op, body) {
		req.Zxid = zk.nextZxid()
	}
	out, err := pr.pr.Prepare(req)
	if err != nil {
		panic(fmt.Sprintf("zabmodel: the server broke the preparer's contract: %v", err))
	}
	r.entry = out.Txn
	if out.Err != proto.OK {
		r.err = out.Err
	}
}

// trackerSessions adapts the global session tracker to datatree.Sessions.
type trackerSessions struct{ t *globalTracker }

func (s trackerSessions) CheckSession(id int64, owner any) error { return s.t.checkSession(id, owner) }

func (s trackerSessions) CheckGlobalSession(id int64, owner any) error {
	err := s.t.checkSession(id, owner)
	if errors.Is(err, proto.UnknownSession) {
		return proto.SessionExpired
	}
	return err
}

func (s trackerSessions) TrackSession(id int64, timeoutMs int32) { s.t.trackSession(id, timeoutMs) }
func (s trackerSessions) SetOwner(id int64, owner any) error     { return s.t.setOwner(id, owner) }
func (s trackerSessions) SetSessionClosing(id int64)             { s.t.setClosing(id) }
