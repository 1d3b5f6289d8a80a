package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestCoverageOnlyWatches: collecting a run's protocol situations changes nothing in the run (same
// trace hash), and a run reaches situations of every layer of the abstraction: steps, transitions,
// durable-state relations and fault contexts.
func TestCoverageOnlyWatches(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 7} {
		plain, err := Run(Options{Seed: seed, Duration: 20 * clock.Second})
		require.NoError(t, err)
		cov := NewCoverage()
		watched, err := Run(Options{Seed: seed, Duration: 20 * clock.Second, Coverage: cov})
		require.NoError(t, err)
		assert.Equal(t, plain.Outcome.TraceHash, watched.Outcome.TraceHash, "seed %d", seed)
		features := cov.Features()
		require.NotEmpty(t, features, "seed %d", seed)
		kinds := map[string]bool{}
		for _, f := range features {
			for _, prefix := range []string{"step ", "transition ", "durable ", "fault ", "after "} {
				if len(f.Name) > len(prefix) && f.Name[:len(prefix)] == prefix {
					kinds[prefix] = true
				}
			}
		}
		for _, prefix := range []string{"step ", "transition ", "durable "} {
			assert.True(t, kinds[prefix], "seed %d reached no %q situation", seed, prefix)
		}
	}
}

// TestCoverageSeesFaultContext: a scripted crash of the leader shows up as a fault situation with
// the phase it hit, and the steps the server took after it.
func TestCoverageSeesFaultContext(t *testing.T) {
	s := &Script{Servers: 3, Observers: 0, Clients: 2, Workload: "registers", Duration: 10 * clock.Second,
		Actions: []Action{{At: 2 * clock.Second, Verb: "crash", Args: []string{"leader"}}, {At: 4 * clock.Second, Verb: "restart", Args: []string{"all"}}}}
	cov := NewCoverage()
	_, err := Run(Options{Seed: 1, Script: s, Coverage: cov})
	require.NoError(t, err)
	var fault, after bool
	for _, f := range cov.Features() {
		fault = fault || strings.HasPrefix(f.Name, "fault crash in broadcast")
		after = after || strings.HasPrefix(f.Name, "after crash: [restart")
	}
	assert.True(t, fault, "a crash of the serving leader is a fault in broadcast")
	assert.True(t, after, "the crashed server's next steps are recorded")
}

func TestCountBucket(t *testing.T) {
	for n, want := range map[int]int{1: 1, 2: 2, 3: 3, 4: 4, 7: 4, 8: 5, 15: 5, 16: 6, 31: 6, 32: 7, 127: 7, 128: 8, 5000: 8} {
		assert.Equal(t, want, countBucket(n), "count %d", n)
	}
}

// TestFuzzBytesRoundTrip: decoding an encoded input gives it back, up to the encoding's
// quantization (times to 1/65536 of the duration, indexes and parameters to a byte).
func TestFuzzBytesRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		duration := clock.Duration(rapid.Int64Range(int64(clock.Second), int64(clock.Hour)).Draw(t, "duration"))
		in := FuzzInput{Seed: rapid.Uint64().Draw(t, "seed")}
		for i := rapid.IntRange(0, maxFuzzEdits).Draw(t, "edits"); i > 0; i-- {
			in.Edits = append(in.Edits, Edit{
				Kind:   EditKind(rapid.IntRange(0, int(editKinds)-1).Draw(t, "kind")),
				Index:  rapid.IntRange(0, 255).Draw(t, "index"),
				At:     clock.Duration(rapid.Int64Range(0, int64(duration)-1).Draw(t, "at")),
				Family: rapid.SampledFrom(FaultFamilies).Draw(t, "family"),
				Param:  uint32(rapid.IntRange(0, 255).Draw(t, "param")),
			})
		}
		out := DecodeFuzzBytes(EncodeFuzzBytes(in, duration), duration)
		require.Equal(t, in.Seed, out.Seed)
		require.Len(t, out.Edits, len(in.Edits))
		for i := range in.Edits {
			a, b := in.Edits[i], out.Edits[i]
			assert.Equal(t, a.Kind, b.Kind)
			assert.Equal(t, a.Index, b.Index)
			assert.Equal(t, a.Family, b.Family)
			assert.Equal(t, a.Param, b.Param)
			assert.InDelta(t, float64(a.At), float64(b.At), float64(duration)/65536+1)
		}
	})
}

// TestEditedScriptsStayValid: any edits of any seed's drawn scenario give a script that passes the
// same checks as a parsed one, whose text form parses back to it, and that runs.
func TestEditedScriptsStayValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64Range(1, 1000).Draw(t, "seed")
		base, err := DrawScript(Options{Seed: seed, Observers: -1, Duration: 10 * clock.Second})
		require.NoError(t, err)
		data := rapid.SliceOfN(rapid.Byte(), 0, fuzzEditBytes*maxFuzzEdits).Draw(t, "edits")
		edits := DecodeFuzzBytes(append(make([]byte, 8), data...), base.Duration).Edits
		// And edits as the fuzzer makes them: any parameter, and faults aimed at a server.
		servers := base.Servers + base.Observers
		for i := rapid.IntRange(0, 6).Draw(t, "aimed"); i > 0; i-- {
			e := Edit{
				Kind:   EditKind(rapid.IntRange(0, int(editKinds)-1).Draw(t, "kind")),
				Index:  rapid.IntRange(0, 1000).Draw(t, "index"),
				At:     clock.Duration(rapid.Int64Range(-int64(clock.Second), int64(base.Duration)+int64(clock.Second)).Draw(t, "at")),
				Family: rapid.SampledFrom(FaultFamilies).Draw(t, "family"),
				Param:  rapid.Uint32().Draw(t, "param"),
			}
			if e.Kind == EditAdd {
				e.Target = rapid.SampledFrom([]string{"", "leader", "zk" + strconv.Itoa(rapid.IntRange(1, servers).Draw(t, "server"))}).Draw(t, "target")
			}
			edits = append(edits, e)
		}
		edited := ApplyEdits(base, edits)
		require.NoError(t, edited.check(DefaultClients, base.Duration, nil), "%s", edited)
		text := FormatFuzzScript(seed, edited)
		gotSeed, parsed, err := ParseFuzzScript(text)
		require.NoError(t, err, text)
		assert.Equal(t, seed, gotSeed)
		assert.Equal(t, edited.String(), parsed.String())
	})
}

// TestFuzzScriptNeedsItsSeed: a corpus file without its seed line is refused, not run as seed 0.
func TestFuzzScriptNeedsItsSeed(t *testing.T) {
	_, _, err := ParseFuzzScript("servers 3\nduration 10s\n")
	require.ErrorContains(t, err, "seed")
	_, _, err = ParseFuzzScript("# seed x\nservers 3\n")
	require.ErrorContains(t, err, "seed")
}

// TestFuzzerProposesFreshSeedsAndMutations: an empty fuzzer proposes fresh seeds in order; once
// its corpus has an entry with new situations, it proposes mutations of it too, directed ones
// aimed at the server and moment of those situations.
func TestFuzzerProposesFreshSeedsAndMutations(t *testing.T) {
	f := NewFuzzer(FuzzerOptions{SeedStart: 100, Duration: 10 * clock.Second, RandomSeed: 1, FreshFirst: -1, FreshPercent: 30})
	first := f.Next()
	require.True(t, first.Fresh)
	require.Equal(t, uint64(100), first.Seed)
	script, err := DrawScript(Options{Seed: 100, Observers: -1, Duration: 10 * clock.Second})
	require.NoError(t, err)
	entry, fresh := f.Learn(first, script, []Feature{{Hash: 7, Count: true}}, nil, nil)
	require.Equal(t, 1, fresh)
	require.Nil(t, entry, "a new count bucket alone keeps no input")
	entry, fresh = f.Learn(first, script, []Feature{{Hash: 1, At: clock.Time(warmup + 3*clock.Second), Server: 2}}, nil, nil)
	require.Equal(t, 1, fresh)
	require.NotNil(t, entry)
	_, fresh = f.Learn(first, script, []Feature{{Hash: 1}}, nil, nil)
	require.Zero(t, fresh, "a situation already seen is not new")

	var directed, mutated, reseeded int
	for i := 0; i < 200; i++ {
		c := f.Next()
		if c.Fresh {
			continue
		}
		mutated++
		if len(c.Edits) == 1 && c.Edits[0].Kind == EditReseed {
			reseeded++
			require.Same(t, script, c.Script, "a reseed keeps the scenario")
			continue
		}
		require.Equal(t, uint64(100), c.Seed)
		require.NoError(t, c.Script.check(DefaultClients, 10*clock.Second, nil))
		if len(c.Edits) == 1 && (c.Edits[0].Kind == EditAdd || c.Edits[0].Kind == EditInject) && c.Edits[0].Target == "zk2" {
			directed++
			assert.GreaterOrEqual(t, c.Edits[0].At, 3*clock.Second)
			assert.LessOrEqual(t, c.Edits[0].At, 3*clock.Second+200*clock.Millisecond)
		}
	}
	assert.Greater(t, mutated, 100, "most proposals mutate the corpus")
	assert.Greater(t, directed, 25, "many mutations aim at a new situation")
	assert.Greater(t, reseeded, 20, "some run the same faults under another seed")
}

// TestFuzzerStartsAsTheSwarm: the first FreshFirst proposals are the fresh seeds in order, whatever
// the corpus holds, so a campaign's first runs are the swarm's first seeds.
func TestFuzzerStartsAsTheSwarm(t *testing.T) {
	f := NewFuzzer(FuzzerOptions{SeedStart: 7, Duration: 10 * clock.Second, RandomSeed: 1, FreshFirst: 50, FreshPercent: 20})
	script, err := DrawScript(Options{Seed: 7, Observers: -1, Duration: 10 * clock.Second})
	require.NoError(t, err)
	for i := uint64(0); i < 50; i++ {
		c := f.Next()
		require.True(t, c.Fresh, "proposal %d", i)
		require.Equal(t, 7+i, c.Seed)
		f.Learn(c, script, []Feature{{Hash: 100 + i, At: clock.Time(warmup + clock.Second), Server: 1}}, nil, nil)
	}
	mutated := 0
	for range 100 {
		if !f.Next().Fresh {
			mutated++
		}
	}
	assert.Greater(t, mutated, 60, "after the fresh seeds, most proposals mutate the corpus (at least four in five)")
}

// TestRetargetNeverNamesANodeTwice: retargeting a partition or a one-way cut at a node it already
// names leaves it as it was (a node in two groups is an invalid script).
func TestRetargetNeverNamesANodeTwice(t *testing.T) {
	base := &Script{Servers: 3, Observers: 0, Clients: 2, Duration: 10 * clock.Second, Actions: []Action{
		{At: clock.Second, Verb: "partition", Args: []string{"zk1", "zk2", "|", "zk3"}},
		{At: 2 * clock.Second, Verb: "oneway", Args: []string{"zk1", "zk3"}},
	}}
	for pick := uint32(0); pick < 4; pick++ {
		for index := 0; index < 2; index++ {
			edited := ApplyEdits(base, []Edit{{Kind: EditRetarget, Index: index, Param: pick}})
			require.NoError(t, edited.check(2, 10*clock.Second, nil), "retarget #%d by %d:\n%s", index, pick, edited)
		}
	}
}

// TestInjectionAtAReachedBoundaryLandsOnIt: the fuzzer's directed injection (EditInject armed a
// nanosecond before a boundary a run reached, on that server) fires at exactly that hit, because
// the edited run is the parent's up to that moment. This is what makes a rare situation's moment
// a target rather than a hint.
func TestInjectionAtAReachedBoundaryLandsOnIt(t *testing.T) {
	options := Options{Seed: 5, Observers: -1, Clients: 3, Duration: 10 * clock.Second}
	base, err := DrawScript(options)
	require.NoError(t, err)
	cov := NewCoverage()
	options.Script, options.Coverage = base, cov
	_, err = Run(options)
	require.NoError(t, err)
	var landed int
	for _, ft := range cov.Features() {
		if ft.Point == "" || ft.At < clock.Time(warmup) || landed == 3 {
			continue
		}
		at := clock.Duration(ft.At-clock.Time(warmup)) - clock.Nanosecond
		// Param 0 is a crash; its target is the server that reached the boundary.
		edited := ApplyEdits(base, []Edit{{Kind: EditInject, At: at, Point: ft.Point, Target: "zk" + strconv.FormatInt(ft.Server, 10)}})
		after := NewCoverage()
		_, err := Run(Options{Seed: 5, Observers: -1, Clients: 3, Duration: 10 * clock.Second, Script: edited, Coverage: after})
		require.NoError(t, err)
		fired := false
		for _, g := range after.Features() {
			if strings.HasPrefix(g.Name, "fault crashpoint "+ft.Point+" ") && g.Server == ft.Server {
				assert.Equal(t, ft.At, g.At, "the crash at %s on zk%d fires at the hit the parent reached", ft.Point, ft.Server)
				fired = true
				break
			}
		}
		assert.True(t, fired, "a crash armed before %s on zk%d fires", ft.Point, ft.Server)
		landed++
	}
	require.Equal(t, 3, landed, "seed 5 reaches boundaries in its fault phase")
}

// TestSitesAreFirstHitsPerPhase: a run's sites are boundary hits of the fault phase, each the first
// of its boundary on its server since that server's role or phase changed, so a sync's few hits
// are sites beside a broadcast's many; and a site injection proposed from that run arms exactly
// one of them (its point, its server, a nanosecond before its moment), preferring situations few
// runs reached.
func TestSitesAreFirstHitsPerPhase(t *testing.T) {
	options := Options{Seed: 5, Observers: -1, Clients: 3, Duration: 10 * clock.Second}
	cov := NewCoverage()
	options.Coverage = cov
	var hits int
	options.OnCrashPoint = func(CrashPointHit) { hits++ }
	rep, err := Run(options)
	require.NoError(t, err)
	sites := cov.Sites()
	require.NotEmpty(t, sites, "seed 5 reaches boundaries in its fault phase")
	assert.Less(t, len(sites), hits, "a boundary hit again in the same phase is not a new site")
	type place struct {
		server int64
		point  string
		at     clock.Time
	}
	reached := map[place]bool{}
	for _, s := range sites {
		assert.GreaterOrEqual(t, s.At, clock.Time(warmup), "a site is in the fault phase")
		reached[place{s.Server, s.Point, s.At}] = true
	}

	f := NewFuzzer(FuzzerOptions{SeedStart: 5, Duration: 10 * clock.Second, RandomSeed: 3, FreshFirst: 1, FreshPercent: 1})
	first := f.Next()
	require.True(t, first.Fresh)
	f.Learn(first, rep.Script, cov.Features(), sites, nil)
	proposed := proposalsOf(t, f, "site", 200)
	for _, c := range proposed {
		e := c.Edits[0]
		require.Equal(t, EditInject, e.Kind)
		server, err := strconv.ParseInt(strings.TrimPrefix(e.Target, "zk"), 10, 64)
		require.NoError(t, err)
		assert.True(t, reached[place{server, e.Point, clock.Time(warmup) + clock.Time(e.At+clock.Nanosecond)}],
			"%s arms a boundary hit the parent reached", e)
		require.NoError(t, c.Script.check(3, 10*clock.Second, nil))
	}
	assert.Greater(t, len(proposed), 40, "site injections are a large share of the mutations")
}

// proposalsOf has f propose n times and returns the proposals of the given kind of mutation,
// each checked to carry exactly one edit.
func proposalsOf(t *testing.T, f *Fuzzer, kind string, n int) []FuzzCandidate {
	t.Helper()
	var out []FuzzCandidate
	for range n {
		if c := f.Next(); c.Mutation == kind {
			require.Len(t, c.Edits, 1)
			out = append(out, c)
		}
	}
	return out
}

// TestSiteInjectionsPreferRareSituations: of a parent's sites, those of a situation few runs
// reached are armed far more often than their share of the parent's hits: a power schedule over
// situations rather than over hits.
func TestSiteInjectionsPreferRareSituations(t *testing.T) {
	script, err := DrawScript(Options{Seed: 5, Observers: -1, Clients: 3, Duration: 10 * clock.Second})
	require.NoError(t, err)
	common, rare := CrashPoints()[0], CrashPoints()[1]
	at := func(i int) clock.Time { return clock.Time(warmup) + clock.Time(i+1)*clock.Time(clock.Millisecond) }
	f := NewFuzzer(FuzzerOptions{SeedStart: 5, Duration: 10 * clock.Second, RandomSeed: 9, FreshFirst: 1, FreshPercent: 1})
	for i := range 30 {
		// Runs that reached only the common situation, and join neither the corpus nor the recent runs.
		f.Learn(FuzzCandidate{Seed: 1000 + uint64(i), Mutation: "random"}, nil, nil, []Site{{Server: 1, Point: common, At: at(0), Key: 1}}, nil)
	}
	var sites []Site
	for i := range 10 {
		sites = append(sites, Site{Server: 1, Point: common, At: at(i), Key: 1})
	}
	sites = append(sites, Site{Server: 2, Point: rare, At: at(10), Key: 2})
	parent := f.Next()
	require.True(t, parent.Fresh)
	f.Learn(parent, script, []Feature{{Hash: 1, At: at(0), Server: 1}}, sites, nil)
	counts := map[string]int{}
	for range 400 {
		if c := f.Next(); c.Mutation == "site" {
			counts[c.Edits[0].Point]++
		}
	}
	require.Greater(t, counts[common]+counts[rare], 100)
	assert.Greater(t, counts[rare], 4*counts[common], "the rare situation's one hit is armed more often than the common one's ten: %v", counts)
}

// fuzzerWithWrites returns a fuzzer whose only run so far, a lock workload's with the given
// voters and observers, proposed three client writes: a create at 2 s of the fault phase by zk1
// for c2, a setData at 3 s by zk2 for c1, and a create by zk3 in the warm-up.
func fuzzerWithWrites(t *testing.T, servers, observers int) *Fuzzer {
	t.Helper()
	script, err := DrawScript(Options{Seed: 5, Servers: servers, Observers: observers, Clients: 3, Duration: 10 * clock.Second, Workload: "lock"})
	require.NoError(t, err)
	f := NewFuzzer(FuzzerOptions{SeedStart: 5, Duration: 10 * clock.Second, RandomSeed: 9, FreshFirst: 1, FreshPercent: 1})
	parent := f.Next()
	require.True(t, parent.Fresh)
	writes := []WriteSite{
		{At: clock.Time(warmup + 2*clock.Second), Leader: 1, Client: "c2", Op: proto.OpCreate2},
		{At: clock.Time(warmup + 3*clock.Second), Leader: 2, Client: "c1", Op: proto.OpSetData},
		{At: clock.Time(clock.Second), Leader: 3, Client: "c3", Op: proto.OpCreate},
	}
	f.Learn(parent, script, []Feature{{Hash: 1}}, nil, writes)
	return f
}

// TestRaceEditsAimAtAParentsCreates: race edits arm at a client's create that the parent's run
// proposed, with its leader and client: every other voter held back at that moment and the
// client's connections reset a millisecond later; writes that are not creates, or that fall in
// the warm-up, are never aimed at.
func TestRaceEditsAimAtAParentsCreates(t *testing.T) {
	f := fuzzerWithWrites(t, 3, 0)
	proposed := proposalsOf(t, f, "race", 400)
	for _, c := range proposed {
		e := c.Edits[0]
		assert.Equal(t, Edit{Kind: EditRace, At: 2 * clock.Second, Target: "zk1", Client: "c2", Param: e.Param}, e)
		verb, length := raceHold(e.Param)
		var added []string
		for _, a := range c.Script.Actions {
			if a.At == 2*clock.Second && a.Verb == verb || a.At == 2*clock.Second+clock.Millisecond && a.Verb == "reset" {
				added = append(added, a.String())
			}
		}
		assert.Equal(t, []string{
			fmt.Sprintf("at 2s %s zk2 %s", verb, formatDuration(length)), fmt.Sprintf("at 2s %s zk3 %s", verb, formatDuration(length)), "at 2.001s reset c2",
		}, added)
		require.NoError(t, c.Script.check(3, 10*clock.Second, nil))
	}
	assert.Greater(t, len(proposed), 10, "race edits are a share of the mutations")
}
