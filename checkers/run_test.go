package checkers

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// hostStopwatch is what a caller outside the simulated world passes to time the checkers.
func hostStopwatch() func() time.Duration {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }
}

func TestRunAggregatesEveryChecker(t *testing.T) {
	f := watchBase(t)
	f.write("c2", 3, setData("/r/a", "y", 0), ms(15), ms(16), ms(17), proto.OK, 1)
	f.r.Event("c1", 2, ms(16), proto.EventNodeDataChanged, "/r/a", -1)
	f.read("c1", 2, syncOp(0x100000006), ms(18), ms(19), Reply{})
	h := converged(f, ms(100))

	report, err := Run(h, Options{
		Linearizability: []LinearizabilityOptions{{Model: RegisterModel, Prefix: "/r"}},
		Reads:           ReadOptions{LinearizableReadsAfterSync: true},
		Liveness:        LivenessOptions{LeaderBound: clock.Second, OperationBound: clock.Second},
		Stopwatch:       hostStopwatch(),
	})
	require.NoError(t, err)
	var names []string
	for _, res := range report.Results {
		names = append(names, res.Checker)
		assert.False(t, res.Failed(), res.String())
	}
	assert.Equal(t, []string{CheckerZxidRegister, CheckerSequentialConsistency, CheckerLinearizableReadsAfterSync,
		CheckerWatches, CheckerSessions, CheckerLiveness}, names)
	assert.False(t, report.Failed())
	assert.Empty(t, report.Findings())
	assert.Greater(t, report.Total, time.Duration(0))
	res, ok := report.Result(CheckerWatches)
	require.True(t, ok)
	assert.Equal(t, Pass, res.Status)
	assert.Contains(t, report.String(), "watches: pass")
	assert.Contains(t, report.String(), "checking took")
}

func TestRunReportsFailuresAndErrors(t *testing.T) {
	f := watchBase(t)
	f.write("c2", 3, setData("/r/a", "y", 0), ms(15), ms(16), ms(17), proto.OK, 1)
	h := converged(f, ms(100)) // the data watch never fires

	report, err := Run(h, Options{})
	require.NoError(t, err)
	assert.True(t, report.Failed())
	require.Len(t, report.Findings(), 1)
	assert.Equal(t, "watch-missed", report.Findings()[0].Rule)
	assert.Contains(t, report.String(), "watches: VIOLATION")
	assert.Equal(t, time.Duration(0), report.Total, "no stopwatch, no timings")

	_, err = Run(h, Options{Linearizability: []LinearizabilityOptions{{Model: QueueModel, Prefix: "/r"}}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrOutsideModel))

	_, err = Run(&History{Clients: []ClientHistory{{Name: ""}}}, Options{})
	assert.True(t, errors.Is(err, ErrInvalidHistory))
}

func TestRecorderRejectsMisuse(t *testing.T) {
	r := NewRecorder()
	ref := r.Call("c1", ms(5), Operation{Kind: proto.OpExists, Path: "/a"})
	assert.Error(t, r.Reply(ref, ms(4), Reply{}), "a reply before the call")
	require.NoError(t, r.Reply(ref, ms(6), Reply{}))
	assert.Error(t, r.Reply(ref, ms(7), Reply{}), "a second reply")
	assert.Error(t, r.Fail(OpRef{Client: "c9"}, ms(7), proto.ConnectionLoss, OutcomeUnknown), "no such client")
	other := r.Call("c1", ms(5), Operation{Kind: proto.OpExists, Path: "/a"})
	assert.Error(t, r.Fail(other, ms(7), proto.ConnectionLoss, OutcomeReplied), "a failure cannot be a reply")
	require.NoError(t, r.Commit(proto.TxnEntry{Header: proto.TxnHeader{Zxid: 5, Type: proto.OpCreateSession}, Txn: &proto.CreateSessionTxn{}}, ms(2)))
	require.NoError(t, r.Commit(proto.TxnEntry{Header: proto.TxnHeader{Zxid: 5, Type: proto.OpCreateSession}, Txn: &proto.CreateSessionTxn{}}, ms(1)), "the same txn again, earlier")
	require.NoError(t, r.Commit(proto.TxnEntry{Header: proto.TxnHeader{Zxid: 4, Type: proto.OpCreateSession}, Txn: &proto.CreateSessionTxn{}}, ms(3)), "an older txn, late")
	err := r.Commit(proto.TxnEntry{Header: proto.TxnHeader{Zxid: 5, Type: proto.OpCreate}, Txn: &proto.CreateTxn{Path: "/x"}}, ms(3))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "two different transactions committed with zxid 0x5")
	assert.Equal(t, []int64{4, 5}, []int64{r.h.Committed[0].Entry.Header.Zxid, r.h.Committed[1].Entry.Header.Zxid})
	assert.Equal(t, ms(1), r.h.Committed[1].Time, "the earliest report wins")
	require.NoError(t, r.SessionHealthy(2, ms(1), ms(3)))
	require.NoError(t, r.SessionHealthy(2, ms(3), ms(5)))
	assert.Error(t, r.SessionHealthy(2, ms(4), ms(6)), "overlapping")
	assert.Equal(t, []Interval{{ms(1), ms(5)}}, r.session(2).Healthy, "touching intervals merge")
	require.NoError(t, r.SessionEnded(2, SessionEnd{Zxid: 5}))
	assert.Error(t, r.SessionEnded(2, SessionEnd{Zxid: 5}))
	assert.Error(t, r.ForcedExpiry(ForcedExpiry{Client: "c1", Time: ms(4)}), "no session")
	require.NoError(t, r.ForcedExpiry(ForcedExpiry{Session: 2, Client: "c1", Time: ms(4)}))
	assert.Error(t, r.ForcedExpiry(ForcedExpiry{Session: 2, Client: "c1", Time: ms(3)}), "out of order")
	require.NoError(t, r.ForcedExpiry(ForcedExpiry{Session: 2, Client: "c1", Time: ms(4)}), "a second attempt at once")
	h := r.Finish(ms(10), nil)
	assert.Len(t, h.ForcedExpiries, 2)
	assert.Equal(t, OutcomePending, h.Clients[0].Ops[1].Outcome)
	// The session fact names zxid 5, which is a createSession: the history is rejected.
	assert.True(t, errors.Is(Validate(h), ErrInvalidHistory))
}

func TestValidateRejectsMalformedHistories(t *testing.T) {
	valid := func() *History {
		r := NewRecorder()
		ref := r.Call("c1", ms(1), Operation{Kind: proto.OpExists, Path: "/a", Session: 2})
		_ = r.Reply(ref, ms(2), Reply{Err: proto.NoNode, Zxid: 1})
		_ = r.Commit(proto.TxnEntry{Header: proto.TxnHeader{ClientID: 2, Zxid: 1, Type: proto.OpCreateSession}, Txn: &proto.CreateSessionTxn{}}, ms(1))
		return r.Finish(ms(10), nil)
	}
	require.NoError(t, Validate(valid()))
	cases := map[string]func(h *History){
		"no outcome":         func(h *History) { h.Clients[0].Ops[0].Outcome = 0 },
		"return before call": func(h *History) { h.Clients[0].Ops[0].Return = 0; h.Clients[0].Arrivals[0].Time = 0 },
		"unsupported kind":   func(h *History) { h.Clients[0].Ops[0].Kind = proto.OpRemoveWatches },
		"bad path":           func(h *History) { h.Clients[0].Ops[0].Path = "/a/" },
		"ttl create": func(h *History) {
			h.Clients[0].Ops[0] = Operation{Kind: proto.OpCreate, Path: "/t", Mode: proto.PersistentWithTTL, Outcome: OutcomePending}
		},
		"reply not arrived":  func(h *History) { h.Clients[0].Arrivals = []Arrival{{Kind: ArrivalState, Time: ms(3)}} },
		"arrival of nothing": func(h *History) { h.Clients[0].Arrivals[0].Op = 7 },
		"zxids out of order": func(h *History) { h.Committed = append(h.Committed, h.Committed[0]) },
		"txn without body":   func(h *History) { h.Committed[0].Entry.Txn = nil },
		"after the end":      func(h *History) { h.End = ms(1) },
		"duplicate client":   func(h *History) { h.Clients = append(h.Clients, ClientHistory{Name: "c1"}) },
		"empty multi":        func(h *History) { h.Clients[0].Ops[0] = Operation{Kind: proto.OpMulti, Outcome: OutcomePending} },
		"unsorted health": func(h *History) {
			h.Sessions = []SessionFacts{{Session: 2, Healthy: []Interval{{ms(5), ms(6)}, {ms(1), ms(2)}}}}
		},
		"end not in the log": func(h *History) { h.Sessions = []SessionFacts{{Session: 2, End: &SessionEnd{Zxid: 9}}} },
		"heal after the end": func(h *History) { h.Liveness = &LivenessFacts{HealTime: ms(11)} },
		"multi result count": func(h *History) {
			op := &h.Clients[0].Ops[0]
			op.Kind, op.Multi = proto.OpMulti, []SubOperation{{Kind: proto.OpCheck, Path: "/a"}}
			op.MultiResults = []SubResult{{}, {}}
		},
		"multi with a read": func(h *History) {
			op := &h.Clients[0].Ops[0]
			op.Kind, op.Multi = proto.OpMulti, []SubOperation{{Kind: proto.OpGetData, Path: "/a"}}
		},
		"negative reply zxid": func(h *History) { h.Clients[0].Ops[0].Zxid = -1 },
		"forced expiry of no session": func(h *History) {
			h.ForcedExpiries = []ForcedExpiry{{Client: "c1", Time: ms(3)}}
		},
		"forced expiry after the end": func(h *History) {
			h.ForcedExpiries = []ForcedExpiry{{Session: 2, Client: "c1", Time: ms(11)}}
		},
		"forced expiries out of order": func(h *History) {
			h.ForcedExpiries = []ForcedExpiry{{Session: 2, Time: ms(5)}, {Session: 3, Time: ms(4)}}
		},
		"forced expiry of another's session": func(h *History) {
			h.Sessions = []SessionFacts{{Session: 2, Client: "c1"}}
			h.ForcedExpiries = []ForcedExpiry{{Session: 2, Client: "c2", Time: ms(3)}}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			h := valid()
			mutate(h)
			err := Validate(h)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrInvalidHistory), err.Error())
		})
	}
	assert.Error(t, Validate(nil))
}

func TestRecorderResultTellsRepliesFromGiveUps(t *testing.T) {
	r := NewRecorder()
	replied := r.Call("c1", ms(1), Operation{Kind: proto.OpExists, Path: "/a"}) // before the handshake
	gaveUp := r.Call("c1", ms(1), Operation{Kind: proto.OpSetData, Path: "/a", Session: 2, Version: -1})
	require.NoError(t, r.Result(replied, ms(2), Reply{Session: 2, Err: proto.NoNode, Zxid: 7}))
	require.NoError(t, r.Result(gaveUp, ms(3), Reply{Err: proto.ConnectionLoss}))
	h := r.Finish(ms(4), nil)
	assert.Equal(t, OutcomeReplied, h.Clients[0].Ops[0].Outcome)
	assert.Equal(t, int64(2), h.Clients[0].Ops[0].Session)
	assert.Equal(t, OutcomeUnknown, h.Clients[0].Ops[1].Outcome)
	assert.Equal(t, proto.ConnectionLoss, h.Clients[0].Ops[1].Err)
	assert.Len(t, h.Clients[0].Arrivals, 1)
}

func TestRecorderOwnsTheDataAndSharesThePaths(t *testing.T) {
	r := NewRecorder()
	data := []byte("v1")
	first := r.Call("c1", ms(1), Operation{Kind: proto.OpSetData, Path: strings.Clone("/r/k1"), Data: data, Version: -1})
	second := r.Call("c1", ms(2), Operation{Kind: proto.OpGetData, Path: strings.Clone("/r/k1")})
	result := []byte("v1")
	require.NoError(t, r.Reply(second, ms(3), Reply{Zxid: 1, Data: result}))
	require.NoError(t, r.Fail(first, ms(3), proto.ConnectionLoss, OutcomeUnknown))
	empty := r.Call("c1", ms(4), Operation{Kind: proto.OpCreate, Path: "/r/k2", Data: []byte{}})
	h := r.Finish(ms(10), nil)
	ops := h.Clients[0].Ops

	// The caller's buffers are its own again once recorded.
	data[0], result[0] = 'X', 'X'
	assert.Equal(t, "v1", string(ops[first.Index].Data))
	assert.Equal(t, "v1", string(ops[second.Index].ResultData))
	// An append to one operation's data cannot overwrite the data recorded after it.
	_ = append(ops[first.Index].Data, 'Y')
	assert.Equal(t, "v1", string(ops[second.Index].ResultData))
	// Empty data stays empty, not nil, and absent data stays nil.
	assert.NotNil(t, ops[empty.Index].Data)
	assert.Empty(t, ops[empty.Index].Data)
	assert.Nil(t, ops[second.Index].Data)
	// Two operations on one path share one copy of it.
	assert.Equal(t, unsafe.StringData(ops[first.Index].Path), unsafe.StringData(ops[second.Index].Path))
}
