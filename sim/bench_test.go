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
type poster struct {
	w    *World
	node NodeID
}

func (p *poster) Fire(uint64) {
	p.w.Post(p.node, p.w.Now().Add(p.w.Between(100*clock.Microsecond, clock.Millisecond, 10*clock.Microsecond)), p, 0)
}

// BenchmarkKernelQueue measures the event loop with a given number of events always pending, half
// of them timers and half posted targets: one op is one dispatched event, so ns/op is the kernel's
// cost per event (queue, dispatch, timer slots, one choice) without any protocol work.
func BenchmarkKernelQueue(b *testing.B) {
	for _, pending := range []int{16, 256, 4096} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			w, err := New(Config{Seed: 1, Budget: Budget{MaxEvents: 1 << 62, MaxTime: 1 << 62}})
			if err != nil {
				b.Fatal(err)
			}
			for i := range pending / 2 {
				node := w.AddNode(fmt.Sprintf("n%d", i), nil)
				r := &rearmer{w: w, node: node}
				r.OnTimer(0)
				p := &poster{w: w, node: node}
				p.Fire(0)
			}
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
