package checkers

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Zxids of the base history, epoch 1: createSession 1 (1), create /r (2), createSession 2 (3),
// createSession 3 (4), create /r/a "x" (5), setData /r/a "y" (6), delete /r/a (7).
const (
	zxidCreateR = 0x100000002
	zxidCreateA = 0x100000005
	zxidSetA    = 0x100000006
	zxidDeleteA = 0x100000007
)

// Stats worked out by hand from DataTree's rules, independently of the reference tree.
var (
	// /r/a after the create at zxid 5 (time 11 ms).
	statAfterCreate = proto.Stat{Czxid: zxidCreateA, Mzxid: zxidCreateA, Pzxid: zxidCreateA, Ctime: 11, Mtime: 11, DataLength: 1}
	// /r/a after the setData at zxid 6 (time 13 ms).
	statAfterSet = proto.Stat{Czxid: zxidCreateA, Mzxid: zxidSetA, Pzxid: zxidCreateA, Ctime: 11, Mtime: 13, Version: 1, DataLength: 1}
	// /r with its one child: persisted cversion 1 shows as 2*1-1 = 1.
	statROneChild = proto.Stat{Czxid: zxidCreateR, Mzxid: zxidCreateR, Pzxid: zxidCreateA, Ctime: 3, Mtime: 3, Cversion: 1, NumChildren: 1}
	// /r after the delete: the pzxid moves, the persisted cversion does not; it shows as 2*1-0 = 2.
	statRNoChild = proto.Stat{Czxid: zxidCreateR, Mzxid: zxidCreateR, Pzxid: zxidDeleteA, Ctime: 3, Mtime: 3, Cversion: 2}
	// The root: children "r" and "zookeeper", persisted cversion 1 (the create of /r): 2*1-2 = 0.
	statRoot = proto.Stat{Pzxid: zxidCreateR, NumChildren: 2}
)

// baseHistory writes /r/a three times; extra adds operations before the history is finished.
func baseHistory(t *testing.T, extra func(f *fixture)) *History {
	f := newFixture(t)
	f.setup("/r")
	f.session("c1", 2, ms(5))
	f.session("c2", 3, ms(5))
	f.write("c1", 2, create("/r/a", "x"), ms(10), ms(11), ms(12), proto.OK, 0)
	f.write("c2", 3, setData("/r/a", "y", 0), ms(12), ms(13), ms(14), proto.OK, 1)
	if extra != nil {
		extra(f)
	}
	return f.finish(ms(1000))
}

func stat(s proto.Stat) *proto.Stat { return &s }

func checkReadsOf(t *testing.T, h *History, opts ReadOptions) []Result {
	results, err := CheckReads(h, opts)
	require.NoError(t, err)
	require.NotEmpty(t, results)
	return results
}

func TestReadsPassWhenEveryReplyMatchesTheLog(t *testing.T) {
	h := baseHistory(t, func(f *fixture) {
		f.read("c1", 2, getData("/r/a", false), ms(15), ms(16), Reply{Zxid: zxidSetA, Data: []byte("y"), Stat: stat(statAfterSet)})
		f.read("c2", 3, Operation{Kind: proto.OpGetChildren2, Path: "/r"}, ms(15), ms(16),
			Reply{Zxid: zxidSetA, Children: []string{"a"}, Stat: stat(statROneChild)})
		f.read("c2", 3, Operation{Kind: proto.OpExists, Path: "/"}, ms(15), ms(16), Reply{Zxid: zxidSetA, Stat: stat(statRoot)})
		f.write("c1", 2, deleteOp("/r/a", 1), ms(20), ms(21), ms(22), proto.OK, 0)
		f.read("c1", 2, Operation{Kind: proto.OpGetChildren2, Path: "/r"}, ms(23), ms(24), Reply{Zxid: zxidDeleteA, Children: []string{}, Stat: stat(statRNoChild)})
		f.read("c1", 2, getData("/r/a", false), ms(25), ms(26), Reply{Zxid: zxidDeleteA, Err: proto.NoNode})
		f.read("c2", 3, Operation{Kind: proto.OpGetChildren, Path: "/"}, ms(25), ms(26), Reply{Zxid: zxidDeleteA, Children: []string{"zookeeper", "r"}})
	})
	res := checkReadsOf(t, h, ReadOptions{})
	require.Len(t, res, 1)
	assert.Equal(t, Pass, res[0].Status, res[0].String())
	assert.Equal(t, CheckerSequentialConsistency, res[0].Checker)
}

func TestReadOfStaleDataAtNewZxidIsReported(t *testing.T) {
	h := baseHistory(t, func(f *fixture) {
		f.read("c1", 2, getData("/r/a", false), ms(15), ms(16), Reply{Zxid: zxidSetA, Data: []byte("x"), Stat: stat(statAfterCreate)})
	})
	res := checkReadsOf(t, h, ReadOptions{})[0]
	require.Equal(t, Violation, res.Status, res.String())
	f := res.Findings[0]
	assert.Equal(t, "read-state", f.Rule)
	assert.Contains(t, f.Message, `getData(/r/a, watch=false) -> OK zxid=0x100000006 data="x"`)
	assert.Contains(t, f.Message, `at zxid 0x100000006 the committed log has /r/a with data "y" version 1 mzxid 0x100000006`)
	assert.Equal(t, []int64{2}, f.Sessions)
}

func TestReadWithWrongStatIsReported(t *testing.T) {
	wrong := statAfterSet
	wrong.Mzxid = zxidCreateA
	h := baseHistory(t, func(f *fixture) {
		f.read("c1", 2, getData("/r/a", false), ms(15), ms(16), Reply{Zxid: zxidSetA, Data: []byte("y"), Stat: &wrong})
	})
	res := checkReadsOf(t, h, ReadOptions{})[0]
	require.Equal(t, Violation, res.Status, res.String())
	assert.Contains(t, res.Findings[0].Message, "mzxid 0x100000005 in the reply, 0x100000006 in the log")
}

func TestReadBeyondTheCommittedLogIsReported(t *testing.T) {
	h := baseHistory(t, func(f *fixture) {
		f.read("c1", 2, getData("/r/a", false), ms(15), ms(16), Reply{Zxid: 0x100000009, Data: []byte("y"), Stat: stat(statAfterSet)})
	})
	res := checkReadsOf(t, h, ReadOptions{})[0]
	require.Equal(t, Violation, res.Status, res.String())
	assert.Contains(t, res.Findings[0].Message, "beyond the last committed transaction 0x100000006")
}

func TestLostWriteIsReported(t *testing.T) {
	h := baseHistory(t, func(f *fixture) {
		ref := f.r.Call("c1", ms(20), Operation{Kind: proto.OpSetData, Session: 2, Xid: 9, Path: "/r/a", Data: []byte("z"), Version: -1})
		require.NoError(t, f.r.Reply(ref, ms(21), Reply{Zxid: 0x100000007, Stat: stat(statAfterSet)}))
		// A later transaction exists, so the write's zxid is inside the log but is not its own.
		f.commit(3, 7, proto.OpSetData, &proto.SetDataTxn{Path: "/r/a", Data: []byte("w"), Version: 2}, ms(22))
	})
	res := checkReadsOf(t, h, ReadOptions{})[0]
	require.Equal(t, Violation, res.Status, res.String())
	f := res.Findings[0]
	assert.Equal(t, "write-committed", f.Rule)
	assert.Contains(t, f.Message, "was acknowledged, but the committed transaction at zxid 0x100000007 is setData of session 0x3 xid 7")
}

func TestSessionGoingBackInTimeIsReported(t *testing.T) {
	h := baseHistory(t, func(f *fixture) {
		f.read("c1", 2, getData("/r/a", false), ms(15), ms(16), Reply{Zxid: zxidSetA, Data: []byte("y"), Stat: stat(statAfterSet)})
		// After a reconnect, a server that is behind must refuse the session; this one did not.
		f.read("c1", 2, getData("/r/a", false), ms(17), ms(18), Reply{Zxid: zxidCreateA, Data: []byte("x"), Stat: stat(statAfterCreate)})
	})
	res := checkReadsOf(t, h, ReadOptions{})[0]
	require.Equal(t, Violation, res.Status, res.String())
	require.Len(t, res.Findings, 1, res.String())
	f := res.Findings[0]
	assert.Equal(t, "monotonic-zxid", f.Rule)
	assert.Contains(t, f.Message, "session 0x2 went back in time: c1#2")
	assert.Equal(t, []int64{zxidSetA, zxidCreateA}, f.Zxids)
}

func TestRepliesOutOfIssueOrderAreReported(t *testing.T) {
	r := NewRecorder()
	a := r.Call("c1", ms(1), Operation{Kind: proto.OpExists, Session: 2, Path: "/x"})
	b := r.Call("c1", ms(2), Operation{Kind: proto.OpExists, Session: 2, Path: "/y"})
	require.NoError(t, r.Reply(b, ms(3), Reply{Err: proto.NoNode}))
	require.NoError(t, r.Reply(a, ms(4), Reply{Err: proto.NoNode}))
	res := checkReadsOf(t, r.Finish(ms(5), nil), ReadOptions{})[0]
	require.Equal(t, Violation, res.Status, res.String())
	assert.Equal(t, "fifo-order", res.Findings[0].Rule)
	assert.Contains(t, res.Findings[0].Message, "the reply to c1#0")
}

func TestReadMustSeeOwnWrite(t *testing.T) {
	h := baseHistory(t, func(f *fixture) {
		// c2 wrote at zxid 6, then reads from a server at zxid 5.
		f.read("c2", 3, getData("/r/a", false), ms(15), ms(16), Reply{Zxid: zxidCreateA, Data: []byte("x"), Stat: stat(statAfterCreate)})
	})
	res := checkReadsOf(t, h, ReadOptions{})[0]
	require.Equal(t, Violation, res.Status, res.String())
	var rules []string
	for _, f := range res.Findings {
		rules = append(rules, f.Rule)
	}
	assert.Contains(t, rules, "read-your-writes")
	assert.Contains(t, rules, "monotonic-zxid")
	for _, f := range res.Findings {
		if f.Rule == "read-your-writes" {
			assert.Contains(t, f.Message, "does not see the session's own earlier write: it was issued after c2#")
		}
	}
}

func syncOp(leaderZxid int64) Operation {
	return Operation{Kind: proto.OpSync, Path: "/r", SyncLeaderZxid: leaderZxid}
}

func TestReadAfterSyncMustBeAsNewAsTheLeader(t *testing.T) {
	cases := []struct {
		name             string
		syncZxid, readAt int64
		want             Status
	}{
		{"caught-up", zxidSetA, zxidSetA, Pass},
		{"stale-read", zxidSetA, zxidCreateA, Violation},
		{"stale-sync", zxidCreateA, zxidCreateA, Violation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := baseHistory(t, func(f *fixture) {
				// c1 has seen zxid 5; the leader had committed zxid 6 when c1 called sync.
				f.read("c1", 2, syncOp(zxidSetA), ms(15), ms(16), Reply{Zxid: c.syncZxid})
				data, st := []byte("y"), statAfterSet
				if c.readAt == zxidCreateA {
					data, st = []byte("x"), statAfterCreate
				}
				f.read("c1", 2, getData("/r/a", false), ms(17), ms(18), Reply{Zxid: c.readAt, Data: data, Stat: &st})
			})
			res := checkReadsOf(t, h, ReadOptions{})[0]
			require.Equal(t, c.want, res.Status, res.String())
			if c.want == Violation {
				var rules []string
				for _, f := range res.Findings {
					rules = append(rules, f.Rule)
				}
				assert.Contains(t, rules, "read-after-sync")
			}
		})
	}
}

func TestLinearizableReadsAfterSyncIsOptInAndMarkedStronger(t *testing.T) {
	h := baseHistory(t, func(f *fixture) {
		// The sync's leader fact is unknown (a deposed leader answered it), so the default check
		// has nothing to demand; c2's write completed at 14 ms, before the sync was called.
		f.read("c1", 2, syncOp(0), ms(15), ms(16), Reply{Zxid: zxidCreateA})
		f.read("c1", 2, getData("/r/a", false), ms(17), ms(18), Reply{Zxid: zxidCreateA, Data: []byte("x"), Stat: stat(statAfterCreate)})
	})
	results := checkReadsOf(t, h, ReadOptions{})
	require.Len(t, results, 1)
	assert.Equal(t, Pass, results[0].Status, results[0].String())

	results = checkReadsOf(t, h, ReadOptions{LinearizableReadsAfterSync: true})
	require.Len(t, results, 2)
	assert.Equal(t, Pass, results[0].Status)
	strong := results[1]
	assert.Equal(t, CheckerLinearizableReadsAfterSync, strong.Checker)
	assert.True(t, strong.BeyondGuarantee)
	require.Equal(t, Violation, strong.Status, strong.String())
	assert.Len(t, strong.Findings, 2) // the sync itself, and the read after it
	assert.Contains(t, strong.Findings[1].Message, "is at zxid 0x100000005, older than c2#0")
	assert.Contains(t, strong.String(), "stronger than ZooKeeper promises")
	assert.Contains(t, strong.Notes[0], "ZOOKEEPER-1675")
}

func TestCommittedLogThatCannotBeReplayedIsReported(t *testing.T) {
	h := baseHistory(t, func(f *fixture) {
		f.commit(2, 5, proto.OpCreate, &proto.CreateTxn{Path: "/r/a", ParentCVersion: -1}, ms(20))
	})
	res := checkReadsOf(t, h, ReadOptions{})[0]
	require.Equal(t, Violation, res.Status, res.String())
	assert.Equal(t, "committed-log", res.Findings[0].Rule)
	assert.Contains(t, res.Findings[0].Message, "failed to apply with NODEEXISTS")
}

// TestReferenceTreeFollowsDataTree pins the stat bookkeeping the read check relies on.
func TestReferenceTreeFollowsDataTree(t *testing.T) {
	tree := newRefTree()
	var changes []change
	emit := func(c change) { changes = append(changes, c) }
	hdr := func(z int64, typ proto.OpCode, session int64) proto.TxnHeader {
		return proto.TxnHeader{ClientID: session, Zxid: z, Time: z * 10, Type: typ}
	}
	require.NoError(t, tree.apply(&proto.TxnEntry{Header: hdr(1, proto.OpCreate, 7), Txn: &proto.CreateTxn{Path: "/a", ParentCVersion: -1}}, emit))
	require.NoError(t, tree.apply(&proto.TxnEntry{Header: hdr(2, proto.OpCreate, 7), Txn: &proto.CreateTxn{Path: "/a/e", Ephemeral: true, ParentCVersion: 5}}, emit))
	assert.Equal(t, proto.Stat{Czxid: 1, Mzxid: 1, Pzxid: 2, Ctime: 10, Mtime: 10, Cversion: 9, NumChildren: 1}, tree.nodes["/a"].clientStat())
	assert.Equal(t, int64(7), tree.nodes["/a/e"].clientStat().EphemeralOwner)
	require.NoError(t, tree.apply(&proto.TxnEntry{Header: hdr(3, proto.OpCloseSession, 7)}, emit))
	assert.Nil(t, tree.nodes["/a/e"])
	assert.Equal(t, proto.Stat{Czxid: 1, Mzxid: 1, Pzxid: 3, Ctime: 10, Mtime: 10, Cversion: 10}, tree.nodes["/a"].clientStat())
	assert.Equal(t, []change{
		{1, "/a", proto.EventNodeCreated}, {1, "/", proto.EventNodeChildrenChanged},
		{2, "/a/e", proto.EventNodeCreated}, {2, "/a", proto.EventNodeChildrenChanged},
		{3, "/a/e", proto.EventNodeDeleted}, {3, "/a", proto.EventNodeChildrenChanged},
	}, changes)
	// A failed multi applies nothing.
	failed := &proto.MultiTxn{Txns: []proto.Txn{
		proto.MakeTxn(proto.OpCreate, &proto.CreateTxn{Path: "/b", ParentCVersion: -1}),
		proto.MakeTxn(proto.OpError, &proto.ErrorTxn{Err: proto.NoNode}),
	}}
	require.NoError(t, tree.apply(&proto.TxnEntry{Header: hdr(4, proto.OpMulti, 7), Txn: failed}, emit))
	assert.Nil(t, tree.nodes["/b"])
	assert.Equal(t, int64(4), tree.lastZxid)
}

func TestSetACLIsJudgedByItsReplyOnly(t *testing.T) {
	h := baseHistory(t, func(f *fixture) {
		ref := f.r.Call("c1", ms(20), Operation{Kind: proto.OpSetACL, Session: 2, Xid: 9, Path: "/r/a", Version: -1})
		zxid := f.commit(2, 9, proto.OpSetACL, &proto.SetACLTxn{Path: "/r/a", ACL: proto.OpenACLUnsafe, Version: 1}, ms(21))
		st := statAfterSet
		st.Aversion = 1
		require.NoError(t, f.r.Reply(ref, ms(22), Reply{Zxid: zxid, Stat: &st}))
	})
	res := checkReadsOf(t, h, ReadOptions{})[0]
	assert.Equal(t, Pass, res.Status, res.String())
	lin, err := CheckLinearizability(h, registerOptions())
	require.NoError(t, err)
	assert.Equal(t, Pass, lin.Status, lin.String())
}

// TestSortProbesIsStable checks the merge sort of the probes against the library's stable sort,
// on runs of every shape: probes with equal zxids must keep their order.
func TestSortProbesIsStable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		zxids := rapid.SliceOfN(rapid.Int64Range(1, 12), 0, 60).Draw(t, "zxids")
		ops := make([]Operation, len(zxids))
		probes := make([]probe, len(zxids))
		for i, z := range zxids {
			ops[i].Zxid = z
			probes[i] = probe{ref: OpRef{Client: "c", Index: i}, op: &ops[i]}
		}
		want := slices.Clone(probes)
		slices.SortStableFunc(want, func(a, b probe) int { return compareInt64(a.op.Zxid, b.op.Zxid) })
		assert.Equal(t, want, sortProbes(slices.Clone(probes)))
	})
}
