// Package zabmodel is a ZooKeeper server as Apache ZooKeeper 3.8.0 implements it, running inside
// zabsim's simulator: the election transport (QuorumCnxManager), Fast Leader Election (through
// electionmodel), discovery, synchronization (DIFF, TRUNC, SNAP), broadcast, observers, the
// session tracker and the request pipeline, and, in its sub-packages, the jute records (proto),
// the data tree (datatree), durable storage (storage) and the client library (client).
//
// Every effect a server has on the world (a message, a timer, a disk write) goes through its host
// (host.go), an interface that simHost (simhost.go) implements over the simulator, so that a run
// is decided by its seed alone. A crash (sim.World.Crash) drops a
// server's memory and keeps its disk as the storage package's fsync frontier leaves it; a restart
// replays the disk as ZooKeeper's startup does. Config.Observer receives the servers' protocol
// events (proposals, logs, fsyncs, acks, commits, epochs, elections), which checkers/zab judges
// as they happen. Config.Bugs re-introduces real ZooKeeper bugs one switch at a time.
//
// Usage (see ExampleNewEnsemble for a whole run):
//
//	w, _ := sim.New(sim.Config{Seed: 7})
//	nw, _ := net.New(w, net.Config{})
//	e, _ := zabmodel.NewEnsemble(w, nw, zabmodel.Config{Voters: 3, Observers: 1})
//	e.Start()
//	w.RunFor(10 * clock.Second)
//	sid, epoch, ok := e.Leader() // the established leader, if there is one
//	c, _ := client.New(w, nw, w.AddNode("c1", nil),
//		client.Config{Servers: e.Nodes(), SessionTimeout: 6 * clock.Second}, nil)
//	_ = c.Create("/a", []byte("x"), proto.OpenACLUnsafe, proto.Persistent, func(r client.CreateResult) { ... })
//	w.Crash(e.Server(sid).Node()) // and later w.Restart(...)
//
// Most users do not build ensembles by hand: scenarios.Run does, with workloads, faults and every
// checker attached.
package zabmodel
