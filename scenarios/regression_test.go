package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
)

// regressions are runs that once found a fault in zabsim's own ensemble, or a behaviour of the
// modelled software, each kept as the script its seed drew, so that the run stays the same while
// the swarm's drawing evolves. Each script's comment says what went wrong. They must pass, with
// exactly the known findings (checkers.Known) listed, which must fail the run under FailOnKnown.
var regressions = []struct {
	script     string
	seed       uint64
	bugs       zabmodel.Bugs
	recipeBugs lockmodel.Bugs
	known      []string // Report.KnownClasses
}{
	{"trunc-below-snap", 1000, zabmodel.Bugs{}, lockmodel.Bugs{}.With(lockmodel.BugUnprotectedCreate), nil},
	{"stale-newleader-ack", 300034, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"late-newleader-1005550", 1005550, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"late-newleader-1069851", 1069851, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"snap-leave-before-newleader", 1067370, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"trunc-point-unreachable", 1000, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"trunc-unreachable-1002382", 1002382, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"lock-1005265-release-gave-up", 1005265, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"latch-dead-waiter-expiry-1009649", 1009649, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"stale-leader-later-epoch-1000187", 1000187, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"trunc-forwarded-proposal-1023103", 1023103, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	// Seed 10452's script reached Curator's LeaderLatch window (known class
	// curator-latch-replaced-node) until the lock recipes' retry loops came to wait for a
	// connection only before their first attempt, as Curator's do; the latch's create no longer
	// outlasts the reconnect there, and it passes (so do seeds 1 to 400 of the script).
	// TestElectionSeed38TwoLeaders still replays the double create; the checker's tests cover the class.
	{"latch-replaced-node-10452", 10452, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	// Seed 1038795's script reached the acceptedEpoch lock-out (known class
	// zk-accepted-epoch-lockout) until the model changed with issues 16 and 20; it now converges,
	// and passes. judgeConvergence's test covers the class, and seed 52 of the 3034286 script below
	// reaches it (the script's own seed did until a learner handler's reads became steps of their
	// own, seed 13 until a quarter of the handler threads woke late and snapshot walks stalled;
	// seeds 52, 53 and 64 are the first of the script that do now).
	{"accepted-epoch-lockout-1038795", 1038795, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"latch-led-on-replacement-2005193", 2005193, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	// The next three run the seeds of their tests with the bug switches (see below), which reach
	// their windows on this model (re-pinned since a quarter of the handler threads wake late and
	// snapshot walks stall).
	{"fuzzy-acl-index-2226", 14, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"fuzzy-acl-index-trunc-3028828", 5554, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"snap-crash-before-log-delete-4015563", 25, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"accepted-epoch-lockout-3034286", 52, zabmodel.Bugs{}, lockmodel.Bugs{},
		[]string{CheckerConvergence + ":" + KnownAcceptedEpochLockout}},
	{"fuzzy-snapshot-trunc-3071591", 5292, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"lock-unsynced-cleanup-6090109", 6090109, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
	{"lock-cleanup-delete-gave-up-7024069", 7024069, zabmodel.Bugs{}, lockmodel.Bugs{}, nil},
}

// regressionScript parses testdata/regressions/NAME.script.
func regressionScript(t *testing.T, name string) *Script {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "regressions", name+".script"))
	require.NoError(t, err)
	defer f.Close()
	script, err := ParseScript(f)
	require.NoError(t, err)
	return script
}

// TestStaleNewLeaderAckIsThe3_8_0Behaviour: the stale-newleader-ack regression passes with the
// stale-ack switch too. 3.8.0 keeps a departed learner's NEWLEADER ack (Leader.waitForNewLeaderAck
// never prunes its ack set), so zk5 is established in epoch 4 after epoch 5 committed 0x5:0x1; such
// a stale leader cannot commit, and LeaderLogCompleteness does not owe it a later epoch's
// transactions (seed 1000187 showed that even the fixed model establishes one on an ack it cannot
// yet know to be stale).
func TestStaleNewLeaderAckIsThe3_8_0Behaviour(t *testing.T) {
	script := regressionScript(t, "stale-newleader-ack")
	rep, err := Run(Options{Seed: 300034, Script: script, Bugs: zabmodel.Bugs{}.With(zabmodel.BugStaleAck)})
	require.NoError(t, err)
	assert.False(t, rep.Failed(), rep.Explain())
}

// TestATruncToAnUnreachablePointEndsTheSync: in the trunc-point-unreachable regression a learner's
// disk rebuilds less than its TRUNC point, because zabsim's fixes of trunc-snapshot and
// snap-log-gap deleted what Java's disk would still hold; the learner ends that sync rather than
// claim the point, as Learner.syncWithLeader does on Java's disk (claiming it lost transactions in
// trunc-unreachable-1002382).
func TestATruncToAnUnreachablePointEndsTheSync(t *testing.T) {
	script := regressionScript(t, "trunc-point-unreachable")
	var trace strings.Builder
	// The run was recorded before LeaderLatch read its node's owner before leading (CURATOR-696,
	// issue #21), a round trip that changes the schedule; the latch-no-owner-check self-test
	// restores the latch of that recording (Curator 5.4.0-5.6.x), and with it the run.
	noOwnerCheck := lockmodel.SelfTests{}.With(lockmodel.SelfTestLatchNoOwnerCheck)
	// Seed 7: seed 1000 reached the point until fuzzy snapshots moved every seed's schedule, seed 4
	// until only a quarter of the handler threads woke late and snapshot walks stalled; 7 is the
	// first of the script's seeds that does now, and its disk rebuilds 0x2:0xc.
	rep, err := Run(Options{Seed: 7, Script: script, RecipeSelfTests: noOwnerCheck, Trace: sim.TraceConfig{Text: &trace}})
	require.NoError(t, err)
	assert.False(t, rep.Failed(), rep.Explain())
	assert.Contains(t, trace.String(), "truncated to 0x3:0x0, but the durable state only rebuilds 0x2:0xc")
}

// TestZK4846StopsARestartOnAFuzzySnapshotsACL: the fuzzy-acl-index-2226 regression fails with the
// ZK-4846 switch, as the releases before ZOOKEEPER-4846 behave: zk1's replay throws at startup.
func TestZK4846StopsARestartOnAFuzzySnapshotsACL(t *testing.T) {
	// Seed 14: seed 2226 no longer reached the window once a learner handler's reads were steps of
	// their own, nor seed 212 once only a quarter of the handler threads woke late and snapshot
	// walks stalled; 14 is the first of the script's seeds that does (a server throws replaying
	// 0x4:0xac at its start).
	requireStartThrows(t, "fuzzy-acl-index-2226", 14, zabmodel.BugZK4846, "0x4:0xac")

	// The same where it is not a start, so the server goes on. The script was recorded where a
	// TRUNC reloads a fuzzy snapshot and the replay throws (seed 3028828; later seeds 1020 and
	// 1105); since a quarter of the handler threads wake late and snapshot walks stall, none of
	// its seeds 1 to 6,000 reaches that reload (its 14 ZK-4846 failures there: 12 at a start, one
	// applying a COMMIT, one in a sync). Seed 5554 is the one in a sync: zk4, whose tree came from
	// a fuzzy snapshot, throws applying 0x3:0x5 from a DIFF sync, and its digest then differs from
	// the leader's.
	script := regressionScript(t, "fuzzy-acl-index-trunc-3028828")
	rep, err := Run(Options{Seed: 5554, Script: script, Bugs: zabmodel.Bugs{}.With(zabmodel.BugZK4846)})
	require.NoError(t, err)
	assert.Equal(t, "zab:TxnThrew", rep.Failure(), rep.Explain())
	assert.Contains(t, rep.Explain(), "zxid=0x300000005 from=sync", "thrown by the sync's apply, not at a start")
}

// requireStartThrows runs a regression script with bug on and requires that a server's replay of
// zxid at startup throws and the run fails zab:TxnThrew.
func requireStartThrows(t *testing.T, name string, seed uint64, bug zabmodel.Bug, zxid string) {
	t.Helper()
	var trace strings.Builder
	rep, err := Run(Options{Seed: seed, Script: regressionScript(t, name), Bugs: zabmodel.Bugs{}.With(bug), Trace: sim.TraceConfig{Text: &trace}})
	require.NoError(t, err)
	assert.Equal(t, "zab:TxnThrew", rep.Failure(), rep.Explain())
	assert.True(t, strings.Contains(trace.String(), "Unable to load database on disk: processTxn of "+zxid+" threw"),
		"the server cannot start again")
}

// TestACrashBeforeTheLogDeletionIsSnapLogGapWithTheSwitch: the snap-crash-before-log-delete-4015563
// regression fails with the snap-log-gap switch, which keeps the old log as Java does. It runs seed
// 25: seed 4015563 no longer reached the window once the threads a leader's notifyAll wakes ran
// in a drawn order, seed 472 no longer did once a learner handler's reads were steps of their
// own, nor seed 7 once only a quarter of the handler threads woke late and snapshot walks stalled;
// seeds 25 and 32 are the first of the script that fail ProcessConsistency with the switch and
// pass without it.
func TestACrashBeforeTheLogDeletionIsSnapLogGapWithTheSwitch(t *testing.T) {
	script := regressionScript(t, "snap-crash-before-log-delete-4015563")
	rep, err := Run(Options{Seed: 25, Script: script, Bugs: zabmodel.Bugs{}.With(zabmodel.BugSnapLogGap)})
	require.NoError(t, err)
	assert.Equal(t, "zab:ProcessConsistency", rep.Failure(), rep.Explain())
}

// TestReleaseProfilesLoseWhatTheFixedModelKeeps: the stale-ack-durability-413 script passes on the
// fixed model and fails on every release profile, each of which has the stale-ack behaviour. It
// runs with seed 7: with fuzzy snapshots seed 413 no longer reached the window on 3.8.6, whose
// NEWLEADER (ZK-4394-sync) takes another course, seed 10 no longer did on master once a learner
// handler's reads were steps of their own, nor seed 15 once only a quarter of the handler threads
// woke late and snapshot walks stalled (seeds 7 and 10 are the first two that do on every
// profile).
func TestReleaseProfilesLoseWhatTheFixedModelKeeps(t *testing.T) {
	script := regressionScript(t, "stale-ack-durability-413")
	for _, version := range []string{"fixed", "3.8.0", "3.8.6", "master"} {
		release, err := zabmodel.ParseRelease(version)
		require.NoError(t, err)
		rep, err := Run(Options{Seed: 7, Script: script, Bugs: release.Bugs})
		require.NoError(t, err)
		assert.Equal(t, version != "fixed", rep.Failed(), "%s: %s", version, rep.Explain())
		if version == "master" {
			// 3.8.0 and 3.8.6 fail earlier, on their NEWLEADER orders.
			assert.Equal(t, "zab:CommittedLogDurability", rep.Failure(), version)
		}
	}

	// A script may name the release itself.
	text, err := os.ReadFile(filepath.Join("testdata", "regressions", "stale-ack-durability-413.script"))
	require.NoError(t, err)
	script, err = ParseScript(strings.NewReader("zkversion 3.8.0\n" + string(text)))
	require.NoError(t, err)
	require.Equal(t, "3.8.0", script.ZKVersion)
	var formatted strings.Builder
	require.NoError(t, script.Format(&formatted))
	assert.Contains(t, formatted.String(), "zkversion 3.8.0\n")
	rep, err := Run(Options{Seed: 7, Script: script})
	require.NoError(t, err)
	assert.True(t, rep.Failed(), rep.Explain())

	_, err = ParseScript(strings.NewReader("servers 3\nzkversion 3.4.6\n"))
	require.ErrorContains(t, err, `unknown ZooKeeper version "3.4.6"`)
}

// TestALearnerLeavingASnapSyncReloadsItsDisk: in the snap-leave-before-newleader regression zk2
// leaves between SNAP and NEWLEADER, and its next role reloads the database from disk, as 3.8.0's
// Learner.shutdown (a full ZooKeeperServer.shutdown) and QuorumPeer.getLastLoggedZxid make it;
// keeping the SNAP's tree in memory failed ProcessConsistency.
func TestALearnerLeavingASnapSyncReloadsItsDisk(t *testing.T) {
	script := regressionScript(t, "snap-leave-before-newleader")
	var trace strings.Builder
	// Seed 1067370 shrank the script; seed 1067384 is the first after it whose zk2 leaves inside
	// that window since a quarter of the handler threads wake late and snapshot walks stall
	// (1067372 was from when the threads a leader's notifyAll wakes came to run in a drawn order,
	// 1067375 while a leader streamed a SNAP from its live tree, 1067381 while a sender wrote a
	// sync burst packet by packet and the SNAP went out at once).
	rep, err := Run(Options{Seed: 1067384, Script: script, Trace: sim.TraceConfig{Text: &trace}})
	require.NoError(t, err)
	assert.False(t, rep.Failed(), rep.Explain())
	assert.Regexp(t, `zk2\s+peer\s+the database was cleared: loading it from disk`, trace.String())
}

func TestRegressions(t *testing.T) {
	for _, c := range regressions {
		t.Run(c.script, func(t *testing.T) {
			script := regressionScript(t, c.script)
			rep, err := Run(Options{Seed: c.seed, Script: script, Bugs: c.bugs, RecipeBugs: c.recipeBugs})
			require.NoError(t, err)
			require.False(t, rep.Failed(), rep.Explain())
			assert.Equal(t, c.known, rep.KnownClasses(), rep.Explain())
			if len(c.known) == 0 {
				return
			}
			// A known finding stays a finding: asked to, the run fails on it.
			rep, err = Run(Options{Seed: c.seed, Script: script, Bugs: c.bugs, RecipeBugs: c.recipeBugs, FailOnKnown: true})
			require.NoError(t, err)
			assert.Equal(t, strings.SplitN(c.known[0], ":", 2)[0], rep.Failure(), rep.Explain())
		})
	}
}

// TestClientKilledDuringSetupIsNotStarted: seed 2550 with datagram faults killed c1 (17.69 s)
// before the workload's setup finished (19.999 s), and the application was then started on its
// crashed node: a harness panic ("client: invalid argument: node c1 is crashed"). It must be left
// down until it is revived. The run still fails, inside its own class: datagram faults are
// outside ZAB's fault model.
func TestClientKilledDuringSetupIsNotStarted(t *testing.T) {
	rep, err := Run(Options{Seed: 2550, Observers: -1, Clients: DefaultClients, Faults: FaultFamilies,
		Duration: DefaultDuration, LivenessBound: DefaultLivenessBound, DatagramFaults: true})
	require.NoError(t, err)
	require.NotEqual(t, sim.Panic, rep.Outcome.Kind, rep.Explain())
	require.NotEqual(t, "panic", rep.Failure())
}

// TestAFuzzySnapshotOutlivesATruncWithTheTruncSnapshotSwitch: in the fuzzy-snapshot-trunc-3071591
// regression zk4's snapshot named 0x1:0x7d holds the proposal 0x1:0x7e, which a TRUNC then removes
// from its log. Every release keeps that file at the TRUNC (FileTxnSnapLog.truncateLog deletes no
// snapshot) and restores from it, so with the trunc-snapshot switch zk4 serves a tree with a
// transaction no quorum committed, and the run failed convergence; zabsim's fix passes the script
// (TestRegressions). Since a quarter of the handler threads wake late and snapshot walks stall, the
// script's seeds 1 to 10,000 no longer reach that window with the switch (seeds 3071591, 2294 and
// 5292 did on earlier models); zabmodel's TestATruncKeepsAFuzzySnapshotWithTheTruncSnapshotSwitch
// builds the fuzzy case step by step. End to end the test now runs the default swarm's first find
// of the switch, seed 1023: zk2's TRUNC to 0x1:0x1d keeps a snapshot whose state rebuilds 0x4:0x3,
// zk2 claims the truncation point anyway and acknowledges NEWLEADER with a history that is not the
// leader's prefix, and ProcessConsistency fails; without the switch the seed passes.
func TestAFuzzySnapshotOutlivesATruncWithTheTruncSnapshotSwitch(t *testing.T) {
	var trace strings.Builder
	rep, err := Run(Options{Seed: 1023, Observers: -1, Bugs: zabmodel.Bugs{}.With(zabmodel.BugTruncSnapshot), Trace: sim.TraceConfig{Text: &trace}})
	require.NoError(t, err)
	assert.Equal(t, "zab:ProcessConsistency", rep.Failure(), rep.Explain())
	assert.Contains(t, trace.String(), "truncated to 0x1:0x1d, but the durable state rebuilds 0x4:0x3: claiming 0x1:0x1d")
	fixed, err := Run(Options{Seed: 1023, Observers: -1})
	require.NoError(t, err)
	assert.False(t, fixed.Failed(), fixed.Explain())
}
