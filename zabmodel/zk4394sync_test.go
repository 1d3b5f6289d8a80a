package zabmodel_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestZK4394SyncPersistsBeforeTheAck: 3.8.5's NEWLEADER (the ZK-4394-sync switch) appends and
// fsyncs every pending proposal before currentEpoch and the ACK, as the fixed model does with the
// committed ones.
func TestZK4394SyncPersistsBeforeTheAck(t *testing.T) {
	assert.Empty(t, newLeaderOrder(t, zabmodel.Bugs{}.With(zabmodel.BugZK4394Sync)), "ZAB.md's order")
}

// rejoinUnderLoad has a follower fall behind and rejoin by DIFF while a client keeps writing, so
// that COMMITs reach it between NEWLEADER and UPTODATE. It reports whether the run ended in a panic.
func rejoinUnderLoad(t *testing.T, seed uint64, bugs zabmodel.Bugs) bool {
	w := newWatched(t, seed, zabmodel.Config{Voters: 3, Bugs: bugs})
	leader := w.leader()
	lagging := w.other(leader)
	w.writes(leader, "/pre", 2)
	w.w.Crash(w.e.Server(lagging).Node())
	w.run(clock.Second)
	w.writes(leader, "/a", 5)
	cl := w.client("busy", []sim.NodeID{w.e.Server(leader).Node()})
	w.run(2 * clock.Second)
	w.w.Restart(w.e.Server(lagging).Node())
	for i := range 3000 {
		require.NoError(t, cl.Create(fmt.Sprintf("/busy%04d", i), nil, proto.OpenACLUnsafe, proto.Persistent, func(client.CreateResult) {}))
		w.w.RunFor(clock.Millisecond)
		if w.w.Ended() {
			assert.Contains(t, fmt.Sprint(w.w.Outcome()), "NullPointerException")
			return true
		}
	}
	return false
}

// TestZK4394SyncCommitBeforeUpToDatePanics: with 3.8.5's NEWLEADER the pending list is empty
// after NEWLEADER, so a COMMIT before UPTODATE dereferences nothing (ZOOKEEPER-4394); the fixed
// model keeps the outstanding proposals and goes on.
func TestZK4394SyncCommitBeforeUpToDatePanics(t *testing.T) {
	bugs := zabmodel.Bugs{}.With(zabmodel.BugZK4394Sync)
	for seed := uint64(40); seed < 60; seed++ {
		if rejoinUnderLoad(t, seed, bugs) {
			assert.False(t, rejoinUnderLoad(t, seed, zabmodel.Bugs{}), "seed %d without the switch", seed)
			return
		}
	}
	t.Fatal("no seed of 40..59 had a COMMIT between NEWLEADER and UPTODATE")
}
