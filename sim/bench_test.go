package sim

import (
	"fmt"
	"testing"

	"github.com/zabsim/zabsim/clock"
)

// rearmer keeps one timer of its node armed: each firing arms the next with a delay drawn from the
// world, as a protocol's heartbeat and timeout timers do.
type rearmer struct {
	w    *World
	node NodeID
}

func (r *rearmer) OnTimer(uint64) {
	r.w.SetTimer(r.node, r.w.Between(clock.Microsecond, 10*clock.Millisecond, clock.Microsecond), r, 0)
}

// poster keeps one Post pending, as a network direction keeps its head message's delivery queued.
// With a read timeout, each delivery also re-arms a long timer, cancelling the previous one, as a
// ZooKeeper server's read timeout is re-armed for every packet: the cancelled timers wait in the
// queue until their time.
type poster struct {
	w           *World
	node        NodeID
	readTimeout clock.Duration
	readTimer   TimerID
}

func (p *poster) Fire(uint64) {
	p.w.Post(p.node, p.w.Now().Add(p.w.Between(100*clock.Microsecond, clock.Millisecond, 10*clock.Microsecond)), p, 0)
	if p.readTimeout > 0 {
		p.w.CancelTimer(p.readTimer)
		p.readTimer = p.w.SetTimer(p.node, p.readTimeout, p, 0)
	}
}

func (p *poster) OnTimer(uint64) {}

// BenchmarkKernelQueue measures the event loop with a given number of events always pending, half
// of them timers and half posted targets: one op is one dispatched event, so ns/op is the kernel's
// cost per event (queue, dispatch, timer slots, one choice) without any protocol work.
//
// The readtimeout cases add what a ZooKeeper ensemble does: each posted event re-arms a long timer
// of its node, cancelling the previous one, so that the cancelled timers waiting for their time
// outnumber the live events about thirty to one, as in the standard scenario (there: 10 s read
// timeouts, about 4,700 events queued of which 160 are live).
func BenchmarkKernelQueue(b *testing.B) {
	cases := []struct {
		pending     int
		readTimeout clock.Duration
	}{{16, 0}, {256, 0}, {4096, 0}, {16, 300 * clock.Millisecond}, {256, 20 * clock.Millisecond}}
	for _, bc := range cases {
		pending := bc.pending
		name := fmt.Sprintf("pending=%d", pending)
		if bc.readTimeout > 0 {
			name += fmt.Sprintf("/readtimeout=%v", bc.readTimeout)
		}
		b.Run(name, func(b *testing.B) {
			w, err := New(Config{Seed: 1, Budget: Budget{MaxEvents: 1 << 62, MaxTime: 1 << 62}})
			if err != nil {
				b.Fatal(err)
			}
			for i := range pending / 2 {
				node := w.AddNode(fmt.Sprintf("n%d", i), nil)
				r := &rearmer{w: w, node: node}
				r.OnTimer(0)
				p := &poster{w: w, node: node, readTimeout: bc.readTimeout}
				p.Fire(0)
			}
			w.RunFor(bc.readTimeout) // Reach steady state: the cancelled timers' backlog is full.
			// About 200 events per RunFor call, so that the call's own cost does not dominate.
			step := clock.Duration(200_000/pending) * clock.Microsecond
			b.ReportAllocs()
			b.ResetTimer()
			target := w.Events() + int64(b.N)
			for w.Events() < target {
				if !w.RunFor(step) {
					b.Fatal(w.Outcome())
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
