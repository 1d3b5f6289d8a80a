package zabmodel_test

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// A three-server ensemble elects a leader; a client writes through one server, the leader crashes,
// the survivors elect another, and the write is still there: everything runs in virtual time, and
// the seed decides every latency, timeout and crash-time disk loss.
func ExampleNewEnsemble() {
	w, _ := sim.New(sim.Config{Seed: 7})
	nw, _ := net.New(w, net.Config{})
	e, _ := zabmodel.NewEnsemble(w, nw, zabmodel.Config{Voters: 3})
	e.Start()
	w.RunFor(10 * clock.Second)
	first, _, ok := e.Leader()
	fmt.Println("leader elected:", ok)

	node := w.AddNode("c1", nil)
	c, _ := client.New(w, nw, node, client.Config{Servers: e.Nodes(), SessionTimeout: 6 * clock.Second}, nil)
	_ = c.Create("/a", []byte("x"), proto.OpenACLUnsafe, proto.Persistent, func(r client.CreateResult) {
		fmt.Println("create:", r.Err.String(), r.Path)
	})
	w.RunFor(2 * clock.Second)

	w.Crash(e.Server(first).Node()) // durable state stays; the unsynced log tail may be lost
	w.RunFor(20 * clock.Second)
	second, _, ok := e.Leader()
	fmt.Println("new leader:", ok && second != first)
	_ = c.GetData("/a", nil, func(r client.DataResult) { fmt.Println("read:", r.Err.String(), string(r.Data)) })
	w.RunFor(10 * clock.Second)
	// Output:
	// leader elected: true
	// create: OK /a
	// new leader: true
	// read: OK x
}
