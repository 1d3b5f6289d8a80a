package modelcheck

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Fingerprint identifies a state: 128 bits of a hash of its canonical encoding.
type Fingerprint [2]uint64

// Action is one step a state can take, encoded by its model (see Model.Describe).
type Action uint32

// Violation is what a judge found wrong with a state.
type Violation struct {
	// Invariant names the judge that failed.
	Invariant string
	// Explanation says what is wrong, with the servers and values involved.
	Explanation string
}

func (v *Violation) Error() string { return v.Invariant + ": " + v.Explanation }

// State is one global state of an explored system. Implementations are immutable once built:
// Step returns a new state and leaves the receiver as it was, so that a search may keep any
// number of states alive and step them from several goroutines.
type State interface {
	// Fingerprint returns the state's canonical fingerprint: equal for equal states however they
	// were reached, different (with overwhelming probability) for states that differ in anything
	// that can influence the future.
	Fingerprint() Fingerprint
	// Actions appends the actions enabled in the state to buf. cut reports whether a bound of the
	// search (faults, timeouts) disabled some action the system could otherwise take, which the
	// liveness judge needs to tell a real dead end from one made by the bounds.
	Actions(buf []Action) (actions []Action, cut bool)
	// Step applies an enabled action and returns the successor.
	Step(a Action) (State, error)
	// Check judges the state on its own: the safety invariants.
	Check() *Violation
	// CheckTerminal judges a state in which no action is enabled; cut is as Actions returned it.
	CheckTerminal(cut bool) *Violation
}

// Model builds the initial state and names actions, for the counterexample files.
type Model interface {
	// Name is the model's name as a counterexample file records it ("fle", "zab").
	Name() string
	// Init returns the initial state.
	Init() (State, error)
	// Describe renders an action as one line that ParseAction reads back; detail is free text
	// about the action taken in state s (the message delivered), for people.
	Describe(s State, a Action) (line string, detail string)
	// ParseAction reads what Describe wrote.
	ParseAction(line string) (Action, error)
}

// Strategy is the order of exploration.
type Strategy int

// Strategies.
const (
	// BFS explores level by level: the first violation found has a shortest path.
	BFS Strategy = iota
	// DFS explores depth first with a visited set; it finds deep states with little memory for
	// the frontier, but its counterexamples are not the shortest.
	DFS
)

func (s Strategy) String() string {
	if s == DFS {
		return "dfs"
	}
	return "bfs"
}

// Options bound a search.
type Options struct {
	Strategy Strategy
	// Workers expand states in parallel (BFS only). The result does not depend on their number.
	Workers int
	// MaxDepth bounds the length of explored paths; 0 means no bound.
	MaxDepth int
	// MaxStates stops the search once this many distinct states are known; 0 means no bound.
	MaxStates int64
	// TimeLimit stops the search after this much wall time; 0 means no limit. A search cut by
	// time reports so, and its counts then depend on the machine.
	TimeLimit time.Duration
	// MaxMemory stops the search once the live heap (the Go heap that survived the last
	// collection) reaches this many bytes; 0 means no bound. The visited set and a breadth-first
	// level grow without bound on a configuration that is larger than it looks (four FLE servers
	// with no other bound reach tens of millions of states), and a search that is cut says so
	// where one that exhausts the machine's memory is killed and says nothing. Like TimeLimit, a
	// search cut by memory has counts that depend on the machine.
	MaxMemory int64
	// NoSleepSets switches off the partial-order reduction (sleep.go) for models that offer it.
	// It changes how many successors are generated, never which states are reached.
	NoSleepSets bool
	// Progress, if set, is called about every ProgressEvery with the statistics so far.
	Progress      func(Stats)
	ProgressEvery time.Duration
}

// Stats are the figures TLC and stateright print.
type Stats struct {
	Generated   int64 // states generated: every successor computed, duplicates included
	Distinct    int64 // distinct states found
	Depth       int   // the deepest level reached (BFS) or the longest path (DFS)
	Queue       int   // states waiting to be expanded
	Terminal    int64 // distinct states with no enabled action
	CutTerminal int64 // of those, states where a bound disabled an action
	Elapsed     time.Duration
}

// PerSecond returns distinct states per second of wall time.
func (s Stats) PerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Distinct) / s.Elapsed.Seconds()
}

// Result is how a search ended.
type Result struct {
	Stats
	// Complete is true when every state within the bounds was explored.
	Complete bool
	// CutBy names what stopped an incomplete search: "depth", "states", "time", "memory" or
	// "cancelled" (depth cuts do not stop the search, they make it incomplete).
	CutBy []string
	// Violation and Path are set when a judge failed: the actions from the initial state.
	Violation *Violation
	Path      []Action
}

// Errors of Options.
var errBadOptions = errors.New("modelcheck: bad options")

func (o *Options) validate() error {
	if o.Workers < 0 || o.MaxDepth < 0 || o.MaxStates < 0 || o.TimeLimit < 0 || o.MaxMemory < 0 {
		return fmt.Errorf("%w: negative bound in %+v", errBadOptions, *o)
	}
	if o.Strategy != BFS && o.Strategy != DFS {
		return fmt.Errorf("%w: unknown strategy %d", errBadOptions, o.Strategy)
	}
	if o.Workers == 0 {
		o.Workers = 1
	}
	if o.Strategy == DFS && o.Workers > 1 {
		return fmt.Errorf("%w: depth-first search runs on one worker", errBadOptions)
	}
	if o.ProgressEvery == 0 {
		o.ProgressEvery = 10 * time.Second
	}
	return nil
}

// Check explores m's states within opts. It fails only when the model cannot be built or a step
// errs (a bug in the model, never a finding); a finding is Result.Violation.
func Check(ctx context.Context, m Model, opts Options) (Result, error) {
	if err := opts.validate(); err != nil {
		return Result{}, err
	}
	init, err := m.Init()
	if err != nil {
		return Result{}, fmt.Errorf("modelcheck: initial state: %w", err)
	}
	s := &searcher{opts: opts, start: time.Now(), lastProgress: time.Now(), ctx: ctx}
	if opts.Strategy == DFS {
		return s.dfs(init)
	}
	return s.bfs(init)
}

type searcher struct {
	opts         Options
	ctx          context.Context
	start        time.Time
	lastProgress time.Time
	// memoryRead is when the live heap was last read for MaxMemory (zero: never).
	memoryRead time.Time
	stats      Stats
	cut        map[string]bool
	// parents[i] is the index of the state from which distinct state i was first reached and the
	// action that reached it, for the counterexample (BFS).
	parents []parentLink
	// sleeps[i] is distinct state i's sleep record (BFS with sleep sets).
	sleeps []sleepRecord
}

type parentLink struct {
	parent int32
	action Action
}

func (s *searcher) cutBy(why string) {
	if s.cut == nil {
		s.cut = map[string]bool{}
	}
	s.cut[why] = true
}

func (s *searcher) result() Result {
	s.stats.Elapsed = time.Since(s.start)
	r := Result{Stats: s.stats, Complete: len(s.cut) == 0}
	for _, why := range []string{"depth", "states", "time", "memory", "cancelled"} {
		if s.cut[why] {
			r.CutBy = append(r.CutBy, why)
		}
	}
	return r
}

// overBudget reports whether the state, time or memory budget ends the search.
func (s *searcher) overBudget() bool {
	if s.opts.MaxStates > 0 && s.stats.Distinct >= s.opts.MaxStates {
		s.cutBy("states")
		return true
	}
	now := time.Now()
	if s.opts.TimeLimit > 0 && now.Sub(s.start) >= s.opts.TimeLimit {
		s.cutBy("time")
		return true
	}
	if s.overMemory(now) {
		s.cutBy("memory")
		return true
	}
	if s.ctx.Err() != nil {
		s.cutBy("cancelled")
		return true
	}
	if s.opts.Progress != nil && now.Sub(s.lastProgress) >= s.opts.ProgressEvery {
		s.lastProgress = now
		st := s.stats
		st.Elapsed = now.Sub(s.start)
		s.opts.Progress(st)
	}
	return false
}

// memoryReadEvery spaces the reads of the live heap: reading runtime metrics costs a few
// microseconds, a state far less, and the heap cannot grow much in a tenth of a second.
const memoryReadEvery = 100 * time.Millisecond

// overMemory reports whether the live heap has reached Options.MaxMemory. It reads the heap
// that survived the last collection, not the heap in use: garbage is what the collector frees
// before the machine runs out, and counting it would cut a search at a fraction of its budget
// under a high GOGC. Before the process's first collection the live heap reads 0: the heap is
// then below its first target (4 MB times GOGC/100), far below any budget worth setting.
func (s *searcher) overMemory(now time.Time) bool {
	if s.opts.MaxMemory <= 0 || (!s.memoryRead.IsZero() && now.Sub(s.memoryRead) < memoryReadEvery) {
		return false
	}
	s.memoryRead = now
	return liveHeap() >= s.opts.MaxMemory
}

// liveHeap returns the bytes of heap objects that survived the last garbage collection.
func liveHeap() int64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		// The metric exists since Go 1.21; go.mod asks for a later one, so this is a broken
		// toolchain, and the budget then falls back to the heap in use.
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	return int64(sample[0].Value.Uint64())
}

// expansion is what a worker computed for one frontier state.
type expansion struct {
	terminal  bool
	cut       bool
	violation *Violation
	succ      []successor
	err       error
}

// releaser is implemented by states that hold something costly (the ZAB model's live world) that
// is worth keeping only while the state is about to be stepped: a breadth-first search releases
// every successor it computes; a depth-first one steps a state right after computing it.
type releaser interface {
	release()
}

type successor struct {
	state  State
	fp     Fingerprint
	action Action
	sleep  sleepSet
}

// keyerOf returns st as an ActionKeyer when sleep sets are on and its model offers them.
func (s *searcher) keyerOf(st State) ActionKeyer {
	if s.opts.NoSleepSets {
		return nil
	}
	k, _ := st.(ActionKeyer)
	return k
}

// expand judges st and computes the successors its sleep entry (nil: none) leaves to take.
func (s *searcher) expand(st State, entry *sleepEntry, atDepthBound bool, buf []Action) (expansion, bool) {
	if v := st.Check(); v != nil {
		return expansion{violation: v}, false
	}
	actions, cut := st.Actions(buf[:0])
	if len(actions) == 0 {
		return expansion{terminal: true, cut: cut, violation: st.CheckTerminal(cut)}, false
	}
	if atDepthBound {
		return expansion{}, true
	}
	var z, only sleepSet
	if entry != nil {
		z, only = entry.sleep, entry.only
	}
	plan := planSleep(s.keyerOf(st), actions, z, only)
	if p, ok := st.(stepPlanner); ok {
		p.PlanSteps(len(plan.take))
	}
	out := expansion{succ: make([]successor, 0, len(plan.take))}
	for i, a := range plan.take {
		next, err := st.Step(a)
		if err != nil {
			return expansion{err: err}, false
		}
		// A breadth-first search steps a queued state a level later at the earliest: what it
		// would keep for that (a live world) is dropped now, before a chunk's worth accumulates.
		if r, ok := next.(releaser); ok {
			r.release()
		}
		out.succ = append(out.succ, successor{state: next, fp: next.Fingerprint(), action: a, sleep: plan.sleep[i]})
	}
	return out, false
}

// bfsChunk is how many frontier states are expanded between two merges.
const bfsChunk = 512

type frontierEntry struct {
	state State
	index int32
	sleep *sleepEntry // nil when sleep sets are off
}

func (s *searcher) bfs(init State) (Result, error) {
	visited := newFingerprintSet()
	visited.insert(init.Fingerprint(), 0)
	s.parents = append(s.parents, parentLink{parent: -1})
	s.stats.Distinct = 1
	s.stats.Generated = 1
	useSleep := s.keyerOf(init) != nil
	frontier := []frontierEntry{{state: init, index: 0}}
	if useSleep {
		s.sleeps = append(s.sleeps, sleepRecord{})
		frontier[0].sleep = &sleepEntry{}
		s.sleeps[0].pending = frontier[0].sleep
	}
	results := make([]expansion, bfsChunk)
	for depth := 0; len(frontier) > 0; depth++ {
		s.stats.Depth = depth
		s.stats.Queue = len(frontier)
		atBound := s.opts.MaxDepth > 0 && depth >= s.opts.MaxDepth
		var next []frontierEntry
		// The level is expanded a chunk at a time, each chunk on every worker and then merged in
		// frontier order: the chunks' size is fixed, so the merge order (and with it every count
		// and the counterexample) does not depend on the number of workers, and only one chunk's
		// successors are alive at once.
		for lo := 0; lo < len(frontier); lo += bfsChunk {
			chunk := frontier[lo:min(lo+bfsChunk, len(frontier))]
			out := results[:len(chunk)]
			if s.expandAll(chunk, out, atBound) {
				s.cutBy("depth")
			}
			if useSleep {
				// The chunk is expanded: a revisit from now on must queue the state again.
				for _, f := range chunk {
					if rec := &s.sleeps[f.index]; rec.pending == f.sleep {
						rec.pending = nil
					}
				}
			}
			for i, ex := range out {
				if ex.err != nil {
					return s.result(), ex.err
				}
				if ex.violation != nil {
					r := s.result()
					r.Violation = ex.violation
					r.Path = s.path(chunk[i].index)
					return r, nil
				}
				if ex.terminal {
					s.stats.Terminal++
					if ex.cut {
						s.stats.CutTerminal++
					}
				}
			}
			for i, ex := range out {
				for _, sc := range ex.succ {
					s.stats.Generated++
					if j, seen := visited.get(sc.fp); seen {
						if useSleep {
							if missing, e := s.sleeps[j].revisit(sc.sleep, true); missing != nil {
								next = append(next, frontierEntry{state: sc.state, index: j, sleep: e})
							}
						}
						continue
					}
					idx := int32(len(s.parents))
					visited.insert(sc.fp, idx)
					s.parents = append(s.parents, parentLink{parent: chunk[i].index, action: sc.action})
					entry := frontierEntry{state: sc.state, index: idx}
					if useSleep {
						entry.sleep = &sleepEntry{sleep: sc.sleep}
						s.sleeps = append(s.sleeps, sleepRecord{keys: sc.sleep, pending: entry.sleep})
					}
					next = append(next, entry)
					s.stats.Distinct++
				}
				out[i] = expansion{}
				chunk[i] = frontierEntry{} // Let the expanded state go.
			}
			// The budgets are looked at between chunks too: a level of the ZAB model can take
			// minutes. A fixed chunk size keeps a state budget's cut independent of the workers.
			if hi := lo + len(chunk); hi < len(frontier) && s.overBudget() {
				s.stats.Queue = len(frontier) - hi + len(next)
				return s.result(), nil
			}
		}
		frontier = next
		if len(frontier) > 0 && s.overBudget() {
			s.stats.Queue = len(frontier)
			return s.result(), nil
		}
	}
	s.stats.Queue = 0
	return s.result(), nil
}

// expandAll expands the frontier on the configured workers; each result lands at its state's
// index, so the merge that follows sees the same order whatever the number of workers.
func (s *searcher) expandAll(frontier []frontierEntry, results []expansion, atBound bool) (depthCut bool) {
	workers := min(s.opts.Workers, max(1, len(frontier)/4))
	workers = min(workers, runtime.GOMAXPROCS(0)*4)
	if workers <= 1 {
		var buf []Action
		for i, f := range frontier {
			var c bool
			results[i], c = s.expand(f.state, f.sleep, atBound, buf)
			depthCut = depthCut || c
			if results[i].violation != nil || results[i].err != nil {
				return depthCut
			}
		}
		return depthCut
	}
	var wg sync.WaitGroup
	cuts := make([]bool, workers)
	chunk := (len(frontier) + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(frontier))
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []Action
			for i := lo; i < hi; i++ {
				var c bool
				results[i], c = s.expand(frontier[i].state, frontier[i].sleep, atBound, buf)
				cuts[w] = cuts[w] || c
			}
		}()
	}
	wg.Wait()
	for _, c := range cuts {
		depthCut = depthCut || c
	}
	return depthCut
}

// path rebuilds the actions that lead from the initial state to distinct state idx.
func (s *searcher) path(idx int32) []Action {
	var rev []Action
	for idx > 0 {
		link := s.parents[idx]
		rev = append(rev, link.action)
		idx = link.parent
	}
	out := make([]Action, len(rev))
	for i, a := range rev {
		out[len(rev)-1-i] = a
	}
	return out
}

type dfsFrame struct {
	state   State
	actions []Action
	sleeps  []sleepSet // the sleep set of each action's successor
	next    int
	via     Action
}

// dfs explores depth first. The visited set remembers the shallowest depth at which each state
// was expanded, and a state reached again at a smaller depth is expanded again: without that, a
// depth bound would hide states that are within it by a shorter path. With sleep sets, a state
// reached again with a smaller sleep set takes the actions that were asleep before (sleep.go).
func (s *searcher) dfs(init State) (Result, error) {
	visited := newFingerprintSet()
	visited.insert(init.Fingerprint(), 0)
	useSleep := s.keyerOf(init) != nil
	records := map[Fingerprint]*sleepRecord{}
	if useSleep {
		records[init.Fingerprint()] = &sleepRecord{}
	}
	s.stats.Distinct = 1
	s.stats.Generated = 1
	var stack []dfsFrame
	push := func(st State, via Action, z, only sleepSet) *Violation {
		if v := st.Check(); v != nil {
			return v
		}
		depth := len(stack)
		actions, cut := st.Actions(nil)
		if len(actions) == 0 {
			s.stats.Terminal++
			if cut {
				s.stats.CutTerminal++
			}
			if v := st.CheckTerminal(cut); v != nil {
				return v
			}
		}
		if s.opts.MaxDepth > 0 && depth >= s.opts.MaxDepth && len(actions) > 0 {
			s.cutBy("depth")
			actions = nil
		}
		var keyer ActionKeyer
		if useSleep {
			keyer = s.keyerOf(st)
		}
		plan := planSleep(keyer, actions, z, only)
		if p, ok := st.(stepPlanner); ok {
			p.PlanSteps(len(plan.take))
		}
		stack = append(stack, dfsFrame{state: st, actions: plan.take, sleeps: plan.sleep, via: via})
		s.stats.Depth = max(s.stats.Depth, depth)
		return nil
	}
	pathOf := func() []Action {
		out := make([]Action, 0, len(stack))
		for _, f := range stack[1:] {
			out = append(out, f.via)
		}
		return out
	}
	if v := push(init, 0, nil, nil); v != nil {
		r := s.result()
		r.Violation = v
		return r, nil
	}
	for steps := 0; len(stack) > 0; steps++ {
		top := &stack[len(stack)-1]
		if top.next >= len(top.actions) {
			stack = stack[:len(stack)-1]
			continue
		}
		a := top.actions[top.next]
		z := top.sleeps[top.next]
		top.next++
		next, err := top.state.Step(a)
		if err != nil {
			return s.result(), err
		}
		s.stats.Generated++
		fp := next.Fingerprint()
		depth := int32(len(stack))
		var only sleepSet
		if old, ok := visited.get(fp); ok {
			if old <= depth {
				if !useSleep {
					continue
				}
				missing, e := records[fp].revisit(z, false)
				if missing == nil {
					continue
				}
				z, only = e.sleep, missing
			} else {
				visited.insert(fp, depth)
				if useSleep {
					rec := records[fp]
					rec.keys = rec.keys.intersect(z)
				}
			}
		} else {
			visited.insert(fp, depth)
			s.stats.Distinct++
			if useSleep {
				records[fp] = &sleepRecord{keys: z}
			}
		}
		if v := push(next, a, z, only); v != nil {
			r := s.result()
			r.Violation = v
			r.Path = append(pathOf(), a)
			return r, nil
		}
		s.stats.Queue = len(stack)
		if steps%1024 == 0 && s.overBudget() {
			return s.result(), nil
		}
	}
	s.stats.Queue = 0
	return s.result(), nil
}
