package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The follower's side of broadcast as a core (see ready.go): followerCore is
// FollowerZooKeeperServer's state (the proposals logged and awaiting their COMMIT, the local syncs
// forwarded to the leader and awaiting its SYNC) and decides, for a PROPOSAL, a COMMIT or a SYNC
// from the leader, what must happen: the proposal handed to the sync processor, which logs it and
// then has it acknowledged (SendAckRequestProcessor); the committed request handed to the commit
// processor; a note; or the end of the process (System.exit) for a COMMIT that is not the next
// pending txn. zkServer embeds it and is its driver (followerRun).
//
// Ordering contract: a proposal is filed as pending before it is handed to the sync processor, so
// that its COMMIT, which may arrive before it is logged, finds it; a COMMIT releases exactly the
// oldest pending txn, in zxid order.

// followerInputKind names what a step of the follower's core is about.
type followerInputKind uint8

const (
	// followerLog is FollowerZooKeeperServer.logRequest of req (a PROPOSAL, or a txn of the sync).
	followerLog followerInputKind = iota + 1
	// followerCommit is FollowerZooKeeperServer.commit of zxid.
	followerCommit
	// followerSyncForwarded files a local sync forwarded to the leader (req).
	followerSyncForwarded
	// followerSyncAnswered is FollowerZooKeeperServer.sync: the leader's SYNC arrived.
	followerSyncAnswered
)

// followerCore is FollowerZooKeeperServer's broadcast state (also an observer's forwarded syncs).
type followerCore struct {
	pendingTxns  []*request // logged, awaiting COMMIT
	pendingSyncs []*request // local syncs forwarded to the leader, awaiting SYNC
	readies      readyPool
}

func (c *followerCore) step(kind followerInputKind, req *request, zxid int64) *ready {
	out := c.readies.get()
	switch kind {
	case followerLog:
		if CounterOf(req.zxid()) != 0 {
			c.pendingTxns = append(c.pendingTxns, req)
		}
		out.add(effect{kind: effectHandOn, req: req})
	case followerCommit:
		if len(c.pendingTxns) == 0 {
			out.note("commit", fmt.Sprintf("committing %s without seeing txn", FormatZxid(zxid)))
			break
		}
		head := c.pendingTxns[0]
		if head.zxid() != zxid {
			out.add(effect{kind: effectExit, text: fmt.Sprintf("committing zxid %s but next pending txn %s", FormatZxid(zxid), FormatZxid(head.zxid()))})
			break
		}
		// Shift rather than reslice, so that the array is reused: a follower has only the
		// proposals in flight pending, a handful to copy.
		n := copy(c.pendingTxns, c.pendingTxns[1:])
		c.pendingTxns[n] = nil
		c.pendingTxns = c.pendingTxns[:n]
		out.add(effect{kind: effectCommitRequest, req: head})
	case followerSyncForwarded:
		c.pendingSyncs = append(c.pendingSyncs, req)
	case followerSyncAnswered:
		if len(c.pendingSyncs) == 0 {
			out.note("sync", "not expecting a sync")
			break
		}
		r := c.pendingSyncs[0]
		c.pendingSyncs = c.pendingSyncs[1:]
		out.add(effect{kind: effectCommitRequest, req: r})
	}
	return out
}

func (c *followerCore) done(r *ready) { c.readies.put(r) }

// followerRun is the driver of the follower's core: it steps it and applies the ready.
func (zk *zkServer) followerRun(kind followerInputKind, req *request, zxid int64) {
	out := zk.followerCore.step(kind, req, zxid)
	for i := range out.effects {
		e := &out.effects[i]
		if zk.p.applyReport(out, e) {
			continue
		}
		switch e.kind {
		case effectHandOn:
			zk.sync.processRequest(e.req)
		case effectCommitRequest:
			zk.commits.commit(e.req)
		default:
			panic("zabmodel: the follower's core asked for " + e.kind.String())
		}
	}
	zk.followerCore.done(out)
}

// logRequest logs a proposal; a COMMIT for it will follow.
func (zk *zkServer) logRequest(entry *proto.TxnEntry) {
	zk.followerRun(followerLog, zk.p.mem.requestFromTxn(entry), 0)
}

// commit is FollowerZooKeeperServer.commit: the head of the pending txns must be the one committed.
func (zk *zkServer) commit(zxid int64) { zk.followerRun(followerCommit, nil, zxid) }

// syncArrived is FollowerZooKeeperServer.sync: the leader answered the oldest forwarded sync.
func (zk *zkServer) syncArrived() { zk.followerRun(followerSyncAnswered, nil, 0) }
