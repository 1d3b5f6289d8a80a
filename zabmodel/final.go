package zabmodel

import (
	"encoding/binary"
	"errors"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// --- Sessions at the edge (ZooKeeperServer) --------------------------------------------------------

// createSession is ZooKeeperServer.createSession: a new id from the role's tracker and a
// createSession request carrying the timeout.
func (zk *zkServer) createSession(c *clientConn, timeoutMs int32) int64 {
	var id int64
	if zk.global != nil {
		id = zk.global.createSession(timeoutMs)
	} else {
		id = zk.learned.createSession(timeoutMs)
	}
	body := binary.BigEndian.AppendUint32(nil, uint32(timeoutMs))
	zk.submit(&request{sessionID: id, op: proto.OpCreateSession, body: body, conn: c, owner: ownerLocal, createTimeoutMs: timeoutMs})
	return id
}

// reopenSession is ZooKeeperServer.reopenSession: a wrong password is refused at once; otherwise the
// session is revalidated (locally on a leader or standalone server, with the leader on a learner).
func (zk *zkServer) reopenSession(c *clientConn, id int64, passwd []byte, timeoutMs int32) {
	if id == 0 || string(passwd) != string(generatePasswd(id)) {
		c.finishSessionInit(false)
		return
	}
	switch zk.kind {
	case kindStandalone:
		c.finishSessionInit(zk.global.touch(id, timeoutMs))
	case kindLeader:
		valid := zk.global.touch(id, timeoutMs)
		if valid {
			_ = zk.global.setOwner(id, ownerLocal)
		}
		c.finishSessionInit(valid)
	default:
		zk.p.learner.revalidate(c, id, timeoutMs)
	}
}

// --- FinalRequestProcessor ------------------------------------------------------------------------

// finalProcess applies a request's txn, if any, and answers its connection, if it has one here.
func (zk *zkServer) finalProcess(r *request) {
	p := zk.p
	var res applyResult
	if r.entry != nil {
		res = zk.processTxn(r, SourceCommit)
	}
	if r.entry != nil && r.op == proto.OpCloseSession && r.conn == nil {
		// ZOOKEEPER-558: a session closed by expiry or through another server: close its connection
		// here, without an answer.
		if p.clients.closeSession(r.sessionID, "session closed") {
			return
		}
	}
	if r.conn == nil || r.conn.state == connClosed {
		return
	}
	zk.answer(r, res)
}

// processTxn is ZooKeeperServer.processTxn(Request): session events, the tree, outstanding changes
// and the committed log.
func (zk *zkServer) processTxn(r *request, source Source) applyResult {
	db := zk.p.db
	h := r.entry.Header
	zk.processTxnForSessionEvents(r.entry)
	res := db.applyTxn(r.entry, source)
	if zk.prep != nil {
		zk.prep.applied(h.Zxid)
	}
	if zk.kind != kindStandalone {
		db.addCommittedProposal(newCommittedProposal(zk.p.mem, r.entry))
	}
	return res
}

// processTxnForSessionEvents is ZooKeeperServer.processTxnForSessionEvents: a committed
// createSession is committed to the session tracker (commitSession), a closeSession removed from it
// (removeSession). Both trackers keep the database's session table (SessionTrackerImpl and
// LearnerSessionTracker share ZKDatabase.sessionsWithTimeouts); a learner's also forgets the
// session's touch.
//
// commitSession only records the session in that table (SessionTrackerImpl.commitSession,
// LeaderSessionTracker.commitSession): it neither tracks the session nor renews its expiry. The
// session was tracked, with the expiry its createSession's touch gave it, when that request was
// created or prepared (SessionTrackerImpl.createSession, PrepRequestProcessor's createSession
// case); a commit that comes late does not buy it more time.
func (zk *zkServer) processTxnForSessionEvents(entry *proto.TxnEntry) {
	db, h := zk.p.db, entry.Header
	switch h.Type {
	case proto.OpCreateSession:
		cs, ok := entry.Txn.(*proto.CreateSessionTxn)
		if !ok {
			return
		}
		db.sessions[h.ClientID] = cs.TimeoutMilliseconds
	case proto.OpCloseSession:
		if zk.global != nil {
			zk.global.removeSession(h.ClientID)
		}
		if zk.learned != nil {
			zk.learned.forget(h.ClientID)
		}
		delete(db.sessions, h.ClientID)
	}
}

// answer builds and sends the reply, as the switch of FinalRequestProcessor.processRequest does.
func (zk *zkServer) answer(r *request, res applyResult) {
	lastZxid := zk.p.db.lastProcessedZxid()
	if r.op == proto.OpCreateSession {
		r.conn.finishSessionInit(true)
		return
	}
	var body proto.Record
	var err error
	if r.op == proto.OpPing {
		// FinalRequestProcessor.processRequest throws the request's exception before its switch
		// reaches the ping case: a leader's PrepRequestProcessor checks a ping's session like a
		// read's, so a ping of a moved session tears its connection down like any request, and one
		// of a closing session is answered with SESSIONEXPIRED under the ping's xid.
		err = r.err
	} else {
		body, err = zk.response(r, res)
	}
	if errors.Is(err, proto.SessionMoved) {
		// A connection-level error: the connection is torn down (ZOOKEEPER-710).
		r.conn.close("session moved")
		return
	}
	code := proto.OK
	if err != nil {
		code = codeOf(err)
		body = nil
	}
	if r.op == proto.OpPing {
		r.conn.sendReply(proto.ReplyHeader{Xid: proto.PingXid, Zxid: lastZxid, Err: code}, nil)
		return
	}
	if zk.p.cfg.SelfTests.Has(SelfTestStaleRead) && code == proto.OK && CounterOf(lastZxid) > 0 {
		switch r.op {
		case proto.OpGetData, proto.OpExists, proto.OpGetChildren, proto.OpGetChildren2:
			lastZxid-- // The self-test's stale stamp: the state before the last transaction.
		}
	}
	r.conn.sendReply(proto.ReplyHeader{Xid: r.cxid, Zxid: lastZxid, Err: code}, body)
	if r.op == proto.OpCloseSession {
		r.conn.close("client closed its session")
	}
}

// codeOf turns an error into the code on the wire: a proto.Code, or MARSHALLINGERROR for anything
// else (FinalRequestProcessor's catch-all).
func codeOf(err error) proto.Code {
	var code proto.Code
	if errors.As(err, &code) {
		return code
	}
	return proto.MarshallingError
}

// response returns the record of a reply, or the KeeperException that replaces it.
func (zk *zkServer) response(r *request, res applyResult) (proto.Record, error) {
	if r.entry != nil && r.entry.Header.Type == proto.OpError {
		if zk.p.cfg.SelfTests.Has(SelfTestAckFailedWrite) && !errors.Is(r.err, proto.SessionMoved) {
			if body, ok := zk.pretendSuccess(r); ok {
				return body, nil
			}
		}
		if r.err != nil {
			return nil, r.err
		}
		return nil, errorTxnCode(r.entry)
	}
	if r.err != nil && (errors.Is(r.err, proto.SessionMoved) || r.op != proto.OpMulti) {
		return nil, r.err
	}
	switch r.op {
	case proto.OpMulti:
		return multiResponse(res)
	case proto.OpCreate:
		return &proto.CreateResponse{Path: res.res.Path}, res.errOrNil()
	case proto.OpCreate2, proto.OpCreateTTL, proto.OpCreateContainer:
		return &proto.Create2Response{Path: res.res.Path, Stat: derefStat(res.res.Stat)}, res.errOrNil()
	case proto.OpDelete, proto.OpDeleteContainer, proto.OpCloseSession:
		return nil, res.errOrNil()
	case proto.OpSetData:
		return &proto.SetDataResponse{Stat: derefStat(res.res.Stat)}, res.errOrNil()
	case proto.OpSetACL:
		return &proto.SetACLResponse{Stat: derefStat(res.res.Stat)}, res.errOrNil()
	case proto.OpCheck:
		return &proto.SetDataResponse{Stat: derefStat(res.res.Stat)}, res.errOrNil()
	case proto.OpSync:
		var req proto.SyncRequest
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		return &proto.SyncResponse{Path: req.Path}, nil
	}
	return zk.readResponse(r)
}

// pretendSuccess builds the reply a failed single write would have had if it had succeeded, for the
// ack-failed-write self-test: the requested path for a create (sequential creates are left alone,
// their name is the server's to choose), the node's current stat, if any, for a set. The write
// itself stays what it was, an error transaction that changed nothing.
func (zk *zkServer) pretendSuccess(r *request) (proto.Record, bool) {
	t := zk.p.db.tree
	switch r.op {
	case proto.OpCreate, proto.OpCreate2:
		var req proto.CreateRequest
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil || req.Flags.IsSequential() {
			return nil, false
		}
		if r.op == proto.OpCreate {
			return &proto.CreateResponse{Path: req.Path}, true
		}
		stat, _ := t.exists(req.Path, nil)
		return &proto.Create2Response{Path: req.Path, Stat: stat}, true
	case proto.OpSetData:
		var req proto.SetDataRequest
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, false
		}
		stat, _ := t.exists(req.Path, nil)
		return &proto.SetDataResponse{Stat: stat}, true
	case proto.OpDelete:
		return nil, true
	}
	return nil, false
}

func derefStat(s *proto.Stat) proto.Stat {
	if s == nil {
		return proto.Stat{}
	}
	return *s
}

func errorTxnCode(entry *proto.TxnEntry) error {
	if et, ok := entry.Txn.(*proto.ErrorTxn); ok {
		return et.Err
	}
	return proto.SystemError
}

func multiResponse(res applyResult) (proto.Record, error) {
	resp, sessionMoved, err := res.res.MultiResponse()
	if sessionMoved {
		return nil, proto.SessionMoved
	}
	if err != nil {
		return nil, proto.MarshallingError // "Invalid type of op"
	}
	return resp, nil
}

// readResponse serves the reads and the connection-level requests from the local tree.
func (zk *zkServer) readResponse(r *request) (proto.Record, error) {
	t := zk.p.db.tree
	c := r.conn
	watcher := func(watch bool) *clientConn {
		if watch {
			return c
		}
		return nil
	}
	switch r.op {
	case proto.OpExists:
		var req proto.ExistsRequest
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		if strings.IndexByte(req.Path, 0) >= 0 {
			return nil, proto.BadArguments
		}
		stat, err := t.exists(req.Path, watcher(req.Watch))
		if err != nil {
			return nil, err
		}
		return &proto.ExistsResponse{Stat: stat}, nil
	case proto.OpGetData:
		var req proto.GetDataRequest
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		data, stat, err := t.getData(req.Path, r.auth, watcher(req.Watch))
		if err != nil {
			return nil, err
		}
		return &proto.GetDataResponse{Data: data, Stat: stat}, nil
	case proto.OpGetChildren:
		var req proto.GetChildrenRequest
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		children, _, err := t.getChildren(req.Path, r.auth, watcher(req.Watch))
		if err != nil {
			return nil, err
		}
		return &proto.GetChildrenResponse{Children: children}, nil
	case proto.OpGetChildren2:
		var req proto.GetChildren2Request
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		children, stat, err := t.getChildren(req.Path, r.auth, watcher(req.Watch))
		if err != nil {
			return nil, err
		}
		return &proto.GetChildren2Response{Children: children, Stat: stat}, nil
	case proto.OpMultiRead:
		return zk.multiRead(r)
	case proto.OpGetACL:
		var req proto.GetACLRequest
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		acl, stat, err := t.getACL(req.Path, r.auth)
		if err != nil {
			return nil, err
		}
		return &proto.GetACLResponse{ACL: acl, Stat: stat}, nil
	}
	return zk.connectionRequest(r)
}

// connectionRequest serves the requests about the connection's watches and identity.
func (zk *zkServer) connectionRequest(r *request) (proto.Record, error) {
	t := zk.p.db.tree
	c := r.conn
	switch r.op {
	case proto.OpGetAllChildrenNumber:
		var req proto.GetAllChildrenNumberRequest
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		n, err := t.allChildrenNumber(req.Path, r.auth)
		if err != nil {
			return nil, err
		}
		return &proto.GetAllChildrenNumberResponse{TotalNumber: n}, nil
	case proto.OpSetWatches:
		var req proto.SetWatches
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		t.setWatches(req.RelativeZxid, req.DataWatches, req.ExistWatches, req.ChildWatches, nil, nil, c)
		return nil, nil
	case proto.OpSetWatches2:
		var req proto.SetWatches2
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		t.setWatches(req.RelativeZxid, req.DataWatches, req.ExistWatches, req.ChildWatches, req.PersistentWatches, req.PersistentRecursiveWatches, c)
		return nil, nil
	case proto.OpAddWatch:
		var req proto.AddWatchRequest
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		t.addWatch(req.Path, proto.AddWatchMode(req.Mode), c)
		return &proto.ErrorResponse{Err: proto.OK}, nil
	case proto.OpCheckWatches, proto.OpRemoveWatches:
		var req proto.CheckWatchesRequest
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		var found bool
		if r.op == proto.OpCheckWatches {
			found = t.containsWatcher(req.Path, proto.WatcherType(req.Type), c)
		} else {
			found = t.removeWatch(req.Path, proto.WatcherType(req.Type), c)
		}
		if !found {
			return nil, proto.NoWatcher
		}
		return nil, nil
	case proto.OpWhoAmI:
		return &proto.WhoAmIResponse{ClientInfo: clientInfos(r.auth)}, nil
	case proto.OpGetEphemerals:
		var req proto.GetEphemeralsRequest
		if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
			return nil, proto.MarshallingError
		}
		return &proto.GetEphemeralsResponse{Ephemerals: t.ephemeralsWithPrefix(r.sessionID, req.PrefixPath)}, nil
	}
	return nil, proto.MarshallingError
}

// clientInfos is AuthUtil.getClientInfos.
func clientInfos(auth []proto.ID) []proto.ClientInfo {
	out := make([]proto.ClientInfo, 0, len(auth))
	for _, id := range auth {
		out = append(out, proto.ClientInfo{AuthScheme: id.Scheme, User: id.ID})
	}
	return out
}

// multiRead is FinalRequestProcessor's multiRead case: each read runs on its own, and its failure
// (NONODE, NOAUTH) is its own error result, so the reply is OK with one result per op. The server
// rebuilds the ops with Op.getData(path) and Op.getChildren(path), which drops any watch flag. A
// body that mixes reads with writes does not decode (MultiOperationRecord refuses it), and a write
// op alone fails the loop ("Invalid type of readOp"): both answer MARSHALLINGERROR.
func (zk *zkServer) multiRead(r *request) (proto.Record, error) {
	var req proto.MultiRequest
	if err := zk.p.mem.decodeLenient(r.body, &req); err != nil {
		return nil, proto.MarshallingError
	}
	t := zk.p.db.tree
	resp := &proto.MultiResponse{Results: make([]proto.MultiResult, 0, len(req.Ops))}
	for _, op := range req.Ops {
		var result proto.MultiResult
		switch sub := op.Request.(type) {
		case *proto.GetChildrenRequest:
			children, _, err := t.getChildren(sub.Path, r.auth, nil)
			result = readResult(proto.OpGetChildren, &proto.GetChildrenResponse{Children: children}, err)
		case *proto.GetDataRequest:
			data, stat, err := t.getData(sub.Path, r.auth, nil)
			result = readResult(proto.OpGetData, &proto.GetDataResponse{Data: data, Stat: stat}, err)
		default:
			return nil, proto.MarshallingError
		}
		if result.Type == 0 {
			return nil, proto.MarshallingError // an error that is no KeeperException
		}
		resp.Results = append(resp.Results, result)
	}
	return resp, nil
}

// readResult is one multiRead result: the response, or the KeeperException's error result.
func readResult(op proto.OpCode, response proto.Record, err error) proto.MultiResult {
	if err == nil {
		return proto.MultiResult{Type: op, Response: response}
	}
	var code proto.Code
	if !errors.As(err, &code) {
		return proto.MultiResult{}
	}
	return proto.MultiResult{Type: proto.OpError, Err: code}
}
