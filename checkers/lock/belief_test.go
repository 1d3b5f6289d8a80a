package lock

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
)

const election = "/election"

// electionHistory: c1 leads on node 0 from 1 s; c2's node 1 is created at 1.5 s. c1's node is
// deleted at 2 s, by how (its own session's delete, the close of its session, or nobody: it
// lives on), and c2 is granted at 2.1 s. c1 believes until c1End.
func electionHistory(how string, c1End clock.Time, fencing bool) *History {
	var b logBuilder
	b.create(1, election, false, at(0.5))
	n0 := election + "/_c_a-latch-0000000000"
	n1 := election + "/_c_b-latch-0000000001"
	t0 := b.create(1, n0, true, at(1))
	t1 := b.create(2, n1, true, at(1.5))
	switch how {
	case "own-delete":
		b.delete(1, n0, at(2))
	case "expiry":
		b.close(1, at(2))
	}
	return &History{
		Locks: []Lock{{Path: election, Kind: KindElection}},
		Holds: []Hold{
			{Lock: election, Client: "c1", Session: 1, Node: n0, Token: t0, Mode: ModeExclusive, Start: at(1), End: c1End},
			{Lock: election, Client: "c2", Session: 2, Node: n1, Token: t1, Mode: ModeExclusive, Start: at(2.1), End: at(3)},
		},
		Committed: b.log, Fencing: fencing, End: at(10),
	}
}

func TestExclusiveBeliefFlagsALeaderWhoseOwnRecipeDeletedItsNode(t *testing.T) {
	r := result(t, electionHistory("own-delete", at(2.6), false), CheckerExclusiveBelief)
	require.Equal(t, checkers.Violation, r.Status, r.Summary)
	require.Len(t, r.Findings, 1)
	assert.Equal(t, "own-node-deleted", r.Findings[0].Rule)
	assert.Equal(t, []string{"c1", "c2"}, r.Findings[0].Clients)
	assert.Contains(t, r.Findings[0].Message, "its own session had deleted its node")
}

func TestExclusiveBeliefWithFencingIsItsOwnClass(t *testing.T) {
	h := electionHistory("own-delete", at(2.6), true)
	r := result(t, h, CheckerExclusiveBeliefFenced)
	require.Equal(t, checkers.Violation, r.Status, "two believers fail the run even when fencing saved the resource, unless Curator's own window")
	assert.Contains(t, r.Summary, "fencing kept")
	assert.Equal(t, checkers.Skipped, result(t, h, CheckerExclusiveBelief).Status)
}

func TestExclusiveBeliefFlagsTwoGrantsOnLiveNodes(t *testing.T) {
	r := result(t, electionHistory("alive", at(2.6), false), CheckerExclusiveBelief)
	require.Equal(t, checkers.Violation, r.Status)
	assert.Equal(t, "two-believers", r.Findings[0].Rule)
	assert.Contains(t, r.Findings[0].Message, "the recipe granted both")
}

func TestExclusiveBeliefPassesWhenTheLeaderLetGoInTime(t *testing.T) {
	// c1 lets go at 2.1 s, the very instant c2 is granted: spans are half-open.
	r := result(t, electionHistory("own-delete", at(2.1), false), CheckerExclusiveBelief)
	assert.Equal(t, checkers.Pass, r.Status, "%v", r.Findings)
	assert.Equal(t, 2, r.Checked)
}

func TestExclusiveBeliefExcusesAHolderWhoseSessionTheServerExpired(t *testing.T) {
	// A paused c1 cannot know that its session expired: the resource checks judge what it does.
	r := result(t, electionHistory("expiry", at(2.6), false), CheckerExclusiveBelief)
	assert.Equal(t, checkers.Pass, r.Status, "%v", r.Findings)
	assert.NotEmpty(t, r.Notes)
}

func TestExclusiveBeliefLetsReadersShare(t *testing.T) {
	h := electionHistory("alive", at(2.6), false)
	h.Locks[0].Kind = KindReadWrite
	h.Holds[0].Mode, h.Holds[1].Mode = ModeRead, ModeRead
	assert.Equal(t, checkers.Pass, result(t, h, CheckerExclusiveBelief).Status)
	h.Holds[1].Mode = ModeWrite
	assert.Equal(t, checkers.Violation, result(t, h, CheckerExclusiveBelief).Status)
}

// TestRejectionOfAHolderWhoseOwnRecipeDeletedItsNode: judgeRejection tells a holder whose own
// session deleted its node while it believed (a recipe fault fencing caught) from one expired by
// the server (fencing doing its job, nothing reported).
func TestRejectionOfAHolderWhoseOwnRecipeDeletedItsNode(t *testing.T) {
	for _, how := range []string{"own-delete", "expiry"} {
		h := electionHistory(how, at(2.6), true)
		t0, t1 := h.Holds[0].Token, h.Holds[1].Token
		h.Accesses = []Access{
			{Lock: election, Client: "c2", Session: 2, Token: t1, Write: true, Accepted: true, Newest: t0, Time: at(2.2)},
			{Lock: election, Client: "c1", Session: 1, Token: t0, Write: true, Accepted: false, Newest: t1, Time: at(2.3)},
		}
		h.Holds[0].End = at(2.1) // only the rejection can tell
		r := result(t, h, CheckerExclusiveBeliefFenced)
		if how == "expiry" {
			assert.Equal(t, checkers.Pass, r.Status, "%v", r.Findings)
			continue
		}
		assert.Equal(t, checkers.Pass, r.Status, "c1 had let go before c2 came: %v", r.Findings)
		h.Holds[0].End = at(2.6)
		r = result(t, h, CheckerExclusiveBeliefFenced)
		require.Equal(t, checkers.Violation, r.Status)
		rules := []string{}
		for _, f := range r.Findings {
			rules = append(rules, f.Rule)
		}
		assert.Contains(t, rules, "own-node-deleted")
		assert.Contains(t, r.Findings[0].Message+r.Findings[len(r.Findings)-1].Message, "which fencing caught")
		assert.Equal(t, checkers.Pass, result(t, h, CheckerMutualExclusion).Status, "not a live holder fenced off")
	}
}

func churnHistory(requeues int, holdFrom clock.Time) *History {
	h := &History{Locks: []Lock{{Path: election, Kind: KindElection}}, End: at(200),
		Liveness: &checkers.LivenessFacts{HealTime: at(60), LeaderTime: at(61), Completed: true}}
	for i := range requeues {
		h.Requeues = append(h.Requeues, Requeue{Lock: election, Client: "c1", Session: 1, Time: at(70 + float64(i))})
	}
	h.Holds = []Hold{{Lock: election, Client: "c2", Session: 2, Mode: ModeExclusive, Token: 9, Start: holdFrom, End: holdFrom + clock.Time(clock.Second)}}
	return h
}

func TestChurnFlagsARequeueStorm(t *testing.T) {
	// c2 holds from 61 s to 199 s, so that no span without a holder is long.
	h := churnHistory(DefaultChurnBound+1, at(61))
	h.Holds[0].End = at(199)
	r := result(t, h, CheckerChurn)
	require.Equal(t, checkers.Violation, r.Status)
	require.Len(t, r.Findings, 1)
	assert.Equal(t, "requeue-storm", r.Findings[0].Rule)
	h = churnHistory(DefaultChurnBound, at(61))
	h.Holds[0].End = at(199)
	assert.Equal(t, checkers.Pass, result(t, h, CheckerChurn).Status)
}

func TestChurnFlagsALivelock(t *testing.T) {
	// Nobody holds from the heal at 60 s until 150 s while c1 requeues 5 times.
	r := result(t, churnHistory(5, at(150)), CheckerChurn)
	require.Equal(t, checkers.Violation, r.Status)
	assert.Equal(t, "livelock", r.Findings[0].Rule)
	// The same requeues with a holder at 65 s: the gaps after it have no requeues, or are short.
	h := churnHistory(5, at(65))
	h.Holds[0].End = at(190)
	assert.Equal(t, checkers.Pass, result(t, h, CheckerChurn).Status)
	// Without requeues a lock nobody wants is idle, not livelocked.
	assert.Equal(t, checkers.Pass, result(t, churnHistory(0, at(150)), CheckerChurn).Status)
}

// TestChurnExcusesAQueueBlockedByAnExpiringSession: seed 1009649's shape. A waiter (session 3) is
// killed before the heal with its node first in the queue; the others' requeues at 70-74 s are
// their answers to the heal's reconnects, and nobody can lead until the leader expires session 3
// at 100 s, a session timeout after the heal. That wait is ZooKeeper's, not a livelock; the same
// span with the node deleted by its owner instead (a live participant that keeps the queue stuck)
// is still one, and so is a span whose blocked part is short.
func TestChurnExcusesAQueueBlockedByAnExpiringSession(t *testing.T) {
	blocked := func(how string, until clock.Time, holdFrom clock.Time) *History {
		h := churnHistory(5, holdFrom)
		var b logBuilder
		b.create(1, election, false, at(1))
		b.create(3, election+"/_c_x-latch-0000000000", true, at(55))
		b.create(1, election+"/_c_y-latch-0000000001", true, at(75))
		switch how {
		case "expiry":
			b.close(3, until)
		case "own-delete":
			b.delete(3, election+"/_c_x-latch-0000000000", until)
		}
		h.Committed = b.log
		return h
	}
	r := result(t, blocked("expiry", at(100), at(101)), CheckerChurn)
	assert.Equal(t, checkers.Pass, r.Status, "%v", r.Findings)
	r = result(t, blocked("own-delete", at(100), at(101)), CheckerChurn)
	require.Equal(t, checkers.Violation, r.Status)
	assert.Equal(t, "livelock", r.Findings[0].Rule)
	// Blocked by the expiring node until 70 s, then 80 s more without a holder: a livelock.
	r = result(t, blocked("expiry", at(70), at(150)), CheckerChurn)
	require.Equal(t, checkers.Violation, r.Status)
	assert.Contains(t, r.Findings[0].Message, "10s of it not counted")
}

// TestExclusiveBeliefExcusesAGrantToAnExpiredSession: c2 is granted at 2.1 s from a follower that
// had not applied the expiry of c2's session (its node closed at 2 s): it cannot know either.
func TestExclusiveBeliefExcusesAGrantToAnExpiredSession(t *testing.T) {
	h := electionHistory("alive", at(2.6), false)
	var b logBuilder
	b.log = h.Committed
	b.zxid = int64(len(h.Committed))
	b.close(2, at(2))
	h.Committed = b.log
	r := result(t, h, CheckerExclusiveBelief)
	assert.Equal(t, checkers.Pass, r.Status, "%v", r.Findings)
	assert.NotEmpty(t, r.Notes)
}

// TestCuratorLatchWindowIsAKnownFindingWithFencing: a latch leader whose own session deleted its
// node (the second create's setNode) and that ended its belief on its own leadership check is
// Curator 5.x's window: with fencing, lock/exclusive-belief-fenced reports it as the known class
// and does not fail; a leader that did not end its belief on its check (a release, a lost session,
// or never), another lock kind, or no fencing, stay violations.
func TestCuratorLatchWindowIsAKnownFindingWithFencing(t *testing.T) {
	h := electionHistory("own-delete", at(2.6), true)
	h.Holds[0].EndedByCheck = true
	r := result(t, h, CheckerExclusiveBeliefFenced)
	require.Equal(t, checkers.Known, r.Status, "%v", r.Findings)
	require.Len(t, r.Findings, 1)
	assert.Equal(t, "own-node-deleted", r.Findings[0].Rule)
	assert.Equal(t, KnownLatchReplacedNode, r.Findings[0].Known)
	assert.False(t, r.Failed())

	// The same overlap rejected at the resource is the same known class.
	t0, t1 := h.Holds[0].Token, h.Holds[1].Token
	h.Accesses = []Access{
		{Lock: election, Client: "c2", Session: 2, Token: t1, Write: true, Accepted: true, Newest: t0, Time: at(2.2)},
		{Lock: election, Client: "c1", Session: 1, Token: t0, Write: true, Accepted: false, Newest: t1, Time: at(2.3)},
	}
	r = result(t, h, CheckerExclusiveBeliefFenced)
	require.Equal(t, checkers.Known, r.Status, "%v", r.Findings)
	assert.Equal(t, []string{KnownLatchReplacedNode}, checkers.KnownClasses(r.Findings))
	assert.Len(t, r.Findings, 2)

	notByCheck := electionHistory("own-delete", at(2.6), true)
	assert.Equal(t, checkers.Violation, result(t, notByCheck, CheckerExclusiveBeliefFenced).Status)

	mutex := electionHistory("own-delete", at(2.6), true)
	mutex.Holds[0].EndedByCheck = true
	mutex.Locks[0].Kind = KindExclusive
	assert.Equal(t, checkers.Violation, result(t, mutex, CheckerExclusiveBeliefFenced).Status)

	unfenced := electionHistory("own-delete", at(2.6), false)
	unfenced.Holds[0].EndedByCheck = true
	assert.Equal(t, checkers.Violation, result(t, unfenced, CheckerExclusiveBelief).Status)

	// A known finding beside a violation leaves the result a violation.
	both := electionHistory("alive", at(2.6), true)
	both.Holds[0].EndedByCheck = true
	assert.Equal(t, checkers.Violation, result(t, both, CheckerExclusiveBeliefFenced).Status)
}

// replacedHistory: c1 leads on node 0 from 1 s; its late create makes node 1 at 1.2 s, and its
// own session deletes node 0 at 1.3 s (LeaderLatch.setNode). c2's node 2 comes at 1.5 s, or,
// with c2First, c2's node comes first (node 1) and c1's replacement after it (node 2). c1's
// session ends (closeSession, as an expiry) at 2 s unless alive; c2 is granted at 2.1 s; c1
// believes until 2.6 s.
func replacedHistory(c2First, alive bool) *History {
	var b logBuilder
	b.create(1, election, false, at(0.5))
	n0 := election + "/_c_a-latch-0000000000"
	own, other := election+"/_c_c-latch-0000000001", election+"/_c_b-latch-0000000002"
	if c2First {
		own, other = election+"/_c_c-latch-0000000002", election+"/_c_b-latch-0000000001"
	}
	t0 := b.create(1, n0, true, at(1))
	var t1 int64
	if c2First {
		t1 = b.create(2, other, true, at(1.1))
		b.create(1, own, true, at(1.2))
	} else {
		b.create(1, own, true, at(1.2))
	}
	b.delete(1, n0, at(1.3))
	if !c2First {
		t1 = b.create(2, other, true, at(1.5))
	}
	if !alive {
		b.close(1, at(2))
	}
	return &History{
		Locks: []Lock{{Path: election, Kind: KindElection}},
		Holds: []Hold{
			{Lock: election, Client: "c1", Session: 1, Node: n0, Token: t0, Mode: ModeExclusive, Start: at(1), End: at(2.6)},
			{Lock: election, Client: "c2", Session: 2, Node: other, Token: t1, Mode: ModeExclusive, Start: at(2.1), End: at(3)},
		},
		Committed: b.log, Fencing: true, End: at(10),
	}
}

// TestExclusiveBeliefFollowsALeaderOntoItsReplacementNode: LeaderLatch keeps leading when the node
// that replaced its own is first (seed 2005193 of the sweep from 2000001), so its belief is judged
// by that node: its session's end excuses the overlap as an expiry, and a replacement still alive
// when another is granted is two grants. A replacement that was not first is not followed: that
// leader gives up at its listing (Curator's window, or a violation).
func TestExclusiveBeliefFollowsALeaderOntoItsReplacementNode(t *testing.T) {
	r := result(t, replacedHistory(false, false), CheckerExclusiveBeliefFenced)
	assert.Equal(t, checkers.Pass, r.Status, "%v", r.Findings)
	assert.NotEmpty(t, r.Notes, "left to lock/unsafe-without-fencing as an expiry")

	r = result(t, replacedHistory(false, true), CheckerExclusiveBeliefFenced)
	require.Equal(t, checkers.Violation, r.Status)
	assert.Equal(t, "two-believers", r.Findings[0].Rule)
	assert.Contains(t, r.Findings[0].Message, "_c_c-latch-0000000001 that its recipe led on after replacing its own")

	r = result(t, replacedHistory(true, false), CheckerExclusiveBeliefFenced)
	require.Equal(t, checkers.Violation, r.Status)
	assert.Equal(t, "own-node-deleted", r.Findings[0].Rule, "a replacement behind another node is not followed")
}
