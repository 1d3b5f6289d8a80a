package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// lostFeatureNames returns the names of the lost-reply situations a coverage reached.
func lostFeatureNames(c *Coverage) []string {
	var out []string
	for _, f := range c.Features() {
		if strings.Contains(f.Name, "lost reply") || strings.Contains(f.Name, "reply was lost") || strings.HasPrefix(f.Name, "reply of") {
			out = append(out, f.Name)
		}
	}
	return out
}

func proposeXid(c *Coverage, zxid, session int64, xid int32) {
	c.event(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 1, Role: zabmodel.Leading, Zxid: zxid,
		Txn: &proto.TxnEntry{Header: proto.TxnHeader{ClientID: session, Cxid: xid, Zxid: zxid, Type: proto.OpCreate}}})
}

// TestCoverageFollowsALostWrite: a create whose reply is lost before the leader proposes it, then
// proposed, then looked for on a server that has not applied it, then committed, is a chain of
// situations (the curator-unsynced-search race), and its proposal opens the lost-write window; a
// create whose reply arrives reaches none of them.
func TestCoverageFollowsALostWrite(t *testing.T) {
	const session, xid = 0x100, 7
	at := clock.Time(warmup + clock.Second)
	raced := NewCoverage()
	bringToBroadcast(raced)
	raced.replyLost(session, xid, proto.OpCreate, at)
	proposeXid(raced, 1<<32|1, session, xid)
	assert.Equal(t, windowLostWrite, raced.siteWindow(2)&windowLostWrite, "the lost create is pending")
	assert.Equal(t, windowMovedSession, raced.siteWindow(2)&windowMovedSession, "its session moved")
	raced.clientRequest(session, proto.OpGetChildren, at, 2)
	raced.event(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1})
	assert.Zero(t, raced.siteWindow(2)&windowLostWrite, "the commit closes the window")
	names := strings.Join(lostFeatureNames(raced), "\n")
	assert.Contains(t, names, "reply of a create lost while it was not yet proposed")
	assert.Contains(t, names, "a create proposed after its reply was lost (a request of its session since: 0)")
	assert.Contains(t, names, "session sends a read after a lost reply, its write pending at the leader")
	assert.Contains(t, names, "commit of a create proposed after its reply was lost (a request of its session since: 1)")

	// A read after the commit on a server that applied it sees the write.
	raced.event(zabmodel.Event{Kind: zabmodel.EventApply, Server: 3, Role: zabmodel.Following, Zxid: 1<<32 | 1})
	raced.clientRequest(session, proto.OpGetChildren, at, 3)
	assert.Contains(t, strings.Join(lostFeatureNames(raced), "\n"), "session sends a read after a lost reply, its write applied there")

	answered := NewCoverage()
	bringToBroadcast(answered)
	proposeXid(answered, 1<<32|1, session, xid)
	answered.clientRequest(session, proto.OpGetChildren, at, 2)
	answered.event(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1})
	assert.Empty(t, lostFeatureNames(answered))
	assert.Zero(t, answered.siteWindow(2))

	// A reply lost after the proposal is a loss while pending, and the proposal is not a late one.
	pending := NewCoverage()
	bringToBroadcast(pending)
	proposeXid(pending, 1<<32|1, session, xid)
	pending.replyLost(session, xid, proto.OpCreate, at)
	require.Len(t, lostFeatureNames(pending), 1)
	assert.Equal(t, "reply of a create lost while it was pending at the leader", lostFeatureNames(pending)[0])
	assert.Zero(t, pending.siteWindow(2)&windowLostWrite)
}

// TestSiteWindowsFitTheirTable: every window set indexes the per-server table of sites reached.
func TestSiteWindowsFitTheirTable(t *testing.T) {
	assert.Equal(t, uint64(windowCount), uint64(1)<<len(windowNames), "one bit per named window")
	assert.Less(t, windowLostWrite, uint64(windowCount))
}
