package scenarios

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
)

// baseHits runs the default exploration base of a seed and returns its crash point hits.
func baseHits(t *testing.T, seed uint64, script *Script) ([]CrashPointHit, *Report) {
	t.Helper()
	o, err := ExploreOptions{Seed: seed, Script: script}.withDefaults()
	require.NoError(t, err)
	var hits []CrashPointHit
	rep, err := Run(o.runOptions(o.Script, func(h CrashPointHit) { hits = append(hits, h) }))
	require.NoError(t, err)
	require.False(t, rep.Failed(), "seed %d: %s", seed, rep.Explain())
	return hits, rep
}

// TestEveryCrashPointIsReached keeps CrashPoints in step with zabmodel: every listed point is
// reached by some server in the default base, every point reached is listed, and no name is
// asked by hand in zabmodel's source.
func TestEveryCrashPointIsReached(t *testing.T) {
	hits, _ := baseHits(t, 1, nil)
	reached := map[string]int{}
	for _, h := range hits {
		assert.Contains(t, CrashPoints(), h.Point, "a point zabmodel reaches is missing from CrashPoints")
		reached[h.Point]++
	}
	// The writes of a SNAP or a TRUNC sync and of an observer's packets need a lagging learner or
	// an observer, which the default base lacks: a few seeds of the swarm reach them.
	for seed := uint64(1); seed <= 40 && slices.ContainsFunc(CrashPoints(), func(p string) bool { return reached[p] == 0 }); seed++ {
		_, err := Run(Options{Seed: seed, Observers: 1, OnCrashPoint: func(h CrashPointHit) { reached[h.Point]++ }})
		require.NoError(t, err)
	}
	for _, point := range CrashPoints() {
		assert.Positive(t, reached[point], "no server reached %s in the default base and 40 seeds of the swarm", point)
	}

	// Every boundary is derived from an effect by a driver (zabmodel's effectBoundaries, checked
	// against Boundaries by TestEveryBoundaryIsDerivedFromAnEffect): no protocol code names one by
	// hand any more, so a crashPoint call with a literal name, or a boundary effect, is a regression.
	files, err := filepath.Glob(filepath.Join("..", "zabmodel", "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	literal := regexp.MustCompile(`(?:crashPoint\(|boundary\(|kind: effectBoundary, label: )"([^"]+)"`)
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		source, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range literal.FindAllStringSubmatch(string(source), -1) {
			assert.Fail(t, "a boundary named by hand", "%s asks boundary %q by name instead of deriving it from an effect", file, m[1])
		}
	}
}

// TestObservingCrashPointsDoesNotChangeTheRun runs a seed with and without the observer: the same
// trace hash and the same number of events.
func TestObservingCrashPointsDoesNotChangeTheRun(t *testing.T) {
	o, err := ExploreOptions{Seed: 7}.withDefaults()
	require.NoError(t, err)
	plain, err := Run(o.runOptions(o.Script, nil))
	require.NoError(t, err)
	hits := 0
	observed, err := Run(o.runOptions(o.Script, func(CrashPointHit) { hits++ }))
	require.NoError(t, err)
	require.Positive(t, hits)
	assert.Equal(t, plain.Outcome.TraceHash, observed.Outcome.TraceHash)
	assert.Equal(t, plain.Stats, observed.Stats)
}

// TestCrashpointCrashesAtTheNthHitAndRestarts arms zk1 to die at its third log-appended hit and to
// start again 1 s later: the crash comes exactly where the base run reached that hit, zk1 reaches
// no crash point while it is down, and it is back (reaching crash points, and in the trace) after.
func TestCrashpointCrashesAtTheNthHitAndRestarts(t *testing.T) {
	const seed = 3
	base := DefaultExploreScript()
	hits, _ := baseHits(t, seed, base)
	var third *CrashPointHit
	count := 0
	for i, h := range hits {
		if h.Sid == 1 && h.Point == "log-appended" {
			if count++; count == 3 {
				third = &hits[i]
				break
			}
		}
	}
	require.NotNil(t, third, "seed %d: zk1 reached log-appended fewer than 3 times", seed)

	script := cloneScript(base)
	script.Actions = append([]Action{{At: 0, Verb: "crashpoint", Args: []string{"zk1", "log-appended", "3", "restart", "1s"}}}, script.Actions...)
	var trace bytes.Buffer
	var after []CrashPointHit
	var crash *CrashPointHit
	rep, err := Run(Options{Seed: seed, Script: script, Duration: script.Duration, Clients: script.Clients,
		Trace: sim.TraceConfig{Text: &trace},
		OnCrashPoint: func(h CrashPointHit) {
			if h.Crashed {
				crash = &h
			} else if crash != nil && h.Sid == 1 {
				after = append(after, h)
			}
		}})
	require.NoError(t, err)
	require.False(t, rep.Failed(), rep.Explain())
	require.NotNil(t, crash, "seed %d: zk1 never crashed", seed)
	assert.Equal(t, *third, CrashPointHit{Sid: crash.Sid, Point: crash.Point, At: crash.At}, "the crash lands on the third hit")
	require.NotEmpty(t, after, "seed %d: zk1 reached no crash point after its restart", seed)
	assert.GreaterOrEqual(t, after[0].At, crash.At.Add(clock.Second), "zk1 is down for the restart delay")
	assert.Contains(t, trace.String(), "crash at log-appended")
	assert.Contains(t, trace.String(), "restart zk1, 1s after its crash point")
}

// testPool is the worker pool a caller outside the simulation gives Explore: one goroutine per
// core, each running whole worlds.
func testPool(jobs int, run func(job int)) {
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range work {
				run(job)
			}
		}()
	}
	for job := range jobs {
		work <- job
	}
	close(work)
	wg.Wait()
}

// TestExploreWithoutBugsPasses explores an evenly spaced sample of the default base's hits of
// every point with no bug: every crash lands at its hit and every run passes; the sample says that
// it is one. Run serially and in parallel, the results are the same.
func TestExploreWithoutBugsPasses(t *testing.T) {
	maxRuns := 100
	if testing.Short() {
		maxRuns = 12
	}
	res, err := Explore(ExploreOptions{Seed: 1, MaxRuns: maxRuns, Execute: testPool})
	require.NoError(t, err)
	require.Empty(t, res.BaseFailure, res.BaseExplanation)
	for _, run := range res.Failures() {
		t.Errorf("seed %d, crash at %s: %s\n%s\nscript:\n%s", run.Seed, run.Hit, run.Class, run.Explanation, run.Script)
	}
	assert.True(t, res.Passed())
	assert.Equal(t, len(res.Hits), res.Candidates, "every point is explored by default")
	assert.Greater(t, res.Candidates, maxRuns, "the default base has more hits than this test explores")
	assert.False(t, res.Exhaustive)
	assert.Equal(t, maxRuns, res.Explored)
	require.Len(t, res.Runs, maxRuns)
	assert.InDelta(t, float64(res.Candidates)/float64(maxRuns), res.Stride, 1e-9)
	points := map[string]bool{}
	for i, run := range res.Runs {
		assert.True(t, run.Landed, run.Hit.String())
		assert.Equal(t, run.Hit.At, run.CrashedAt, "the crash at %s happened at the base run's time of the hit", run.Hit)
		assert.Equal(t, res.Hits[i*res.Candidates/maxRuns], run.Hit, "run %d explores the evenly spaced hit", i)
		points[run.Hit.Point] = true
	}
	assert.GreaterOrEqual(t, len(points), 3, "an evenly spaced sample reaches several points")

	serial, err := Explore(ExploreOptions{Seed: 1, MaxRuns: maxRuns})
	require.NoError(t, err)
	assert.Equal(t, res.Runs, serial.Runs, "a worker pool does not change what was explored or found")
}

// TestExploredCrashesLandAtTheirHits checks the explorer's aim independently of its own check: a
// sample of explored scripts, replayed by Run with an observer, crash their server at the point,
// occurrence and virtual time of the base run's hit.
func TestExploredCrashesLandAtTheirHits(t *testing.T) {
	const seed = 5
	hits, _ := baseHits(t, seed, nil)
	explored := numberHits(hits)
	// The default base reaches hundreds of crash points; with none the loop below would check
	// nothing and pass.
	require.GreaterOrEqual(t, len(explored), 10, "seed %d's base run reached too few crash points to test", seed)
	step := max(1, len(explored)/10)
	tried := 0
	for i := 0; i < len(explored); i += step {
		tried++
		hit := explored[i]
		script := CrashScript(DefaultExploreScript(), hit, 2*clock.Second)
		reparsed, err := ParseScript(strings.NewReader(script.String()))
		require.NoError(t, err, script.String())
		require.Equal(t, "crashpoint", reparsed.Actions[0].Verb, "the crash action comes first")
		var crashes []CrashPointHit
		rep, err := Run(Options{Seed: seed, Script: reparsed, Duration: reparsed.Duration, Clients: reparsed.Clients,
			OnCrashPoint: func(h CrashPointHit) {
				if h.Crashed {
					crashes = append(crashes, h)
				}
			}})
		require.NoError(t, err)
		require.Len(t, crashes, 1, "seed %d, %s", seed, hit)
		assert.Equal(t, CrashPointHit{Sid: hit.Sid, Point: hit.Point, At: hit.At, Crashed: true}, crashes[0], "seed %d", seed)
		assert.False(t, rep.Failed(), "seed %d, %s: %s", seed, hit, rep.Explain())
	}
	assert.GreaterOrEqual(t, tried, 10, "crashes rerun")
}

// TestExploreFindsEpochBugsAtTheirCrashPoints: with a bug that a crash between two persistence
// steps exposes, exploring the relevant points finds a failing crash deterministically, and the
// same crash passes without the bug.
func TestExploreFindsEpochBugsAtTheirCrashPoints(t *testing.T) {
	cases := []struct {
		bug    zabmodel.Bug
		points []string
	}{
		{zabmodel.BugZK1653, []string{"epoch-file-renamed:currentEpoch"}},
		{zabmodel.BugEpochRefusal, []string{"newleader-before-epoch"}},
	}
	for _, c := range cases {
		bugs := zabmodel.Bugs{}.With(c.bug)
		t.Run(bugs.String(), func(t *testing.T) {
			res, err := Explore(ExploreOptions{Seed: 1, Bugs: bugs, Points: c.points, Execute: testPool})
			require.NoError(t, err)
			require.Empty(t, res.BaseFailure, "the base passes without a crash, even with the bug")
			assert.True(t, res.Exhaustive)
			assert.Equal(t, res.Candidates, res.Explored)
			failures := res.Failures()
			require.NotEmpty(t, failures, "no explored crash found %s", bugs)
			assert.False(t, res.Passed())
			for _, f := range failures {
				assert.Contains(t, c.points, f.Hit.Point)
				assert.True(t, f.Landed, f.Hit.String())
				assert.NotEqual(t, ClassMisplaced, f.Class)
			}
			again, err := Explore(ExploreOptions{Seed: 1, Bugs: bugs, Points: c.points})
			require.NoError(t, err)
			assert.Equal(t, res.Runs, again.Runs, "exploration is deterministic")

			first := failures[0]
			rep, err := Run(Options{Seed: first.Seed, Script: first.Script, Duration: first.Script.Duration,
				Clients: first.Script.Clients, Bugs: bugs})
			require.NoError(t, err)
			assert.Equal(t, first.Class, rep.Failure(), "the failing script replays to the same failure")
			// Both bugs leave a server that refuses to start: only the convergence check sees it.
			assert.Equal(t, CheckerConvergence, rep.Failure())
			assert.Regexp(t, `server \d exited: the current epoch, \d+, is older than the last zxid`, rep.Explain())
			fixed, err := Run(Options{Seed: first.Seed, Script: first.Script, Duration: first.Script.Duration,
				Clients: first.Script.Clients})
			require.NoError(t, err)
			assert.False(t, fixed.Failed(), "the same crash without %s: %s", bugs, fixed.Explain())
		})
	}
}

// TestExploreReportsAFailingBase: a bug that fails the base run by itself is reported as such, and
// no crash is blamed for it.
func TestExploreReportsAFailingBase(t *testing.T) {
	res, err := Explore(ExploreOptions{Seed: 1, Bugs: zabmodel.Bugs{}.With(zabmodel.BugZK4643)})
	require.NoError(t, err)
	require.NotEmpty(t, res.BaseFailure, "seed 1: ZK-4643 no longer fails the default base by itself; pick another bug for this test")
	assert.NotEmpty(t, res.BaseExplanation)
	assert.Empty(t, res.Runs)
	assert.False(t, res.Passed())
}

func TestExploreSelectsEvenlySpacedHits(t *testing.T) {
	res := &ExploreResult{}
	for i := range 10 {
		res.Hits = append(res.Hits, ExploreHit{Sid: 1, Point: "log-appended", Occurrence: i + 1})
		res.Hits = append(res.Hits, ExploreHit{Sid: 2, Point: "fsynced-before-ack", Occurrence: i + 1})
	}
	selected := res.selectHits([]string{"log-appended"}, 4)
	occurrences := []int{}
	for _, h := range selected {
		assert.Equal(t, "log-appended", h.Point)
		occurrences = append(occurrences, h.Occurrence)
	}
	assert.Equal(t, []int{1, 3, 6, 8}, occurrences)
	assert.Equal(t, 10, res.Candidates)
	assert.Equal(t, 4, res.Explored)
	assert.False(t, res.Exhaustive)
	assert.InDelta(t, 2.5, res.Stride, 1e-9)

	all := res.selectHits([]string{"log-appended", "fsynced-before-ack"}, 20)
	assert.Len(t, all, 20)
	assert.True(t, res.Exhaustive)
	assert.Equal(t, 20, res.Explored)
	counts := res.HitsByPoint()
	require.Len(t, counts, len(CrashPoints()))
	assert.Equal(t, []PointCount{{"epoch-file-renamed:acceptedEpoch", 0}, {"epoch-file-renamed:currentEpoch", 0},
		{"newleader-appended", 0}, {"newleader-before-epoch", 0}, {"log-appended", 10}, {"fsynced-before-ack", 10}}, counts[:6])
	for _, c := range counts[6:] {
		assert.Zero(t, c.Hits, c.Point)
	}
}

func TestExploreRefusesBadOptions(t *testing.T) {
	cases := []struct {
		opts ExploreOptions
		msg  string
	}{
		{ExploreOptions{Points: []string{"log-appended", "nowhere"}}, `unknown crash point "nowhere"`},
		{ExploreOptions{MaxRuns: -1}, "max runs must be 1 to 1000000, not -1"},
		{ExploreOptions{RestartAfter: -clock.Second}, "restart-after -1s must be between 0 and 1h"},
		{ExploreOptions{Script: &Script{}}, "the base script sets no servers"},
	}
	for _, c := range cases {
		_, err := Explore(c.opts)
		require.Error(t, err, c.msg)
		assert.ErrorIs(t, err, ErrOptions)
		assert.Contains(t, err.Error(), c.msg)
	}
}

// TestExploreReportsACrashThatMissesItsHit aims runs at hits the base never had: a wrong time and
// an occurrence past the last. Each is reported as misplaced, never as a pass.
func TestExploreReportsACrashThatMissesItsHit(t *testing.T) {
	o, err := ExploreOptions{Seed: 2}.withDefaults()
	require.NoError(t, err)
	hits, _ := baseHits(t, 2, nil)
	aimed := numberHits(hits)[0]

	wrongTime := aimed
	wrongTime.At = aimed.At.Add(clock.Millisecond)
	run, err := o.exploreHit(wrongTime)
	require.NoError(t, err)
	assert.False(t, run.Landed)
	assert.Equal(t, aimed.At, run.CrashedAt, "the crash came at the real hit")
	assert.Equal(t, ClassMisplaced, run.Class)
	assert.True(t, run.Failed())
	assert.Contains(t, run.Explanation, "explorer: the crash was aimed at "+wrongTime.String())

	never := aimed
	never.Occurrence = 1_000_000
	run, err = o.exploreHit(never)
	require.NoError(t, err)
	assert.Equal(t, clock.Never, run.CrashedAt)
	assert.Equal(t, ClassMisplaced, run.Class)
	assert.Contains(t, run.Explanation, fmt.Sprintf("zk%d reached %s only ", aimed.Sid, aimed.Point))

	run, err = o.exploreHit(aimed)
	require.NoError(t, err)
	assert.True(t, run.Landed, run.Explanation)
	assert.False(t, run.Failed(), run.Explanation)
}

// TestCrashpointsOnOneServerEachCrashIt arms zk1 twice, at two points: each action crashes it
// once (the second after the restart the first scheduled), neither replaces the other.
func TestCrashpointsOnOneServerEachCrashIt(t *testing.T) {
	script := DefaultExploreScript()
	script.Actions = append([]Action{
		{At: 0, Verb: "crashpoint", Args: []string{"zk1", "log-appended", "2", "restart", "1s"}},
		{At: 0, Verb: "crashpoint", Args: []string{"zk1", "fsynced-before-ack", "40", "restart", "1s"}},
	}, script.Actions...)
	var crashes []CrashPointHit
	rep, err := Run(Options{Seed: 4, Script: script, Duration: script.Duration, Clients: script.Clients,
		OnCrashPoint: func(h CrashPointHit) {
			if h.Crashed {
				crashes = append(crashes, h)
			}
		}})
	require.NoError(t, err)
	assert.False(t, rep.Failed(), rep.Explain())
	require.Len(t, crashes, 2, "seed 4: %v", crashes)
	assert.Equal(t, []string{"log-appended", "fsynced-before-ack"}, []string{crashes[0].Point, crashes[1].Point})
	assert.Equal(t, []int64{1, 1}, []int64{crashes[0].Sid, crashes[1].Sid})
	assert.GreaterOrEqual(t, crashes[1].At, crashes[0].At.Add(clock.Second), "the second crash comes after the first one's restart")
}

// TestExploreABaseThatArmsItsOwnCrashPoint explores a named script whose base crashes zk1 inside
// NEWLEADER by itself: the explorer's crashes come beside the base's, every one lands at its hit,
// and every run passes.
func TestExploreABaseThatArmsItsOwnCrashPoint(t *testing.T) {
	maxRuns := 40
	if testing.Short() {
		maxRuns = 10
	}
	res, err := Explore(ExploreOptions{Seed: 1, Script: namedScript(t, "crash-inside-newleader"), MaxRuns: maxRuns, Execute: testPool})
	require.NoError(t, err)
	require.Empty(t, res.BaseFailure, res.BaseExplanation)
	own := 0
	for _, h := range res.Hits {
		if h.Sid == 1 && h.Point == "newleader-before-epoch" {
			own++
		}
	}
	require.Positive(t, own, "the base reaches its own crash point")
	for _, run := range res.Failures() {
		t.Errorf("seed 1, crash at %s: %s\n%s", run.Hit, run.Class, run.Explanation)
	}
	assert.Len(t, res.Runs, maxRuns)
}
