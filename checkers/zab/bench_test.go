package zab

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// steadyStream returns about n events of a three-server ensemble in broadcast: every transaction
// is proposed, logged three times, fsynced three times (batched now and then), acknowledged
// twice, committed and applied three times; every 1,000 transactions each server snapshots.
func steadyStream(n int) []zabmodel.Event {
	s := newScript().start(1, 1, 2, 3)
	events := s.events
	now := s.now
	add := func(e zabmodel.Event) {
		now = now.Add(clock.Microsecond)
		e.Time = now
		events = append(events, e)
	}
	logged := 0
	for counter := int64(1); len(events) < n; counter++ {
		zxid := z(1, counter)
		hash := hashOf(zxid)
		add(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 1, Zxid: zxid, Hash: hash})
		for sid := int64(1); sid <= 3; sid++ {
			add(zabmodel.Event{Kind: zabmodel.EventLog, Server: sid, Zxid: zxid, Hash: hash})
		}
		logged++
		for sid := int64(1); sid <= 3; sid++ {
			add(zabmodel.Event{Kind: zabmodel.EventFsync, Server: sid, Count: logged, Zxid: zxid})
		}
		add(zabmodel.Event{Kind: zabmodel.EventAck, Server: 2, Zxid: zxid})
		add(zabmodel.Event{Kind: zabmodel.EventAck, Server: 3, Zxid: zxid})
		add(zabmodel.Event{Kind: zabmodel.EventCommit, Server: 1, Zxid: zxid, Hash: hash})
		for sid := int64(1); sid <= 3; sid++ {
			add(zabmodel.Event{Kind: zabmodel.EventApply, Server: sid, Zxid: zxid, Hash: hash, Source: zabmodel.SourceCommit})
		}
		if counter%1000 == 0 {
			for sid := int64(1); sid <= 3; sid++ {
				add(zabmodel.Event{Kind: zabmodel.EventSnapshot, Server: sid, Zxid: zxid})
			}
		}
	}
	return events
}

// BenchmarkSteadyBroadcast feeds one million events to a fresh checker per iteration and reports
// the cost per event.
func BenchmarkSteadyBroadcast(b *testing.B) {
	events := steadyStream(1_000_000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c, err := New(threeVoters)
		require.NoError(b, err)
		for _, e := range events {
			c.Observe(e)
		}
		require.False(b, c.Failed())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}

// TestSteadyStreamPasses keeps the benchmark's stream honest: it is correct ZAB.
func TestSteadyStreamPasses(t *testing.T) {
	events := steadyStream(20_000)
	violations, err := Check(threeVoters, events)
	require.NoError(t, err)
	require.Empty(t, violations)
}
