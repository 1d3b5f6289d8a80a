package report_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/internal/report"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/zabmodel"
)

// sweepOptions are simrun run's defaults: every fault family, the cluster drawn from the seed.
func sweepOptions(seed uint64) scenarios.Options {
	return scenarios.Options{Seed: seed, Observers: -1, Clients: scenarios.DefaultClients, Faults: scenarios.FaultFamilies,
		Duration: scenarios.DefaultDuration, LivenessBound: scenarios.DefaultLivenessBound}
}

// zabFailure is seed 26 with ZK-3911: ProcessConsistency at 22.455978 s between server 4 and
// leader 5 over the leader's proposal 0x1:0x45, which the leader sends zk4 in its sync after zk4's
// restart, when server 4 persists currentEpoch 1 before the proposal is durable. The seed still
// fails so since a leader's learner-handler reads became steps of their own thread, a quarter of
// the handler threads wake late and snapshot walks stall, which moved the evidence (servers 4
// and 3 and 0x1:0x42 before; server 4 and 0x1:0x4d until snapshots became fuzzy and moved the
// seed's draws, 0x1:0x44 until the threads a leader's notifyAll wakes ran in a drawn order,
// servers 3 and 5 and 0x1:0x48 until a learner handler's reads became steps of their own).
func zabFailure(t testing.TB) scenarios.Options {
	bugs, err := zabmodel.ParseBugs("ZK-3911")
	require.NoError(t, err)
	opts := sweepOptions(26)
	opts.Bugs = bugs
	return opts
}

// lockFailure is seed 56 of the lock workload with lock-no-fencing: two clients use the resource
// under the lock at once; c1's session ends and its lock node (created by 0x3:0x2, its token) is
// deleted, c5 takes the lock, and c1 still acts on the resource. It was re-pinned when the swarm
// drew disk stalls: of seeds 1 to 1,000 ('simrun run --workload lock --bug lock-no-fencing'), the
// first that fails so with five voters and two observers, as the Chromium test expects (seed 416
// until disk stalls, seed 16 until the lock workloads drew Curator's timeouts, issue #21, seed 11
// until the swarm drew fault times at a nanosecond and BUGGIFY injections, issue #15, seed 1 until
// the recipes retried as Curator does, seed 12 until a learner handler's reads became steps of
// their own, and seed 45 until the handler threads' steps and stalled walks).
func lockFailure(t testing.TB) scenarios.Options {
	bugs, err := lockmodel.ParseBugs("lock-no-fencing")
	require.NoError(t, err)
	opts := sweepOptions(56)
	opts.Workload, opts.RecipeBugs = "lock", bugs
	return opts
}

// render runs opts with a recorder attached and renders the report; fail, if set, edits the
// verdict before it is drawn.
func render(t testing.TB, opts scenarios.Options, fail func(*scenarios.Report)) (string, *scenarios.Report) {
	recorder := report.NewRecorder()
	recorder.Attach(&opts)
	run, err := scenarios.Run(opts)
	require.NoError(t, err)
	if fail != nil {
		fail(run)
	}
	var page bytes.Buffer
	require.NoError(t, report.Write(&page, recorder, run, report.Meta{Replay: "simrun replay --seed 1", Build: "test build",
		Visualizations: []string{"porcupine-register-root.html"}}))
	return page.String(), run
}

func TestRecordingDoesNotChangeTheRun(t *testing.T) {
	for _, opts := range []scenarios.Options{zabFailure(t), lockFailure(t)} {
		plain, err := scenarios.Run(opts)
		require.NoError(t, err)
		_, watched := render(t, opts, nil)
		assert.Equal(t, plain.Outcome.TraceHash, watched.Outcome.TraceHash, "seed %d", opts.Seed)
	}
}

func TestZabViolationReportShowsTheEvidence(t *testing.T) {
	page, run := render(t, zabFailure(t), nil)
	require.Equal(t, "zab:ProcessConsistency", run.Failure())
	assert.Contains(t, page, "seed 26")
	assert.Contains(t, page, "zab:ProcessConsistency")
	assert.Contains(t, page, "simrun replay --seed 1", "the replay command")
	assert.Contains(t, page, "test build")
	assert.Contains(t, page, "<th>servers</th><td>zk4, zk5</td>")
	assert.Contains(t, page, "<th>zxids</th><td>0x1:0x45</td>")
	assert.Contains(t, page, `id="violation-mark"`)
	// A server lane per server and a client lane per client.
	assert.Equal(t, 6, strings.Count(page, `class="lane server-lane"`), "5 voters and 1 observer")
	assert.Equal(t, 5, strings.Count(page, `class="lane client-lane"`))
	// The proposal the violation cites is in the message data, flagged as cited.
	assert.True(t, regexp.MustCompile(`\[4,3,\d+,\d+,"PROPOSAL 0x1:0x45 create2",1\]`).MatchString(page),
		"the proposal from zk5 (lane 4) to zk4 (lane 3) is cited")
	assert.Contains(t, page, "No client-visible check ran")
	// Every script action is listed, and the ones that acted link to their moment.
	assert.True(t, regexp.MustCompile(`id="action-0"[^>]*><code>at 2.191659434s stall leader 170ms</code>`).MatchString(page), "the first script line")
	assert.True(t, regexp.MustCompile(`id="action-1"[^>]*><code>at 2.2203474s kill c4</code>`).MatchString(page), "the second script line")
	assert.Contains(t, page, `data-time="7220347400"`)
}

func TestLockViolationReportCitesTheClients(t *testing.T) {
	page, run := render(t, lockFailure(t), nil)
	require.Equal(t, "lock/unsafe-without-fencing", run.Failure())
	assert.Contains(t, page, "<th>clients</th><td>c1, c5</td>")
	assert.Contains(t, page, `lane-label cited-lane" x="4"`, "the cited clients' lanes are marked")
	assert.True(t, strings.Contains(page, `class="cited cited-time"`), "the cited moments are marked on the clients' lanes")
	assert.True(t, regexp.MustCompile(`"PROPOSAL 0x3:0x2 create2",1\]`).MatchString(page), "the create of the stale holder's lock node (its token) is cited")
	assert.True(t, strings.Contains(page, `<tr class="failed"><td>lock/unsafe-without-fencing</td>`), "the failed check is marked")
}

// failRegister turns a run's verdict into a failed register linearizability check.
func failRegister(run *scenarios.Report) {
	run.Checks.Results = append([]checkers.Result{{Checker: checkers.CheckerRegister, Status: checkers.Violation,
		Summary: "made to fail by the test"}}, run.Checks.Results...)
}

func TestLinearizabilityReportLinksPorcupine(t *testing.T) {
	opts := sweepOptions(2)
	opts.Workload = "registers"
	page, _ := render(t, opts, failRegister)
	assert.Contains(t, page, `<a class="porcupine" href="porcupine-register-root.html">`)
	assert.Contains(t, page, "made to fail by the test")
}

func TestWriteRefusesARecorderThatSawNoRun(t *testing.T) {
	err := report.Write(&bytes.Buffer{}, report.NewRecorder(), &scenarios.Report{}, report.Meta{})
	assert.ErrorContains(t, err, "saw no run")
}

// TestDiskStallsAreBands: a disk stall (the script's stall action, as the server noted it) is a
// band on the stalled server's lane for as long as it lasts, with its own key in the legend.
func TestDiskStallsAreBands(t *testing.T) {
	script, err := scenarios.ParseScript(strings.NewReader("servers 3\nobservers 0\nclients 2\nworkload registers\nduration 10s\nat 2s stall zk2 3s\n"))
	require.NoError(t, err)
	page, run := render(t, scenarios.Options{Seed: 1, Script: script}, nil)
	require.False(t, run.Failed(), run.Explain())
	assert.Regexp(t, `<rect class="band band-stall" [^>]*><title>zk2&#39;s disk stalled, 7\.0+ s to 10\.0+ s</title></rect>`, page)
	assert.Equal(t, 1, strings.Count(page, `class="band band-stall"`), "one stall, one band")
	assert.Contains(t, page, `<span class="key band-stall"></span>disk stalled`)
}
