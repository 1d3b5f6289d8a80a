package zab

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel"
)

func TestConfigRejectsNonsense(t *testing.T) {
	cases := map[string]Config{
		"no voters":         {},
		"duplicate sid":     {Voters: []int64{1, 2, 2}},
		"observer is voter": {Voters: []int64{1, 2, 3}, Observers: []int64{3}},
		"zero sid":          {Voters: []int64{0, 1, 2}},
		"counter too high":  {Voters: []int64{1}, InitialZxidCounter: 0xfffffffe},
		"negative budget":   {Voters: []int64{1}, MaxHistory: -1},
	}
	for name, config := range cases {
		_, err := New(config)
		assert.ErrorIs(t, err, ErrConfig, name)
	}
	_, err := New(Config{Voters: []int64{1, 2, 3}, Observers: []int64{4}, InitialZxidCounter: 0xfffffff0})
	assert.NoError(t, err)
}

// TestCorrectRunPasses: an election, writes, a follower crash that loses an unsynced record, its
// restart and rejoin by DIFF, and a leader change with TRUNC of an uncommitted transaction.
func TestCorrectRunPasses(t *testing.T) {
	s := newScript().start(1, 1, 2, 3)
	s.write(1, z(1, 1), 2, 3).write(1, z(1, 2), 2, 3)
	// Follower 3 logs 1:3 but crashes before its fsync; the leader commits with follower 2.
	s.propose(1, z(1, 3), 2, 3).fsync(1).fsync(2).commit(1, z(1, 3), 2)
	s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 3},
		zabmodel.Event{Kind: zabmodel.EventLost, Server: 3, Zxid: z(1, 2), Count: 1},
		zabmodel.Event{Kind: zabmodel.EventRestart, Server: 3},
		zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 3, Source: zabmodel.SourceStartup})
	s.apply(3, z(1, 1), zabmodel.SourceStartup).apply(3, z(1, 2), zabmodel.SourceStartup)
	// Server 3 rejoins: DIFF of 1:3, logged, applied and fsynced before its ACK.
	s.add(zabmodel.Event{Kind: zabmodel.EventElected, Server: 3, Role: zabmodel.Following, Leader: 1, Epoch: 1})
	s.log(3, z(1, 3)).apply(3, z(1, 3), zabmodel.SourceSync).fsync(3).ackNewLeader(1, 1, 3)
	s.add(zabmodel.Event{Kind: zabmodel.EventServing, Server: 3, Role: zabmodel.Following, Epoch: 1})
	s.write(1, z(1, 4), 2, 3)
	// Server 2 logs 1:5, which is never committed; the leader dies, 3 leads epoch 2, 2 truncates.
	s.propose(1, z(1, 5), 2).fsync(2)
	s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
		zabmodel.Event{Kind: zabmodel.EventLost, Server: 1, Zxid: z(1, 5)},
		zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 2},
		zabmodel.Event{Kind: zabmodel.EventStopServing, Server: 3})
	s.apply(2, z(1, 5), zabmodel.SourceFastForward)
	s.add(zabmodel.Event{Kind: zabmodel.EventSnapshot, Server: 3, Zxid: z(1, 4)})
	s.elect(2, 3, 2)
	s.add(zabmodel.Event{Kind: zabmodel.EventTruncate, Server: 2, Zxid: z(1, 4)},
		zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 2, Source: zabmodel.SourceTruncate})
	for counter := int64(1); counter <= 4; counter++ {
		s.apply(2, z(1, counter), zabmodel.SourceTruncate)
	}
	s.add(zabmodel.Event{Kind: zabmodel.EventSnapshot, Server: 2, Zxid: z(1, 4)})
	s.ackNewLeader(2, 3, 2).establish(2, 3, 2)
	s.write(3, z(2, 1), 2)
	s.requireClean(t, threeVoters)

	c, err := New(threeVoters)
	require.NoError(t, err)
	for _, e := range s.events {
		c.Observe(e)
	}
	summary := c.Summary()
	assert.False(t, summary.Failed())
	assert.Equal(t, int64(len(s.events)), summary.Events)
	assert.Equal(t, 5, summary.Committed) // 1:5 was never committed.
	assert.Equal(t, 6, summary.Proposals)
	assert.Contains(t, summary.String(), "violations: none")
}

func TestOnlyTheFirstViolationOfEachInvariantIsKeptButAllAreCounted(t *testing.T) {
	s := newScript().start(1, 1, 2, 3)
	s.log(2, z(7, 1)).log(2, z(7, 2)) // Two unproposed transactions: two Integrity violations.
	var called []Violation
	config := threeVoters
	config.OnViolation = func(v Violation) { called = append(called, v) }
	c, err := New(config)
	require.NoError(t, err)
	for _, e := range s.events {
		c.Observe(e)
	}
	require.Len(t, c.Violations(), 1)
	assert.Equal(t, c.Violations(), called)
	v := c.Violations()[0]
	assert.Equal(t, Integrity, v.Invariant)
	assert.Equal(t, []int64{2}, v.Servers)
	assert.Contains(t, v.String(), "Integrity at")
	assert.Contains(t, v.String(), zabmodel.FormatZxid(z(7, 1)))
	summary := c.Summary()
	assert.True(t, summary.Failed())
	for _, count := range summary.Violations {
		if count.Invariant == Integrity {
			assert.Equal(t, int64(2), count.Count)
		}
	}
	assert.Contains(t, summary.String(), "Integrity=2")
}

func TestInvariantsAreListedOnceEach(t *testing.T) {
	names := map[Invariant]bool{}
	for _, inv := range Invariants() {
		assert.False(t, names[inv], "%s listed twice", inv)
		names[inv] = true
	}
	assert.Len(t, names, 16)
	c, err := New(threeVoters)
	require.NoError(t, err)
	assert.Len(t, c.Summary().Violations, 16)
}

func TestStopwatchMeasuresHostTime(t *testing.T) {
	var reading time.Duration
	config := threeVoters
	config.Stopwatch = func() time.Duration {
		reading += time.Microsecond
		return reading
	}
	c, err := New(config)
	require.NoError(t, err)
	for _, e := range newScript().start(1, 1, 2, 3).events {
		c.Observe(e)
	}
	summary := c.Summary()
	// Each reading advances the fake clock by a microsecond: a timed event's interval holds one
	// reading's cost, which the third reading measures and takes off, so that the estimate of
	// a checker that costs nothing but the clock is 0.
	timed := summary.Events / HostTimeSampleEvery
	require.Positive(t, timed, "the script is long enough to time some events")
	assert.Zero(t, summary.HostTime)
	assert.Equal(t, 3*timed, int64(reading/time.Microsecond), "only the sampled events read the clock")

	// A checker whose every event costs 5 µs besides the readings is estimated at 5 µs an event.
	reading = 0
	costly := threeVoters
	calls := 0
	costly.Stopwatch = func() time.Duration {
		calls++
		if calls%3 == 2 {
			reading += 5 * time.Microsecond // the event's own cost shows in the second reading
		}
		reading += time.Microsecond
		return reading
	}
	c, err = New(costly)
	require.NoError(t, err)
	for _, e := range newScript().start(1, 1, 2, 3).events {
		c.Observe(e)
	}
	summary = c.Summary()
	assert.Equal(t, time.Duration(timed*HostTimeSampleEvery)*5*time.Microsecond, summary.HostTime)
	assert.Contains(t, summary.String(), "ns/event")
}

func TestEventStreamReportsImpossibleEvents(t *testing.T) {
	v := newScript().add(zabmodel.Event{Kind: zabmodel.EventLog, Server: 9, Zxid: 1}).
		requireViolation(t, threeVoters, EventStream)
	assert.Contains(t, v.Explanation, "sid 9")

	s := newScript().start(1, 1, 2, 3).propose(1, z(1, 1), 2).propose(1, z(1, 2), 2)
	s.log(2, z(1, 1)) // A txn log refuses a zxid that is not above its last record.
	s.requireViolation(t, threeVoters, EventStream)

	s = newScript().add(zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 1, Zxid: z(1, 3), Source: zabmodel.SourceStartup})
	v = s.requireViolation(t, threeVoters, EventStream)
	assert.Contains(t, v.Explanation, "never wrote a snapshot")

	s = newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3)
	s.add(zabmodel.Event{Kind: zabmodel.EventLost, Server: 2, Zxid: 0, Count: 1}) // It was fsynced.
	s.requireViolation(t, threeVoters, EventStream)
}

func TestBudgetStopsCheckingWithAReport(t *testing.T) {
	s := newScript().start(1, 1, 2, 3)
	for counter := int64(1); counter <= 5; counter++ {
		s.write(1, z(1, counter), 2, 3)
	}
	config := threeVoters
	config.MaxHistory = 3
	c, err := New(config)
	require.NoError(t, err)
	for _, e := range s.events {
		c.Observe(e)
	}
	require.Len(t, c.Violations(), 1)
	assert.Equal(t, EventStream, c.Violations()[0].Invariant)
	assert.True(t, strings.Contains(c.Violations()[0].Explanation, "budget"))
	assert.True(t, c.Summary().Halted)
}

func TestTxnThrewIsReported(t *testing.T) {
	s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3)
	s.requireClean(t, threeVoters)
	s.add(zabmodel.Event{Kind: zabmodel.EventTxnThrew, Server: 3, Zxid: z(1, 1), Source: zabmodel.SourceStartup})
	v := s.requireViolation(t, threeVoters, TxnThrew)
	assert.Equal(t, []int64{3}, v.Servers)
	assert.Equal(t, []int64{z(1, 1)}, v.Zxids)
	assert.Contains(t, v.Explanation, "cannot start")
}

func TestDigestMismatchIsReported(t *testing.T) {
	s := newScript().start(1, 1, 2, 3).write(1, z(1, 1), 2, 3)
	s.requireClean(t, threeVoters)
	s.add(zabmodel.Event{Kind: zabmodel.EventDigestMismatch, Server: 2, Zxid: z(1, 1), Hash: 7, Digest: 8})
	v := s.requireViolation(t, threeVoters, DigestMismatch)
	assert.Equal(t, []int64{z(1, 1)}, v.Zxids)
}
