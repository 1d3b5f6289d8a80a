package checkers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// hijackHistory: c1 (session 2) creates /r/a "x" and then sets it to "y" with xid 2 while a killer,
// connected with session 2, sends closeSession with its own xid 2. The killer's closeSession
// commits first (zxid 6), and c1's server, matching commits to its pending writes by session and
// cxid, answers c1's setData with it: OK at zxid 6. c1's own setData then fails as SESSIONEXPIRED
// (zxid 7), so /r/a keeps "x", which c2 reads. If recorded, the runner recorded the forced expiry.
func hijackHistory(t *testing.T, recorded bool) *History {
	f := newFixture(t)
	f.setup("/r")
	f.session("c1", 2, ms(5))
	f.session("c2", 3, ms(5))
	f.write("c1", 2, create("/r/a", "x"), ms(10), ms(11), ms(12), proto.OK, 0)
	op := setData("/r/a", "y", -1)
	op.Session, op.Xid = 2, f.nextXid(2)
	ref := f.r.Call("c1", ms(20), op)
	if recorded {
		require.NoError(t, f.r.ForcedExpiry(ForcedExpiry{Session: 2, Client: "c1", Killer: "killer-c1", Time: ms(21)}))
	}
	closeZxid := f.commit(2, op.Xid, proto.OpCloseSession, &proto.CloseSessionTxn{}, ms(22))
	require.NoError(t, f.r.SessionEnded(2, SessionEnd{Zxid: closeZxid, Time: ms(22)}))
	require.NoError(t, f.r.Reply(ref, ms(23), Reply{Err: proto.OK, Zxid: closeZxid}))
	f.commit(2, op.Xid, proto.OpError, &proto.ErrorTxn{Err: proto.SessionExpired}, ms(24))
	f.read("c2", 3, getData("/r/a", false), ms(30), ms(31), Reply{Data: []byte("x")})
	return f.finish(ms(100))
}

// TestWriteAnsweredByTheKillerIsNotJudgedAsAcknowledged: with the forced expiry on record, the
// reply c1 got is known to be the killer's closeSession, and c1's write is judged as one whose
// outcome is unknown, as after an expiry: every checker passes. Without the record the same
// history is an acknowledged write that was lost.
func TestWriteAnsweredByTheKillerIsNotJudgedAsAcknowledged(t *testing.T) {
	reads := checkReadsOf(t, hijackHistory(t, true), ReadOptions{})
	assert.Equal(t, Pass, reads[0].Status, reads[0].String())
	assert.Contains(t, reads[0].Notes[0], "1 writes of sessions closed by force were answered with their killer's closeSession")
	withReads := registerOptions()
	withReads.IncludeReads = true
	lin, err := CheckLinearizability(hijackHistory(t, true), withReads)
	require.NoError(t, err)
	assert.Equal(t, Pass, lin.Status, lin.String())
	assert.Contains(t, lin.Notes, "1 writes of sessions closed by force were answered with their killer's closeSession and were judged as writes of unknown outcome")
	sessions := checkSessionsOf(t, hijackHistory(t, true), SessionOptions{})
	assert.Equal(t, Pass, sessions.Status, sessions.String())

	reads = checkReadsOf(t, hijackHistory(t, false), ReadOptions{})
	require.Equal(t, Violation, reads[0].Status, reads[0].String())
	assert.Equal(t, "write-committed", reads[0].Findings[0].Rule)
	assert.Contains(t, reads[0].Findings[0].Message, "was answered with its own zxid, but was committed as closeSession")
	lin, err = CheckLinearizability(hijackHistory(t, false), withReads)
	require.NoError(t, err)
	assert.Equal(t, Violation, lin.Status, lin.String())
}

// TestKillerClosesAreTheForcedOnes: only a closeSession with a cxid, of a session with a forced
// expiry sent before it committed, that no recorded client asked for, is a killer's.
func TestKillerClosesAreTheForcedOnes(t *testing.T) {
	h := hijackHistory(t, true)
	assert.Equal(t, map[int64]int64{2: 0x100000006}, newKillerCloses(h).zxids)
	require.Equal(t, "c1", h.Clients[1].Name)
	replied := &h.Clients[1].Ops[1]
	assert.True(t, newKillerCloses(h).answered(replied))
	other := *replied
	other.Xid = 9
	assert.False(t, newKillerCloses(h).answered(&other), "another xid: not the write the server matched")

	late := hijackHistory(t, false)
	late.ForcedExpiries = []ForcedExpiry{{Session: 2, Client: "c1", Time: ms(40)}}
	assert.Empty(t, newKillerCloses(late).zxids, "a forced expiry after the close did not send it")

	expired := hijackHistory(t, true)
	expired.Committed[5].Entry.Header.Cxid = 0
	assert.Empty(t, newKillerCloses(expired).zxids, "the leader's expiry is no killer's")
}
