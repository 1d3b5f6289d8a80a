package datatree

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// prepServer is a server with one open session, 0x77, owned by "conn".
func prepServer(t *testing.T) *server {
	s := newServer(Config{})
	rep := s.submit(Request{SessionID: 0x77, Type: proto.OpCreateSession, SessionTimeoutMilliseconds: 4000, Owner: "conn"})
	require.Equal(t, proto.OK, rep.err)
	s.sessions.calls = nil
	return s
}

func (s *server) req(op proto.OpCode, body proto.Record) Request {
	return Request{SessionID: 0x77, Cxid: 1, Type: op, Body: body, Auth: []proto.ID{{Scheme: "ip", ID: "127.0.0.1"}}, Owner: "conn"}
}

func createReq(path string, flags proto.CreateMode) *proto.CreateRequest {
	return &proto.CreateRequest{Path: path, ACL: proto.OpenACLUnsafe, Flags: flags}
}

// prepareOnly prepares without applying, taking a zxid as the server would.
func (s *server) prepareOnly(t *testing.T, req Request) Prepared {
	if TakesZxid(req.Type, req.Body) {
		s.zxid++
		req.Zxid = s.zxid
	}
	out, err := s.prep.Prepare(req)
	require.NoError(t, err)
	return out
}

func TestPrepareCallsTheSessionTrackerAsJavaDoes(t *testing.T) {
	s := newServer(Config{})
	s.submit(Request{SessionID: 0x77, Type: proto.OpCreateSession, SessionTimeoutMilliseconds: 3000, Owner: "conn"})
	assert.Equal(t, []string{"TrackSession(0x77, 3000)", "SetOwner(0x77)"}, s.sessions.calls)
	s.sessions.calls = nil
	s.submit(s.req(proto.OpCreate, createReq("/e", proto.Ephemeral)))
	s.submit(s.req(proto.OpCreate, createReq("/p", proto.Persistent)))
	s.submit(s.req(proto.OpGetData, &proto.GetDataRequest{Path: "/p"}))
	s.submit(Request{SessionID: 0x77, Type: proto.OpCloseSession})
	assert.Equal(t, []string{"CheckGlobalSession(0x77)", "CheckSession(0x77)", "CheckSession(0x77)", "SetSessionClosing(0x77)"}, s.sessions.calls)
}

func TestPrepareErrorsComeInJavasOrder(t *testing.T) {
	s := prepServer(t)
	stranger := func(req Request) Request { req.SessionID = 0x99; return req }
	cases := []struct {
		name string
		req  Request
		want proto.Code
	}{
		{"bad flags before the session", stranger(s.req(proto.OpCreate, createReq("/x", 9))), proto.BadArguments},
		{"TTL unsupported before the session", stranger(s.req(proto.OpCreateTTL, &proto.CreateTTLRequest{Path: "/x", ACL: proto.OpenACLUnsafe, Flags: proto.PersistentWithTTL, TTL: 5})), proto.Unimplemented},
		{"unknown session", stranger(s.req(proto.OpCreate, createReq("/x", 0))), proto.UnknownSession},
		{"ephemeral: global check", stranger(s.req(proto.OpCreate, createReq("/x", proto.Ephemeral))), proto.SessionExpired},
		{"delete: session before path", stranger(s.req(proto.OpDelete, &proto.DeleteRequest{Path: "/", Version: -1})), proto.UnknownSession},
		{"no slash", s.req(proto.OpCreate, createReq("x", 0)), proto.BadArguments},
		{"ACL before parent", s.req(proto.OpCreate, &proto.CreateRequest{Path: "/no/x", ACL: []proto.ACL{}}), proto.InvalidACL},
		{"parent before path rules", s.req(proto.OpCreate, createReq("/no//x", 0)), proto.NoNode},
		{"path rules", s.req(proto.OpCreate, createReq("/a\u0001", 0)), proto.BadArguments},
		{"node exists", s.req(proto.OpCreate, createReq("/zookeeper", 0)), proto.NodeExists},
		{"create under config", s.req(proto.OpCreate, createReq("/zookeeper/config/x", 0)), proto.NoAuth},
		{"plain create", s.req(proto.OpCreate, &proto.CreateRequest{Path: "/x", ACL: proto.OpenACLUnsafe, Flags: 0}), proto.OK},
		{"special delete", s.req(proto.OpDelete, &proto.DeleteRequest{Path: "/zookeeper/quota", Version: -1}), proto.BadArguments},
		{"setData path", s.req(proto.OpSetData, &proto.SetDataRequest{Path: "/a/", Version: -1}), proto.BadArguments},
		{"setData version", s.req(proto.OpSetData, &proto.SetDataRequest{Path: "/x", Version: 3}), proto.BadVersion},
		{"setACL invalid before missing", s.req(proto.OpSetACL, &proto.SetACLRequest{Path: "/none", ACL: []proto.ACL{}, Version: -1}), proto.InvalidACL},
		{"setACL admin", s.req(proto.OpSetACL, &proto.SetACLRequest{Path: "/zookeeper/config", ACL: proto.OpenACLUnsafe, Version: -1}), proto.NoAuth},
		{"check version", s.req(proto.OpCheck, &proto.CheckVersionRequest{Path: "/x", Version: 4}), proto.BadVersion},
		{"reconfig disabled", s.req(proto.OpReconfig, &proto.ReconfigRequest{CurConfigID: -1}), proto.ReconfigDisabled},
		{"undecodable create", s.req(proto.OpCreate, nil), proto.MarshallingError},
	}
	for _, c := range cases {
		rep := s.submit(c.req)
		assert.Equal(t, c.want, rep.err, c.name)
		if c.want != proto.OK {
			require.NotNil(t, rep.prepared.Txn, c.name)
			assert.Equal(t, proto.OpError, rep.prepared.Txn.Header.Type, c.name)
			assert.Nil(t, rep.prepared.Txn.Digest, "%s: an error txn carries no digest", c.name)
			assert.Equal(t, s.zxid, rep.prepared.Txn.Header.Zxid, "%s: a failed write still uses its zxid", c.name)
		}
	}
}

func TestPrepareReadsOnlyCheckTheSession(t *testing.T) {
	s := prepServer(t)
	zxid := s.zxid
	rep := s.submit(s.req(proto.OpGetData, &proto.GetDataRequest{Path: "/none"}))
	assert.Nil(t, rep.prepared.Txn)
	assert.Equal(t, proto.OK, rep.err)
	moved := s.req(proto.OpExists, &proto.ExistsRequest{Path: "/"})
	moved.Owner = "other connection"
	assert.Equal(t, proto.SessionMoved, s.submit(moved).err)
	assert.Equal(t, zxid, s.zxid, "reads take no zxid")
	rep = s.submit(s.req(proto.OpReconfig, nil))
	assert.Nil(t, rep.prepared.Txn, "an undecodable reconfig fails before Java builds a header")
	assert.Equal(t, zxid, s.zxid)
}

func TestTakesZxid(t *testing.T) {
	for _, op := range []proto.OpCode{proto.OpCreate, proto.OpCreate2, proto.OpCreateTTL, proto.OpCreateContainer,
		proto.OpDelete, proto.OpDeleteContainer, proto.OpSetData, proto.OpSetACL, proto.OpCheck, proto.OpMulti,
		proto.OpCreateSession, proto.OpCloseSession} {
		assert.True(t, TakesZxid(op, nil), op.String())
	}
	for _, op := range []proto.OpCode{proto.OpGetData, proto.OpExists, proto.OpSync, proto.OpPing, proto.OpSetWatches, proto.OpAddWatch, proto.OpMultiRead} {
		assert.False(t, TakesZxid(op, nil), op.String())
	}
	assert.False(t, TakesZxid(proto.OpReconfig, nil))
	assert.True(t, TakesZxid(proto.OpReconfig, &proto.ReconfigRequest{}))
}

func TestSequentialNamesSeeOutstandingChanges(t *testing.T) {
	s := prepServer(t)
	s.submit(s.req(proto.OpCreate, createReq("/q", 0)))
	first := s.prepareOnly(t, s.req(proto.OpCreate, createReq("/q/n-", proto.PersistentSequential)))
	second := s.prepareOnly(t, s.req(proto.OpCreate, createReq("/q/n-", proto.EphemeralSequential)))
	assert.Equal(t, "/q/n-0000000000", first.Txn.Txn.(*proto.CreateTxn).Path)
	assert.Equal(t, "/q/n-0000000001", second.Txn.Txn.(*proto.CreateTxn).Path)
	assert.Equal(t, int32(2), second.Txn.Txn.(*proto.CreateTxn).ParentCVersion)
	dup := s.prepareOnly(t, s.req(proto.OpCreate, createReq("/q/n-0000000000", 0)))
	assert.Equal(t, proto.NodeExists, dup.Err, "a pending create already holds the name")
	assert.Equal(t, 4, s.prep.Outstanding())
	for _, p := range []Prepared{first, second, dup} {
		r := s.tree.Apply(p.Txn)
		assert.False(t, r.DigestMismatch)
		s.prep.Applied(p.Txn.Header.Zxid)
	}
	assert.Zero(t, s.prep.Outstanding())
	assert.Empty(t, s.prep.byPath)
}

func TestFailedMultiRollsBackItsChanges(t *testing.T) {
	s := prepServer(t)
	s.submit(s.req(proto.OpCreate, createReq("/q", 0)))
	pending := s.prepareOnly(t, s.req(proto.OpCreate, createReq("/q/n-", proto.PersistentSequential)))
	multi := &proto.MultiRequest{Ops: []proto.MultiOp{
		{Type: proto.OpCreate, Request: createReq("/q/n-", proto.PersistentSequential)},
		{Type: proto.OpDelete, Request: &proto.DeleteRequest{Path: "/q/none", Version: -1}},
		{Type: proto.OpSetData, Request: &proto.SetDataRequest{Path: "/q", Version: -1}},
	}}
	failed := s.prepareOnly(t, s.req(proto.OpMulti, multi))
	assert.Equal(t, proto.NoNode, failed.Err)
	assert.Equal(t, proto.OpMulti, failed.Txn.Header.Type, "a failed multi stays a multi")
	txns := failed.Txn.Txn.(*proto.MultiTxn).Txns
	require.Len(t, txns, 3)
	assert.Equal(t, []proto.OpCode{proto.OpCreate, proto.OpError, proto.OpError}, []proto.OpCode{txns[0].Type, txns[1].Type, txns[2].Type})
	body, err := txns[2].Body()
	require.NoError(t, err)
	assert.Equal(t, &proto.ErrorTxn{Err: proto.RuntimeInconsistency}, body)
	assert.Equal(t, 2, s.prep.Outstanding(), "only the pending create's records remain")
	next := s.prepareOnly(t, s.req(proto.OpCreate, createReq("/q/n-", proto.PersistentSequential)))
	assert.Equal(t, "/q/n-0000000001", next.Txn.Txn.(*proto.CreateTxn).Path, "ZOOKEEPER-1624: the parent's record was restored")
	for _, p := range []Prepared{pending, failed, next} {
		r := s.tree.Apply(p.Txn)
		assert.False(t, r.DigestMismatch)
		s.prep.Applied(p.Txn.Header.Zxid)
	}
	assert.Equal(t, []string{"n-0000000000", "n-0000000001"}, s.tree.nodes.get("/q").sortedChildren())
}

func TestMultiOpsAreRebuiltAsTheServerDoes(t *testing.T) {
	s := prepServer(t)
	rep := s.submit(s.req(proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{{Type: proto.OpCreate2, Request: createReq("/c2", 0)}}}))
	require.Equal(t, proto.OK, rep.err)
	assert.Equal(t, proto.OpCreate, rep.result.Multi[0].Type, "create2 in a multi runs as create")
	before := s.prep.Outstanding()
	rep = s.submit(s.req(proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{
		{Type: proto.OpCreate, Request: createReq("/ok", 0)},
		{Type: proto.OpCreate, Request: createReq("/ttl", proto.PersistentWithTTL)},
	}}))
	assert.Equal(t, proto.MarshallingError, rep.err, "a create op with TTL flags becomes createTTL but keeps its CreateRequest")
	assert.Equal(t, proto.OpError, rep.prepared.Txn.Header.Type)
	assert.NotNil(t, rep.prepared.Txn.Digest, "the first op's digest stays on the error txn")
	assert.True(t, rep.result.DigestMismatch, "so applying it reports a mismatch, as in Java")
	assert.Equal(t, before, s.prep.Outstanding(), "Applied drops the leftover records")
	rep = s.submit(s.req(proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{{Type: proto.OpGetData, Request: &proto.GetDataRequest{Path: "/"}}}}))
	assert.Equal(t, proto.MarshallingError, rep.err, "a read op first has no txn to serialize")
	rep = s.submit(s.req(proto.OpMulti, nil))
	assert.Equal(t, proto.MarshallingError, rep.err)
	rep = s.submit(s.req(proto.OpMulti, &proto.MultiRequest{}))
	assert.Equal(t, proto.OK, rep.err)
	assert.Empty(t, rep.result.Multi)
}

func TestCloseSessionListsPendingEphemerals(t *testing.T) {
	s := prepServer(t)
	s.submit(s.req(proto.OpCreate, createReq("/a", proto.Ephemeral)))
	s.submit(s.req(proto.OpCreate, createReq("/b", proto.Ephemeral)))
	pendingCreate := s.prepareOnly(t, s.req(proto.OpCreate, createReq("/c", proto.Ephemeral)))
	pendingDelete := s.prepareOnly(t, s.req(proto.OpDelete, &proto.DeleteRequest{Path: "/a", Version: -1}))
	closing := s.prepareOnly(t, Request{SessionID: 0x77, Type: proto.OpCloseSession})
	assert.ElementsMatch(t, []string{"/b", "/c"}, closing.Txn.Txn.(*proto.CloseSessionTxn).PathsToDelete)
	late := s.prepareOnly(t, s.req(proto.OpCreate, createReq("/d", 0)))
	assert.Equal(t, proto.SessionExpired, late.Err, "the session is closing")
	for _, p := range []Prepared{pendingCreate, pendingDelete, closing, late} {
		r := s.tree.Apply(p.Txn)
		assert.False(t, r.DigestMismatch)
		s.prep.Applied(p.Txn.Header.Zxid)
	}
	assert.Empty(t, s.tree.Ephemerals(0x77))
	assert.Equal(t, []string{"zookeeper"}, s.tree.nodes.get("/").sortedChildren())
}

func TestDeleteContainer(t *testing.T) {
	s := prepServer(t)
	s.submit(s.req(proto.OpCreateContainer, &proto.CreateRequest{Path: "/box", ACL: proto.OpenACLUnsafe, Flags: proto.Container}))
	s.submit(s.req(proto.OpCreate, createReq("/box/x", 0)))
	s.submit(s.req(proto.OpCreate, createReq("/e", proto.Ephemeral)))
	s.submit(s.req(proto.OpCreate, createReq("/plain", 0)))
	container := func(path string) Request {
		return Request{Type: proto.OpDeleteContainer, Body: &proto.DeleteRequest{Path: path}}
	}
	assert.Equal(t, proto.NotEmpty, s.submit(container("/box")).err)
	assert.Equal(t, proto.BadVersion, s.submit(container("/e")).err, "a session's ephemeral is refused as BadVersion")
	assert.Equal(t, proto.OK, s.submit(container("/plain")).err, "a persistent node passes")
	assert.Equal(t, proto.BadArguments, s.submit(container("/zookeeper")).err)
	s.submit(s.req(proto.OpDelete, &proto.DeleteRequest{Path: "/box/x", Version: -1}))
	s.sessions.calls = nil
	assert.Equal(t, proto.OK, s.submit(container("/box")).err)
	assert.Empty(t, s.sessions.calls, "no session check")
}

func TestSetACLChangeKeepsTheOldACLUntilApplied(t *testing.T) {
	s := prepServer(t)
	s.submit(s.req(proto.OpCreate, createReq("/n", 0)))
	s.prepareOnly(t, s.req(proto.OpSetACL, &proto.SetACLRequest{Path: "/n", ACL: proto.ReadACLUnsafe, Version: -1}))
	write := s.prepareOnly(t, s.req(proto.OpSetData, &proto.SetDataRequest{Path: "/n", Version: -1}))
	assert.Equal(t, proto.OK, write.Err, "Java's change record keeps the ACL it had")
	s.tree.Apply(write.Txn) // out of order on purpose; the point is the prep outcome
}

func TestPrepareContractErrors(t *testing.T) {
	s := prepServer(t)
	_, err := s.prep.Prepare(s.req(proto.OpCreate, &proto.DeleteRequest{Path: "/x"}))
	assert.Error(t, err)
	_, err = s.prep.Prepare(s.req(proto.OpDelete, &proto.SetDataRequest{Path: "/x"}))
	assert.Error(t, err)
	bad := newServer(Config{})
	prep, err := NewPreparer(bad.tree, &brokenSessions{})
	require.NoError(t, err)
	_, err = prep.Prepare(Request{SessionID: 1, Type: proto.OpGetData, Body: &proto.GetDataRequest{Path: "/"}})
	assert.Error(t, err, "a session tracker error must be a ZooKeeper code")
	_, err = NewPreparer(New(Config{ReconfigEnabled: true}), newFakeSessions())
	assert.Error(t, err)
	_, err = NewPreparer(nil, newFakeSessions())
	assert.Error(t, err)
}

type brokenSessions struct{ fakeSessions }

func (*brokenSessions) CheckSession(int64, any) error { return errors.New("boom") }

func TestResetAndApplied(t *testing.T) {
	s := prepServer(t)
	s.prepareOnly(t, s.req(proto.OpCreate, createReq("/a", 0)))
	s.prepareOnly(t, s.req(proto.OpCreate, createReq("/b", 0)))
	assert.Equal(t, 4, s.prep.Outstanding())
	s.prep.Applied(s.zxid - 1)
	assert.Equal(t, 2, s.prep.Outstanding())
	s.prep.Reset()
	assert.Zero(t, s.prep.Outstanding())
	rep := s.prepareOnly(t, s.req(proto.OpCreate, createReq("/a", 0)))
	assert.Equal(t, proto.OK, rep.Err, "after Reset only the tree counts")
}

// TestJavaDigestMismatchQuirks covers interleavings in which 3.8.0's own
// precalculated digest disagrees with the tree, so that Apply reports
// DigestMismatch although the server did what Java does. The first was
// checked on a real 3.8.0 server: a create and a setData of "/" pipelined by
// one client make it log "First digest mismatch on txn" for the setData.
func TestJavaDigestMismatchQuirks(t *testing.T) {
	// The root's change records live under "" (a child's parent path) and
	// "/" (its own path); a setData on "/" prepared while a child create is
	// pending works from a stale root digest.
	s := prepServer(t)
	create := s.prepareOnly(t, s.req(proto.OpCreate, createReq("/a", 0)))
	set := s.prepareOnly(t, s.req(proto.OpSetData, &proto.SetDataRequest{Path: "/", Data: []byte("x"), Version: -1}))
	assert.False(t, s.tree.Apply(create.Txn).DigestMismatch)
	assert.True(t, s.tree.Apply(set.Txn).DigestMismatch)

	// The txn type follows the op code and the change record follows the
	// flags: a createContainer op with persistent flags makes a container in
	// the tree and a persistent node in the record.
	s = prepServer(t)
	rep := s.submit(s.req(proto.OpCreateContainer, &proto.CreateRequest{Path: "/c", ACL: proto.OpenACLUnsafe, Flags: proto.Persistent}))
	assert.Equal(t, proto.OK, rep.err)
	assert.True(t, rep.result.DigestMismatch)
	assert.Equal(t, []string{"/c"}, s.tree.Containers())
	rep = s.submit(s.req(proto.OpCreate, &proto.CreateRequest{Path: "/p", ACL: proto.OpenACLUnsafe, Flags: proto.Container}))
	assert.Equal(t, proto.OK, rep.err)
	assert.True(t, rep.result.DigestMismatch, "and a create op with container flags the reverse")
	assert.Equal(t, []string{"/c"}, s.tree.Containers())
}

// TestCreateTTLWithPersistentFlagsFaults is the request that killed a real
// stock 3.8.0 server's SyncThread: PrepRequestProcessor accepts a createTTL
// whose flags are not a TTL mode when the TTL is negative, and
// DataTree.processTxn then throws on the TTL.
func TestCreateTTLWithPersistentFlagsFaults(t *testing.T) {
	s := prepServer(t)
	p := s.prepareOnly(t, s.req(proto.OpCreateTTL, &proto.CreateTTLRequest{Path: "/t", ACL: proto.OpenACLUnsafe, Flags: proto.Persistent, TTL: -1}))
	require.Equal(t, proto.OK, p.Err)
	assert.Equal(t, proto.OpCreateTTL, p.Txn.Header.Type)
	r := s.tree.Apply(p.Txn)
	assert.ErrorIs(t, r.Fault, errJavaRuntime)
	assert.Nil(t, s.tree.nodes.get("/t"))
	rejected := s.prepareOnly(t, s.req(proto.OpCreateTTL, &proto.CreateTTLRequest{Path: "/t", ACL: proto.OpenACLUnsafe, Flags: proto.Persistent, TTL: 0}))
	assert.Equal(t, proto.BadArguments, rejected.Err, "a TTL of 0 or more is refused for a non-TTL mode")
}
