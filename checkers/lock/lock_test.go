package lock

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// logBuilder writes a committed log by hand.
type logBuilder struct {
	zxid int64
	log  []checkers.CommittedTxn
}

func at(s float64) clock.Time { return clock.Time(s * float64(clock.Second)) }

func (b *logBuilder) add(session int64, typ proto.OpCode, body proto.Record, t clock.Time) int64 {
	b.zxid++
	b.log = append(b.log, checkers.CommittedTxn{Entry: proto.TxnEntry{
		Header: proto.TxnHeader{ClientID: session, Zxid: b.zxid, Type: typ}, Txn: body}, Time: t})
	return b.zxid
}

func (b *logBuilder) create(session int64, path string, ephemeral bool, t clock.Time) int64 {
	return b.add(session, proto.OpCreate, &proto.CreateTxn{Path: path, Ephemeral: ephemeral}, t)
}

func (b *logBuilder) delete(session int64, path string, t clock.Time) int64 {
	return b.add(session, proto.OpDelete, &proto.DeleteTxn{Path: path}, t)
}

func (b *logBuilder) close(session int64, t clock.Time) int64 {
	return b.add(session, proto.OpCloseSession, &proto.CloseSessionTxn{}, t)
}

const fair = "/locks/m"

func nodePath(seq string) string { return fair + "/_c_x-lock-000000000" + seq }

func result(t *testing.T, h *History, checker string) checkers.Result {
	t.Helper()
	if h.End == 0 {
		h.End = at(1000)
	}
	results, err := Run(h, Options{})
	require.NoError(t, err)
	for _, r := range results {
		if r.Checker == checker {
			return r
		}
	}
	t.Fatalf("no result of %s", checker)
	return checkers.Result{}
}

func write(client string, session, token int64, t clock.Time, accepted bool) Access {
	return Access{Lock: fair, Client: client, Session: session, Token: token, Write: true, Accepted: accepted, Time: t}
}

func read(client string, session, token int64, t clock.Time) Access {
	a := write(client, session, token, t, true)
	a.Write = false
	return a
}

// twoHolders is a fair lock held by a (session 1) and then by b (session 2); a's node goes away at
// 3 s by the end of its session.
func twoHolders() (*History, int64, int64) {
	var b logBuilder
	ta := b.create(1, nodePath("1"), true, at(1))
	tb := b.create(2, nodePath("2"), true, at(1.5))
	b.close(1, at(3))
	return &History{Locks: []Lock{{Path: fair, Kind: KindFair}}, Committed: b.log}, ta, tb
}

func TestSerialHoldersPass(t *testing.T) {
	h, ta, tb := twoHolders()
	h.Accesses = []Access{write("a", 1, ta, at(1), true), write("a", 1, ta, at(2), true), write("b", 2, tb, at(4), true), write("b", 2, tb, at(5), true)}
	assert.Equal(t, checkers.Pass, result(t, h, CheckerMutualExclusion).Status)
	assert.Equal(t, checkers.Pass, result(t, h, CheckerUnfenced).Status)
}

func TestStaleHolderWithoutFencingIsUnsafeWithoutFencing(t *testing.T) {
	h, ta, tb := twoHolders()
	h.Accesses = []Access{write("a", 1, ta, at(1), true), write("b", 2, tb, at(4), true), write("a", 1, ta, at(5), true), write("b", 2, tb, at(6), true)}
	unfenced := result(t, h, CheckerUnfenced)
	require.Equal(t, checkers.Violation, unfenced.Status)
	f := unfenced.Findings[0]
	assert.Equal(t, "stale-holder", f.Rule)
	assert.Equal(t, []string{"a", "b"}, f.Clients)
	assert.Equal(t, []int64{1, 2}, f.Sessions)
	assert.Equal(t, []int64{ta, tb}, f.Zxids)
	assert.Contains(t, f.Message, "the end of its session 0x1")
	assert.Equal(t, checkers.Pass, result(t, h, CheckerMutualExclusion).Status, "not a recipe bug")
}

func TestStaleHolderWithFencingPasses(t *testing.T) {
	h, ta, tb := twoHolders()
	h.Fencing = true
	rejected := write("a", 1, ta, at(5), false)
	rejected.Newest = tb
	h.Accesses = []Access{write("a", 1, ta, at(1), true), write("b", 2, tb, at(4), true), rejected, write("b", 2, tb, at(6), true)}
	assert.Equal(t, checkers.Pass, result(t, h, CheckerMutualExclusion).Status)
	assert.Equal(t, checkers.Pass, result(t, h, CheckerUnfenced).Status)
}

func TestOverlapOfLiveHoldersIsARecipeBug(t *testing.T) {
	var b logBuilder
	ta := b.create(1, nodePath("1"), true, at(1))
	tb := b.create(2, nodePath("2"), true, at(1.5))
	h := &History{Locks: []Lock{{Path: fair, Kind: KindFair}}, Committed: b.log}
	h.Accesses = []Access{write("a", 1, ta, at(2), true), write("b", 2, tb, at(3), true), write("a", 1, ta, at(4), true)}
	res := result(t, h, CheckerMutualExclusion)
	require.Equal(t, checkers.Violation, res.Status)
	assert.Equal(t, "overlapping-holders", res.Findings[0].Rule)
	assert.Contains(t, res.Findings[0].Message, "still alive")
	assert.Equal(t, checkers.Pass, result(t, h, CheckerUnfenced).Status)
}

func TestFencedLiveHolderIsARecipeBug(t *testing.T) {
	var b logBuilder
	ta := b.create(1, nodePath("1"), true, at(1))
	tb := b.create(2, nodePath("2"), true, at(1.5))
	h := &History{Locks: []Lock{{Path: fair, Kind: KindReadWrite}}, Committed: b.log, Fencing: true}
	rejected := read("r", 1, ta, at(4))
	rejected.Accepted, rejected.Newest = false, tb
	h.Accesses = []Access{read("r", 1, ta, at(2)), write("w", 2, tb, at(3), true), rejected}
	res := result(t, h, CheckerMutualExclusion)
	require.Equal(t, checkers.Violation, res.Status)
	f := res.Findings[0]
	assert.Equal(t, "fenced-live-holder", f.Rule)
	assert.Equal(t, []string{"r", "w"}, f.Clients, "the rejected holder and the one whose token fenced it")
	assert.Equal(t, []int64{ta, tb}, f.Zxids)
}

func TestReadersShareButNotWithWriters(t *testing.T) {
	var b logBuilder
	t1 := b.create(1, nodePath("1"), true, at(1))
	t2 := b.create(2, nodePath("2"), true, at(1))
	t3 := b.create(3, nodePath("3"), true, at(1))
	h := &History{Locks: []Lock{{Path: fair, Kind: KindReadWrite}}, Committed: b.log}
	h.Accesses = []Access{read("r1", 1, t1, at(2)), read("r2", 2, t2, at(3)), read("r1", 1, t1, at(4)), read("r2", 2, t2, at(5))}
	assert.Equal(t, checkers.Pass, result(t, h, CheckerMutualExclusion).Status, "two readers interleave freely")
	h.Accesses = append(h.Accesses[:2:2], write("w", 3, t3, at(3.5), true), h.Accesses[2], h.Accesses[3])
	assert.Equal(t, checkers.Violation, result(t, h, CheckerMutualExclusion).Status, "a write inside a reader's tenure")
}

func TestFairnessFollowsTheQueue(t *testing.T) {
	h := &History{Locks: []Lock{{Path: fair, Kind: KindFair}}}
	h.Grants = []Grant{
		{Lock: fair, Client: "a", Session: 1, Node: nodePath("1"), Token: 11, Mode: ModeExclusive, Zxid: 20, Time: at(1)},
		{Lock: fair, Client: "b", Session: 2, Node: nodePath("2"), Token: 12, Mode: ModeExclusive, Zxid: 30, Time: at(2)},
	}
	assert.Equal(t, checkers.Pass, result(t, h, CheckerFairness).Status)
	h.Grants[1].Zxid = 10
	res := result(t, h, CheckerFairness)
	require.Equal(t, checkers.Violation, res.Status)
	assert.Equal(t, []string{"b", "a"}, res.Findings[0].Clients, "b jumped the queue ahead of a")
	h.Grants[0].Mode, h.Grants[1].Mode = ModeRead, ModeRead
	h.Locks[0].Kind = KindReadWrite
	assert.Equal(t, checkers.Pass, result(t, h, CheckerFairness).Status, "readers may come in together")
	h.Locks[0].Kind = KindExclusive
	h.Grants[0].Mode, h.Grants[1].Mode = ModeExclusive, ModeExclusive
	assert.Equal(t, checkers.Pass, result(t, h, CheckerFairness).Status, "the simple exclusive lock promises no order")
}

// herdHistory is a holder (session 1) and two waiters (sessions 2 and 3), whose watches are given.
func herdHistory(watches ...Watch) *History {
	var b logBuilder
	b.create(1, nodePath("1"), true, at(1))
	b.create(2, nodePath("2"), true, at(1))
	b.create(3, nodePath("3"), true, at(1))
	b.delete(1, nodePath("1"), at(5))
	h := &History{Locks: []Lock{{Path: fair, Kind: KindFair}}, Committed: b.log}
	h.Attempts = []Attempt{
		{Lock: fair, Client: "b", Session: 2, Mode: ModeExclusive, Node: nodePath("2"), Start: at(1), End: at(6), Outcome: Granted},
		{Lock: fair, Client: "c", Session: 3, Mode: ModeExclusive, Node: nodePath("3"), Start: at(1), Outcome: Waiting},
	}
	h.Watches = watches
	return h
}

func TestOneReleaseWakesOneWaiter(t *testing.T) {
	h := herdHistory(
		Watch{Lock: fair, Client: "b", Session: 2, Mode: ModeExclusive, Attempt: 0, Path: nodePath("1"), Zxid: 3, Time: at(2)},
		Watch{Lock: fair, Client: "c", Session: 3, Mode: ModeExclusive, Attempt: 1, Path: nodePath("2"), Zxid: 3, Time: at(2)},
	)
	res := result(t, h, CheckerHerd)
	assert.Equal(t, checkers.Pass, res.Status)
	assert.Equal(t, 1, res.Checked, "one change woke a waiter")
}

func TestWatchingTheChildrenIsAHerd(t *testing.T) {
	h := herdHistory(
		Watch{Lock: fair, Client: "b", Session: 2, Mode: ModeExclusive, Attempt: 0, Path: fair, Children: true, Zxid: 3, Time: at(2)},
		Watch{Lock: fair, Client: "c", Session: 3, Mode: ModeExclusive, Attempt: 1, Path: fair, Children: true, Zxid: 3, Time: at(2)},
	)
	res := result(t, h, CheckerHerd)
	require.Equal(t, checkers.Violation, res.Status)
	f := res.Findings[0]
	assert.Equal(t, []string{"b", "c"}, f.Clients)
	assert.Contains(t, f.Message, "the delete of "+nodePath("1"))
	h.Watches[1].Mode = ModeRead
	assert.Equal(t, checkers.Pass, result(t, h, CheckerHerd).Status, "readers are not counted")
	h.Watches[1].Mode = ModeExclusive
	h.Attempts[1] = Attempt{Lock: fair, Client: "c", Session: 3, Mode: ModeExclusive, Node: nodePath("3"), Start: at(1), End: at(4), Outcome: NotGranted}
	assert.Equal(t, checkers.Pass, result(t, h, CheckerHerd).Status, "a waiter that left before the change is not woken")
	h.Attempts[1].Outcome = Waiting
	h.Attempts[1].Node = nodePath("9")
	assert.Equal(t, checkers.Pass, result(t, h, CheckerHerd).Status, "a waiter whose node is gone is leaving the queue")
	h.Attempts[1].Node = nodePath("3")
	h.Watches[1].Node = nodePath("8")
	assert.Equal(t, checkers.Pass, result(t, h, CheckerHerd).Status, "a watch left behind by a node the waiter gave up wakes no waiter")
}

func TestNodesMustNotOutliveTheirSession(t *testing.T) {
	var b logBuilder
	b.create(1, nodePath("1"), true, at(1))
	b.create(2, nodePath("2"), false, at(1))
	b.close(1, at(5))
	h := &History{Locks: []Lock{{Path: fair, Kind: KindFair}}, Committed: b.log}
	assert.Equal(t, checkers.Pass, result(t, h, CheckerOrphans).Status, "an ephemeral node dies with its session")
	b.close(2, at(6))
	h.Committed = b.log
	res := result(t, h, CheckerOrphans)
	require.Equal(t, checkers.Violation, res.Status)
	assert.Contains(t, res.Findings[0].Message, "persistent lock node "+nodePath("2"))
	assert.Equal(t, []int64{2}, res.Findings[0].Sessions)
}

func TestWaitersMustBeGrantedAfterTheHeal(t *testing.T) {
	var b logBuilder
	b.create(1, nodePath("1"), true, at(1))
	b.create(1, nodePath("2"), true, at(2))
	h := &History{Locks: []Lock{{Path: fair, Kind: KindFair}}, Committed: b.log, End: at(200)}
	h.Attempts = []Attempt{{Lock: fair, Client: "a", Session: 1, Mode: ModeExclusive, Node: nodePath("2"), Start: at(2), Outcome: Waiting}}
	assert.Equal(t, checkers.Skipped, result(t, h, CheckerProgress).Status, "no liveness phase, nothing to demand")
	h.Liveness = &checkers.LivenessFacts{HealTime: at(100), LeaderTime: at(101)}
	res := result(t, h, CheckerProgress)
	require.Equal(t, checkers.Violation, res.Status)
	assert.Contains(t, res.Findings[0].Message, "blocked by node "+nodePath("1"))
	assert.Contains(t, res.Findings[0].Message, "no recipe ever held it")
	h.End = at(150)
	late := result(t, h, CheckerProgress)
	assert.Equal(t, checkers.Pass, late.Status, "the bound had not passed")
	assert.NotEmpty(t, late.Notes)
	h.End = at(200)
	h.Attempts[0].Outcome, h.Attempts[0].End = Granted, at(120)
	assert.Equal(t, checkers.Pass, result(t, h, CheckerProgress).Status)
}

func TestMalformedHistoriesAreErrors(t *testing.T) {
	good := func() *History {
		return &History{Locks: []Lock{{Path: fair, Kind: KindFair}}, End: at(10)}
	}
	cases := map[string]func(h *History){
		"nil lock kind":    func(h *History) { h.Locks[0].Kind = 0 },
		"bad path":         func(h *History) { h.Locks[0].Path = "x" },
		"duplicate lock":   func(h *History) { h.Locks = append(h.Locks, h.Locks[0]) },
		"unknown lock":     func(h *History) { h.Grants = []Grant{{Lock: "/other", Mode: ModeExclusive}} },
		"bad mode":         func(h *History) { h.Grants = []Grant{{Lock: fair}} },
		"late record":      func(h *History) { h.Accesses = []Access{{Lock: fair, Time: at(11)}} },
		"bad attempt":      func(h *History) { h.Watches = []Watch{{Lock: fair, Mode: ModeExclusive, Attempt: 3}} },
		"attempt outcome":  func(h *History) { h.Attempts = []Attempt{{Lock: fair, Mode: ModeRead}} },
		"unordered log":    func(h *History) { h.Committed = []checkers.CommittedTxn{{Entry: zxidEntry(2)}, {Entry: zxidEntry(1)}} },
		"unordered access": func(h *History) { h.Accesses = []Access{{Lock: fair, Time: at(2)}, {Lock: fair, Time: at(1)}} },
	}
	for name, spoil := range cases {
		h := good()
		spoil(h)
		_, err := Run(h, Options{})
		assert.ErrorIs(t, err, checkers.ErrInvalidHistory, name)
	}
	_, err := Run(nil, Options{})
	assert.ErrorIs(t, err, checkers.ErrInvalidHistory)
	results, err := Run(good(), Options{})
	require.NoError(t, err)
	assert.Len(t, results, 9)
}

func zxidEntry(z int64) proto.TxnEntry {
	return proto.TxnEntry{Header: proto.TxnHeader{Zxid: z, Type: proto.OpError}}
}
