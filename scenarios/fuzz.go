package scenarios

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
)

// Fuzzer is the search loop's state: a corpus of scenarios that reached protocol situations no
// earlier input reached, and the counts of every situation seen. It proposes the next input to run
// (Next) and learns from each run (Learn); running is the caller's, so that simrun fuzz can run
// inputs on every core and a test can run them one by one. A Fuzzer is not safe for concurrent
// use; simrun guards it with a mutex. With one caller and the same options it proposes the same
// inputs in the same order.
//
// Next proposes one of three things:
//   - a fresh seed (the next of a counter), with probability FreshPercent: the random swarm itself,
//     so that the fuzzer never does worse than the swarm by more than that share, and keeps finding
//     new starting points;
//   - a directed mutation: an entry of the corpus, preferring entries whose new situations are
//     rare, with a fault (a crash, a reset, a pause or an isolation) added on the server where one
//     of those situations was reached, at or just after the moment it was reached. This is where
//     the bugs live: a fault inside a window that a run has just shown it can reach;
//   - a random mutation: one to four edits (add, drop, move, retarget, stretch) of a corpus entry.
type Fuzzer struct {
	opts     FuzzerOptions
	rng      *sim.PCG
	corpus   []*FuzzEntry
	counts   map[uint64]int // feature -> runs that reached it
	features int
	nextSeed uint64
	runs     int
}

// FuzzerOptions configure a Fuzzer.
type FuzzerOptions struct {
	// SeedStart is the first fresh seed proposed; fresh seeds count up from it, as a sweep's do.
	SeedStart uint64
	// Duration is the fault phase of the runs (edits keep their faults inside it).
	Duration clock.Duration
	// FreshPercent is the share of fresh seeds among the proposals, 0 to 100 (default 30).
	FreshPercent int
	// RandomSeed seeds the mutator's own choices (which entry, which edit).
	RandomSeed uint64
}

// FuzzEntry is one input of the corpus: a seed and its (possibly edited) scenario, with the
// situations it was the first to reach.
type FuzzEntry struct {
	Seed   uint64
	Script *Script
	// New are the situations this entry reached first, with the moment and server.
	New []Feature
	// Edits describes how the entry was made from its parent, for a person reading the corpus.
	Edits []Edit
	picks int
}

// FuzzCandidate is a proposed run: a seed, and a script unless it is a fresh seed.
type FuzzCandidate struct {
	Seed   uint64
	Script *Script // nil: the seed's own drawn scenario
	Edits  []Edit
	// Fresh says the candidate is a fresh seed (the swarm's own run).
	Fresh bool
}

// NewFuzzer returns an empty fuzzer.
func NewFuzzer(o FuzzerOptions) *Fuzzer {
	if o.FreshPercent == 0 {
		o.FreshPercent = 30
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	return &Fuzzer{opts: o, rng: sim.NewPCG(o.RandomSeed), counts: map[uint64]int{}, nextSeed: o.SeedStart}
}

// Corpus returns the corpus entries, oldest first.
func (f *Fuzzer) Corpus() []*FuzzEntry { return f.corpus }

// Features returns how many distinct situations the runs so far reached.
func (f *Fuzzer) Features() int { return f.features }

// NextFreshSeed is the seed the next fresh proposal will use.
func (f *Fuzzer) NextFreshSeed() uint64 { return f.nextSeed }

// Add puts an entry into the corpus as it is (a corpus directory read back, a seed file); its
// situations are learned when it runs.
func (f *Fuzzer) Add(e *FuzzEntry) { f.corpus = append(f.corpus, e) }

// Next proposes the next run.
func (f *Fuzzer) Next() FuzzCandidate {
	f.runs++
	if len(f.corpus) == 0 || f.rng.Choose(100) < f.opts.FreshPercent {
		seed := f.nextSeed
		f.nextSeed++
		return FuzzCandidate{Seed: seed, Fresh: true}
	}
	parent := f.pickEntry()
	parent.picks++
	switch pick := f.rng.Choose(100 - f.opts.FreshPercent); {
	case pick < 30 && len(parent.moments()) > 0:
		edits := []Edit{f.directedEdit(parent)}
		return FuzzCandidate{Seed: parent.Seed, Script: ApplyEdits(parent.Script, edits), Edits: edits}
	case pick < 55:
		// The same faults under another seed: the run's timing (every latency, every client's
		// pick) is drawn anew, so a scenario that reached rare situations is tried at other
		// interleavings.
		seed := uint64(f.rng.Choose(1<<31))<<32 | uint64(f.rng.Choose(1<<31))
		return FuzzCandidate{Seed: seed, Script: parent.Script, Edits: []Edit{{Kind: EditReseed, Param: uint32(seed)}}}
	case pick < 65:
		if other := f.corpus[f.rng.Choose(len(f.corpus))]; other != parent && sameCluster(parent.Script, other.Script) {
			at := clock.Duration(f.rng.Choose(int(f.opts.Duration/clock.Millisecond))) * clock.Millisecond
			return FuzzCandidate{Seed: parent.Seed, Script: splice(parent.Script, other.Script, at),
				Edits: []Edit{{Kind: EditSplice, At: at, Param: uint32(other.Seed)}}}
		}
	}
	var edits []Edit
	for n := 1 + f.rng.Choose(4); n > 0; n-- {
		edits = append(edits, f.randomEdit())
	}
	return FuzzCandidate{Seed: parent.Seed, Script: ApplyEdits(parent.Script, edits), Edits: edits}
}

// sameCluster reports whether two scenarios have the same cluster and workload, so that the faults
// of one are valid in the other.
func sameCluster(a, b *Script) bool {
	return a.Servers == b.Servers && a.Observers == b.Observers && a.Clients == b.Clients && a.Workload == b.Workload &&
		a.Duration == b.Duration && a.InitialZxidCounter == b.InitialZxidCounter && a.ContainerCheckInterval == b.ContainerCheckInterval &&
		a.SessionTimeout == b.SessionTimeout && a.ConnectionTimeout == b.ConnectionTimeout && a.ElectionRecipe == b.ElectionRecipe
}

// splice takes a's faults before at and b's from at on (AFL's splicing, on fault schedules).
func splice(a, b *Script, at clock.Duration) *Script {
	s := *a
	s.Actions = nil
	for _, x := range a.Actions {
		if x.At < at {
			s.Actions = append(s.Actions, x)
		}
	}
	for _, x := range b.Actions {
		if x.At >= at {
			s.Actions = append(s.Actions, x)
		}
	}
	return ApplyEdits(&s, nil)
}

// pickEntry prefers entries that reached rare situations and have been mutated little: a
// tournament of three by rarity (the rarest of each one's new situations) and picks.
func (f *Fuzzer) pickEntry() *FuzzEntry {
	best := f.corpus[f.rng.Choose(len(f.corpus))]
	for i := 0; i < 2; i++ {
		e := f.corpus[f.rng.Choose(len(f.corpus))]
		if f.score(e) > f.score(best) {
			best = e
		}
	}
	return best
}

// score is higher for an entry whose rarest new situation is rarer, and lower the more it was
// picked.
func (f *Fuzzer) score(e *FuzzEntry) float64 {
	rarest := 1 << 30
	for _, ft := range e.New {
		rarest = min(rarest, f.counts[ft.Hash])
	}
	if len(e.New) == 0 {
		rarest = f.runs + 1
	}
	return 1 / float64((1+rarest)*(1+e.picks))
}

// directedFamilies are the faults a directed edit adds at a new situation, with their weights: a
// crash (which the swarm draws with its restart) most often, then a connection reset, a pause, and
// an isolation.
var directedFamilies = []struct {
	family string
	weight int
}{{FaultCrash, 5}, {FaultReset, 2}, {FaultPause, 2}, {FaultPartition, 1}}

// directedEdit adds a fault on the server and at the moment where the parent reached one of its
// rarest situations: at it or up to 200 ms after, in 1 ms steps, since the window a situation
// opens is usually that short (a sync burst, an fsync, a NEWLEADER round trip).
func (f *Fuzzer) directedEdit(parent *FuzzEntry) Edit {
	moments := parent.moments()
	if len(moments) == 0 {
		return f.randomEdit()
	}
	slices.SortStableFunc(moments, func(a, b Feature) int { return cmp.Compare(f.counts[a.Hash], f.counts[b.Hash]) })
	ft := moments[f.rng.Choose(min(len(moments), 4))]
	at := clock.Duration(ft.At-clock.Time(warmup)) + clock.Duration(f.rng.Choose(201))*clock.Millisecond
	total := 0
	for _, d := range directedFamilies {
		total += d.weight
	}
	pick, family := f.rng.Choose(total), FaultCrash
	for _, d := range directedFamilies {
		if pick < d.weight {
			family = d.family
			break
		}
		pick -= d.weight
	}
	e := Edit{Kind: EditAdd, At: max(at, 0), Family: family, Param: uint32(f.rng.Choose(1 << 16))}
	// Half the time the fault hits the server that reached the situation; otherwise the leader
	// (a leader change while a learner is in the middle of something) or whoever the stream draws.
	switch f.rng.Choose(4) {
	case 0, 1:
		e.Target = "zk" + strconv.FormatInt(ft.Server, 10)
	case 2:
		e.Target = "leader"
	}
	return e
}

// moments are the entry's new situations that happened at a server during the fault phase: the
// ones a fault can be aimed at. Count buckets, known only at the end of a run, have no moment.
func (e *FuzzEntry) moments() []Feature {
	var out []Feature
	for _, ft := range e.New {
		if ft.Server > 0 && ft.At >= clock.Time(warmup) {
			out = append(out, ft)
		}
	}
	return out
}

func (f *Fuzzer) randomEdit() Edit {
	return Edit{
		Kind:   EditKind(f.rng.Choose(int(editKinds))),
		Index:  f.rng.Choose(256),
		At:     clock.Duration(f.rng.Choose(int(f.opts.Duration/clock.Millisecond))) * clock.Millisecond,
		Family: FaultFamilies[f.rng.Choose(len(FaultFamilies))],
		Param:  uint32(f.rng.Choose(1 << 16)),
	}
}

// Learn takes a run's situations and reports how many no earlier run reached; a candidate that
// reached any joins the corpus with script, the scenario the run ran (Report.Script).
func (f *Fuzzer) Learn(c FuzzCandidate, script *Script, features []Feature) (*FuzzEntry, int) {
	var fresh []Feature
	keep := false
	for _, ft := range features {
		if f.counts[ft.Hash] == 0 {
			fresh = append(fresh, ft)
			f.features++
			keep = keep || !ft.Count
		}
		f.counts[ft.Hash]++
	}
	if !keep || script == nil {
		return nil, len(fresh)
	}
	e := &FuzzEntry{Seed: c.Seed, Script: script, New: fresh, Edits: c.Edits}
	f.corpus = append(f.corpus, e)
	return e, len(fresh)
}
