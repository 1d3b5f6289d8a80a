package zab

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel"
)

// drawRun generates a correct ZAB execution with the reference model.
func drawRun(t *rapid.T) (*refModel, []zabmodel.Event) { return drawRunOf(t, []int{3, 3, 5}) }

// drawRunOf generates a correct ZAB execution among a number of voters drawn from sizes.
func drawRunOf(t *rapid.T, sizes []int) (*refModel, []zabmodel.Event) {
	voters := rapid.SampledFrom(sizes).Draw(t, "voters")
	observers := rapid.IntRange(0, 1).Draw(t, "observers")
	m := newRefModel(voters, observers, func(what string, n int) int {
		return rapid.IntRange(0, n-1).Draw(t, what)
	})
	events := m.run(rapid.IntRange(20, 400).Draw(t, "steps"))
	return m, events
}

func describeEvents(events []zabmodel.Event) string {
	var b strings.Builder
	for i, e := range events {
		fmt.Fprintf(&b, "%4d %s hash=%#x count=%d\n", i, e, e.Hash, e.Count)
	}
	return b.String()
}

func invariantsOf(violations []Violation) []Invariant {
	var out []Invariant
	for _, v := range violations {
		out = append(out, v.Invariant)
	}
	return out
}

// TestReferenceExecutionsPass: every execution of the reference model is correct ZAB, so the
// checker must find nothing in it.
func TestReferenceExecutionsPass(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, events := drawRun(t)
		violations, err := Check(m.config(), events)
		require.NoError(t, err)
		if len(violations) > 0 {
			t.Fatalf("a correct execution was reported:\n%v\nevents:\n%s", violations[0], describeEvents(events))
		}
	})
}

// TestEvenReferenceExecutionsPass is TestReferenceExecutionsPass among 2, 4 and 6 voters, whose
// quorums (2, 3 and 4) are more than half: the checker must take them for the quorums they are.
func TestEvenReferenceExecutionsPass(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, events := drawRunOf(t, []int{2, 4, 6})
		violations, err := Check(m.config(), events)
		require.NoError(t, err)
		if len(violations) > 0 {
			t.Fatalf("a correct execution among %d voters was reported:\n%v\nevents:\n%s", m.voters, violations[0], describeEvents(events))
		}
	})
}

// TestMutatedExecutionsFail: breaking one invariant in a correct execution must be reported under
// that invariant's name.
func TestMutatedExecutionsFail(t *testing.T) {
	checkMutatedExecutionsFail(t, []int{3, 3, 5})
}

// TestEvenMutatedExecutionsFail is TestMutatedExecutionsFail among 2, 4 and 6 voters.
func TestEvenMutatedExecutionsFail(t *testing.T) {
	checkMutatedExecutionsFail(t, []int{2, 4, 6})
}

func checkMutatedExecutionsFail(t *testing.T, sizes []int) {
	seen := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		m, events := drawRunOf(t, sizes)
		var applicable []mutation
		for _, candidate := range mutations {
			if len(candidate.sites(m, events)) > 0 {
				applicable = append(applicable, candidate)
			}
		}
		if len(applicable) == 0 {
			t.Skip("no mutation applies to this execution")
		}
		chosen := rapid.SampledFrom(applicable).Draw(t, "mutation")
		sites := chosen.sites(m, events)
		site := sites[rapid.IntRange(0, len(sites)-1).Draw(t, "site")]
		mutated := chosen.apply(m, events, site)
		seen[chosen.name]++
		violations, err := Check(m.config(), mutated)
		require.NoError(t, err)
		if !slices.Contains(invariantsOf(violations), chosen.expect) {
			t.Fatalf("mutation %s at event %d: want %s, got %v\nevents:\n%s",
				chosen.name, site, chosen.expect, violations, describeEvents(mutated))
		}
	})
	t.Logf("mutations applied: %v", seen)
}

// TestEveryMutationIsReported: the property above samples mutations, so it could pass without
// ever trying one. Here each mutation is tried on the first of a fixed series of seeded
// reference executions where it applies, at every one of its sites, and must be reported under
// its invariant each time; a mutation that applies to none of them fails the test.
func TestEveryMutationIsReported(t *testing.T) {
	const executions = 200
	for _, mut := range mutations {
		t.Run(mut.name, func(t *testing.T) {
			for seed := uint64(1); seed <= executions; seed++ {
				rng := rand.New(rand.NewPCG(seed, 0))
				voters := []int{3, 5}[seed%2]
				m := newRefModel(voters, int(seed/2%2), func(_ string, n int) int { return rng.IntN(n) })
				events := m.run(20 + int(seed%20)*20)
				sites := mut.sites(m, events)
				if len(sites) == 0 {
					continue
				}
				for _, site := range sites {
					violations, err := Check(m.config(), mut.apply(m, events, site))
					require.NoError(t, err)
					require.Contains(t, invariantsOf(violations), mut.expect, "seed %d, site %d", seed, site)
				}
				return
			}
			t.Fatalf("the mutation applies to none of %d reference executions", executions)
		})
	}
}

// mutation breaks one invariant in a correct execution. sites lists the event indexes where it
// applies; apply returns the mutated stream.
type mutation struct {
	name   string
	expect Invariant
	sites  func(m *refModel, events []zabmodel.Event) []int
	apply  func(m *refModel, events []zabmodel.Event, site int) []zabmodel.Event
}

// stateAt replays the first n events into a fresh checker, to look at what the servers held.
func stateAt(m *refModel, events []zabmodel.Event, n int) *Checker {
	c, err := New(m.config())
	if err != nil {
		panic(err)
	}
	for _, e := range events[:n] {
		c.Observe(e)
	}
	return c
}

func indexesOf(events []zabmodel.Event, keep func(zabmodel.Event) bool) []int {
	var out []int
	for i, e := range events {
		if keep(e) {
			out = append(out, i)
		}
	}
	return out
}

func isKind(kind zabmodel.EventKind) func(zabmodel.Event) bool {
	return func(e zabmodel.Event) bool { return e.Kind == kind }
}

func isApplyFrom(source zabmodel.Source) func(zabmodel.Event) bool {
	return func(e zabmodel.Event) bool { return e.Kind == zabmodel.EventApply && e.Source == source }
}

// insertAfter returns a copy of events with extra inserted after index site.
func insertAfter(events []zabmodel.Event, site int, extra ...zabmodel.Event) []zabmodel.Event {
	for i := range extra {
		extra[i].Time = events[site].Time
	}
	return slices.Concat(events[:site+1], extra, events[site+1:])
}

func replaceAt(events []zabmodel.Event, site int, e zabmodel.Event) []zabmodel.Event {
	out := slices.Clone(events)
	out[site] = e
	return out
}

func otherVoter(m *refModel, sid int64) int64 {
	for _, s := range m.servers {
		if s.voter && s.sid != sid {
			return s.sid
		}
	}
	panic("no other voter")
}
