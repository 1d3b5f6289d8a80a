package datatree

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// propertyPaths are the few paths random workloads use, so that ops
// collide: parents and children, a deep chain, a sequential prefix.
var propertyPaths = []string{"/a", "/a/b", "/a/b/c", "/d", "/d/e", "/a/s-", "/zookeeper/x"}

func drawPath(t *rapid.T, label string) string {
	return rapid.SampledFrom(propertyPaths).Draw(t, label)
}

func drawWriteOp(t *rapid.T, label string) (proto.OpCode, proto.Record) {
	path := drawPath(t, label+"path")
	version := rapid.SampledFrom([]int32{-1, 0, 1}).Draw(t, label+"version")
	switch rapid.IntRange(0, 5).Draw(t, label+"kind") {
	case 0:
		flags := rapid.SampledFrom([]proto.CreateMode{proto.Persistent, proto.Ephemeral, proto.PersistentSequential,
			proto.EphemeralSequential, proto.Container}).Draw(t, label+"flags")
		op := proto.OpCreate
		if flags == proto.Container {
			op = proto.OpCreateContainer
		}
		return op, &proto.CreateRequest{Path: path, Data: []byte(label), ACL: proto.OpenACLUnsafe, Flags: flags}
	case 1:
		return proto.OpDelete, &proto.DeleteRequest{Path: path, Version: version}
	case 2:
		return proto.OpSetData, &proto.SetDataRequest{Path: path, Data: []byte(label), Version: version}
	case 3:
		acl := rapid.SampledFrom([][]proto.ACL{proto.OpenACLUnsafe, proto.CreatorAllACL,
			{{Perms: proto.PermAll &^ proto.PermCreate, ID: proto.AnyoneID}}}).Draw(t, label+"acl")
		return proto.OpSetACL, &proto.SetACLRequest{Path: path, ACL: acl, Version: version}
	case 4:
		return proto.OpCheck, &proto.CheckVersionRequest{Path: path, Version: version}
	default:
		var ops []proto.MultiOp
		for i := range rapid.IntRange(0, 3).Draw(t, label+"ops") {
			op, body := drawWriteOp(t, label+"m"+strconv.Itoa(i))
			if op == proto.OpSetACL {
				op, body = proto.OpCheck, &proto.CheckVersionRequest{Path: path, Version: -1}
			}
			if op == proto.OpMulti {
				continue
			}
			ops = append(ops, proto.MultiOp{Type: op, Request: body})
		}
		return proto.OpMulti, &proto.MultiRequest{Ops: ops}
	}
}

// runWorkload runs a random workload on a fresh server in batches: each
// batch is prepared whole, then applied in order, so that later requests are
// prepared against the outstanding changes of earlier ones. check runs after
// every applied txn, with a copy of the entry as prepared (Apply rewrites a
// failed multi in place).
func runWorkload(t *rapid.T, check func(srv *server, p Prepared, original *proto.TxnEntry, r Result)) *server {
	srv := newServer(Config{})
	for _, id := range []int64{0x11, 0x22} {
		srv.submit(Request{SessionID: id, Type: proto.OpCreateSession, SessionTimeoutMilliseconds: 1000, Owner: id})
	}
	auth := []proto.ID{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: DigestID("u:p")}}
	for batch := range rapid.IntRange(1, 12).Draw(t, "batches") {
		var prepared []Prepared
		for i := range rapid.IntRange(1, 4).Draw(t, "size") {
			label := fmt.Sprintf("b%di%d", batch, i)
			session := rapid.SampledFrom([]int64{0x11, 0x22}).Draw(t, label+"session")
			req := Request{SessionID: session, Owner: session, Auth: auth}
			if rapid.IntRange(0, 15).Draw(t, label+"close") == 0 {
				req.Type = proto.OpCloseSession
			} else {
				req.Type, req.Body = drawWriteOp(t, label)
			}
			srv.zxid++
			srv.time++
			req.Zxid, req.TimeMilliseconds = srv.zxid, srv.time
			p, err := srv.prep.Prepare(req)
			require.NoError(t, err)
			prepared = append(prepared, p)
			if req.Type == proto.OpCloseSession {
				// The session comes back at once, as a new client would.
				srv.sessions.sessions[session].closing = false
			}
		}
		for _, p := range prepared {
			original := cloneEntry(p.Txn)
			r := srv.tree.Apply(p.Txn)
			srv.prep.Applied(p.Txn.Header.Zxid)
			if check != nil {
				check(srv, p, original, r)
			}
		}
	}
	return srv
}

// cloneEntry copies an entry through its encoding. A top-level check txn,
// which the txn log cannot decode (nor can Java's), is copied by hand.
func cloneEntry(e *proto.TxnEntry) *proto.TxnEntry {
	if c, ok := e.Txn.(*proto.CheckVersionTxn); ok {
		copied := *c
		return &proto.TxnEntry{Header: e.Header, Txn: &copied, Digest: e.Digest}
	}
	var out proto.TxnEntry
	if err := proto.Unmarshal(proto.Marshal(e), &out); err != nil {
		panic(fmt.Sprintf("txn entry %v does not round-trip: %v", e.Header, err))
	}
	return &out
}

func TestPropertyPrepareThenApplyAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		srv := runWorkload(t, func(srv *server, p Prepared, _ *proto.TxnEntry, r Result) {
			require.NoError(t, r.Fault)
			require.NoError(t, r.Aborted)
			require.False(t, r.DigestMismatch, "the precalculated digest of %v", p.Txn.Header)
			require.Equal(t, recomputeDigest(srv.tree), srv.tree.Digest(), "the incremental digest drifted")
			if p.Txn.Header.Type == proto.OpError || p.Err != proto.OK {
				return
			}
			require.Equal(t, proto.OK, r.Err, "a txn prep accepted failed to apply: %v", p.Txn.Header)
		})
		require.Zero(t, srv.prep.Outstanding(), "everything prepared was applied")
		require.Empty(t, srv.prep.byPath)
	})
}

func TestPropertyReplayIsDeterministicAndSnapshotsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var log []*proto.TxnEntry
		var results []Result
		srv := runWorkload(t, func(_ *server, _ Prepared, original *proto.TxnEntry, r Result) {
			log = append(log, original)
			results = append(results, r)
		})
		replays := [2]*Tree{New(Config{}), New(Config{})}
		for _, tree := range replays {
			for i, e := range log {
				r := tree.Apply(cloneEntry(e))
				require.Equal(t, results[i].Err, r.Err)
				require.Equal(t, results[i].Path, r.Path)
				require.Equal(t, results[i].Stat, r.Stat)
			}
			tree.SetLastProcessedZxid(srv.tree.LastProcessedZxid())
		}
		require.Empty(t, srv.tree.Diff(replays[0]))
		// The sessions were created before the workload's log starts.
		var sessions []Session
		for _, e := range srv.results[:2] {
			sessions = append(sessions, Session{ID: e.ClientID, TimeoutMilliseconds: 1000})
		}
		first, second := replays[0].Serialize(sessions), replays[1].Serialize(sessions)
		require.True(t, bytes.Equal(first, second), "two replays serialize alike")
		restored, _, err := Deserialize(first, srv.tree.LastProcessedZxid(), Config{})
		require.NoError(t, err)
		require.Empty(t, srv.tree.Diff(restored))
		require.False(t, restored.DigestMismatchOnLoad())
	})
}

func TestPropertySequentialNamesIncrease(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		last := map[int64]int64{} // parent czxid -> last suffix
		seen := map[string]bool{}
		record := func(srv *server, path string, single bool) {
			suffix := strings.TrimPrefix(path, "/a/s-")
			if len(suffix) != 10 || suffix == path {
				return // not a sequential create under /a
			}
			parent := srv.tree.nodes.get("/a")
			require.NotNil(t, parent)
			n, err := strconv.ParseInt(suffix, 10, 64)
			require.NoError(t, err)
			if previous, ok := last[parent.stat.Czxid]; ok {
				require.Greater(t, n, previous, "sequence numbers grow under one parent")
			}
			last[parent.stat.Czxid] = n
			if single {
				require.Equal(t, int64(parent.stat.Cversion-1), n, "the suffix is the parent's count of creates before this one")
			}
			require.False(t, seen[fmt.Sprint(parent.stat.Czxid, path)], "a sequential name is never reused")
			seen[fmt.Sprint(parent.stat.Czxid, path)] = true
		}
		runWorkload(t, func(srv *server, p Prepared, _ *proto.TxnEntry, r Result) {
			if r.Err != proto.OK {
				return
			}
			record(srv, r.Path, true)
			for _, sub := range r.Multi {
				record(srv, sub.Path, false)
			}
		})
	})
}
