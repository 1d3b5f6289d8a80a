package net

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
)

// chatter is the synthetic workload of the kernel's determinism tests and benchmark: nodes connected
// all to all, each forwarding most messages it receives on a connection of its choice, and each
// sending a heartbeat on a timer. It exercises every hot path (queue, timers, choices, delivery,
// tracing) with no protocol logic in the way.
type chatter struct {
	w     *sim.World
	nw    *Network
	id    sim.NodeID
	conns []ConnID
	peers map[ConnID]sim.NodeID
	out   [16]byte
	count uint64
}

const chatterPort Port = 7

func (c *chatter) Accept(id ConnID, from sim.NodeID) Handler {
	c.conns = append(c.conns, id)
	return c
}
func (c *chatter) Connected(id ConnID) { c.conns = append(c.conns, id) }

// Closed redials the lost peer after a pause, as a protocol's connection manager would, so that a
// run with faults keeps exercising handshakes instead of going quiet.
func (c *chatter) Closed(id ConnID, err error) {
	if i := slices.Index(c.conns, id); i >= 0 {
		c.conns = slices.Delete(c.conns, i, i+1)
	}
	if peer, ok := c.peers[id]; ok {
		delete(c.peers, id)
		c.w.AfterFunc(c.id, 100*clock.Millisecond, func() { c.dial(peer) })
	}
}

func (c *chatter) dial(peer sim.NodeID) {
	id, err := c.nw.Dial(c.id, peer, chatterPort, clock.Second, c)
	if err != nil {
		panic(err)
	}
	c.peers[id] = peer
}
func (c *chatter) Received(id ConnID, payload []byte) {
	c.count += binary.LittleEndian.Uint64(payload)
	// Forwarding with probability 15/16 while heartbeats inject new messages keeps the population of
	// messages in flight stable (about 16 per node), so that the workload has a steady state.
	if c.w.Choose(16) != 0 {
		c.sendSomewhere()
	}
}
func (c *chatter) OnTimer(uint64) {
	c.sendSomewhere()
	c.w.SetTimer(c.id, 10*clock.Millisecond, c, 0)
}
func (c *chatter) Crash() { c.conns, c.peers = nil, map[ConnID]sim.NodeID{} }
func (c *chatter) Restart() {
	if err := c.nw.Listen(c.id, chatterPort, c); err != nil {
		panic(err)
	}
	c.w.SetTimer(c.id, 10*clock.Millisecond, c, 0)
	for peer := sim.NodeID(0); int(peer) < c.w.NumNodes(); peer++ {
		if peer != c.id {
			c.dial(peer)
		}
	}
}

func (c *chatter) sendSomewhere() {
	if len(c.conns) == 0 {
		return
	}
	c.count++
	binary.LittleEndian.PutUint64(c.out[:8], c.count)
	_ = c.nw.Send(c.id, c.conns[c.w.Choose(len(c.conns))], c.out[:])
}

type chatterOptions struct {
	nodes  int
	faults bool
	trace  sim.TraceConfig
	choose sim.Chooser
}

// newChatter builds the workload. With faults, a chaos loop crashes and restarts nodes, partitions
// and heals, clogs, resets connections and skews clocks, every decision drawn from the world.
func newChatter(tb testing.TB, seed uint64, o chatterOptions) (*sim.World, []*chatter) {
	tb.Helper()
	w, err := sim.New(sim.Config{Seed: seed, Chooser: o.choose, Trace: o.trace, Budget: sim.Budget{MaxTime: 100 * clock.Hour, MaxEvents: 1 << 40}})
	require.NoError(tb, err)
	nw, err := New(w, Config{})
	require.NoError(tb, err)
	nodes := make([]*chatter, o.nodes)
	for i := range nodes {
		nodes[i] = &chatter{w: w, nw: nw, peers: map[ConnID]sim.NodeID{}}
		nodes[i].id = w.AddNode(fmt.Sprintf("n%d", i), nodes[i])
		require.NoError(tb, nw.Listen(nodes[i].id, chatterPort, nodes[i]))
	}
	for i, a := range nodes {
		for _, b := range nodes[i+1:] {
			a.dial(b.id)
		}
		w.SetTimer(a.id, clock.Duration(i+1)*clock.Millisecond, a, 0)
	}
	if o.faults {
		// Every fault is transient: what the chaos loop breaks it repairs a little later, so that runs
		// stay busy and the determinism tests cover recoveries as well as failures.
		var chaos func()
		chaos = func() {
			target := nodes[w.Choose(len(nodes))]
			repairAfter := w.Between(10*clock.Millisecond, clock.Second, clock.Millisecond)
			switch w.Choose(7) {
			case 0:
				if w.IsUp(target.id) {
					w.Crash(target.id)
					w.After(repairAfter, func() { w.Restart(target.id) })
				}
			case 1:
				nw.Isolate(target.id)
				w.After(repairAfter, nw.Heal)
			case 2:
				nw.ClogNode(target.id, repairAfter)
			case 3:
				if conns := nw.Conns(target.id); len(conns) > 0 {
					nw.Reset(conns[w.Choose(len(conns))])
				}
			case 4:
				_ = w.Clock(target.id).SetDrift(w.Now(), int64(w.Choose(2001))-1000)
			case 5:
				if w.IsUp(target.id) {
					if other := nodes[w.Choose(len(nodes))]; other != target {
						target.dial(other.id)
					}
				}
			case 6:
				w.Pause(target.id)
				w.After(repairAfter, func() { w.Resume(target.id) })
			}
			w.After(w.Between(100*clock.Millisecond, clock.Second, clock.Millisecond), chaos)
		}
		w.After(50*clock.Millisecond, chaos)
	}
	return w, nodes
}

func chatterHash(tb testing.TB, seed uint64, o chatterOptions, d clock.Duration) uint64 {
	w, _ := newChatter(tb, seed, o)
	require.True(tb, w.RunFor(d), "seed %d: %v", seed, w.Outcome())
	if o.choose == nil {
		// A seeded run that went quiet would prove little about determinism under load. (An
		// exhausted byte stream answers 0 forever, which quiets a run by design.)
		require.Greater(tb, w.Events(), int64(d/clock.Millisecond)*int64(o.nodes), "seed %d: too few events", seed)
	}
	return w.Outcome().TraceHash
}

const determinismRun = 20 * clock.Second

func TestDeterminismSameSeedSameTrace(t *testing.T) {
	opts := chatterOptions{nodes: 5, faults: true}
	seen := map[uint64]uint64{}
	for seed := uint64(1); seed <= 12; seed++ {
		h1 := chatterHash(t, seed, opts, determinismRun)
		h2 := chatterHash(t, seed, opts, determinismRun)
		require.Equal(t, h1, h2, "seed %d replayed differently", seed)
		if prev, dup := seen[h1]; dup {
			t.Fatalf("seeds %d and %d produced the same trace: the seed is not reaching the run", prev, seed)
		}
		seen[h1] = seed
	}
}

func TestDeterminismUnderGOMAXPROCS1AndConcurrentWorlds(t *testing.T) {
	opts := chatterOptions{nodes: 4, faults: true}
	const seeds = 8
	want := make([]uint64, seeds)
	for i := range want {
		want[i] = chatterHash(t, uint64(100+i), opts, determinismRun)
	}
	prev := runtime.GOMAXPROCS(1)
	single := make([]uint64, seeds)
	for i := range single {
		single[i] = chatterHash(t, uint64(100+i), opts, determinismRun)
	}
	runtime.GOMAXPROCS(prev)
	assert.Equal(t, want, single, "GOMAXPROCS=1 changed a run")

	// Many worlds at once on many threads, as a sweep runs them: no shared state may leak between them.
	concurrent := make([]uint64, seeds)
	var wg sync.WaitGroup
	for i := range concurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			concurrent[i] = chatterHash(t, uint64(100+i), opts, determinismRun)
		}()
	}
	wg.Wait()
	assert.Equal(t, want, concurrent, "running worlds concurrently changed a run")
}

func TestDeterminismRenderingDoesNotChangeTheRun(t *testing.T) {
	var text, js bytes.Buffer
	plain := chatterHash(t, 7, chatterOptions{nodes: 4, faults: true}, determinismRun)
	rendered := chatterHash(t, 7, chatterOptions{nodes: 4, faults: true, trace: sim.TraceConfig{Text: &text, JSON: &js, Tail: 5}}, determinismRun)
	assert.Equal(t, plain, rendered)
	assert.Greater(t, text.Len(), 1000)
	assert.Contains(t, text.String(), "deliver")
	assert.Contains(t, text.String(), "partition")
}

func TestDeterminismRecordedChoicesReplayTheRun(t *testing.T) {
	rec := sim.NewRecorder(sim.NewPCG(11), 0)
	recorded := chatterHash(t, 11, chatterOptions{nodes: 4, faults: true, choose: rec}, determinismRun)
	assert.Equal(t, chatterHash(t, 11, chatterOptions{nodes: 4, faults: true}, determinismRun), recorded, "recording must not change the run")
	replay := sim.NewReplay(rec.Values())
	replayed := chatterHash(t, 11, chatterOptions{nodes: 4, faults: true, choose: replay}, determinismRun)
	assert.Equal(t, recorded, replayed)
	assert.Zero(t, replay.Clamped())
	assert.Zero(t, replay.Exhausted())
}

func TestDeterminismByteStreamDrivesTheRun(t *testing.T) {
	data := bytes.Repeat([]byte("a fuzzer's input decides every latency and every fault of this run"), 200)
	h1 := chatterHash(t, 0, chatterOptions{nodes: 3, faults: true, choose: sim.NewBytes(data)}, determinismRun)
	h2 := chatterHash(t, 0, chatterOptions{nodes: 3, faults: true, choose: sim.NewBytes(data)}, determinismRun)
	h3 := chatterHash(t, 0, chatterOptions{nodes: 3, faults: true, choose: sim.NewBytes(append([]byte{1}, data...))}, determinismRun)
	assert.Equal(t, h1, h2)
	assert.NotEqual(t, h1, h3)
}

// BenchmarkKernel measures the kernel alone: one op is one dispatched event (a delivery or a timer),
// so ns/op is the cost of an event and allocs/op the allocations per event. The target is at least
// 2 million events per second on one core and at most one allocation per event (the payload copy
// that isolates nodes from each other).
func BenchmarkKernel(b *testing.B) {
	for _, nodes := range []int{3, 8, 32} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			w, _ := newChatter(b, 1, chatterOptions{nodes: nodes})
			w.RunFor(clock.Second) // Reach steady state: connections up, queues at their working size.
			b.ReportAllocs()
			b.ResetTimer()
			target := w.Events() + int64(b.N)
			for w.Events() < target {
				if !w.RunFor(clock.Millisecond) {
					b.Fatal(w.Outcome())
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
