package checkers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// watchBase sets up /r, sessions 2 (c1) and 3 (c2), and /r/a created by c1 at zxid 5; c1 then
// sets a data watch on /r/a, an exist watch on /r/b and a child watch on /r, all at zxid 5.
func watchBase(t *testing.T) *fixture {
	f := newFixture(t)
	f.setup("/r")
	f.session("c1", 2, ms(5))
	f.session("c2", 3, ms(5))
	f.write("c1", 2, create("/r/a", "x"), ms(10), ms(11), ms(12), proto.OK, 0)
	f.read("c1", 2, getData("/r/a", true), ms(13), ms(14), Reply{Data: []byte("x")})
	f.read("c1", 2, Operation{Kind: proto.OpExists, Path: "/r/b", Watch: true}, ms(13), ms(14), Reply{Err: proto.NoNode})
	f.read("c1", 2, Operation{Kind: proto.OpGetChildren, Path: "/r", Watch: true}, ms(13), ms(14), Reply{Children: []string{"a"}})
	return f
}

func converged(f *fixture, end clock.Time) *History {
	h := f.r.Finish(end, &LivenessFacts{HealTime: ms(1), LeaderTime: ms(2), Completed: true})
	require.NoError(f.t, Validate(h))
	return h
}

func checkWatchesOf(t *testing.T, h *History) Result {
	res, err := CheckWatches(h, WatchOptions{})
	require.NoError(t, err)
	assert.Equal(t, CheckerWatches, res.Checker)
	return res
}

func rulesOf(res Result) []string {
	var rules []string
	for _, f := range res.Findings {
		rules = append(rules, f.Rule)
	}
	return rules
}

func TestWatchesPassWhenEventsComeBeforeNewerData(t *testing.T) {
	f := watchBase(t)
	f.write("c2", 3, setData("/r/a", "y", 0), ms(15), ms(16), ms(17), proto.OK, 1)
	f.r.Event("c1", 2, ms(16), proto.EventNodeDataChanged, "/r/a", -1)
	f.write("c2", 3, create("/r/b", "b"), ms(18), ms(19), ms(20), proto.OK, 0)
	f.r.Event("c1", 2, ms(19), proto.EventNodeCreated, "/r/b", 0x100000007)
	f.r.Event("c1", 2, ms(19), proto.EventNodeChildrenChanged, "/r", -1)
	f.read("c1", 2, getData("/r/a", false), ms(21), ms(22), Reply{Data: []byte("y")})
	res := checkWatchesOf(t, converged(f, ms(100)))
	assert.Equal(t, Pass, res.Status, res.String())
	assert.Empty(t, res.Notes)
}

func TestWatchFiringTwiceIsReported(t *testing.T) {
	f := watchBase(t)
	f.write("c2", 3, setData("/r/a", "y", 0), ms(15), ms(16), ms(17), proto.OK, 1)
	f.r.Event("c1", 2, ms(16), proto.EventNodeDataChanged, "/r/a", -1)
	f.write("c2", 3, setData("/r/a", "z", 1), ms(18), ms(19), ms(20), proto.OK, 2)
	f.r.Event("c1", 2, ms(19), proto.EventNodeDataChanged, "/r/a", -1)
	res := checkWatchesOf(t, f.r.Finish(ms(100), nil))
	require.Equal(t, Violation, res.Status, res.String())
	require.Equal(t, []string{"watch-one-shot"}, rulesOf(res), res.String())
	assert.Contains(t, res.Findings[0].Message, "NodeDataChanged event on /r/a (zxid -1) reached c1 (session 0x2) at 0.019000000s, but the session held no watch it could fire")
}

func TestEventForAChangeThatNeverHappenedIsReported(t *testing.T) {
	f := watchBase(t)
	// The watch on /r/a is set, but nothing ever changes /r/a.
	f.r.Event("c1", 2, ms(16), proto.EventNodeDeleted, "/r/a", -1)
	res := checkWatchesOf(t, f.r.Finish(ms(100), nil))
	require.Equal(t, []string{"watch-event-real"}, rulesOf(res), res.String())
	assert.Contains(t, res.Findings[0].Message, "no committed transaction after the watch was set at zxid 0x100000005 makes such a change")
}

func TestEventWithTheWrongZxidIsReported(t *testing.T) {
	f := watchBase(t)
	f.write("c2", 3, setData("/r/a", "y", 0), ms(15), ms(16), ms(17), proto.OK, 1)
	f.r.Event("c1", 2, ms(16), proto.EventNodeDataChanged, "/r/a", 0x100000005)
	res := checkWatchesOf(t, f.r.Finish(ms(100), nil))
	require.Equal(t, []string{"watch-event-real"}, rulesOf(res), res.String())
	assert.Contains(t, res.Findings[0].Message, "the committed transaction at zxid 0x100000005 makes no such change")
}

func TestNewerDataBeforeTheEventIsReported(t *testing.T) {
	f := watchBase(t)
	f.write("c2", 3, setData("/r/a", "y", 0), ms(15), ms(16), ms(17), proto.OK, 1)
	// c1 reads the new value before the event for its watch arrives.
	f.read("c1", 2, getData("/r/a", false), ms(18), ms(19), Reply{Data: []byte("y")})
	f.r.Event("c1", 2, ms(20), proto.EventNodeDataChanged, "/r/a", -1)
	res := checkWatchesOf(t, f.r.Finish(ms(100), nil))
	require.Equal(t, Violation, res.Status, res.String())
	assert.Equal(t, "watch-before-data", res.Findings[0].Rule)
	assert.Contains(t, res.Findings[0].Message, "arrived before the event of the data watch on /r/a that c1#1 set at zxid 0x100000005")
	assert.Equal(t, []int64{0x100000005, 0x100000006, 0x100000006}, res.Findings[0].Zxids)
}

func TestMissedEventIsReportedOnlyAfterAConvergedRun(t *testing.T) {
	build := func() *fixture {
		f := watchBase(t)
		f.write("c2", 3, setData("/r/a", "y", 0), ms(15), ms(16), ms(17), proto.OK, 1)
		return f
	}
	res := checkWatchesOf(t, converged(build(), ms(100)))
	require.Equal(t, []string{"watch-missed"}, rulesOf(res), res.String())
	assert.Contains(t, res.Findings[0].Message, "the data watch on /r/a that c1#1 set at zxid 0x100000005 never fired, although the change at zxid 0x100000006 triggers it")

	res = checkWatchesOf(t, build().r.Finish(ms(100), &LivenessFacts{Completed: false}))
	assert.Equal(t, Pass, res.Status, res.String())
	require.Len(t, res.Notes, 1)
	assert.Contains(t, res.Notes[0], "liveness phase did not complete")
}

func TestExpiredSessionMissesNothing(t *testing.T) {
	f := watchBase(t)
	f.write("c2", 3, setData("/r/a", "y", 0), ms(15), ms(16), ms(17), proto.OK, 1)
	f.r.State("c1", 2, ms(30), proto.StateExpired)
	res := checkWatchesOf(t, converged(f, ms(100)))
	assert.Equal(t, Pass, res.Status, res.String())
}

// TestExistWatchMayMissANodeThatCameAndWent: a node created and deleted while the client was
// reconnecting leaves nothing for setWatches to see; ZooKeeper then fires on the next create.
func TestExistWatchMayMissANodeThatCameAndWent(t *testing.T) {
	f := watchBase(t)
	f.r.State("c1", 2, ms(15), proto.StateDisconnected)
	f.write("c2", 3, create("/r/b", "b"), ms(16), ms(17), ms(18), proto.OK, 0)
	f.r.Event("c1", 2, ms(17), proto.EventNodeChildrenChanged, "/r", -1) // from the old connection
	f.write("c2", 3, deleteOp("/r/b", -1), ms(19), ms(20), ms(21), proto.OK, 0)
	f.r.State("c1", 2, ms(25), proto.StateSyncConnected)
	f.read("c1", 2, getData("/r/a", true), ms(26), ms(27), Reply{Data: []byte("x")})
	res := checkWatchesOf(t, converged(f, ms(100)))
	assert.Equal(t, Pass, res.Status, res.String())
}

func TestPersistentRecursiveWatchFiresRepeatedly(t *testing.T) {
	f := watchBase(t)
	f.read("c1", 2, Operation{Kind: proto.OpAddWatch, Path: "/r", WatchMode: proto.AddWatchPersistentRecursive}, ms(14), ms(14), Reply{})
	f.write("c2", 3, setData("/r/a", "y", 0), ms(15), ms(16), ms(17), proto.OK, 1)
	f.r.Event("c1", 2, ms(16), proto.EventNodeDataChanged, "/r/a", -1)
	f.write("c2", 3, setData("/r/a", "z", 1), ms(18), ms(19), ms(20), proto.OK, 2)
	f.r.Event("c1", 2, ms(19), proto.EventNodeDataChanged, "/r/a", -1)
	res := checkWatchesOf(t, f.r.Finish(ms(100), nil))
	assert.Equal(t, Pass, res.Status, res.String())

	// A recursive watch never reports child-list changes.
	f.r.Event("c1", 2, ms(30), proto.EventNodeChildrenChanged, "/r/a", -1)
	res = checkWatchesOf(t, f.r.Finish(ms(100), nil))
	assert.Equal(t, []string{"watch-one-shot"}, rulesOf(res), res.String())
}

// TestForcedExpiredSessionMissesNothing: a session closed by a killer's closeSession is ended like
// an expired one, even if its client never learned it: its watches owe nothing. The forced
// expiry's record alone ends nothing: if the close never committed, the session lived on and the
// missed event is reported.
func TestForcedExpiredSessionMissesNothing(t *testing.T) {
	build := func(closeCommits bool) *History {
		f := watchBase(t)
		f.write("c2", 3, setData("/r/a", "y", 0), ms(15), ms(16), ms(17), proto.OK, 1)
		f.r.State("c1", 2, ms(20), proto.StateDisconnected)
		require.NoError(t, f.r.ForcedExpiry(ForcedExpiry{Session: 2, Client: "c1", Killer: "killer-c1", Time: ms(25)}))
		if closeCommits {
			closeZxid := f.commit(2, 1, proto.OpCloseSession, &proto.CloseSessionTxn{}, ms(30))
			require.NoError(t, f.r.SessionEnded(2, SessionEnd{Zxid: closeZxid, Time: ms(30)}))
		}
		return converged(f, ms(100))
	}
	res := checkWatchesOf(t, build(true))
	assert.Equal(t, Pass, res.Status, res.String())
	res = checkWatchesOf(t, build(false))
	assert.Equal(t, []string{"watch-missed"}, rulesOf(res), res.String())
}
