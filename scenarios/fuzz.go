package scenarios

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Fuzzer is the search loop's state: a corpus of scenarios that reached protocol situations no
// earlier input reached, and the counts of every situation seen. It proposes the next input to run
// (Next) and learns from each run (Learn); running is the caller's, so that simrun fuzz can run
// inputs on every core and a test can run them one by one. A Fuzzer is not safe for concurrent
// use; simrun guards it with a mutex. With one caller and the same options it proposes the same
// inputs in the same order.
//
// Next proposes one of six things:
//   - a fresh seed (the next of a counter): every proposal of the first FreshFirst, then a share
//     that adapts between FreshPercent and 90% (FreshShare), interleaved evenly (freshTurn): the
//     random swarm itself, in the swarm's order, so that the fuzzer reaches each of the swarm's
//     seeds at most 1/share times later, and keeps finding new starting points;
//   - a site injection (siteMutation): a crash, pause or reset at exactly one boundary hit of a
//     corpus entry's run or of a recent fresh seed's, the hit drawn by the rarity of its
//     situation, so that the fault is sure to fire inside a window the run is known to open;
//   - a race edit (raceMutation): at a client's create that a leader of a parent's run proposed,
//     every other voter held back for up to 3 s and the client's connections reset, so that the
//     client's retry runs while its create is proposed and not committed;
//   - a rejoin edit (rejoinMutation): at a client's write that a leader of a parent's run
//     proposed, the disks of the leader and of part of the quorum stalled, and the learners that
//     acknowledged the write cut off and brought back while it is pending, so that the leader's
//     bookkeeping of acknowledgements across a learner's departure and return decides the commit;
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
	// yield is the mean rarity reward (see Learn) of fresh seeds [0] and of mutations [1], over
	// their last runs, and yieldRuns how many runs each mean has seen.
	yield     [2]float64
	yieldRuns [2]int
	// siteCounts counts, per site key (Site.Key), the runs that reached it; recent holds the last
	// fresh runs as parents for site injections, oldest first.
	siteCounts map[uint64]int
	recent     []*FuzzEntry
	learned    int // runs learned from
	// freshCredit is the fresh proposals owed (see freshTurn).
	freshCredit float64
}

// FuzzerOptions configure a Fuzzer.
type FuzzerOptions struct {
	// SeedStart is the first fresh seed proposed; fresh seeds count up from it, as a sweep's do.
	SeedStart uint64
	// Duration is the fault phase of the runs (edits keep their faults inside it).
	Duration clock.Duration
	// FreshPercent is the least share of fresh seeds among the proposals after the first
	// FreshFirst, 1 to 100 (default 50). The share adapts above it (up to maxFreshShare) to how
	// rare the situations are that fresh seeds reach against mutations (FreshShare).
	FreshPercent int
	// FreshFirst is how many proposals are fresh seeds before the first mutation (default
	// DefaultFreshFirst; negative: none). A campaign starts as the swarm does, so that a bug the
	// swarm finds within its first seeds the fuzzer finds at the same run, and the corpus that
	// mutation starts from holds that many runs' situations rather than a handful.
	FreshFirst int
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
	// sites are the boundary hits of the entry's run (see Site), kept compact; writes are the
	// clients' writes its leaders proposed (see WriteSite), which race edits (its creates) and
	// rejoin edits aim at.
	sites  []site
	writes []writeSite
}

// writeSite is a WriteSite of a client's write as an entry keeps it.
type writeSite struct {
	at     clock.Time
	leader int32
	client int32
	create bool
}

// site is a Site as an entry keeps it: a run has hundreds of them, and the corpus hundreds of
// entries.
type site struct {
	at     clock.Time
	key    uint64
	server int32
	point  uint16 // index in crashPointNames
}

// FuzzCandidate is a proposed run: a seed, and a script unless it is a fresh seed.
type FuzzCandidate struct {
	Seed   uint64
	Script *Script // nil: the seed's own drawn scenario
	Edits  []Edit
	// Fresh says the candidate is a fresh seed (the swarm's own run).
	Fresh bool
	// Mutation names how the candidate was made: "fresh", "site", "recover" (a site injection
	// with EditRecover), "race" (EditRace), "rejoin" (EditRejoin), "directed", "reseed", "splice"
	// or "random", so that a campaign can count what each kind of proposal costs and finds.
	Mutation string
}

// DefaultFreshFirst is how many fresh seeds a campaign runs before its first mutation.
const DefaultFreshFirst = 256

// NewFuzzer returns an empty fuzzer.
func NewFuzzer(o FuzzerOptions) *Fuzzer {
	if o.FreshPercent == 0 {
		o.FreshPercent = 50
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.FreshFirst == 0 {
		o.FreshFirst = DefaultFreshFirst
	}
	return &Fuzzer{opts: o, rng: sim.NewPCG(o.RandomSeed), counts: map[uint64]int{}, siteCounts: map[uint64]int{}, nextSeed: o.SeedStart}
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
	if len(f.corpus) == 0 || f.runs <= f.opts.FreshFirst || f.freshTurn() {
		seed := f.nextSeed
		f.nextSeed++
		return FuzzCandidate{Seed: seed, Fresh: true, Mutation: "fresh"}
	}
	pick := f.rng.Choose(100)
	if pick < siteShare {
		if c, ok := f.siteMutation(); ok {
			return c
		}
	} else if pick < siteShare+raceShare {
		if c, ok := f.raceMutation(); ok {
			return c
		}
	} else if pick < siteShare+raceShare+rejoinShare {
		if c, ok := f.rejoinMutation(); ok {
			return c
		}
	}
	parent := f.pickEntry()
	parent.picks++
	// The rest of the mix: directed 15 in 40, reseeded 10, spliced 5, random 10 (a splice of
	// entries of different clusters falls back to random edits).
	switch pick = f.rng.Choose(40); {
	case pick < 15 && len(parent.moments()) > 0:
		edits := []Edit{f.directedEdit(parent)}
		return FuzzCandidate{Seed: parent.Seed, Script: ApplyEdits(parent.Script, edits), Edits: edits, Mutation: "directed"}
	case pick < 25:
		// The same faults under another seed: the run's timing (every latency, every client's
		// pick) is drawn anew, so a scenario that reached rare situations is tried at other
		// interleavings.
		seed := uint64(f.rng.Choose(1<<31))<<32 | uint64(f.rng.Choose(1<<31))
		return FuzzCandidate{Seed: seed, Script: parent.Script, Edits: []Edit{{Kind: EditReseed, Param: uint32(seed)}}, Mutation: "reseed"}
	case pick < 30:
		if other := f.corpus[f.rng.Choose(len(f.corpus))]; other != parent && sameCluster(parent.Script, other.Script) {
			at := clock.Duration(f.rng.Choose(int(f.opts.Duration/clock.Millisecond))) * clock.Millisecond
			return FuzzCandidate{Seed: parent.Seed, Script: splice(parent.Script, other.Script, at),
				Edits: []Edit{{Kind: EditSplice, At: at, Param: uint32(other.Seed)}}, Mutation: "splice"}
		}
	}
	var edits []Edit
	for n := 1 + f.rng.Choose(4); n > 0; n-- {
		edits = append(edits, f.randomEdit())
	}
	return FuzzCandidate{Seed: parent.Seed, Script: ApplyEdits(parent.Script, edits), Edits: edits, Mutation: "random"}
}

// siteShare is the percentage of mutations that are site injections (siteMutation). Measured
// with simrun fuzz's count of failing runs per kind (10 s runs, 3 clients, 2,500 runs from seed
// 1, failing runs kept out of the corpus): with epoch-refusal on, 5 of 425 site injections failed
// against 2 of 1,403 fresh seeds and 3 of 672 other mutations; with stale-ack on, 1 of 411 against
// none of the others.
const siteShare = 60

// raceShare is the percentage of mutations that are race edits (raceMutation), when the parent's
// run has a client's create to aim at. Measured outside the fuzzer (lock workload, 10 s runs, 3
// clients, seeds 1 to 100 with curator-unsynced-search, ten edits of each passing run at one of its
// creates, every failure checked to pass without the switch): a pause of the voters but the leader
// for 250 ms to 3 s with the client reset failed 121 times in 940 runs, a clog instead 67 times, a
// clog without the reset once (the client then waits for its session's timeout and the quorum is
// back first); fresh seeds fail about 1.5 times in 1,000.
const raceShare = 10

// rejoinShare is the percentage of mutations that are rejoin edits (rejoinMutation), when the
// parent's run has a client's write to aim at and three voters or more. Measured outside the
// fuzzer (10 s runs, 3 clients, seeds 1 to 100 with stale-ack, ten rejoin edits of each run at its
// writes; build be9d871): 372 of 970 edits failed, each passing without the switch, against no
// fresh seed; 1,970 edits of seeds 1 to 200 without any switch all passed.
const rejoinShare = 10

// recoverShare is the percentage of site injections that let the rest of the ensemble recover
// after the fault (EditRecover): the parent's later faults dropped, the network healed, every
// other server started. A swarm run is fault-heavy, and a fault placed exactly in a rare window
// is often followed by others that keep a quorum from forming, so the recovery that would meet
// the faulted server's state (a new leader's sync of it, a TRUNC, a DIFF across its gap) never
// comes; the swarm reaches it only when its draws happen to leave a quorum alone.
const recoverShare = 33

// recentRuns is how many of the last fresh runs site injections take parents from.
const recentRuns = 64

// maxSiteWeight bounds how much likelier a rare site's situation is picked than a common one's.
const maxSiteWeight = 16

// siteMutation proposes a site injection: a crash, a pause or a connection reset at exactly one
// boundary hit of a parent's run (see Site), so that the fault is sure to fire, in a run that is
// the parent's up to that hit. Half the parents are corpus entries (pickEntry), half the last
// fresh runs: the swarm's own runs, as eventful as the swarm's and as varied, with a fault that
// the swarm's BUGGIFY arms only by luck at a boundary the run reaches. The site is drawn in two
// steps: first a situation (Site.Key: boundary, phase, role, previous step) among those the run
// reached, weighted by its rarity across the campaign (runs over the runs that reached it, from 1
// to maxSiteWeight), then one of that situation's hits. Drawing situations rather than hits keeps
// the few hits of a sync (a NEWLEADER's epoch write, a TRUNC) from drowning among the hundreds of
// appends and sends of a broadcast phase; weighting by rarity is AFLFast's power schedule over
// situations instead of paths.
func (f *Fuzzer) siteMutation() (FuzzCandidate, bool) {
	parent := f.injectionParent()
	if parent == nil || len(parent.sites) == 0 {
		return FuzzCandidate{}, false
	}
	groups := groupSites(parent.sites)
	members := groups[f.drawByRarity(groups)].members
	x := parent.sites[members[f.rng.Choose(len(members))]]
	edit := Edit{Kind: EditInject, At: max(clock.Duration(x.at-clock.Time(warmup))-clock.Nanosecond, 0), Point: crashPointNames[x.point],
		Target: "zk" + strconv.FormatInt(int64(x.server), 10), Param: uint32(f.rng.Choose(1 << 16))}
	parent.picks++
	edits, kind := []Edit{edit}, "site"
	if f.rng.Choose(100) < recoverShare {
		edits, kind = append(edits, Edit{Kind: EditRecover, At: edit.At + clock.Millisecond, Target: edit.Target}), "recover"
	}
	return FuzzCandidate{Seed: parent.Seed, Script: ApplyEdits(parent.Script, edits), Edits: edits, Mutation: kind}, true
}

// injectionParent draws the run an injection aims at: one of the last fresh runs or a corpus
// entry, half and half when there are both, or nil when there is neither.
func (f *Fuzzer) injectionParent() *FuzzEntry {
	if len(f.recent) > 0 && (len(f.corpus) == 0 || f.rng.Choose(2) == 0) {
		return f.recent[f.rng.Choose(len(f.recent))]
	}
	if len(f.corpus) > 0 {
		return f.pickEntry()
	}
	return nil
}

// raceMutation proposes a race edit (EditRace) at one client's create that a leader of a parent's
// run proposed: the parent is a corpus entry or one of the last fresh runs, as for a site
// injection, and the create is drawn uniformly among the parent's. A recipe's reconnect races
// (a protected-mode create's search that runs before the create it looks for commits) need a
// write outstanding at the leader for longer than the client takes to notice a lost connection
// and come back; the swarm makes that only when its faults happen to starve a quorum while a
// client's connection breaks (a swizzle that clogs most voters, a pause, a session that times
// out), and no single fault at a boundary makes both.
func (f *Fuzzer) raceMutation() (FuzzCandidate, bool) {
	parent := f.injectionParent()
	if parent == nil {
		return FuzzCandidate{}, false
	}
	creates := make([]writeSite, 0, len(parent.writes))
	for _, w := range parent.writes {
		if w.create {
			creates = append(creates, w)
		}
	}
	if len(creates) == 0 {
		return FuzzCandidate{}, false
	}
	w := creates[f.rng.Choose(len(creates))]
	edit := Edit{Kind: EditRace, At: clock.Duration(w.at - clock.Time(warmup)), Target: "zk" + strconv.FormatInt(int64(w.leader), 10),
		Client: "c" + strconv.FormatInt(int64(w.client), 10), Param: uint32(f.rng.Choose(1 << 16))}
	parent.picks++
	edits := []Edit{edit}
	return FuzzCandidate{Seed: parent.Seed, Script: ApplyEdits(parent.Script, edits), Edits: edits, Mutation: "race"}, true
}

// rejoinMutation proposes a rejoin edit (EditRejoin) at one client's write that a leader of a
// parent's run proposed, drawn uniformly among the parent's writes: the parent is a corpus entry or
// one of the last fresh runs, as for a site injection. A leader's bookkeeping of acknowledgements
// across a learner's departure and return (which ones still count after the learner truncated or
// re-logged what it acknowledged) needs a proposal that stays pending while the learners that
// acknowledged it leave and sync again, and is then decided by acknowledgements of both sides of
// that rejoin; the swarm makes that only when its faults happen to starve the quorum (a clog, a
// partition, a stalled disk) while those learners' connections break, and no single fault at a
// boundary makes both.
func (f *Fuzzer) rejoinMutation() (FuzzCandidate, bool) {
	parent := f.injectionParent()
	if parent == nil || len(parent.writes) == 0 || parent.Script.Servers < 3 {
		return FuzzCandidate{}, false
	}
	w := parent.writes[f.rng.Choose(len(parent.writes))]
	edit := Edit{Kind: EditRejoin, At: clock.Duration(w.at - clock.Time(warmup)), Target: "zk" + strconv.FormatInt(int64(w.leader), 10),
		Param: uint32(f.rng.Choose(1 << 16))}
	parent.picks++
	edits := []Edit{edit}
	return FuzzCandidate{Seed: parent.Seed, Script: ApplyEdits(parent.Script, edits), Edits: edits, Mutation: "rejoin"}, true
}

// compactWrites keeps a run's client writes inside its fault phase, for race and rejoin edits.
func compactWrites(writes []WriteSite, duration clock.Duration) []writeSite {
	var out []writeSite
	for _, w := range writes {
		if w.At < clock.Time(warmup) || w.At >= clock.Time(warmup)+clock.Time(duration) {
			continue
		}
		kind, n, ok := parseTarget(w.Client)
		if !ok || kind != aClient {
			continue
		}
		out = append(out, writeSite{at: w.At, leader: int32(w.Leader), client: int32(n), create: w.Op == proto.OpCreate || w.Op == proto.OpCreate2})
	}
	return out
}

// siteGroup is the hits (indexes into an entry's sites) of one situation.
type siteGroup struct {
	key     uint64
	members []int32
}

// groupSites groups an entry's sites by situation (Site.Key), in the order first hit.
func groupSites(sites []site) []siteGroup {
	index := map[uint64]int{}
	var groups []siteGroup
	for i, x := range sites {
		j, ok := index[x.key]
		if !ok {
			j = len(groups)
			index[x.key] = j
			groups = append(groups, siteGroup{key: x.key})
		}
		groups[j].members = append(groups[j].members, int32(i))
	}
	return groups
}

// drawByRarity draws one of groups, each weighted by its situation's rarity across the campaign:
// the runs learned over the runs that reached it, from 1 to maxSiteWeight.
func (f *Fuzzer) drawByRarity(groups []siteGroup) int {
	weights := make([]int, len(groups))
	total := 0
	for j, g := range groups {
		weights[j] = min(max((f.learned+1)/(f.siteCounts[g.key]+1), 1), maxSiteWeight)
		total += weights[j]
	}
	pick, j := f.rng.Choose(total), 0
	for ; pick >= weights[j]; j++ {
		pick -= weights[j]
	}
	return j
}

// freshTurn says whether this proposal is a fresh seed: the shares (FreshShare) of the proposals
// since the first FreshFirst accumulate as a credit, and a fresh seed spends a whole one. Unlike a
// draw per proposal, this interleaves fresh seeds and mutations evenly, so that after r proposals
// past the first FreshFirst at least the sum of their shares less one were fresh: the fuzzer
// reaches the swarm's seed N by run FreshFirst + (N - FreshFirst) / share + 1 at the latest, never
// later by chance, and a mutation can only bring a find forward.
func (f *Fuzzer) freshTurn() bool {
	f.freshCredit += f.FreshShare()
	if f.freshCredit >= 1 {
		f.freshCredit--
		return true
	}
	return false
}

// maxFreshShare caps the adaptive share of fresh seeds, so that mutation keeps a tenth of the
// runs and can show that it reaches rarer situations again.
const maxFreshShare = 0.9

// yieldWindow is how many recent runs the rarity means of fresh seeds and mutations follow.
const yieldWindow = 128

// FreshShare is the share of fresh seeds among the next proposals (after the first FreshFirst):
// probability matching on the two kinds' rarity rewards, the fresh seeds' mean reward over the sum
// of both means, between FreshPercent and maxFreshShare. Fresh seeds are the swarm; where
// mutations reach rare situations no more often than the swarm does (a bug the protocol-state
// coverage does not see, such as a lock recipe's), the fuzzer becomes mostly the swarm, and where
// they reach them more often, it mutates more.
func (f *Fuzzer) FreshShare() float64 {
	least := float64(f.opts.FreshPercent) / 100
	if f.yieldRuns[0] < 16 || f.yieldRuns[1] < 16 || f.yield[0]+f.yield[1] <= 0 {
		return least
	}
	return min(max(f.yield[0]/(f.yield[0]+f.yield[1]), least), max(maxFreshShare, least))
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
	reached := clock.Duration(ft.At - clock.Time(warmup))
	server := "zk" + strconv.FormatInt(ft.Server, 10)
	switch {
	case ft.Point != "" && f.rng.Choose(2) == 0:
		// The situation is an effect boundary reached: arm an injection there a nanosecond before
		// the parent reached it, so that it fires at exactly that hit, in a run that is the
		// parent's up to that moment.
		return Edit{Kind: EditInject, At: max(reached-clock.Nanosecond, 0), Point: ft.Point, Target: server, Param: uint32(f.rng.Choose(1 << 16))}
	case f.rng.Choose(3) == 0:
		// An injection at whichever boundary of a random kind the server reaches next after the
		// situation: the effect it takes next, cut in two.
		return Edit{Kind: EditInject, At: reached, Index: f.rng.Choose(len(crashPointNames)), Target: server, Param: uint32(f.rng.Choose(1 << 16))}
	}
	at := reached + clock.Duration(f.rng.Choose(201))*clock.Millisecond
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
		e.Target = server
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

// Learn takes a run's situations and boundary hits and reports how many situations no earlier run
// reached; a candidate that reached any joins the corpus with script, the scenario the run ran
// (Report.Script). A fresh seed's run is also kept among the recent runs that site injections
// take parents from (see siteMutation), whether it joins the corpus or not.
//
// It also scores the run's rarity: the sum, over the situations it reached (count buckets
// aside), of one over how many runs reached each, this one included. A new situation scores 1, one
// that a tenth of the runs reach a tenth; a run that reaches rare situations again scores high
// too, since a bug lives next to a rare situation more often than next to a common one. The
// scores of fresh seeds and of mutations steer FreshShare.
func (f *Fuzzer) Learn(c FuzzCandidate, script *Script, features []Feature, sites []Site, writes []WriteSite) (*FuzzEntry, int) {
	var fresh []Feature
	keep := false
	reward := 0.0
	for _, ft := range features {
		if f.counts[ft.Hash] == 0 {
			fresh = append(fresh, ft)
			f.features++
			keep = keep || !ft.Count
		}
		f.counts[ft.Hash]++
		if !ft.Count {
			reward += 1 / float64(f.counts[ft.Hash])
		}
	}
	f.learned++
	compact := make([]site, 0, len(sites))
	counted := map[uint64]bool{}
	for _, x := range sites {
		point, ok := boundaryIndex[x.Point]
		if !ok {
			continue
		}
		compact = append(compact, site{at: x.At, key: x.Key, server: int32(x.Server), point: uint16(point)})
		if !counted[x.Key] {
			counted[x.Key] = true
			f.siteCounts[x.Key]++
		}
	}
	arm := 1
	if c.Fresh {
		arm = 0
	}
	f.yieldRuns[arm]++
	f.yield[arm] += (reward - f.yield[arm]) / float64(min(f.yieldRuns[arm], yieldWindow))
	if script == nil {
		return nil, len(fresh)
	}
	var e *FuzzEntry
	creates := compactWrites(writes, f.opts.Duration)
	if keep {
		e = &FuzzEntry{Seed: c.Seed, Script: script, New: fresh, Edits: c.Edits, sites: compact, writes: creates}
		f.corpus = append(f.corpus, e)
	}
	if c.Fresh {
		recent := e
		if recent == nil {
			recent = &FuzzEntry{Seed: c.Seed, Script: script, sites: compact, writes: creates}
		}
		if len(f.recent) == recentRuns {
			f.recent = append(f.recent[:0], f.recent[1:]...)
		}
		f.recent = append(f.recent, recent)
	}
	return e, len(fresh)
}
