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

// pendingFeatureNames returns the names of the cross-server situations a coverage reached.
func pendingFeatureNames(c *Coverage) []string {
	var out []string
	for _, f := range c.Features() {
		if strings.Contains(f.Name, "pending") || strings.Contains(f.Name, "commit of") || strings.Contains(f.Name, "NEWLEADER ack") ||
			strings.Contains(f.Name, "established holding") || strings.Contains(f.Name, "ack again") {
			out = append(out, f.Name)
		}
	}
	return out
}

// bringToBroadcast feeds the events that bring a leader (sid 1) and two followers (2, 3) to broadcast in
// epoch 1.
func bringToBroadcast(c *Coverage) {
	for _, sid := range []int64{1, 2, 3} {
		role := zabmodel.Following
		if sid == 1 {
			role = zabmodel.Leading
		}
		c.event(zabmodel.Event{Kind: zabmodel.EventElected, Server: sid, Role: role, Leader: 1, Epoch: 1})
		if sid != 1 {
			c.event(zabmodel.Event{Kind: zabmodel.EventNewLeaderAck, Server: sid, Role: role, Leader: 1, Epoch: 1})
		}
	}
	c.event(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 1, Role: zabmodel.Leading, Epoch: 1})
	for _, sid := range []int64{1, 2, 3} {
		role := zabmodel.Following
		if sid == 1 {
			role = zabmodel.Leading
		}
		c.event(zabmodel.Event{Kind: zabmodel.EventServing, Server: sid, Role: role, Epoch: 1})
	}
}

func propose(c *Coverage, zxid, session int64) {
	c.event(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 1, Role: zabmodel.Leading, Zxid: zxid,
		Txn: &proto.TxnEntry{Header: proto.TxnHeader{ClientID: session, Zxid: zxid, Type: proto.OpCreate}}})
}

// TestCoverageSeesADepartedLearnersAck: a follower that acknowledged a proposal and crashed before
// the leader committed it is a situation, and so are its truncation below that proposal and the
// commit that follows; a follower that leaves after the commit reaches none of them.
func TestCoverageSeesADepartedLearnersAck(t *testing.T) {
	stale := NewCoverage()
	bringToBroadcast(stale)
	propose(stale, 1<<32|1, 0)
	stale.event(zabmodel.Event{Kind: zabmodel.EventAck, Server: 2, Role: zabmodel.Following, Zxid: 1<<32 | 1})
	assert.Equal(t, windowAckedPending, stale.siteWindow(2)&windowAckedPending, "follower 2 holds an ack of a pending proposal")
	stale.event(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 2, Role: zabmodel.Following})
	assert.Equal(t, windowDepartedAck, stale.siteWindow(3)&windowDepartedAck, "a departed ack is outstanding")
	stale.event(zabmodel.Event{Kind: zabmodel.EventRestart, Server: 2, Role: zabmodel.Looking})
	stale.event(zabmodel.Event{Kind: zabmodel.EventLearnerSync, Server: 1, Role: zabmodel.Leading, Learner: 2})
	stale.event(zabmodel.Event{Kind: zabmodel.EventTruncate, Server: 2, Role: zabmodel.Following, Zxid: 0})
	stale.event(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1})
	names := strings.Join(pendingFeatureNames(stale), "\n")
	assert.Contains(t, names, "FOLLOWING crash leaves broadcast holding acks of 1 pending proposals")
	assert.Contains(t, names, "learner-sync of a learner back while 1 of its acks pending")
	assert.Contains(t, names, "truncate below 1 pending proposals it acked (departed true)")
	assert.Contains(t, names, "commit of a proposal acked by a learner that left since (truncated below it: 1)")
	assert.Empty(t, stale.pending, "the commit ends the proposal")
	assert.Zero(t, stale.siteWindow(3))

	clean := NewCoverage()
	bringToBroadcast(clean)
	propose(clean, 1<<32|1, 0)
	clean.event(zabmodel.Event{Kind: zabmodel.EventAck, Server: 2, Role: zabmodel.Following, Zxid: 1<<32 | 1})
	clean.event(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1})
	clean.event(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 2, Role: zabmodel.Following})
	assert.Empty(t, pendingFeatureNames(clean), "nothing was pending when the follower left")
}

// TestCoverageSeesALearnerLeavingBeforeEstablishment: a learner that leaves between its NEWLEADER
// ack and its leader's establishment is a situation, and its leader's establishment on that ack
// another.
func TestCoverageSeesALearnerLeavingBeforeEstablishment(t *testing.T) {
	c := NewCoverage()
	c.event(zabmodel.Event{Kind: zabmodel.EventElected, Server: 1, Role: zabmodel.Leading, Leader: 1, Epoch: 1})
	c.event(zabmodel.Event{Kind: zabmodel.EventElected, Server: 2, Role: zabmodel.Following, Leader: 1, Epoch: 1})
	c.event(zabmodel.Event{Kind: zabmodel.EventNewLeaderAck, Server: 2, Role: zabmodel.Following, Leader: 1, Epoch: 1})
	c.event(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2, Role: zabmodel.Looking})
	assert.Equal(t, windowDepartedNewLeaderAck, c.siteWindow(3))
	c.event(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 1, Role: zabmodel.Leading, Epoch: 1})
	names := strings.Join(pendingFeatureNames(c), "\n")
	assert.Contains(t, names, "learner stop-serving in sync between its NEWLEADER ack and UPTODATE, leader established false")
	assert.Contains(t, names, "established holding the NEWLEADER acks of 1 departed learners")
	assert.Zero(t, c.siteWindow(3), "the leader is established: the window is over")
}

// TestCoverageSeesAMovedSessionsPendingWrite: a session that disconnects while its create is
// pending at the leader, reconnects and sends a request before the create commits reaches the
// client-side situations in that order; a session whose create committed first reaches none.
func TestCoverageSeesAMovedSessionsPendingWrite(t *testing.T) {
	const session = 0x100
	c := NewCoverage()
	bringToBroadcast(c)
	propose(c, 1<<32|1, session)
	c.clientState(session, proto.StateDisconnected, clock.Time(1))
	assert.Equal(t, windowMovedSession, c.siteWindow(2))
	c.clientState(session, proto.StateSyncConnected, clock.Time(2))
	c.clientRequest(session, proto.OpGetChildren2, clock.Time(3), 2)
	c.event(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1})
	names := strings.Join(pendingFeatureNames(c), "\n")
	assert.Contains(t, names, "session Disconnected while its create is pending at the leader")
	assert.Contains(t, names, "session SyncConnected again while its create is still pending")
	assert.Contains(t, names, "session sends getChildren2 after a disconnect while its create is still pending")
	assert.Contains(t, names, "commit of a create whose session disconnected since it was proposed (a request since: 1)")
	assert.Contains(t, names, "session sends a read after a disconnect to a server whose applied zxid < its last write (pending at the leader: true)")

	clean := NewCoverage()
	bringToBroadcast(clean)
	propose(clean, 1<<32|1, session)
	clean.event(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1})
	clean.event(zabmodel.Event{Kind: zabmodel.EventApply, Server: 2, Role: zabmodel.Following, Zxid: 1<<32 | 1})
	clean.clientState(session, proto.StateDisconnected, clock.Time(1))
	clean.clientRequest(session, proto.OpGetChildren2, clock.Time(3), 2)
	assert.Equal(t, []string{"session sends a read after a disconnect to a server whose applied zxid = its last write (pending at the leader: false)"},
		pendingFeatureNames(clean), "only the request after the disconnect, to a server that has the create")
}

// TestCoverageSeesASearchOnALaggingServer: a session whose create the leader committed, and which
// reconnects to a follower that has not applied it yet, lists the children there: the situation
// of a protected-mode search that cannot find its own node. The same request on the leader's
// side of the apply, or without a disconnect, is not that situation.
func TestCoverageSeesASearchOnALaggingServer(t *testing.T) {
	const session = 0x100
	c := NewCoverage()
	bringToBroadcast(c)
	propose(c, 1<<32|1, session)
	c.clientRequest(session, proto.OpGetChildren2, clock.Time(1), 2)
	c.event(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1})
	assert.Empty(t, pendingFeatureNames(c), "no disconnect yet")
	c.clientState(session, proto.StateDisconnected, clock.Time(2))
	c.clientState(session, proto.StateSyncConnected, clock.Time(3))
	c.clientRequest(session, proto.OpGetChildren2, clock.Time(4), 3)
	assert.Equal(t, []string{"session sends a read after a disconnect to a server whose applied zxid < its last write (pending at the leader: false)"},
		pendingFeatureNames(c))
	propose(c, 1<<32|2, session)
	c.clientRequest(session, proto.OpGetChildren2, clock.Time(5), 3)
	assert.Len(t, pendingFeatureNames(c), 1, "a new write starts over: the session has not disconnected since it")
}

// TestCoverageKeepsTheClientsWrites: a write a leader proposes for a session whose client has
// sent a request is kept as a write site with that client and leader; a write of a session no
// client named is not.
func TestCoverageKeepsTheClientsWrites(t *testing.T) {
	c := NewCoverage()
	bringToBroadcast(c)
	c.sessionClient(0x100, "c2")
	propose(c, 1<<32|1, 0x100)
	propose(c, 1<<32|2, 0x200)
	require.Len(t, c.Writes(), 1)
	assert.Equal(t, WriteSite{Leader: 1, Client: "c2", Op: proto.OpCreate}, c.Writes()[0])
}
