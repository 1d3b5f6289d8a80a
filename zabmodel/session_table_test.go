package zabmodel

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestTheSessionTableIsTheDatabasesNotTheTrees: as in ZooKeeper, applying a createSession or a
// closeSession to the tree (ZKDatabase.processTxn, DataTree.processTxn) leaves the session table
// alone; log replay (FileTxnSnapLog.processTransaction) and the session tracker
// (ZooKeeperServer.processTxnForSessionEvents) keep it, and snapshots carry it.
func TestTheSessionTableIsTheDatabasesNotTheTrees(t *testing.T) {
	f := newFixture(t, 1, Config{Voters: 1})
	f.run(clock.Second)
	p := f.e.Server(1).p
	require.NotNil(t, p)
	db := p.db
	next := func(typ proto.OpCode, session int64, txn proto.Record) *proto.TxnEntry {
		return &proto.TxnEntry{Header: proto.TxnHeader{ClientID: session, Zxid: db.lastProcessedZxid() + 1, Type: typ}, Txn: txn}
	}

	db.applyTxn(next(proto.OpCreateSession, 0x41, &proto.CreateSessionTxn{TimeoutMilliseconds: 4000}), SourceCommit)
	assert.NotContains(t, db.sessions, int64(0x41), "the tree's apply does not keep sessions")

	db.processTransaction(new(ready), next(proto.OpCreateSession, 0x42, &proto.CreateSessionTxn{TimeoutMilliseconds: 5000}), SourceStartup)
	assert.Equal(t, int32(5000), db.sessions[0x42], "log replay does")

	p.zk.processTxn(p.mem.requestFromTxn(next(proto.OpCreateSession, 0x43, &proto.CreateSessionTxn{TimeoutMilliseconds: 6000})), SourceCommit)
	assert.Equal(t, int32(6000), db.sessions[0x43], "and so does the session tracker")
	assert.False(t, p.zk.global.isTracking(0x43),
		"commitSession records the session in the table without tracking it (SessionTrackerImpl.commitSession)")

	db.applyTxn(next(proto.OpCloseSession, 0x42, &proto.CloseSessionTxn{}), SourceCommit)
	assert.Contains(t, db.sessions, int64(0x42), "a closeSession applied to the tree alone leaves the session in the table")

	p.zk.processTxn(p.mem.requestFromTxn(next(proto.OpCloseSession, 0x43, &proto.CloseSessionTxn{})), SourceCommit)
	assert.NotContains(t, db.sessions, int64(0x43))
	assert.False(t, p.zk.global.isTracking(0x43))

	db.snapshot()
	want := maps.Clone(db.sessions)
	db.loadDataBase(SourceStartup)
	assert.Equal(t, want, db.sessions, "a snapshot carries the table")
	assert.Contains(t, db.sessions, int64(0x42))
}

// TestACommittedCreateSessionDoesNotRenewTheSession: the expiry of a new session is set when the
// server creates it (SessionTrackerImpl.createSession, then the request's touch); its createSession
// committing later only records it in the session table (SessionTrackerImpl.commitSession), so a
// slow commit does not push the expiry back.
func TestACommittedCreateSessionDoesNotRenewTheSession(t *testing.T) {
	f := newFixture(t, 1, Config{Voters: 1})
	f.run(clock.Second)
	p := f.e.Server(1).p
	require.NotNil(t, p)
	tracker := p.zk.global
	require.NotNil(t, tracker)
	const timeoutMs = 4000
	id := tracker.createSession(timeoutMs)
	session := tracker.sessions[id]
	require.NotNil(t, session)
	expiry := session.expiry
	require.Zero(t, expiry%tracker.interval(), "the expiry is rounded to the tick (ExpiryQueue.roundToNextInterval)")

	f.run(p.cfg.TickTime + 500*clock.Millisecond) // The commit comes more than a tick later.
	entry := &proto.TxnEntry{
		Header: proto.TxnHeader{ClientID: id, Zxid: p.db.lastProcessedZxid() + 1, Type: proto.OpCreateSession},
		Txn:    &proto.CreateSessionTxn{TimeoutMilliseconds: timeoutMs},
	}
	p.zk.processTxn(p.mem.requestFromTxn(entry), SourceCommit)
	assert.Equal(t, int32(timeoutMs), p.db.sessions[id], "the commit records the session in the table")
	assert.Equal(t, expiry, session.expiry, "the commit does not renew the session")
}

// TestTheTrackerExpiresAClosingSessionWhoseBucketComesDue: a session that a closeSession marked
// closing (PrepRequestProcessor's setSessionClosing) stays in its expiry bucket; when the bucket
// comes due before that closeSession committed, SessionTrackerImpl.run expires it all the same,
// and a second closeSession follows.
func TestTheTrackerExpiresAClosingSessionWhoseBucketComesDue(t *testing.T) {
	f := newFixture(t, 1, Config{Voters: 1})
	f.run(clock.Second)
	p := f.e.Server(1).p
	require.NotNil(t, p)
	var expired []int64
	tracker := newGlobalTracker(p, expireFunc(func(id int64, _ int32) { expired = append(expired, id) }))
	defer tracker.shutdown()
	closing := tracker.createSession(4000)
	healthy := tracker.createSession(4000)
	tracker.setClosing(closing)
	require.ErrorIs(t, tracker.checkSession(closing, ownerLocal), proto.SessionExpired)
	f.run(4*clock.Second + p.cfg.TickTime)
	assert.Equal(t, []int64{closing, healthy}, expired, "both sessions of the due bucket are expired")
	expired = nil
	f.run(10 * clock.Second)
	assert.Empty(t, expired, "a bucket expires its sessions once")
}
