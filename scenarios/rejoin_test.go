package scenarios

import (
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
)

// TestRejoinEditsAimAtAParentsWrites: rejoin edits arm at a client's write (of any kind) that
// the parent's run proposed, with its leader. At that moment the leader's disk stalls, and so do
// the disks of the voters that stay connected (two of five), for longer; the voters cut off (a
// quorum less the leader: two of five) have their connections reset a little later and their
// disks stalled until the others' stalls end. Writes in the warm-up are never aimed at.
func TestRejoinEditsAimAtAParentsWrites(t *testing.T) {
	f := fuzzerWithWrites(t, 5, 1)
	aimed := map[string]int{}
	for _, c := range proposalsOf(t, f, "rejoin", 600) {
		e := c.Edits[0]
		require.Equal(t, EditRejoin, e.Kind)
		aimed[e.Target+"@"+formatDuration(e.At)]++
		r := drawRejoin(e.Param)
		leaderStalls, heldBack, cutOff := 0, 0, map[string]bool{}
		for _, a := range c.Script.Actions {
			switch {
			case a.At == e.At && a.Verb == "stall" && a.Args[0] == e.Target:
				leaderStalls++
				assert.Equal(t, formatDuration(r.leaderStall), a.Args[1])
			case a.At == e.At && a.Verb == "stall":
				heldBack++
				assert.Equal(t, formatDuration(r.leaderStall+r.extra), a.Args[1])
			case a.At == e.At+r.reset && a.Verb == "reset":
				cutOff[a.Args[0]] = true
			case a.At == e.At+r.reset && a.Verb == "stall":
				assert.True(t, cutOff[a.Args[0]], "a voter cut off is stalled after its reset: %s", a)
				assert.Equal(t, formatDuration(r.leaderStall+r.extra-r.reset), a.Args[1])
			}
		}
		assert.Equal(t, 1, leaderStalls, "%s", e)
		assert.Len(t, cutOff, 2, "two of five voters (a quorum less the leader) are cut off: %s", e)
		assert.Equal(t, 2, heldBack, "the other two voters are held back: %s", e)
		assert.False(t, cutOff[e.Target], "the leader is not cut off")
		assert.False(t, cutOff["zk6"], "the observer is not cut off")
		require.NoError(t, c.Script.check(6, 10*clock.Second, nil))
	}
	assert.Equal(t, []string{"zk1@2s", "zk2@3s"}, slices.Sorted(func(yield func(string) bool) {
		for k := range aimed { // determinism:ok sorted before use
			if !yield(k) {
				return
			}
		}
	}), "every write in the fault phase is aimed at, whatever its kind, and none in the warm-up")
}

// TestRejoinEditsFindStaleAck runs rejoin edits of the first seeds' runs (10 s, 3 clients, the
// run options of FuzzRun) with the stale-ack switch on, as the fuzzer proposes them: a leader that
// keeps the acknowledgements of learners that left commits a write that only it holds durably,
// which CommittedLogDurability catches, while the same edits pass without the switch. The swarm
// with these options fails about once in 1,100 seeds (the README's fuzz-vs-swarm table).
func TestRejoinEditsFindStaleAck(t *testing.T) {
	bugs, err := zabmodel.ParseBugs("stale-ack")
	require.NoError(t, err)
	rng := sim.NewPCG(7)
	edits, found := 0, 0
	for seed := uint64(1); seed <= 6; seed++ {
		cov := NewCoverage()
		rep, err := Run(Options{Seed: seed, Duration: 10 * clock.Second, Clients: 3, Bugs: bugs, Coverage: cov})
		require.NoError(t, err)
		require.False(t, rep.Failed(), "seed %d fails unedited: %s", seed, rep.Explain())
		writes := compactWrites(cov.Writes(), 10*clock.Second)
		if len(writes) == 0 {
			continue
		}
		for range 2 {
			w := writes[rng.Choose(len(writes))]
			e := Edit{Kind: EditRejoin, At: clock.Duration(w.at - clock.Time(warmup)), Target: "zk" + strconv.Itoa(int(w.leader)), Param: uint32(rng.Choose(1 << 16))}
			script := ApplyEdits(rep.Script, []Edit{e})
			edits++
			with, err := Run(Options{Seed: seed, Script: script, Bugs: bugs})
			require.NoError(t, err)
			without, err := Run(Options{Seed: seed, Script: script})
			require.NoError(t, err)
			require.False(t, without.Failed(), "seed %d, %s fails without the switch: %s", seed, e, without.Explain())
			if with.Failed() {
				found++
				assert.Equal(t, "zab:CommittedLogDurability", with.Failure(), "seed %d, %s", seed, e)
			}
		}
	}
	t.Logf("%d of %d rejoin edits failed with stale-ack", found, edits)
	require.Greater(t, edits, 6)
	assert.GreaterOrEqual(t, found, 2, "of %d rejoin edits, %d failed with stale-ack", edits, found)
}
