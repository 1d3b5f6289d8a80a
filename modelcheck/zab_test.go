package modelcheck

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/zabmodel"
)

// TestZABFindsZK1277: with the counter near its top, the leader of the bug zoo's ZK-1277 proposes
// the zxid whose counter is 0xffffffff four steps after the warm-up; the correct leader, under
// the same bounds, does not.
func TestZABFindsZK1277(t *testing.T) {
	m, r, ok := checkZK1277(t, 3)
	assert.Len(t, r.Path, 4, "write, the request to the server, its forward to the leader, the leader's learner handler reading it")

	var buf bytes.Buffer
	require.NoError(t, (&Counterexample{Model: m, Path: r.Path, Violation: r.Violation}).Write(&buf))
	back, err := ReadCounterexample(&buf)
	require.NoError(t, err)
	var trace bytes.Buffer
	v, err := Replay(back.Model, back.Path, &trace)
	require.NoError(t, err)
	require.NotNil(t, v)
	assert.Equal(t, r.Violation.Explanation, v.Explanation, "the replay ends in the same violation")
	assert.Contains(t, trace.String(), "PROPOSAL", "the replay renders the simulator's trace")
	assert.Greater(t, ok.Distinct, r.Distinct)
}

// checkZK1277 explores an ensemble of the given size with the counter near its top, with ZK-1277
// switched on (which must violate LocalPrimaryOrder) and, within five steps, without it (which
// must not). It returns the buggy model, its result and the correct build's result.
func checkZK1277(t *testing.T, servers int) (*ZABModel, Result, Result) {
	t.Helper()
	cfg := ZABConfig{Servers: servers, Writes: 1, Warmup: true, ZxidCounter: 0xfffffffd, Bugs: zabmodel.Bugs{}.With(zabmodel.BugZK1277)}
	m, err := NewZAB(cfg)
	require.NoError(t, err)
	r, err := Check(context.Background(), m, Options{})
	require.NoError(t, err)
	require.NotNil(t, r.Violation, "%d servers", servers)
	assert.Equal(t, "LocalPrimaryOrder", r.Violation.Invariant, "%d servers", servers)

	cfg.Bugs = zabmodel.Bugs{}
	correct, err := NewZAB(cfg)
	require.NoError(t, err)
	ok, err := Check(context.Background(), correct, Options{MaxDepth: 5})
	require.NoError(t, err)
	assert.Nil(t, ok.Violation, "%d servers", servers)
	return m, r, ok
}

// TestZABFingerprintCommutes: two due deliveries to different nodes, taken in either order, reach
// one fingerprint; taking only one of them is another state.
func TestZABFingerprintCommutes(t *testing.T) {
	m, err := NewZAB(ZABConfig{Servers: 3, Writes: 1, Warmup: true})
	require.NoError(t, err)
	init, err := m.Init()
	require.NoError(t, err)
	// The write, then its request reaches a server, which forwards it to the leader and answers
	// nothing yet: find two due events for different nodes after the first steps.
	s := init
	var first, second string
	for depth := 0; depth < 6 && second == ""; depth++ {
		zs := s.(*zabState)
		nodes := map[string]string{}
		for i, a := range zs.actions {
			if a.zabKind() != zabFire {
				continue
			}
			detail := zs.lines[2*i+1]
			node := detail[:3]
			for other, d := range nodes {
				if other != node && first == "" {
					first, second = d, detail
				}
			}
			nodes[node] = detail
		}
		if second != "" {
			break
		}
		s, err = s.Step(zs.actions[0])
		require.NoError(t, err)
	}
	require.NotEmpty(t, second, "two due events for different nodes")
	take := func(s State, detail string) State {
		zs := s.(*zabState)
		for i, a := range zs.actions {
			if zs.lines[2*i+1] == detail {
				next, err := s.Step(a)
				require.NoError(t, err)
				return next
			}
		}
		require.Failf(t, "not enabled", "%s", detail)
		return nil
	}
	ab := take(take(s, first), second)
	ba := take(take(s, second), first)
	assert.Equal(t, ab.Fingerprint(), ba.Fingerprint(), "%s and %s commute", first, second)
	assert.NotEqual(t, ab.Fingerprint(), take(s, first).Fingerprint())
	assert.NotEqual(t, s.Fingerprint(), take(s, first).Fingerprint())
}

// TestZABCommutingReductionKeepsVerdicts: with and without the merging of commuting deliveries,
// the correct ensemble passes the same bounds completely and ZK-1277 is found in the same four
// steps; the reduction only saves states.
func TestZABCommutingReductionKeepsVerdicts(t *testing.T) {
	counts := map[bool]int64{}
	for _, noCommute := range []bool{false, true} {
		m, err := NewZAB(ZABConfig{Servers: 3, Writes: 1, Timers: 1, Warmup: true, NoCommute: noCommute})
		require.NoError(t, err)
		r, err := Check(context.Background(), m, Options{})
		require.NoError(t, err)
		assert.Nil(t, r.Violation, "no-commute=%v", noCommute)
		assert.True(t, r.Complete, "no-commute=%v", noCommute)
		counts[noCommute] = r.Distinct

		bug, err := NewZAB(ZABConfig{Servers: 3, Writes: 1, Warmup: true, ZxidCounter: 0xfffffffd,
			Bugs: zabmodel.Bugs{}.With(zabmodel.BugZK1277), NoCommute: noCommute})
		require.NoError(t, err)
		found, err := Check(context.Background(), bug, Options{})
		require.NoError(t, err)
		require.NotNil(t, found.Violation, "no-commute=%v", noCommute)
		assert.Len(t, found.Path, 4, "no-commute=%v", noCommute)
	}
	t.Logf("distinct states: %d with the reduction, %d without", counts[false], counts[true])
	assert.Less(t, counts[false], counts[true])
}

// TestZABWorkersAgree: two workers build and step worlds concurrently and count the same states
// as one.
func TestZABWorkersAgree(t *testing.T) {
	m, err := NewZAB(ZABConfig{Servers: 3, Writes: 1, Timers: 2, Warmup: true})
	require.NoError(t, err)
	one, err := Check(context.Background(), m, Options{})
	require.NoError(t, err)
	two, err := Check(context.Background(), m, Options{Workers: 2})
	require.NoError(t, err)
	assert.True(t, one.Complete)
	assert.Equal(t, one.Distinct, two.Distinct)
	assert.Equal(t, one.Generated, two.Generated)
	assert.Equal(t, one.Terminal, two.Terminal)
}

// zk4394Path is the counterexample `simrun check --model zab --coarse --bug ZK-4394 --writes 1
// --crashes 1 --restarts 1 --timers 10 --boundary-skips 2` found breadth-first (9 steps, 8,462
// distinct states): a write, zk1 crashes and restarts, and the leader's COMMIT reaches zk1
// between NEWLEADER and UPTODATE.
const zk4394Path = `model zab
servers 3
writes 1
crashes 1
restarts 1
early-timeouts 0
timers 10
bugs ZK-4394
warmup true
no-commute false
zxid-counter 0x0
coarse true
boundary-skips 2
step fire 14
step write
step crash zk1
step restart zk1
step fire 29
step fire 29
step fire 29
step fire 21
step fire 26
violation panic
`

// TestZABCoarseCounterexampleReplays: the coarse search's ZK-4394 counterexample replays from its
// file to the null dereference, and the same steps on the correct build violate nothing.
func TestZABCoarseCounterexampleReplays(t *testing.T) {
	cx, err := ReadCounterexample(strings.NewReader(zk4394Path))
	require.NoError(t, err)
	var trace bytes.Buffer
	v, err := Replay(cx.Model, cx.Path, &trace)
	require.NoError(t, err)
	require.NotNil(t, v)
	assert.Equal(t, "panic", v.Invariant)
	assert.Contains(t, v.Explanation, "between NEWLEADER and UPTODATE with no pending proposal")
	assert.Contains(t, trace.String(), "due: ", "the replay shows the due events each coarse step ran")

	cfg := cx.Model.(*ZABModel).cfg
	cfg.Bugs = zabmodel.Bugs{}
	correct, err := NewZAB(cfg)
	require.NoError(t, err)
	v, err = Replay(correct, cx.Path, io.Discard)
	require.NoError(t, err)
	assert.Nil(t, v, "the correct build takes the same steps without a violation")
}

// TestZABCoarse: the coarse granularity explores a small configuration completely without a
// violation on the correct build, in far fewer states than the full interleavings, and still
// finds ZK-1277, now in one step (the write, whose due events carry the request to the leader).
func TestZABCoarse(t *testing.T) {
	cfg := ZABConfig{Servers: 3, Writes: 1, Timers: 1, Warmup: true, Coarse: true}
	m, err := NewZAB(cfg)
	require.NoError(t, err)
	r, err := Check(context.Background(), m, Options{})
	require.NoError(t, err)
	assert.Nil(t, r.Violation)
	assert.True(t, r.Complete)
	cfg.Coarse = false
	fine, err := NewZAB(cfg)
	require.NoError(t, err)
	full, err := Check(context.Background(), fine, Options{})
	require.NoError(t, err)
	assert.Less(t, r.Distinct, full.Distinct)

	bug, err := NewZAB(ZABConfig{Servers: 3, Writes: 1, Warmup: true, Coarse: true, ZxidCounter: 0xfffffffd,
		Bugs: zabmodel.Bugs{}.With(zabmodel.BugZK1277)})
	require.NoError(t, err)
	found, err := Check(context.Background(), bug, Options{})
	require.NoError(t, err)
	require.NotNil(t, found.Violation)
	assert.Equal(t, "LocalPrimaryOrder", found.Violation.Invariant)
	assert.Len(t, found.Path, 1)
	t.Logf("coarse: %d states (full: %d); ZK-1277 in %d steps", r.Distinct, full.Distinct, len(found.Path))
}

// TestZABBoundarySkipsRoundTrip: an armed crash that skips boundaries is written and read back,
// and bad skips are rejected.
func TestZABBoundarySkipsRoundTrip(t *testing.T) {
	m, err := NewZAB(ZABConfig{Servers: 3, Crashes: 1, BoundarySkips: 2})
	require.NoError(t, err)
	for _, line := range []string{"crash-at-boundary zk2", "crash-at-boundary zk3 +2"} {
		a, err := m.ParseAction(line)
		require.NoError(t, err)
		got, _ := m.Describe(nil, a)
		assert.Equal(t, line, got)
	}
	for _, line := range []string{"crash-at-boundary zk2 2", "crash-at-boundary zk2 +x", "crash zk2 +1"} {
		_, err := m.ParseAction(line)
		assert.Error(t, err, line)
	}
	_, err = NewZAB(ZABConfig{Servers: 3, BoundarySkips: -1})
	assert.Error(t, err)
}

// TestSettingsReportTheFirstBadKeyInOrder shows that of several bad settings a counterexample file
// names, the error is always about the same one (the first in sorted order), whatever order Go's
// map iteration takes.
func TestSettingsReportTheFirstBadKeyInOrder(t *testing.T) {
	for range 20 {
		_, err := zabFromSettings(map[string]string{"writes": "x", "coarse": "maybe", "timers": "y"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "coarse:")
		_, err = fleFromSettings(map[string]string{"timeouts": "x", "crashes": "y", "servers": "z"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "crashes:")
	}
}

// TestZABReuseKeepsResults: stepping in a live world and firing the recorded warm-up prefix
// reach exactly the states a re-execution from scratch reaches. A walk of the coarse model with
// crashes and restarts compares each state built in place with the same path re-executed, and
// complete searches count the same states both ways, breadth- and depth-first.
func TestZABReuseKeepsResults(t *testing.T) {
	// Without copies, which replace the recorded warm-up (copy_test.go tests them).
	cfg := ZABConfig{Servers: 3, Writes: 1, Crashes: 1, Restarts: 1, Timers: 6, Warmup: true, Coarse: true, BoundarySkips: 1, NoCopy: true}
	m, err := NewZAB(cfg)
	require.NoError(t, err)
	m.summaries = true // compared below
	s, err := m.Init()
	require.NoError(t, err)
	for step := 0; ; step++ {
		actions, _ := s.Actions(nil)
		if len(actions) == 0 {
			break
		}
		// The last action: after the first steps that is a crash or a restart when one is left.
		next, err := s.Step(actions[len(actions)-1])
		require.NoError(t, err)
		fresh, err := m.replay(next.(*zabState).path, nil)
		require.NoError(t, err)
		want := m.stateOf(next.(*zabState).path, fresh)
		assert.Equal(t, want.fp, next.Fingerprint(), "step %d", step)
		require.NotEmpty(t, want.summary)
		assert.Equal(t, want.summary, next.(*zabState).summary, "step %d", step)
		assert.Equal(t, want.lines, next.(*zabState).lines, "step %d", step)
		s = next
	}
	assert.Positive(t, m.inPlace.Load(), "the walk stepped in place")
	assert.Positive(t, m.warmReplays.Load(), "later builds fired the recorded warm-up")

	small := ZABConfig{Servers: 3, Writes: 1, Timers: 2, Warmup: true}
	for _, strategy := range []Strategy{BFS, DFS} {
		results := map[bool]Result{}
		for _, noReuse := range []bool{false, true} {
			c := small
			c.NoReuse = noReuse
			m, err := NewZAB(c)
			require.NoError(t, err)
			r, err := Check(context.Background(), m, Options{Strategy: strategy})
			require.NoError(t, err)
			require.True(t, r.Complete)
			results[noReuse] = r
			if noReuse {
				assert.Zero(t, m.inPlace.Load()+m.warmReplays.Load()+m.judgeSkips.Load(), "%s: nothing reused", strategy)
			} else {
				assert.Positive(t, m.judgeSkips.Load(), "%s: histories judged before pass again", strategy)
				if strategy == DFS {
					assert.Positive(t, m.inPlace.Load(), "dfs steps in place")
				}
			}
		}
		assert.Equal(t, results[true].Distinct, results[false].Distinct, "%s", strategy)
		assert.Equal(t, results[true].Generated, results[false].Generated, "%s", strategy)
		assert.Equal(t, results[true].Terminal, results[false].Terminal, "%s", strategy)
	}

	// The histories that passed are remembered, never the verdicts of those that did not: a
	// client-visible violation is found in the same path either way.
	tests, err := zabmodel.ParseSelfTests("stale-read")
	require.NoError(t, err)
	paths := map[bool][]Action{}
	for _, noReuse := range []bool{false, true} {
		m, err := NewZAB(ZABConfig{Servers: 3, Writes: 1, Reads: 1, Timers: 2, Warmup: true, SelfTests: tests, NoReuse: noReuse})
		require.NoError(t, err)
		r, err := Check(context.Background(), m, Options{Strategy: DFS})
		require.NoError(t, err)
		require.NotNil(t, r.Violation, "no-reuse=%v", noReuse)
		paths[noReuse] = r.Path
	}
	assert.Equal(t, paths[true], paths[false])
}

// TestZABClientJudges: the client-visible checkers judge every state's history. A server that
// never delivers watch events (the drop-watch self-test) is caught by the watch rules, one that
// stamps reads with an old zxid (stale-read) by sequential consistency; the correct servers pass
// the same bounds completely. The counterexamples replay to the same violation.
func TestZABClientJudges(t *testing.T) {
	base := ZABConfig{Servers: 3, Writes: 1, Reads: 1, Timers: 2, Warmup: true}
	for name, want := range map[string]string{"drop-watch": "watches", "stale-read": "sequential-consistency"} {
		cfg := base
		tests, err := zabmodel.ParseSelfTests(name)
		require.NoError(t, err)
		cfg.SelfTests = tests
		m, err := NewZAB(cfg)
		require.NoError(t, err)
		r, err := Check(context.Background(), m, Options{Strategy: DFS})
		require.NoError(t, err)
		require.NotNil(t, r.Violation, name)
		assert.Equal(t, want, r.Violation.Invariant, name)

		var buf bytes.Buffer
		require.NoError(t, (&Counterexample{Model: m, Path: r.Path, Violation: r.Violation}).Write(&buf))
		assert.Contains(t, buf.String(), "self-tests "+name)
		back, err := ReadCounterexample(&buf)
		require.NoError(t, err)
		v, err := Replay(back.Model, back.Path, io.Discard)
		require.NoError(t, err)
		require.NotNil(t, v, name)
		assert.Equal(t, r.Violation.Explanation, v.Explanation, name)
	}
	m, err := NewZAB(base)
	require.NoError(t, err)
	r, err := Check(context.Background(), m, Options{Strategy: DFS})
	require.NoError(t, err)
	assert.Nil(t, r.Violation)
	assert.True(t, r.Complete)
}

// TestZABDeadlockJudge: a driver that withholds every timer (HideTimers, a self-test of the
// checker) leaves an ensemble that lost its leader without a new election: no event is pending
// and no leader serves, which the deadlock judge reports and the counterexample replays to; the
// honest driver explores the same bounds completely without a violation.
func TestZABDeadlockJudge(t *testing.T) {
	cfg := ZABConfig{Servers: 3, Crashes: 1, Warmup: true, Coarse: true, Timers: 20, HideTimers: true}
	m, err := NewZAB(cfg)
	require.NoError(t, err)
	r, err := Check(context.Background(), m, Options{})
	require.NoError(t, err)
	require.NotNil(t, r.Violation)
	assert.Equal(t, "Deadlock", r.Violation.Invariant)
	assert.Contains(t, r.Violation.Explanation, "no leader serves")
	var buf bytes.Buffer
	require.NoError(t, (&Counterexample{Model: m, Path: r.Path, Violation: r.Violation}).Write(&buf))
	back, err := ReadCounterexample(&buf)
	require.NoError(t, err)
	v, err := Replay(back.Model, back.Path, io.Discard)
	require.NoError(t, err)
	require.NotNil(t, v)
	assert.Equal(t, r.Violation.Explanation, v.Explanation)

	cfg.HideTimers = false
	honest, err := NewZAB(cfg)
	require.NoError(t, err)
	ok, err := Check(context.Background(), honest, Options{})
	require.NoError(t, err)
	assert.Nil(t, ok.Violation)
	assert.True(t, ok.Complete)
}

// zk4712Path is the shortest counterexample the coarse search finds for ZK-4712 with two writes
// (README, the bug zoo through the checker).
const zk4712Path = `model zab
servers 3
writes 2
crashes 1
restarts 1
early-timeouts 0
timers 10
bugs ZK-4712
warmup true
no-commute false
zxid-counter 0x0
coarse true
boundary-skips 2
step fire 14
step write
step write
step crash-at-boundary zk3 +1
step fire 25
step fire 15
step fire 20
step fire 15
step fire 17
step fire 21
step fire 23
violation ProcessConsistency
`

// TestZABZK4712CounterexampleReplays: ZK-4712's counterexample replays to a NEWLEADER
// acknowledged with a transaction the sync processor logged after the fast-forward. (The
// correct build cannot take the same steps: it enables other events after the crash; it passes
// these bounds completely, README.)
func TestZABZK4712CounterexampleReplays(t *testing.T) {
	cx, err := ReadCounterexample(strings.NewReader(zk4712Path))
	require.NoError(t, err)
	v, err := Replay(cx.Model, cx.Path, io.Discard)
	require.NoError(t, err)
	require.NotNil(t, v)
	assert.Equal(t, "ProcessConsistency", v.Invariant)
	assert.Contains(t, v.Explanation, "acknowledged NEWLEADER for epoch 2")
}

// TestZABSessionJudge: the session rules judge every state too. A server whose session tracker
// never renews a session (the no-session-renewal self-test) expires the client's healthy session
// once time has passed (MinTimers keeps the path going after the writes), which the
// wrongful-expiry rule reports from the health the driver observed at every state; the
// counterexample replays to it. The correct servers pass the same bounds completely. Without a
// write and without MinTimers the first state is settled and nothing is explored, so the
// expiry is never reached: MinTimers is what lets time pass.
func TestZABSessionJudge(t *testing.T) {
	tests, err := zabmodel.ParseSelfTests("no-session-renewal")
	require.NoError(t, err)
	cfg := ZABConfig{Servers: 3, Writes: 1, Timers: 50, MinTimers: 50, Warmup: true, Coarse: true, SelfTests: tests}
	m, err := NewZAB(cfg)
	require.NoError(t, err)
	r, err := Check(context.Background(), m, Options{Strategy: DFS})
	require.NoError(t, err)
	require.NotNil(t, r.Violation)
	assert.Equal(t, "sessions", r.Violation.Invariant)
	assert.Contains(t, r.Violation.Explanation, "wrongful-expiry")
	var buf bytes.Buffer
	require.NoError(t, (&Counterexample{Model: m, Path: r.Path, Violation: r.Violation}).Write(&buf))
	assert.Contains(t, buf.String(), "min-timers 50")
	back, err := ReadCounterexample(&buf)
	require.NoError(t, err)
	v, err := Replay(back.Model, back.Path, io.Discard)
	require.NoError(t, err)
	require.NotNil(t, v)
	assert.Equal(t, r.Violation.Explanation, v.Explanation)

	short := cfg
	short.Writes, short.MinTimers = 0, 0
	early, err := NewZAB(short)
	require.NoError(t, err)
	r, err = Check(context.Background(), early, Options{Strategy: DFS})
	require.NoError(t, err)
	assert.Nil(t, r.Violation, "the first state is settled")
	short.MinTimers = 50
	idle, err := NewZAB(short)
	require.NoError(t, err)
	r, err = Check(context.Background(), idle, Options{Strategy: DFS})
	require.NoError(t, err)
	require.NotNil(t, r.Violation, "with time passing the idle session expires")
	assert.Equal(t, "sessions", r.Violation.Invariant)

	correct := cfg
	correct.SelfTests = zabmodel.SelfTests{}
	ok, err := NewZAB(correct)
	require.NoError(t, err)
	r, err = Check(context.Background(), ok, Options{Strategy: DFS})
	require.NoError(t, err)
	assert.Nil(t, r.Violation)
	assert.True(t, r.Complete)
	t.Logf("correct: %d states, depth %d", r.Distinct, r.Depth)

	_, err = NewZAB(ZABConfig{Servers: 3, Timers: 10, MinTimers: 11})
	assert.Error(t, err, "a path bounded to 10 timers cannot fire 11")
}

// TestZABLockJudges: with lockers, the lock checkers judge every state. Three lockers that start
// together on InterProcessMutex pass completely with the correct recipe; with lock-herd (every
// waiter watches the lock's children) the release of the first holder wakes both waiters, which
// the herd rule reports, and the counterexample replays to the same finding.
func TestZABLockJudges(t *testing.T) {
	cfg := ZABConfig{Servers: 3, Lockers: 3, LockStartBy: 1, Timers: 80, Warmup: true, Coarse: true}
	m, err := NewZAB(cfg)
	require.NoError(t, err)
	r, err := Check(context.Background(), m, Options{Strategy: DFS})
	require.NoError(t, err)
	assert.Nil(t, r.Violation)
	assert.True(t, r.Complete)
	assert.Zero(t, r.CutTerminal, "every path runs its cycles to the end within the timers")
	t.Logf("correct: %d states, depth %d, %d terminal", r.Distinct, r.Depth, r.Terminal)

	cfg.RecipeBugs = lockmodel.Bugs{}.With(lockmodel.BugHerd)
	herd, err := NewZAB(cfg)
	require.NoError(t, err)
	r, err = Check(context.Background(), herd, Options{})
	require.NoError(t, err)
	require.NotNil(t, r.Violation)
	assert.Equal(t, "lock/herd", r.Violation.Invariant)
	assert.Contains(t, r.Violation.Explanation, "woke 2 waiters")
	var buf bytes.Buffer
	require.NoError(t, (&Counterexample{Model: herd, Path: r.Path, Violation: r.Violation}).Write(&buf))
	assert.Contains(t, buf.String(), "recipe-bugs lock-herd")
	assert.Contains(t, buf.String(), "step lock l1")
	back, err := ReadCounterexample(&buf)
	require.NoError(t, err)
	var trace bytes.Buffer
	v, err := Replay(back.Model, back.Path, &trace)
	require.NoError(t, err)
	require.NotNil(t, v)
	assert.Equal(t, r.Violation.Explanation, v.Explanation)
	assert.Contains(t, trace.String(), "l3")
	t.Logf("lock-herd: %d steps, %d states", len(r.Path), r.Distinct)

	for _, bad := range []ZABConfig{
		{Servers: 3, Lockers: 4},
		{Servers: 3, RecipeBugs: lockmodel.Bugs{}.With(lockmodel.BugHerd)},
		{Servers: 3, Lockers: 1, LockStartBy: -1},
	} {
		_, err := NewZAB(bad)
		assert.Error(t, err, "%+v", bad)
	}
	_, err = herd.ParseAction("lock l4")
	assert.Error(t, err)
}
