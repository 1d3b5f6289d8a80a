package zabmodel_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// benchEnsemble is a five-server ensemble with clients that each keep one write or read in flight,
// the shape of the standard scenario without its faults and checkers.
type benchEnsemble struct {
	w       *sim.World
	e       *zabmodel.Ensemble
	clients []*client.Client
	done    int
	failed  int
}

// newBenchEnsemble starts the ensemble, waits for a leader, and connects the clients, each to one
// server in turn, so that most writes are forwarded by a follower as in the standard scenario.
func newBenchEnsemble(b *testing.B, voters, clients int, observer zabmodel.Observer) *benchEnsemble {
	b.Helper()
	w, err := sim.New(sim.Config{Seed: 1})
	require.NoError(b, err)
	nw, err := net.New(w, net.Config{})
	require.NoError(b, err)
	e, err := zabmodel.NewEnsemble(w, nw, zabmodel.Config{Voters: voters, Observer: observer})
	require.NoError(b, err)
	e.Start()
	w.RunFor(10 * clock.Second)
	_, _, ok := e.Leader()
	require.True(b, ok, "no leader after 10 s: %v", w.Outcome())
	be := &benchEnsemble{w: w, e: e}
	nodes := e.Nodes()
	for i := range clients {
		node := w.AddNode(fmt.Sprintf("c%d", i+1), nil)
		cfg := client.Config{Servers: []sim.NodeID{nodes[i%len(nodes)]}, SessionTimeout: 10 * clock.Second}
		cl, err := client.New(w, nw, node, cfg, nil)
		require.NoError(b, err)
		be.clients = append(be.clients, cl)
	}
	w.RunFor(2 * clock.Second)
	for i, cl := range be.clients {
		require.Equal(b, client.StateConnected, cl.State(), "client %d", i+1)
		path := fmt.Sprintf("/r%d", i+1)
		require.NoError(b, cl.Create(path, []byte("0"), proto.OpenACLUnsafe, proto.Persistent, func(client.CreateResult) {}))
	}
	w.RunFor(2 * clock.Second)
	return be
}

// loop keeps one operation of client i in flight until stop says otherwise: a setData, then a read
// of the same register, as the registers workload alternates them.
func (be *benchEnsemble) loop(b *testing.B, i int, stop func() bool) {
	cl := be.clients[i]
	path := fmt.Sprintf("/r%d", i+1)
	var write func()
	read := func() {
		err := cl.GetData(path, nil, func(r client.DataResult) {
			be.count(r.Err)
			if !stop() {
				write()
			}
		})
		require.NoError(b, err)
	}
	write = func() {
		err := cl.SetData(path, []byte(fmt.Sprintf("%d", be.done)), -1, func(r client.StatResult) {
			be.count(r.Err)
			if !stop() {
				read()
			}
		})
		require.NoError(b, err)
	}
	write()
}

func (be *benchEnsemble) count(code proto.Code) {
	be.done++
	if code != proto.OK {
		be.failed++
	}
}

// BenchmarkEnsembleOperations measures the simulator's wall-clock cost of one client operation
// (alternately a write and a read of a register) in a healthy five-server ensemble with ten
// clients, with no checker attached: one op is one operation answered. It reports the kernel events
// and the virtual time each operation took, and how many virtual seconds pass per wall second.
func BenchmarkEnsembleOperations(b *testing.B) {
	be := newBenchEnsemble(b, 5, 10, nil)
	startEvents, startTime := be.w.Events(), be.w.Now()
	b.ReportAllocs()
	b.ResetTimer()
	stop := func() bool { return be.done >= b.N }
	for i := range be.clients {
		be.loop(b, i, stop)
	}
	for be.done < b.N {
		if !be.w.RunFor(100 * clock.Millisecond) {
			b.Fatal(be.w.Outcome())
		}
	}
	b.StopTimer()
	require.Zero(b, be.failed, "every operation succeeds in a healthy ensemble")
	virtual := be.w.Now().Sub(startTime)
	b.ReportMetric(float64(be.w.Events()-startEvents)/float64(b.N), "events/op")
	b.ReportMetric(virtual.Seconds()/b.Elapsed().Seconds(), "virtual-s/s")
}
