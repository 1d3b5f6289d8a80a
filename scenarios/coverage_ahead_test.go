package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

func featureNames(c *Coverage) string {
	var out []string
	for _, f := range c.Features() {
		out = append(out, f.Name)
	}
	return strings.Join(out, "\n")
}

// aheadRun feeds a leader (sid 1) that proposes 1:2 after committing 1:1, leaves its role with 1:2
// fast-forwarded into its tree, and (when snapshot) writes a clean snapshot of that tree as it
// starts leading again; then it crashes, server 2 is established over the history through 1:1,
// and server 1 comes back and is truncated.
func aheadRun(snapshot bool) *Coverage {
	c := NewCoverage()
	bringToBroadcast(c)
	propose(c, 1<<32|1, 0)
	c.event(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1})
	c.event(zabmodel.Event{Kind: zabmodel.EventApply, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1, Source: zabmodel.SourceCommit})
	propose(c, 1<<32|2, 0)
	c.event(zabmodel.Event{Kind: zabmodel.EventLog, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 2})
	c.event(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 1, Role: zabmodel.Looking})
	c.event(zabmodel.Event{Kind: zabmodel.EventApply, Server: 1, Role: zabmodel.Looking, Zxid: 1<<32 | 2, Source: zabmodel.SourceFastForward})
	c.event(zabmodel.Event{Kind: zabmodel.EventElected, Server: 1, Role: zabmodel.Leading, Leader: 1, Epoch: 2})
	if snapshot {
		c.event(zabmodel.Event{Kind: zabmodel.EventSnapshot, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 2})
	}
	c.aim(1)
	c.event(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1, Role: zabmodel.Leading})
	c.fault("crash", 1, 0)
	c.event(zabmodel.Event{Kind: zabmodel.EventElected, Server: 2, Role: zabmodel.Leading, Leader: 2, Epoch: 3})
	c.event(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 2, Role: zabmodel.Leading, Epoch: 3, Through: 1<<32 | 1})
	c.event(zabmodel.Event{Kind: zabmodel.EventRestart, Server: 1, Role: zabmodel.Looking})
	c.event(zabmodel.Event{Kind: zabmodel.EventLearnerSync, Server: 2, Role: zabmodel.Leading, Learner: 1})
	c.event(zabmodel.Event{Kind: zabmodel.EventTruncate, Server: 1, Role: zabmodel.Following, Zxid: 1<<32 | 1})
	return c
}

// TestCoverageSeesStateAheadOfTheCommitPoint: a snapshot of a tree that holds a proposal no
// quorum committed, a crash of the server holding it, and a leader established past it are
// situations and windows of their own; the same run without the snapshot reaches the tree's but
// not the snapshot's, and a run whose proposal was committed reaches none of them.
func TestCoverageSeesStateAheadOfTheCommitPoint(t *testing.T) {
	withSnapshot := featureNames(aheadRun(true))
	assert.Contains(t, withSnapshot, "snapshot holding uncommitted txns LEADING discovery")
	assert.Contains(t, withSnapshot, "fault crash in discovery after snapshot in window {tree-ahead,snapshot-ahead}")
	assert.Contains(t, withSnapshot, "leader established past a server in down whose log 1 tree 0 snapshot 1 go beyond its history")
	assert.Contains(t, withSnapshot, "learner-sync of a learner whose snapshot is past the leader's log")

	withoutSnapshot := featureNames(aheadRun(false))
	assert.Contains(t, withoutSnapshot, "fault crash in discovery after elected in window {tree-ahead}")
	assert.Contains(t, withoutSnapshot, "leader established past a server in down whose log 1 tree 0 snapshot 0 go beyond its history")
	assert.NotContains(t, withoutSnapshot, "snapshot holding uncommitted")
	assert.NotContains(t, withoutSnapshot, "whose snapshot is past the leader's log")

	c := NewCoverage()
	bringToBroadcast(c)
	propose(c, 1<<32|1, 0)
	c.event(zabmodel.Event{Kind: zabmodel.EventLog, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1})
	c.event(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1})
	c.event(zabmodel.Event{Kind: zabmodel.EventApply, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1, Source: zabmodel.SourceCommit})
	c.event(zabmodel.Event{Kind: zabmodel.EventSnapshot, Server: 1, Role: zabmodel.Leading, Zxid: 1<<32 | 1})
	assert.Zero(t, c.aheadWindow(c.server(1)), "a committed tree and snapshot are not ahead")
	c.event(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 2, Role: zabmodel.Leading, Epoch: 2, Through: 1<<32 | 1})
	assert.NotContains(t, featureNames(c), "ahead")
	assert.NotContains(t, featureNames(c), "beyond its history")
}

// TestRecoverEditLetsTheRestRecover: a recover edit drops the faults after its moment and heals
// and starts every server but the one the injection before it hit.
func TestRecoverEditLetsTheRestRecover(t *testing.T) {
	base := &Script{Servers: 3, Duration: 10 * clock.Second, Actions: []Action{
		{At: clock.Second, Verb: "crash", Args: []string{"zk1"}},
		{At: 5 * clock.Second, Verb: "isolate", Args: []string{"zk2"}},
	}}
	inject := Edit{Kind: EditInject, At: 3 * clock.Second, Point: crashPointNames[0], Target: "zk3"}
	got := ApplyEdits(base, []Edit{inject, {Kind: EditRecover, At: 3*clock.Second + clock.Millisecond, Target: "zk3"}})
	var verbs []string
	for _, a := range got.Actions {
		verbs = append(verbs, a.Verb+" "+strings.Join(a.Args, " "))
	}
	assert.Equal(t, []string{"crash zk1", "crashpoint zk3 " + crashPointNames[0] + " restart 250ms", "heal ", "restart zk1", "restart zk2"}, verbs)
	assert.Len(t, base.Actions, 2, "the parent's script is not modified")
}
