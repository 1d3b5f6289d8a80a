package scenarios

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/zabmodel"
)

// selfTestSeeds bounds each self-test's sweep; the first failing seed ends it.
const selfTestSeeds = 40

// selfTestCases pair each self-test with the workload that exercises it and the client-visible
// checker (and rule) that must catch it, first of all the checkers, with the ZAB checker off. A
// case fails if that checker is unwired: the sweep then finds nothing, or another class first.
var selfTestCases = []struct {
	name     string
	selfTest zabmodel.SelfTest
	workload string
	class    string
	rule     string // a rule among the failing result's findings; "" for any
	checker  checkers.LinearizabilityChecker
	// faults, if not nil, are the fault families of the sweep (nil: every family).
	faults []string
}{
	// The three linearizability models, each through the workload that uses it, by the zxid-order
	// checker (the default) and by porcupine.
	{"ack-failed-write/registers", zabmodel.SelfTestAckFailedWrite, "registers", checkers.CheckerZxidRegister, "", checkers.ZxidOrderChecker, nil},
	{"ack-failed-write/queue", zabmodel.SelfTestAckFailedWrite, "queue", checkers.CheckerZxidQueue, "", checkers.ZxidOrderChecker, nil},
	{"ack-failed-write/multi", zabmodel.SelfTestAckFailedWrite, "multi", checkers.CheckerZxidTree, "", checkers.ZxidOrderChecker, nil},
	{"ack-failed-write/registers/porcupine", zabmodel.SelfTestAckFailedWrite, "registers", checkers.CheckerRegister, "", checkers.PorcupineChecker, nil},
	{"ack-failed-write/queue/porcupine", zabmodel.SelfTestAckFailedWrite, "queue", checkers.CheckerQueue, "", checkers.PorcupineChecker, nil},
	{"ack-failed-write/multi/porcupine", zabmodel.SelfTestAckFailedWrite, "multi", checkers.CheckerTree, "", checkers.PorcupineChecker, nil},
	{"stale-read", zabmodel.SelfTestStaleRead, "registers", checkers.CheckerSequentialConsistency, "", checkers.ZxidOrderChecker, nil},
	{"early-sync", zabmodel.SelfTestEarlySync, "registers", checkers.CheckerSequentialConsistency, "read-after-sync", checkers.ZxidOrderChecker, nil},
	{"drop-watch", zabmodel.SelfTestDropWatch, "registers", checkers.CheckerWatches, "watch-before-data", checkers.ZxidOrderChecker, nil},
	{"no-session-renewal", zabmodel.SelfTestNoSessionRenewal, "registers", checkers.CheckerSessions, "wrongful-expiry", checkers.ZxidOrderChecker, nil},
	// Availability is judged only while a quorum is up and connected for longer than its bound
	// (51.2 s), which a 60 s fault phase full of faults seldom has: this sweep has no faults.
	{"hold-learners", zabmodel.SelfTestHoldLearners, "registers", CheckerAvailability, "leader-within-bound", checkers.ZxidOrderChecker, []string{}},
}

// TestSelfTestsAreCaughtByTheirCheckers proves the client-visible checkers' wiring end to end: each
// self-test breaks the server in a way no ZAB invariant sees, a sweep of its workload with the ZAB
// checker switched off must fail, the failure's class must be the expected checker, and the same
// seed must pass without the self-test.
func TestSelfTestsAreCaughtByTheirCheckers(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps several workloads")
	}
	for _, c := range selfTestCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			selfTests := zabmodel.SelfTests{}.With(c.selfTest)
			for seed := uint64(1); seed <= selfTestSeeds; seed++ {
				opts := Options{Seed: seed, Workload: c.workload, SelfTests: selfTests, NoZabChecker: true, Checker: c.checker, Faults: c.faults}
				rep, err := Run(opts)
				require.NoError(t, err)
				if !rep.Failed() {
					continue
				}
				require.Equal(t, c.class, rep.Failure(), "seed %d:\n%s", seed, rep.Explain())
				if c.rule != "" {
					assert.True(t, slices.ContainsFunc(rep.Checks.Findings(), func(f checkers.Finding) bool {
						return f.Checker == c.class && f.Rule == c.rule
					}), "seed %d: no %s finding of %s:\n%s", seed, c.rule, c.class, rep.Explain())
				}
				opts.SelfTests = zabmodel.SelfTests{}
				clean, err := Run(opts)
				require.NoError(t, err)
				require.False(t, clean.Failed(), "seed %d fails without the self-test:\n%s", seed, clean.Explain())
				t.Logf("caught at seed %d: %s", seed, rep.Failure())
				return
			}
			t.Fatalf("%d seeds of workload %s with self-test %s passed: %s is not wired in", selfTestSeeds,
				c.workload, selfTests, c.class)
		})
	}
}

// TestAnUndecidedLinearizabilityCheckFailsTheSeed: a check that runs out of time has no verdict,
// and a seed without a verdict is not a pass. A nanosecond is far too little for porcupine to
// decide thirty clients' history, so the verdict is Unknown on any machine.
func TestAnUndecidedLinearizabilityCheckFailsTheSeed(t *testing.T) {
	rep, err := Run(Options{Seed: 1, Workload: "registers", Clients: 30, CheckTimeLimit: time.Nanosecond, Checker: checkers.PorcupineChecker})
	require.NoError(t, err)
	assert.True(t, rep.Failed())
	assert.Equal(t, "unknown:"+checkers.CheckerRegister, rep.Failure(), rep.Explain())
}
