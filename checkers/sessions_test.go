package checkers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

func sec(n int) clock.Time { return clock.Time(int64(n) * int64(clock.Second)) }

// expiryHistory: session 2 (6 s timeout) creates the ephemeral /r/e and is expired at 12 s.
// healthyUntil is when its client stopped being healthy; extra adds to the history.
func expiryHistory(t *testing.T, healthyUntil clock.Time, recordTimeout bool, extra func(f *fixture, closeZxid int64)) *History {
	f := newFixture(t)
	f.setup("/r")
	f.session("c1", 2, sec(1))
	f.session("c2", 3, sec(1))
	if !recordTimeout {
		f.r.session(2).Timeout = 0
	}
	require.NoError(t, f.r.SessionHealthy(2, sec(1), healthyUntil))
	f.write("c1", 2, createMode("/r/e", "x", proto.Ephemeral), sec(2), sec(2), sec(2), proto.OK, 0)
	closeZxid := f.commit(2, 0, proto.OpCloseSession, &proto.CloseSessionTxn{PathsToDelete: []string{"/r/e"}}, sec(12))
	require.NoError(t, f.r.SessionEnded(2, SessionEnd{Zxid: closeZxid, Time: sec(12), Expired: true}))
	if extra != nil {
		extra(f, closeZxid)
	}
	return f.finish(sec(100))
}

func checkSessionsOf(t *testing.T, h *History, opts SessionOptions) Result {
	res, err := CheckSessions(h, opts)
	require.NoError(t, err)
	assert.Equal(t, CheckerSessions, res.Checker)
	return res
}

func TestSessionsPassWhenEphemeralsDieWithTheirSession(t *testing.T) {
	h := expiryHistory(t, sec(5), true, func(f *fixture, closeZxid int64) {
		f.read("c2", 3, Operation{Kind: proto.OpExists, Path: "/r/e"}, sec(13), sec(13), Reply{Err: proto.NoNode})
	})
	res := checkSessionsOf(t, h, SessionOptions{})
	assert.Equal(t, Pass, res.Status, res.String())
}

func TestEphemeralCreatedAfterCloseIsReported(t *testing.T) {
	h := expiryHistory(t, sec(5), true, func(f *fixture, closeZxid int64) {
		f.commit(2, 9, proto.OpCreate, &proto.CreateTxn{Path: "/r/late", Ephemeral: true, ParentCVersion: -1}, sec(13))
	})
	res := checkSessionsOf(t, h, SessionOptions{})
	require.Equal(t, Violation, res.Status, res.String())
	assert.Equal(t, "ephemeral-after-close", res.Findings[0].Rule)
	assert.Contains(t, res.Findings[0].Message, "creates the ephemeral node /r/late for session 0x2, whose closeSession committed earlier at zxid 0x100000006")
}

func TestEphemeralVisibleAfterCloseIsReported(t *testing.T) {
	h := expiryHistory(t, sec(5), true, func(f *fixture, closeZxid int64) {
		f.read("c2", 3, Operation{Kind: proto.OpExists, Path: "/r/e"}, sec(13), sec(13),
			Reply{Zxid: closeZxid, Stat: &proto.Stat{Czxid: closeZxid - 1, EphemeralOwner: 2}})
	})
	res := checkSessionsOf(t, h, SessionOptions{})
	require.Equal(t, Violation, res.Status, res.String())
	assert.Equal(t, "ephemeral-visible-after-close", res.Findings[0].Rule)
	assert.Contains(t, res.Findings[0].Message, "shows an ephemeral node of session 0x2 at zxid 0x100000006, at or after that session's closeSession")
}

func TestWrongfulExpiryIsReported(t *testing.T) {
	for _, recordTimeout := range []bool{true, false} {
		h := expiryHistory(t, sec(20), recordTimeout, nil)
		res := checkSessionsOf(t, h, SessionOptions{})
		require.Equal(t, Violation, res.Status, res.String())
		assert.Equal(t, "wrongful-expiry", res.Findings[0].Rule)
		assert.Contains(t, res.Findings[0].Message, "session 0x2 of c1 was expired by the closeSession committed at 12.000000000s")
		assert.Contains(t, res.Findings[0].Message, "healthy throughout [4.000000000s, 12.000000000s), its whole 6s timeout plus 2s of grace")
	}
	// With a larger grace the same history is not judged wrongful: health from 1 s does not
	// cover the 6 s timeout plus 6 s.
	res := checkSessionsOf(t, expiryHistory(t, sec(20), true, nil), SessionOptions{ExpiryGrace: 6 * clock.Second})
	assert.Equal(t, Pass, res.Status, res.String())
}

func TestExpiryWithUnknownTimeoutIsNoted(t *testing.T) {
	r := NewRecorder()
	require.NoError(t, r.Commit(proto.TxnEntry{Header: proto.TxnHeader{ClientID: 2, Zxid: 1, Type: proto.OpCloseSession}}, sec(3)))
	require.NoError(t, r.SessionEnded(2, SessionEnd{Zxid: 1, Time: sec(3), Expired: true}))
	res := checkSessionsOf(t, r.Finish(sec(4), nil), SessionOptions{})
	assert.Equal(t, Pass, res.Status)
	require.Len(t, res.Notes, 1)
	assert.Contains(t, res.Notes[0], "its timeout is unknown")
}

func livenessHistory(t *testing.T, leader clock.Time, completeAt clock.Time) *History {
	r := NewRecorder()
	before := r.Call("c1", sec(5), Operation{Kind: proto.OpSetData, Session: 2, Path: "/r/a", Version: -1})
	if completeAt != 0 {
		require.NoError(t, r.Fail(before, completeAt, proto.ConnectionLoss, OutcomeUnknown))
	}
	done := r.Call("c1", sec(1), Operation{Kind: proto.OpExists, Session: 2, Path: "/r/a"})
	require.NoError(t, r.Reply(done, sec(2), Reply{Err: proto.NoNode, Zxid: 3}))
	r.Call("c2", sec(290), Operation{Kind: proto.OpExists, Session: 3, Path: "/r/a"}) // too late to judge
	return r.Finish(sec(300), &LivenessFacts{HealTime: sec(10), LeaderTime: leader, Completed: true})
}

func TestLiveness(t *testing.T) {
	opts := LivenessOptions{LeaderBound: 30 * clock.Second, OperationBound: time.Minute}
	cases := []struct {
		name           string
		leader, finish clock.Time
		want           Status
		rule           string
	}{
		{"converges", sec(20), sec(50), Pass, ""},
		{"leader-too-late", sec(45), sec(50), Violation, "leader-after-heal"},
		{"no-leader", clock.Never, sec(50), Violation, "leader-after-heal"},
		{"operation-too-late", sec(20), sec(80), Violation, "operation-after-heal"},
		{"operation-never-completes", sec(20), 0, Violation, "operation-after-heal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := CheckLiveness(livenessHistory(t, c.leader, c.finish), opts)
			require.NoError(t, err)
			require.Equal(t, c.want, res.Status, res.String())
			assert.Contains(t, res.Notes, "1 operations were issued too close to the end of the run for their bound to elapse")
			if c.rule != "" {
				assert.Equal(t, c.rule, res.Findings[0].Rule)
			}
		})
	}
}

func TestLivenessExplanations(t *testing.T) {
	opts := LivenessOptions{LeaderBound: 30 * clock.Second, OperationBound: time.Minute}
	res, err := CheckLiveness(livenessHistory(t, clock.Never, 0), opts)
	require.NoError(t, err)
	require.Len(t, res.Findings, 2, res.String())
	assert.Equal(t, "faults healed at 10.000000000s, but no leader was established by the end of the run; the bound was 30s", res.Findings[0].Message)
	assert.Contains(t, res.Findings[1].Message, "c1#0 (session 0x2) setData(/r/a, null, version=-1) -> pending (no result by the end of the run) [5.000000000s, never] did not complete by 70.000000000s")
}

func TestLivenessUndecidedOrSkipped(t *testing.T) {
	r := NewRecorder()
	h := r.Finish(sec(20), &LivenessFacts{HealTime: sec(10), LeaderTime: clock.Never})
	res, err := CheckLiveness(h, LivenessOptions{LeaderBound: 30 * clock.Second})
	require.NoError(t, err)
	assert.Equal(t, Unknown, res.Status, res.String())
	assert.Contains(t, res.Summary, "no leader was established by the end of the run")

	res, err = CheckLiveness(NewRecorder().Finish(sec(20), nil), LivenessOptions{})
	require.NoError(t, err)
	assert.Equal(t, Skipped, res.Status)
	assert.False(t, res.Failed())
}

// killerXid is the cxid of a killer's closeSession: the killer is a client handle of its own, so
// the xid is its own and not one the session's client used.
const killerXid = 1

// forcedHistory: session 2 of c1 (6 s timeout) creates the ephemeral /r/e and stays healthy from
// 1 s to 20 s while a killer, connected with its id and password, sends closeSession at 11.5 s,
// which commits at 12 s. If recordAt is positive the runner records the forced expiry at that time.
func forcedHistory(t *testing.T, recordAt clock.Time, extra func(f *fixture, closeZxid int64)) *History {
	f := newFixture(t)
	f.setup("/r")
	f.session("c1", 2, sec(1))
	f.session("c2", 3, sec(1))
	require.NoError(t, f.r.SessionHealthy(2, sec(1), sec(20)))
	f.write("c1", 2, createMode("/r/e", "x", proto.Ephemeral), sec(2), sec(2), sec(2), proto.OK, 0)
	if recordAt > 0 {
		require.NoError(t, f.r.ForcedExpiry(ForcedExpiry{Session: 2, Client: "c1", Killer: "killer-c1", Time: recordAt}))
	}
	closeZxid := f.commit(2, killerXid, proto.OpCloseSession, &proto.CloseSessionTxn{PathsToDelete: []string{"/r/e"}}, sec(12))
	require.NoError(t, f.r.SessionEnded(2, SessionEnd{Zxid: closeZxid, Time: sec(12), Expired: false}))
	f.read("c2", 3, Operation{Kind: proto.OpExists, Path: "/r/e"}, sec(13), sec(13), Reply{Err: proto.NoNode})
	if extra != nil {
		extra(f, closeZxid)
	}
	return f.finish(sec(100))
}

func TestForcedExpiryOfAHeartbeatingSessionPasses(t *testing.T) {
	h := forcedHistory(t, sec(11)+clock.Time(500*clock.Millisecond), nil)
	res := checkSessionsOf(t, h, SessionOptions{})
	assert.Equal(t, Pass, res.Status, res.String())
	assert.Contains(t, res.Summary, "1 forced expiries judged")
}

// TestUnexplainedCloseOfAHeartbeatingSessionIsReported: the same history without the record of
// the forced expiry (or with one made after the close committed) is a session that some process
// closed while its client heartbeated, and the wrongful-expiry rule reports it.
func TestUnexplainedCloseOfAHeartbeatingSessionIsReported(t *testing.T) {
	cases := []struct {
		name     string
		recordAt clock.Time
	}{{"no record", 0}, {"recorded after the close", sec(13)}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := checkSessionsOf(t, forcedHistory(t, c.recordAt, nil), SessionOptions{})
			require.Equal(t, Violation, res.Status, res.String())
			require.Len(t, res.Findings, 1, res.String())
			assert.Equal(t, "wrongful-expiry", res.Findings[0].Rule)
			assert.Contains(t, res.Findings[0].Message, "session 0x2 of c1 was closed, though neither its client nor a recorded forced expiry asked for it, by the closeSession committed at 12.000000000s")
			assert.Contains(t, res.Findings[0].Message, "healthy throughout [4.000000000s, 12.000000000s)")
		})
	}
}

// TestCloseRequestedByItsClientIsNotJudged: a session whose own client sent closeSession was not
// taken from it, however healthy it was.
func TestCloseRequestedByItsClientIsNotJudged(t *testing.T) {
	h := forcedHistory(t, 0, func(f *fixture, closeZxid int64) {
		ref := f.r.Call("c1", sec(11), Operation{Kind: proto.OpCloseSession, Session: 2, Xid: killerXid})
		require.NoError(t, f.r.Fail(ref, sec(14), proto.ConnectionLoss, OutcomeUnknown))
	})
	res := checkSessionsOf(t, h, SessionOptions{})
	assert.Equal(t, Pass, res.Status, res.String())
}

// TestForcedExpiryDoesNotExcuseTheLeader: a forced expiry explains the killer's closeSession only;
// an expiry the leader commits (cxid 0) for a session that heartbeated is still wrongful.
func TestForcedExpiryDoesNotExcuseTheLeader(t *testing.T) {
	f := newFixture(t)
	f.setup("/r")
	f.session("c1", 2, sec(1))
	require.NoError(t, f.r.SessionHealthy(2, sec(1), sec(20)))
	require.NoError(t, f.r.ForcedExpiry(ForcedExpiry{Session: 2, Client: "c1", Killer: "killer-c1", Time: sec(11)}))
	closeZxid := f.commit(2, 0, proto.OpCloseSession, &proto.CloseSessionTxn{}, sec(12))
	require.NoError(t, f.r.SessionEnded(2, SessionEnd{Zxid: closeZxid, Time: sec(12), Expired: true}))
	res := checkSessionsOf(t, f.finish(sec(100)), SessionOptions{})
	require.Equal(t, Violation, res.Status, res.String())
	assert.Contains(t, res.Findings[0].Message, "session 0x2 of c1 was expired by the closeSession committed at 12.000000000s")
}

// TestEphemeralOfAForcedExpiredSessionMustGo: a session closed by force loses its ephemeral nodes
// like any other; one that is created again for it, or still seen, is reported.
func TestEphemeralOfAForcedExpiredSessionMustGo(t *testing.T) {
	recorded := sec(11)
	reappears := forcedHistory(t, recorded, func(f *fixture, closeZxid int64) {
		f.commit(2, 9, proto.OpCreate, &proto.CreateTxn{Path: "/r/e", Ephemeral: true, ParentCVersion: -1}, sec(14))
	})
	res := checkSessionsOf(t, reappears, SessionOptions{})
	require.Equal(t, Violation, res.Status, res.String())
	assert.Equal(t, "ephemeral-after-close", res.Findings[0].Rule)
	assert.Contains(t, res.Findings[0].Message, "creates the ephemeral node /r/e for session 0x2, whose closeSession committed earlier")

	survives := forcedHistory(t, recorded, func(f *fixture, closeZxid int64) {
		f.read("c2", 3, Operation{Kind: proto.OpGetData, Path: "/r/e"}, sec(14), sec(14),
			Reply{Zxid: closeZxid, Data: []byte("x"), Stat: &proto.Stat{Czxid: closeZxid - 1, EphemeralOwner: 2}})
	})
	res = checkSessionsOf(t, survives, SessionOptions{})
	require.Equal(t, Violation, res.Status, res.String())
	assert.Equal(t, "ephemeral-visible-after-close", res.Findings[0].Rule)
}
