package zabmodel

import "github.com/zabsim/zabsim/zabmodel/proto"

// appendPendingAtNewLeader is the NEWLEADER case of Learner.syncWithLeader in 3.8.5, 3.8.6 and
// 3.9.2 (ZOOKEEPER-4785's synchronous logging without ZOOKEEPER-4394's fix), for a follower: after
// zk.startupWithoutServing, every packet of packetsNotCommitted, committed or not, goes to the log
// through FollowerZooKeeperServer.appendRequest (which also files it in pendingTxns), the log is
// fsynced (ZKDatabase.commit), and packetsNotCommitted is cleared. Nothing is applied yet: the
// committed ones are committed after UPTODATE (fzk.commit of packetsCommitted), and the ACKs of
// the appended ones go out then too (requestsToAck). A COMMIT that arrives between NEWLEADER and
// UPTODATE finds packetsNotCommitted empty, and peekFirst().hdr throws a NullPointerException: the
// bug of ZOOKEEPER-4394, which stays in these releases (syncCommit).
func (l *learner) appendPendingAtNewLeader() {
	p := l.p
	l.zk.startup()
	for _, entry := range l.notLogged {
		if CounterOf(entry.Header.Zxid) != 0 {
			l.zk.pendingTxns = append(l.zk.pendingTxns, p.h.requestFromTxn(entry))
		}
		p.db.append(entry)
		if p.crashPoint("newleader-appended") {
			return
		}
		l.requestsToAck = append(l.requestsToAck, entry.Header.Zxid)
	}
	l.notLogged = nil
	p.db.fsyncNow()
}

// ackAppended sends, after UPTODATE, the ACKs of what appendPendingAtNewLeader appended
// (Learner.syncWithLeader's requestsToAck loop, right after zk.startServing).
func (l *learner) ackAppended() {
	for _, zxid := range l.requestsToAck {
		l.send(&proto.QuorumPacket{Type: pktAck, Zxid: zxid})
	}
	l.requestsToAck = nil
}
