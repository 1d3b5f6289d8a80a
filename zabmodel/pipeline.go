package zabmodel

import (
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// request is ZooKeeper's Request: one client request (or an internal one: a session expiry, a
// committed txn from the leader) travelling through a server's request processors.
type request struct {
	sessionID int64
	cxid      int32
	op        proto.OpCode
	body      []byte     // the request record's bytes, after the RequestHeader
	auth      []proto.ID // the connection's auth info, for ACL checks at the leader
	conn      *clientConn
	owner     any // the session owner for checkSession: a connection, or a learner handler

	// createTimeoutMs is the negotiated timeout a createSession request carries.
	createTimeoutMs int32

	// entry is the transaction once prepared (leader, standalone) or received (learner).
	entry *proto.TxnEntry
	// err is the KeeperException PrepRequestProcessor attached (for requests without a txn, or
	// besides an error txn).
	err error
	// learnerSync marks a sync forwarded by a learner (LearnerSyncRequest): the leader answers it
	// with a SYNC packet on that learner's channel.
	learnerSync *learnerHandler
}

func (r *request) zxid() int64 {
	if r.entry == nil {
		return 0
	}
	return r.entry.Header.Zxid
}

// needsCommit is CommitProcessor.needCommit.
func (r *request) needsCommit(matchSyncs bool) bool {
	switch r.op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateTTL, proto.OpCreateContainer, proto.OpDelete,
		proto.OpDeleteContainer, proto.OpSetData, proto.OpReconfig, proto.OpMulti, proto.OpSetACL,
		proto.OpCheck, proto.OpCreateSession, proto.OpCloseSession:
		return true
	case proto.OpSync:
		return matchSyncs
	}
	return false
}

// serverKind says which request processor chain a zkServer runs.
type serverKind uint8

const (
	kindStandalone serverKind = iota
	kindLeader
	kindFollower
	kindObserver
)

// zkServer is ZooKeeperServer and its subclasses for one role: the request processor chain, the
// session tracker and, on the leader, the zxid counter.
type zkServer struct {
	p    *peer
	kind serverKind

	hzxid   int64 // the last zxid handed out (ZooKeeperServer.hzxid)
	prep    *preparer
	sync    *syncProcessor
	commits *commitProcessor

	global  *globalTracker  // leader and standalone
	learned *learnerTracker // followers and observers

	running bool
	// fullyShutDown is ZooKeeperServer.shutdown's argument: true when another server using the same
	// database will not replace this one in the process. Learner.shutdown passes true while a SNAP
	// sync has not reached NEWLEADER, so that the tree received from the leader, which nothing on
	// disk holds yet, is dropped (ZKDatabase.clear) instead of fast-forwarded.
	fullyShutDown bool

	containers *containerManager // leader and standalone, once started

	// followerCore is FollowerZooKeeperServer's broadcast state: the pending txns and syncs
	// (followercore.go).
	followerCore
}

func newZKServer(p *peer, kind serverKind) *zkServer {
	zk := &zkServer{p: p, kind: kind}
	switch kind {
	case kindStandalone:
		zk.sync = newSyncProcessor(p, zk)
	case kindLeader:
		zk.commits = newCommitProcessor(zk, false)
		zk.sync = newSyncProcessor(p, zk)
	case kindFollower:
		// The early-sync self-test answers a sync like a read, in session order, without
		// waiting for the leader's reply (which it never asks for).
		zk.commits = newCommitProcessor(zk, !p.cfg.SelfTests.Has(SelfTestEarlySync))
		zk.sync = newSyncProcessor(p, zk)
	case kindObserver:
		zk.commits = newCommitProcessor(zk, !p.cfg.SelfTests.Has(SelfTestEarlySync))
		zk.sync = newSyncProcessor(p, zk)
	}
	return zk
}

// createSessionTracker builds the tracker of the role from the database's sessions.
func (zk *zkServer) createSessionTracker() {
	switch zk.kind {
	case kindStandalone, kindLeader:
		zk.global = newGlobalTracker(zk.p, zk)
		zk.prep = newPreparer(zk)
	default:
		zk.learned = newLearnerTracker(zk.p)
	}
}

// startup is ZooKeeperServer.startup: the chain runs from now on.
func (zk *zkServer) startup() {
	if zk.global == nil && zk.learned == nil {
		zk.createSessionTracker()
	}
	zk.running = true
}

// shutdown is ZooKeeperServer.shutdown(false): the session tracker and the container manager
// stop, then the sync processor's core orders its stop against the fast-forward of the tree
// (syncCore.stop): 3.8.0's fixed code stops the processor first; a learner's server under
// ZOOKEEPER-4712 fast-forwards while the processor, never told to stop, races it.
func (zk *zkServer) shutdown() {
	zk.running = false
	zk.containers.stop()
	if zk.global != nil {
		zk.global.shutdown()
	}
	learnerRole := zk.kind == kindFollower || zk.kind == kindObserver
	zk.sync.stop(learnerRole && zk.p.cfg.Bugs.Has(BugZK4712))
}

// fastForward is the database part of ZooKeeperServer.shutdown(fullyShutDown): a full shutdown
// clears the database, which the next role reloads from disk (QuorumPeer.getLastLoggedZxid);
// otherwise the tree is fast-forwarded to the txn log.
func (zk *zkServer) fastForward() {
	if zk.fullyShutDown {
		zk.p.db.clear()
		return
	}
	if zk.p.cfg.Bugs.Has(BugZK2845) {
		return // The tree keeps only what it had applied; the log may hold more.
	}
	zk.p.db.fastForward()
}

// nextZxid is ZooKeeperServer.getNextZxid.
func (zk *zkServer) nextZxid() int64 {
	zk.hzxid++
	return zk.hzxid
}

// touch is ZooKeeperServer.touch: every request renews its session. A request of a session the
// tracker no longer knows is dropped without a reply (MissingSessionException).
func (zk *zkServer) touch(r *request) bool {
	if r.conn == nil {
		return true
	}
	timeout := r.conn.sessionTimeoutMs
	if zk.global != nil {
		return zk.global.touch(r.sessionID, timeout)
	}
	return zk.learned.touch(r.sessionID, timeout)
}

// submit is ZooKeeperServer.submitRequestNow: the entry of the chain.
func (zk *zkServer) submit(r *request) {
	if !zk.running {
		return
	}
	if !zk.touch(r) {
		zk.p.note("request", "dropping %v of session %#x: no such session, probably expired", r.op, r.sessionID)
		return
	}
	if !r.op.IsValid() {
		if r.conn != nil {
			r.conn.sendReply(proto.ReplyHeader{Xid: r.cxid, Zxid: zk.p.db.lastProcessedZxid(), Err: proto.Unimplemented}, nil)
		}
		return
	}
	switch zk.kind {
	case kindStandalone, kindLeader:
		zk.prepRequest(r)
	case kindFollower, kindObserver:
		zk.learnerRequest(r)
	}
}

// prepRequest is PrepRequestProcessor on a leader or a standalone server, followed by the next stage.
func (zk *zkServer) prepRequest(r *request) {
	zk.prep.prepare(r)
	switch zk.kind {
	case kindStandalone:
		if r.entry != nil {
			zk.p.observe(Event{Kind: EventPropose, Zxid: r.zxid(), Hash: zk.p.txnHash(r.entry), Epoch: EpochOf(r.zxid()), Txn: r.entry})
		}
		zk.sync.processRequest(r)
	case kindLeader:
		zk.p.leader.proposalRequest(r)
	}
}

// learnerRequest is FollowerRequestProcessor / ObserverRequestProcessor: every request waits in the
// commit processor; writes (and syncs) also go to the leader.
func (zk *zkServer) learnerRequest(r *request) {
	zk.commits.processRequest(r)
	switch r.op {
	case proto.OpSync:
		if zk.p.cfg.SelfTests.Has(SelfTestEarlySync) {
			return // The self-test: answered from this server's state (see newZKServer).
		}
		zk.followerRun(followerSyncForwarded, r, 0)
		zk.p.learner.forward(r)
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateTTL, proto.OpCreateContainer, proto.OpDelete,
		proto.OpDeleteContainer, proto.OpSetData, proto.OpReconfig, proto.OpSetACL, proto.OpMulti,
		proto.OpCheck, proto.OpCreateSession, proto.OpCloseSession:
		zk.p.learner.forward(r)
	}
}

// expireSession is ZooKeeperServer.expire: a closeSession request without a connection.
func (zk *zkServer) expireSession(id int64, timeoutMs int32) {
	zk.submit(&request{sessionID: id, op: proto.OpCloseSession})
}

// --- After the sync processor -------------------------------------------------------------------

// standaloneCommit is the standalone chain's step from SyncRequestProcessor to FinalRequestProcessor:
// a txn that is logged and fsynced on the only server is committed.
func (zk *zkServer) standaloneCommit(r *request) {
	if r.entry != nil {
		zk.p.observe(Event{Kind: EventCommit, Zxid: r.zxid(), Hash: zk.p.txnHash(r.entry), Epoch: EpochOf(r.zxid()), Txn: r.entry})
	}
	zk.finalProcess(r)
}

// leaderAck is AckRequestProcessor: the leader acknowledges its own proposal once it is logged.
func (zk *zkServer) leaderAck(r *request) {
	if l := zk.p.leader; l != nil && r.entry != nil {
		l.processAck(zk.p.sid, r.zxid())
	}
}

// followerAck is SendAckRequestProcessor.
func (zk *zkServer) followerAck(r *request) {
	if r.op == proto.OpSync || r.entry == nil {
		return
	}
	if l := zk.p.learner; l != nil {
		l.sendAck(r.zxid())
	}
}

// --- Follower side of broadcast (FollowerZooKeeperServer) ---------------------------------------

func (m *memory) requestFromTxn(entry *proto.TxnEntry) *request {
	r := m.requests.New()
	*r = request{sessionID: entry.Header.ClientID, cxid: entry.Header.Cxid, op: entry.Header.Type, entry: entry}
	return r
}
