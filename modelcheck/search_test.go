package modelcheck

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counters is a toy model: two counters, each step increments one of them (up to limit); the
// state is bad when both equal bad. Every path to (bad, bad) has 2*bad steps.
type counters struct {
	limit, bad int
	deadEnd    bool // a state at (limit, 0) is a dead end the terminal judge rejects
}

type counterState struct {
	m    *counters
	a, b int
}

func (m *counters) Name() string         { return "counters" }
func (m *counters) Init() (State, error) { return &counterState{m: m}, nil }
func (m *counters) Describe(_ State, a Action) (string, string) {
	return fmt.Sprintf("inc %d", a), ""
}
func (m *counters) ParseAction(line string) (Action, error) {
	var a Action
	_, err := fmt.Sscanf(line, "inc %d", &a)
	return a, err
}

func (s *counterState) Fingerprint() Fingerprint {
	return hashBytes([]byte{byte(s.a), byte(s.b)})
}

func (s *counterState) Actions(buf []Action) ([]Action, bool) {
	if s.a < s.m.limit {
		buf = append(buf, 0)
	}
	if s.b < s.m.limit {
		buf = append(buf, 1)
	}
	return buf, false
}

func (s *counterState) Step(a Action) (State, error) {
	n := *s
	if a == 0 {
		n.a++
	} else {
		n.b++
	}
	return &n, nil
}

func (s *counterState) Check() *Violation {
	if s.m.bad > 0 && s.a == s.m.bad && s.b == s.m.bad {
		return &Violation{Invariant: "Bad", Explanation: fmt.Sprintf("a=b=%d", s.a)}
	}
	return nil
}

func (s *counterState) CheckTerminal(bool) *Violation {
	if s.m.deadEnd {
		return &Violation{Invariant: "DeadEnd", Explanation: "no action"}
	}
	return nil
}

func TestSearchCountsEveryStateOnce(t *testing.T) {
	for _, opts := range []Options{{}, {Workers: 3}, {Strategy: DFS}} {
		r, err := Check(context.Background(), &counters{limit: 9}, opts)
		require.NoError(t, err)
		assert.True(t, r.Complete, "%+v", opts)
		assert.Nil(t, r.Violation)
		assert.Equal(t, int64(100), r.Distinct, "%+v: 10x10 states", opts)
		assert.Equal(t, int64(1), r.Terminal)
		assert.Equal(t, 18, r.Depth)
	}
}

func TestBFSFindsAShortestViolation(t *testing.T) {
	r, err := Check(context.Background(), &counters{limit: 9, bad: 3}, Options{})
	require.NoError(t, err)
	require.NotNil(t, r.Violation)
	assert.Equal(t, "Bad", r.Violation.Invariant)
	assert.Len(t, r.Path, 6)

	dfs, err := Check(context.Background(), &counters{limit: 9, bad: 3}, Options{Strategy: DFS})
	require.NoError(t, err)
	require.NotNil(t, dfs.Violation)
	assert.GreaterOrEqual(t, len(dfs.Path), 6)
}

func TestTerminalJudgeFails(t *testing.T) {
	r, err := Check(context.Background(), &counters{limit: 2, deadEnd: true}, Options{})
	require.NoError(t, err)
	require.NotNil(t, r.Violation)
	assert.Equal(t, "DeadEnd", r.Violation.Invariant)
	assert.Len(t, r.Path, 4)
}

func TestBoundsAndBudgetsCutTheSearch(t *testing.T) {
	r, err := Check(context.Background(), &counters{limit: 9}, Options{MaxDepth: 4})
	require.NoError(t, err)
	assert.False(t, r.Complete)
	assert.Equal(t, []string{"depth"}, r.CutBy)
	assert.Equal(t, int64(15), r.Distinct, "states within 4 steps: 1+2+3+4+5")

	dfs, err := Check(context.Background(), &counters{limit: 9}, Options{Strategy: DFS, MaxDepth: 4})
	require.NoError(t, err)
	assert.Equal(t, int64(15), dfs.Distinct, "DFS sees the same states within the depth bound")

	r, err = Check(context.Background(), &counters{limit: 9}, Options{MaxStates: 10})
	require.NoError(t, err)
	assert.False(t, r.Complete)
	assert.Equal(t, []string{"states"}, r.CutBy)
}

func TestBadOptionsAreRefused(t *testing.T) {
	for _, opts := range []Options{{Workers: -1}, {MaxDepth: -1}, {Strategy: DFS, Workers: 2}, {Strategy: 7}} {
		_, err := Check(context.Background(), &counters{limit: 1}, opts)
		assert.ErrorIs(t, err, errBadOptions, "%+v", opts)
	}
}

// TestFLEResultDoesNotDependOnWorkers: the same counts and the same counterexample for 1 and 4
// workers.
func TestFLEResultDoesNotDependOnWorkers(t *testing.T) {
	cfg := FLEConfig{Servers: 3, Crashes: 1}
	one := checkFLE(t, cfg, Options{MaxDepth: 9})
	four := checkFLE(t, cfg, Options{MaxDepth: 9, Workers: 4})
	assert.Equal(t, one.Distinct, four.Distinct)
	assert.Equal(t, one.Generated, four.Generated)
	assert.Equal(t, one.Terminal, four.Terminal)
}

func TestCounterexampleRoundTrip(t *testing.T) {
	m, err := NewFLE(FLEConfig{Servers: 3, Crashes: 1, Timeouts: 1})
	require.NoError(t, err)
	init, err := m.Init()
	require.NoError(t, err)
	actions, _ := init.Actions(nil)
	path := []Action{actions[0], fleAction(fleCrash, 2, 0)}
	var buf bytes.Buffer
	require.NoError(t, (&Counterexample{Model: m, Path: path, Violation: &Violation{Invariant: "X"}}).Write(&buf))
	assert.Contains(t, buf.String(), "step deliver zk1->zk1")
	assert.Contains(t, buf.String(), "step crash zk3")
	back, err := ReadCounterexample(&buf)
	require.NoError(t, err)
	assert.Equal(t, path, back.Path)
	assert.Equal(t, m.Config(), back.Model.(*FLEModel).Config())
	assert.Equal(t, "X", back.Violation.Invariant)

	for _, bad := range []string{"step deliver zk1->zk2\n", "model fle\nservers 3\nstep deliver zk1->zk9\n", "model fle\nservers 3\nservers 3\n", "model nope\n"} {
		_, err := ReadCounterexample(bytes.NewBufferString(bad))
		assert.Error(t, err, bad)
	}
}

// TestSleepSetsKeepEveryState: the partial-order reduction generates fewer successors and reaches
// exactly the same states, terminal states included, breadth- and depth-first, on FLE (with
// crashes, whose actions are never put to sleep) and on the fine ZAB model.
func TestSleepSetsKeepEveryState(t *testing.T) {
	fle, err := NewFLE(FLEConfig{Servers: 3, Crashes: 1, Restarts: 1})
	require.NoError(t, err)
	zabModel, err := NewZAB(ZABConfig{Servers: 3, Writes: 1, Timers: 2, Warmup: true})
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		m     Model
		depth int
	}{{"fle", fle, 8}, {"zab", zabModel, 0}} {
		for _, strategy := range []Strategy{BFS, DFS} {
			with, err := Check(context.Background(), c.m, Options{Strategy: strategy, MaxDepth: c.depth})
			require.NoError(t, err)
			without, err := Check(context.Background(), c.m, Options{Strategy: strategy, MaxDepth: c.depth, NoSleepSets: true})
			require.NoError(t, err)
			assert.Nil(t, with.Violation, "%s %s", c.name, strategy)
			assert.Equal(t, without.Distinct, with.Distinct, "%s %s: the same states", c.name, strategy)
			assert.Equal(t, without.Terminal, with.Terminal, "%s %s", c.name, strategy)
			assert.Less(t, with.Generated, without.Generated, "%s %s: fewer successors", c.name, strategy)
			if strategy == BFS {
				assert.Equal(t, without.Depth, with.Depth, "%s: the same depth", c.name)
			}
			t.Logf("%s %s: generated %d -> %d, distinct %d", c.name, strategy, without.Generated, with.Generated, with.Distinct)
		}
	}
}

// TestMemoryBudgetCutsTheSearch: a budget below the live heap stops the search at its first look
// (depth-first looks every 1,024 steps, hence a graph of 3,721 states) and says so; a generous
// one changes nothing.
func TestMemoryBudgetCutsTheSearch(t *testing.T) {
	// The live heap is known from the first collection on; a search's heap reaches that size
	// long before a budget matters, this test's tiny graph does not.
	runtime.GC()
	for _, strategy := range []Strategy{BFS, DFS} {
		r, err := Check(context.Background(), &counters{limit: 60}, Options{Strategy: strategy, MaxMemory: 1})
		require.NoError(t, err)
		assert.False(t, r.Complete, "%s", strategy)
		assert.Equal(t, []string{"memory"}, r.CutBy, "%s", strategy)

		full, err := Check(context.Background(), &counters{limit: 60}, Options{Strategy: strategy})
		require.NoError(t, err)
		roomy, err := Check(context.Background(), &counters{limit: 60}, Options{Strategy: strategy, MaxMemory: 1 << 40})
		require.NoError(t, err)
		assert.True(t, roomy.Complete, "%s", strategy)
		assert.Equal(t, full.Distinct, roomy.Distinct, "%s", strategy)
		assert.Less(t, r.Distinct, full.Distinct, "%s: the cut search stopped early", strategy)
	}
	_, err := Check(context.Background(), &counters{limit: 1}, Options{MaxMemory: -1})
	assert.ErrorIs(t, err, errBadOptions)
}
