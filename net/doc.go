// Package net is zabsim's simulated network: connection-oriented and FIFO, as ZAB assumes of TCP.
//
// Nodes dial, accept, send and close over connections identified by ConnID. Each direction of a
// connection is a FIFO queue with one pending delivery event for its head message; each message's
// latency is drawn from the world's Chooser, but a message is never delivered before its
// predecessor, so order inside a connection holds by construction. Payloads are copied on send, so
// nodes never share memory; the receiver owns what it receives.
//
// Faults inside ZAB's fault model:
//
//   - partitions of any shape: Partition(groups...) (nodes in no group keep reaching everyone, which
//     makes bridges), Cut, CutOneWay, Isolate, Heal, HealPair. A partition holds messages, as TCP
//     retransmission would: a stalled connection delivers its backlog in order when the partition
//     heals, or breaks (ErrTimedOut at the sender) if the stall outlasts Config.StallBreakAfter. A dial
//     across a partition fails with ErrDialTimeout when its own timeout expires.
//   - clogging (long delays without loss) of a node, a pair or one direction, timed or until lifted,
//     and FoundationDB's Swizzle: clog a random subset one by one, unclog in another order.
//   - Reset: both ends see ErrReset and queued data is lost.
//   - crashes: when the world crashes a node, its connections close as the kernel of a crashed
//     process would close them: data it already sent still arrives, then the peer sees ErrEOF; data in
//     flight towards it is lost; its listeners vanish.
//
// Faults outside the model (loss, duplication or reordering inside a connection) exist only through
// EnableDatagramFaults, and the world's Outcome then lists them in OutsideFaultModel.
//
// Usage:
//
//	nw, err := net.New(w, net.Config{})           // default latency 100 µs to 1 ms
//	nw.Listen(server, 2888, listener)             // listener.Accept returns a Handler per connection
//	c, err := nw.Dial(client, server, 2888, 5*clock.Second, handler)
//	nw.Send(client, c, []byte("hello"))           // queued behind the handshake if needed
//	nw.Partition([]sim.NodeID{s1}, []sim.NodeID{s2, s3})
//	nw.Heal()
package net
