package checkers

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

func registerOptions() LinearizabilityOptions {
	return LinearizabilityOptions{Model: RegisterModel, Prefix: "/r", TimeLimit: 5 * time.Second}
}

// registerHistory is a small correct register history on /r/a; staleCAS makes the last
// compare-and-set succeed with a version that was already used, which no order explains.
func registerHistory(t *testing.T, staleCAS bool) *History {
	f := newFixture(t)
	f.setup("/r")
	f.session("c1", 2, ms(5))
	f.session("c2", 3, ms(5))
	f.write("c1", 2, create("/r/a", "x"), ms(10), ms(11), ms(12), proto.OK, 0)
	f.write("c2", 3, setData("/r/a", "y", 0), ms(11), ms(13), ms(14), proto.OK, 1)
	if staleCAS {
		f.write("c1", 2, setData("/r/a", "z", 0), ms(15), ms(16), ms(18), proto.OK, 1)
	} else {
		f.write("c1", 2, setData("/r/a", "z", 0), ms(15), ms(16), ms(18), proto.BadVersion, 0)
	}
	f.write("c2", 3, deleteOp("/r/a", 1), ms(19), ms(20), ms(21), proto.OK, 0)
	return f.finish(ms(100))
}

func TestRegisterModelPassesCorrectHistory(t *testing.T) {
	res, err := CheckLinearizability(registerHistory(t, false), registerOptions())
	require.NoError(t, err)
	assert.Equal(t, Pass, res.Status, res.String())
	assert.Equal(t, 4, res.Checked)
}

func TestRegisterModelReportsStaleCompareAndSet(t *testing.T) {
	res, err := CheckLinearizability(registerHistory(t, true), registerOptions())
	require.NoError(t, err)
	require.Equal(t, Violation, res.Status, res.String())
	require.Len(t, res.Findings, 1)
	f := res.Findings[0]
	assert.Equal(t, CheckerRegister, f.Checker)
	assert.Equal(t, "linearizable", f.Rule)
	assert.Contains(t, f.Message, "the 4 operations on /r/a have no linearization")
	assert.Contains(t, f.Message, `setData(/r/a, "z", version=0) -> OK`)
	assert.NotEmpty(t, f.Ops)
	assert.NotEmpty(t, f.Zxids)
}

// unknownHistory builds a history around a create of /r/a whose reply was lost.
//   - happened: the create committed; a later compare-and-set on version 0 succeeds.
//   - !happened: it never committed; a later setData finds no node.
func unknownHistory(t *testing.T, happened, pending bool) *History {
	f := newFixture(t)
	f.setup("/r")
	f.session("c1", 2, ms(5))
	f.session("c2", 3, ms(5))
	commitAt, failAt := clock.Time(0), ms(20)
	if happened {
		commitAt = ms(11)
	}
	if pending {
		failAt = 0
	}
	f.lost("c1", 2, create("/r/a", "x"), ms(10), commitAt, failAt, 0)
	if happened {
		f.write("c2", 3, setData("/r/a", "y", 0), ms(25), ms(26), ms(27), proto.OK, 1)
	} else {
		f.write("c2", 3, setData("/r/a", "y", 0), ms(25), ms(26), ms(27), proto.NoNode, 0)
	}
	return f.finish(ms(100))
}

func TestUnknownOutcomesThatHappenedOrNotBothPass(t *testing.T) {
	for _, happened := range []bool{true, false} {
		for _, pending := range []bool{true, false} {
			for _, noLog := range []bool{true, false} {
				name := fmt.Sprintf("happened=%t/pending=%t/noLogResolution=%t", happened, pending, noLog)
				t.Run(name, func(t *testing.T) {
					opts := registerOptions()
					opts.NoLogResolution = noLog
					res, err := CheckLinearizability(unknownHistory(t, happened, pending), opts)
					require.NoError(t, err)
					assert.Equal(t, Pass, res.Status, res.String())
					if !noLog {
						require.Len(t, res.Notes, 1)
						assert.Contains(t, res.Notes[0], "the committed log settled 1 unknown-outcome writes")
					}
				})
			}
		}
	}
}

// TestUnknownWriteCannotHappenTwice: one lost create and two successful deletes of the same node
// with nothing between them could only be explained if the create took effect twice.
func TestUnknownWriteCannotHappenTwice(t *testing.T) {
	for _, noLog := range []bool{true, false} {
		t.Run(fmt.Sprintf("noLogResolution=%t", noLog), func(t *testing.T) {
			f := newFixture(t)
			f.setup("/r")
			f.session("c1", 2, ms(5))
			f.session("c2", 3, ms(5))
			f.session("c3", 4, ms(5))
			f.lost("c1", 2, create("/r/a", "x"), ms(10), ms(11), ms(20), 0)
			f.write("c2", 3, deleteOp("/r/a", -1), ms(25), ms(26), ms(27), proto.OK, 0)
			f.write("c3", 4, deleteOp("/r/a", -1), ms(30), ms(31), ms(32), proto.OK, 0)
			opts := registerOptions()
			opts.NoLogResolution = noLog
			res, err := CheckLinearizability(f.finish(ms(100)), opts)
			require.NoError(t, err)
			require.Equal(t, Violation, res.Status, res.String())
			assert.Contains(t, res.Findings[0].Message, "delete(/r/a, version=-1) -> OK")
		})
	}
}

func TestEphemeralNodesVanishWithTheirSession(t *testing.T) {
	cases := []struct {
		name       string
		fact       bool
		commitTime clock.Time
		want       Status
	}{
		{"runner-fact", true, ms(20), Pass},
		{"from-the-log", false, ms(20), Pass},
		{"log-without-time", false, 0, Violation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.setup("/r")
			f.session("c1", 2, ms(5))
			f.session("c2", 3, ms(5))
			f.write("c1", 2, createMode("/r/e", "x", proto.Ephemeral), ms(10), ms(11), ms(12), proto.OK, 0)
			closeZxid := f.commit(2, 0, proto.OpCloseSession, &proto.CloseSessionTxn{PathsToDelete: []string{"/r/e"}}, c.commitTime)
			if c.fact {
				require.NoError(t, f.r.SessionEnded(2, SessionEnd{Zxid: closeZxid, Time: c.commitTime, Expired: true}))
			}
			f.write("c2", 3, create("/r/e", "y"), ms(30), ms(31), ms(32), proto.OK, 0)
			res, err := CheckLinearizability(f.finish(ms(100)), registerOptions())
			require.NoError(t, err)
			assert.Equal(t, c.want, res.Status, res.String())
			if c.want == Violation {
				assert.Contains(t, res.Notes, "1 sessions that owned ephemerals in scope were closed in the committed log without a recorded commit time, so their ephemerals never vanish in the model")
			}
		})
	}
}

func TestZxidsFollowRealTimeOrder(t *testing.T) {
	r := NewRecorder()
	a := r.Call("c1", ms(1), Operation{Kind: proto.OpSetData, Path: "/r/a", Data: []byte("1"), Version: -1, Session: 2, Xid: 1})
	require.NoError(t, r.Reply(a, ms(10), Reply{Zxid: 0x100000005, Stat: &proto.Stat{Version: 1}}))
	b := r.Call("c2", ms(12), Operation{Kind: proto.OpSetData, Path: "/r/b", Data: []byte("2"), Version: -1, Session: 3, Xid: 1})
	require.NoError(t, r.Reply(b, ms(20), Reply{Zxid: 0x100000004, Stat: &proto.Stat{Version: 1}}))
	res, err := CheckLinearizability(r.Finish(ms(30), nil), registerOptions())
	require.NoError(t, err)
	require.Equal(t, Violation, res.Status, res.String())
	f := res.Findings[0]
	assert.Equal(t, "zxid-real-time-order", f.Rule)
	assert.Contains(t, f.Message, "yet its zxid 0x100000005 is not below 0x100000004")
	assert.Equal(t, []OpRef{{"c1", 0}, {"c2", 0}}, f.Ops)
}

func TestRegisterModelRejectsMulti(t *testing.T) {
	r := NewRecorder()
	op := r.Call("c1", ms(1), Operation{Kind: proto.OpMulti, Session: 2, Xid: 1, Multi: []SubOperation{
		{Kind: proto.OpCreate, Path: "/r/a"}, {Kind: proto.OpCreate, Path: "/r/b"},
	}})
	require.NoError(t, r.Reply(op, ms(2), Reply{Zxid: 5}))
	_, err := CheckLinearizability(r.Finish(ms(3), nil), registerOptions())
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrOutsideModel), err.Error())
	assert.Contains(t, err.Error(), "use the tree model")
}

func TestInvalidHistoryIsAnErrorNotAPanic(t *testing.T) {
	_, err := CheckLinearizability(&History{Clients: []ClientHistory{{Name: "c1", Ops: []Operation{{Kind: proto.OpSetData, Path: "bad"}}}}}, registerOptions())
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrInvalidHistory))
	_, err = CheckLinearizability(&History{}, LinearizabilityOptions{Model: RegisterModel, Prefix: "r"})
	require.Error(t, err)
}

// hardHistory is n concurrent blind writes of distinct values to one register, followed by a read
// of a value nobody wrote: not linearizable, but proving it means trying every order.
func hardHistory(n int) *History {
	r := NewRecorder()
	ref := r.Call("setup", ms(1), Operation{Kind: proto.OpCreate, Path: "/r/a", Data: []byte("init")})
	_ = r.Reply(ref, ms(2), Reply{Zxid: 1, CreatedPath: "/r/a"})
	for i := 0; i < n; i++ {
		ref := r.Call(fmt.Sprintf("c%d", i), ms(10), Operation{Kind: proto.OpSetData, Path: "/r/a", Data: []byte(fmt.Sprint(i)), Version: -1})
		_ = r.Reply(ref, ms(1000), Reply{Zxid: int64(i + 2)})
	}
	ref = r.Call("reader", ms(10), Operation{Kind: proto.OpGetData, Path: "/r/a"})
	_ = r.Reply(ref, ms(1000), Reply{Data: []byte("never written"), Zxid: int64(n + 1)})
	return r.Finish(ms(2000), nil)
}

func TestTinyTimeLimitIsUnknownNotPass(t *testing.T) {
	opts := registerOptions()
	opts.IncludeReads = true
	opts.TimeLimit = time.Millisecond
	res, err := CheckLinearizability(hardHistory(22), opts)
	require.NoError(t, err)
	assert.Equal(t, Unknown, res.Status, res.String())
	assert.True(t, res.Failed())
	assert.Contains(t, res.Summary, "could not decide within 1ms")
	assert.Contains(t, res.Summary, "this is not a pass")
}

func TestVisualizationIsWrittenOnRequest(t *testing.T) {
	var buf bytes.Buffer
	opts := registerOptions()
	opts.Visualization = &buf
	res, err := CheckLinearizability(registerHistory(t, true), opts)
	require.NoError(t, err)
	assert.Equal(t, Violation, res.Status)
	assert.Contains(t, buf.String(), "<html")
	assert.Contains(t, buf.String(), "setData(/r/a")
}

// treeHistory uses multi on /t. partial makes a later write find the first half of a failed multi
// applied, which all-or-nothing forbids.
func treeHistory(t *testing.T, partial bool) *History {
	f := newFixture(t)
	f.setup("/t")
	f.session("c1", 2, ms(5))
	f.session("c2", 3, ms(5))
	r := f.r
	m1 := r.Call("c1", ms(10), Operation{Kind: proto.OpMulti, Session: 2, Xid: 1, Multi: []SubOperation{
		{Kind: proto.OpCreate, Path: "/t/a", Data: []byte("a")}, {Kind: proto.OpCreate, Path: "/t/b", Data: []byte("b")},
	}})
	require.NoError(t, r.Reply(m1, ms(12), Reply{Zxid: f.zxid + 1, MultiResults: []SubResult{{Path: "/t/a"}, {Path: "/t/b"}}}))
	m2 := r.Call("c1", ms(13), Operation{Kind: proto.OpMulti, Session: 2, Xid: 2, Multi: []SubOperation{
		{Kind: proto.OpSetData, Path: "/t/a", Data: []byte("a2"), Version: 0}, {Kind: proto.OpDelete, Path: "/t/b", Version: 5},
	}})
	require.NoError(t, r.Reply(m2, ms(15), Reply{Zxid: f.zxid + 2, MultiResults: []SubResult{{}, {Err: proto.BadVersion}}}))
	seq := r.Call("c2", ms(16), Operation{Kind: proto.OpCreate, Session: 3, Xid: 1, Path: "/t/q-", Mode: proto.PersistentSequential})
	require.NoError(t, r.Reply(seq, ms(17), Reply{Zxid: f.zxid + 3, CreatedPath: "/t/q-0000000002"}))
	last := r.Call("c2", ms(18), Operation{Kind: proto.OpSetData, Session: 3, Xid: 2, Path: "/t/a", Data: []byte("a3"), Version: 0})
	reply := Reply{Zxid: f.zxid + 4, Stat: &proto.Stat{Version: 1}}
	if partial {
		reply = Reply{Err: proto.BadVersion, Zxid: f.zxid + 4}
	}
	require.NoError(t, r.Reply(last, ms(19), reply))
	return r.Finish(ms(100), nil)
}

func TestTreeModelJudgesMulti(t *testing.T) {
	opts := LinearizabilityOptions{Model: TreeModel, Prefix: "/t"}
	res, err := CheckLinearizability(treeHistory(t, false), opts)
	require.NoError(t, err)
	assert.Equal(t, Pass, res.Status, res.String())

	res, err = CheckLinearizability(treeHistory(t, true), opts)
	require.NoError(t, err)
	require.Equal(t, Violation, res.Status, res.String())
	assert.Equal(t, CheckerTree, res.Findings[0].Checker)
	assert.Contains(t, res.Findings[0].Message, "setData(/t/a, \"a3\", version=0) -> BADVERSION")
}

func TestTreeModelChecksSequentialNames(t *testing.T) {
	r := NewRecorder()
	a := r.Call("c1", ms(1), Operation{Kind: proto.OpCreate, Session: 2, Xid: 1, Path: "/t/q-", Mode: proto.PersistentSequential})
	require.NoError(t, r.Reply(a, ms(2), Reply{Zxid: 5, CreatedPath: "/t/q-0000000001"}))
	res, err := CheckLinearizability(r.Finish(ms(3), nil), LinearizabilityOptions{Model: TreeModel, Prefix: "/t"})
	require.NoError(t, err)
	require.Equal(t, Violation, res.Status, res.String())
	assert.Contains(t, res.Findings[0].Message, "path=/t/q-0000000001")
}

// queueHistory: two producers enqueue, one consumer dequeues. outOfOrder makes the consumer take
// the second item while the first is still there; twice makes it take the first item twice.
func queueHistory(t *testing.T, outOfOrder, twice bool) *History {
	r := NewRecorder()
	p1 := r.Call("p1", ms(1), Operation{Kind: proto.OpCreate, Session: 2, Xid: 1, Path: "/q/item-", Mode: proto.PersistentSequential})
	require.NoError(t, r.Reply(p1, ms(2), Reply{Zxid: 5, CreatedPath: "/q/item-0000000000"}))
	p2 := r.Call("p2", ms(3), Operation{Kind: proto.OpCreate, Session: 3, Xid: 1, Path: "/q/item-", Mode: proto.PersistentSequential})
	require.NoError(t, r.Reply(p2, ms(4), Reply{Zxid: 6, CreatedPath: "/q/item-0000000001"}))
	first, second := "/q/item-0000000000", "/q/item-0000000001"
	if outOfOrder {
		first, second = second, first
	}
	if twice {
		second = first
	}
	d1 := r.Call("c1", ms(5), Operation{Kind: proto.OpDelete, Session: 4, Xid: 1, Path: first, Version: -1})
	require.NoError(t, r.Reply(d1, ms(6), Reply{Zxid: 7}))
	d2 := r.Call("c1", ms(7), Operation{Kind: proto.OpDelete, Session: 4, Xid: 2, Path: second, Version: -1})
	require.NoError(t, r.Reply(d2, ms(8), Reply{Zxid: 8}))
	return r.Finish(ms(10), nil)
}

func TestQueueModel(t *testing.T) {
	strict := LinearizabilityOptions{Model: QueueModel, Prefix: "/q"}
	anyOrder := LinearizabilityOptions{Model: QueueModel, Prefix: "/q", QueueAnyOrder: true}
	cases := []struct {
		name              string
		outOfOrder, twice bool
		opts              LinearizabilityOptions
		want              Status
	}{
		{"fifo", false, false, strict, Pass},
		{"out-of-order-strict", true, false, strict, Violation},
		{"out-of-order-any-order", true, false, anyOrder, Pass},
		{"dequeued-twice", false, true, anyOrder, Violation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := CheckLinearizability(queueHistory(t, c.outOfOrder, c.twice), c.opts)
			require.NoError(t, err)
			assert.Equal(t, c.want, res.Status, res.String())
			if c.want == Violation {
				assert.Contains(t, res.Findings[0].Message, "the 4 operations on /q have no linearization")
			}
		})
	}
}

// TestTreeModelSettlesAnUnknownMulti: a multi whose reply was lost either committed (and a later
// create of one of its nodes fails) or did not (and the same create succeeds); both pass, with or
// without the committed log.
func TestTreeModelSettlesAnUnknownMulti(t *testing.T) {
	for _, happened := range []bool{true, false} {
		for _, noLog := range []bool{true, false} {
			t.Run(fmt.Sprintf("happened=%t/noLogResolution=%t", happened, noLog), func(t *testing.T) {
				f := newFixture(t)
				f.setup("/t")
				f.session("c1", 2, ms(5))
				f.session("c2", 3, ms(5))
				subs := []SubOperation{{Kind: proto.OpCreate, Path: "/t/a"}, {Kind: proto.OpCreate, Path: "/t/b"}}
				m := f.r.Call("c1", ms(10), Operation{Kind: proto.OpMulti, Session: 2, Xid: 1, Multi: subs})
				if happened {
					f.commit(2, 1, proto.OpMulti, &proto.MultiTxn{Txns: []proto.Txn{
						proto.MakeTxn(proto.OpCreate, &proto.CreateTxn{Path: "/t/a", ParentCVersion: -1}),
						proto.MakeTxn(proto.OpCreate, &proto.CreateTxn{Path: "/t/b", ParentCVersion: -1}),
					}}, ms(11))
				}
				require.NoError(t, f.r.Fail(m, ms(20), proto.ConnectionLoss, OutcomeUnknown))
				code := proto.OK
				if happened {
					code = proto.NodeExists
				}
				f.write("c2", 3, create("/t/b", "again"), ms(25), ms(26), ms(27), code, 0)
				res, err := CheckLinearizability(f.finish(ms(100)), LinearizabilityOptions{Model: TreeModel, Prefix: "/t", NoLogResolution: noLog})
				require.NoError(t, err)
				assert.Equal(t, Pass, res.Status, res.String())
			})
		}
	}
}

// TestQueueModelHandlesAnUnknownEnqueue: a producer's lost enqueue either took sequence number 0
// or not; the next producer's item number shows which, and both histories pass.
func TestQueueModelHandlesAnUnknownEnqueue(t *testing.T) {
	for _, happened := range []bool{true, false} {
		for _, noLog := range []bool{true, false} {
			t.Run(fmt.Sprintf("happened=%t/noLogResolution=%t", happened, noLog), func(t *testing.T) {
				f := newFixture(t)
				f.setup("/q")
				f.session("p1", 2, ms(5))
				f.session("p2", 3, ms(5))
				enqueue := Operation{Kind: proto.OpCreate, Path: "/q/item-", Mode: proto.PersistentSequential}
				lost := f.r.Call("p1", ms(10), Operation{Kind: enqueue.Kind, Path: enqueue.Path, Mode: enqueue.Mode, Session: 2, Xid: 1})
				next := "/q/item-0000000000"
				if happened {
					f.commit(2, 1, proto.OpCreate, &proto.CreateTxn{Path: next, ParentCVersion: -1}, ms(11))
					next = "/q/item-0000000001"
				}
				require.NoError(t, f.r.Fail(lost, ms(20), proto.ConnectionLoss, OutcomeUnknown))
				op := enqueue
				op.Session, op.Xid = 3, 1
				ref := f.r.Call("p2", ms(25), op)
				require.NoError(t, f.r.Reply(ref, ms(27), Reply{Zxid: f.commit(3, 1, proto.OpCreate, &proto.CreateTxn{Path: next, ParentCVersion: -1}, ms(26)), CreatedPath: next}))
				res, err := CheckLinearizability(f.finish(ms(100)), LinearizabilityOptions{Model: QueueModel, Prefix: "/q", NoLogResolution: noLog})
				require.NoError(t, err)
				assert.Equal(t, Pass, res.Status, res.String())
			})
		}
	}
	// Had the lost enqueue not happened, the next item would be number 0: number 2 is impossible.
	r := NewRecorder()
	lost := r.Call("p1", ms(10), Operation{Kind: proto.OpCreate, Path: "/q/item-", Mode: proto.PersistentSequential, Session: 2, Xid: 1})
	require.NoError(t, r.Fail(lost, ms(20), proto.ConnectionLoss, OutcomeUnknown))
	ref := r.Call("p2", ms(25), Operation{Kind: proto.OpCreate, Path: "/q/item-", Mode: proto.PersistentSequential, Session: 3, Xid: 1})
	require.NoError(t, r.Reply(ref, ms(27), Reply{Zxid: 9, CreatedPath: "/q/item-0000000002"}))
	res, err := CheckLinearizability(r.Finish(ms(100), nil), LinearizabilityOptions{Model: QueueModel, Prefix: "/q", NoLogResolution: true})
	require.NoError(t, err)
	assert.Equal(t, Violation, res.Status, res.String())
}

func TestQueueModelJudgesListingsOnRequest(t *testing.T) {
	build := func(listed []string) *History {
		r := NewRecorder()
		p := r.Call("p1", ms(1), Operation{Kind: proto.OpCreate, Session: 2, Xid: 1, Path: "/q/item-", Mode: proto.PersistentSequential})
		require.NoError(t, r.Reply(p, ms(2), Reply{Zxid: 5, CreatedPath: "/q/item-0000000000"}))
		l := r.Call("c1", ms(3), Operation{Kind: proto.OpGetChildren2, Session: 3, Xid: 1, Path: "/q"})
		require.NoError(t, r.Reply(l, ms(4), Reply{Zxid: 5, Children: listed}))
		return r.Finish(ms(10), nil)
	}
	opts := LinearizabilityOptions{Model: QueueModel, Prefix: "/q", IncludeReads: true}
	res, err := CheckLinearizability(build([]string{"item-0000000000"}), opts)
	require.NoError(t, err)
	assert.Equal(t, Pass, res.Status, res.String())
	res, err = CheckLinearizability(build(nil), opts)
	require.NoError(t, err)
	assert.Equal(t, Violation, res.Status, res.String())
	// Without IncludeReads the stale listing is not the linearizability checker's business.
	opts.IncludeReads = false
	res, err = CheckLinearizability(build(nil), opts)
	require.NoError(t, err)
	assert.Equal(t, Pass, res.Status, res.String())
}
