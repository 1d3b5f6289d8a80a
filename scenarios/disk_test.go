package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// stallRun is what TestDiskStall records of one run: when the stall acted, the leader then, and
// each server's fsyncs and the leader's commits.
type stallRun struct {
	stall   clock.Time
	leader  int64
	fsyncs  map[int64][]clock.Time
	commits []clock.Time
}

func runStall(t *testing.T, seed uint64, target string) stallRun {
	t.Helper()
	script, err := ParseScript(strings.NewReader("servers 3\nobservers 0\nclients 5\nworkload registers\nduration 15s\nat 5s stall " + target + " 3s\n"))
	require.NoError(t, err)
	run := stallRun{fsyncs: map[int64][]clock.Time{}}
	var leader int64
	watch := &Watch{
		Protocol: func(e zabmodel.Event) {
			switch e.Kind {
			case zabmodel.EventEstablished:
				leader = e.Server
			case zabmodel.EventFsync:
				run.fsyncs[e.Server] = append(run.fsyncs[e.Server], e.Time)
			case zabmodel.EventCommit:
				run.commits = append(run.commits, e.Time)
			}
		},
		Action: func(_ int, a Action, at clock.Time, idle string) {
			require.Empty(t, idle, "seed %d: %s did nothing", seed, a)
			run.stall, run.leader = at, leader
		},
	}
	rep, err := Run(Options{Seed: seed, Script: script, Watch: watch})
	require.NoError(t, err)
	require.False(t, rep.Failed(), "seed %d: %s", seed, rep.Explain())
	require.Positive(t, run.stall, "seed %d: the stall acted", seed)
	require.Positive(t, run.leader, "seed %d: a leader before the stall", seed)
	return run
}

// TestDiskStall stalls disks for 3 s in a quiet three-server ensemble under a steady write load.
// With every disk stalled nothing becomes durable, so no follower acknowledges and nothing
// commits until the stall ends (commits resume after it); with only the leader's disk stalled,
// the followers' acknowledgements are a quorum on their own, so commits go on while the leader's
// own log stays unsynced. Every checker passes both runs.
func TestDiskStall(t *testing.T) {
	const length = 3 * clock.Second
	// An acknowledgement already on the wire when the stall comes still completes its commit.
	const grace = 50 * clock.Millisecond
	for seed := uint64(1); seed <= 3; seed++ {
		all := runStall(t, seed, "all")
		end := all.stall.Add(length)
		for sid := int64(1); sid <= 3; sid++ {
			for _, at := range all.fsyncs[sid] {
				assert.False(t, at > all.stall && at < end, "seed %d: zk%d fsynced at %v, inside a stall of every disk", seed, sid, at)
			}
		}
		for _, at := range all.commits {
			assert.False(t, at > all.stall.Add(grace) && at < end, "seed %d: a commit at %v, inside a stall of every disk", seed, at)
		}
		assert.True(t, anyBetween(all.commits, end, end.Add(5*clock.Second)), "seed %d: commits after the stall", seed)

		one := runStall(t, seed, "leader")
		end = one.stall.Add(length)
		for sid := int64(1); sid <= 3; sid++ {
			inside := anyBetween(one.fsyncs[sid], one.stall.Add(grace), end)
			if sid == one.leader {
				assert.False(t, inside, "seed %d: the leader zk%d fsynced inside the stall of its disk", seed, sid)
			} else {
				assert.True(t, inside, "seed %d: follower zk%d did not fsync while only the leader's disk stalled", seed, sid)
			}
		}
		assert.True(t, anyBetween(one.commits, one.stall.Add(grace), end), "seed %d: no commit while only the leader's disk stalled", seed)
	}
}

// TestDiskStallEndsWithTheFaultPhase: the liveness phase heals every fault, a disk stall too. A
// stall of every disk drawn to outlast the fault phase by ten seconds ends at the heal: the fsyncs
// it held complete then, and commits resume at once rather than when the stall would have ended.
// A second stall of a disk that is already stalled for longer does nothing, and the script's
// report says why.
func TestDiskStallEndsWithTheFaultPhase(t *testing.T) {
	script, err := ParseScript(strings.NewReader("servers 3\nobservers 0\nclients 5\nworkload registers\nduration 10s\nat 8s stall all 12s\nat 9s stall zk1 1s\n"))
	require.NoError(t, err)
	var fsyncs, commits []clock.Time
	var idle []string
	watch := &Watch{
		Protocol: func(e zabmodel.Event) {
			switch e.Kind {
			case zabmodel.EventFsync:
				fsyncs = append(fsyncs, e.Time)
			case zabmodel.EventCommit:
				commits = append(commits, e.Time)
			}
		},
		Action: func(_ int, a Action, _ clock.Time, why string) { idle = append(idle, why) },
	}
	rep, err := Run(Options{Seed: 1, Script: script, Watch: watch})
	require.NoError(t, err)
	require.False(t, rep.Failed(), rep.Explain())
	assert.Equal(t, []string{"", "its disk was already stalled for longer"}, idle)
	stall, heal := clock.Time(warmup+8*clock.Second), clock.Time(warmup+10*clock.Second)
	const grace = 50 * clock.Millisecond
	assert.False(t, anyBetween(fsyncs, stall, heal), "no fsync while every disk is stalled")
	assert.True(t, anyBetween(fsyncs, heal-1, heal.Add(grace)), "the held fsyncs complete at the heal")
	assert.True(t, anyBetween(commits, heal-1, heal.Add(clock.Second)), "commits resume right after the heal")
}
