// Package client is the ZooKeeper client library that simulated applications (workloads, lock
// recipes, the conformance driver) use to talk to simulated ZooKeeper servers. It is the Java client
// of Apache ZooKeeper 3.8.0 (ClientCnxn with ClientCnxnSocketNIO, ZooKeeper, ZKWatchManager,
// StaticHostProvider, PathUtils) as a state machine driven by the simulator's network and timer
// events, and it speaks the real wire protocol, byte for byte, through package proto: each network
// message is one packet without its length prefix.
//
// Usage, inside the simulator (on a node registered with the world; all callbacks run inside the
// event loop, after the call that issued the request has returned):
//
//	c, err := client.New(w, nw, node, client.Config{
//		Servers:        []sim.NodeID{s1, s2, s3}, // the connect string, shuffled once
//		SessionTimeout: 4 * clock.Second,
//		MaxPacketBytes: 0,           // the client's jute.maxbuffer; 0: proto.MaxBufferBytes
//		Emulate:        client.Java, // or client.GoZookeeper: see Library
//	}, client.WatcherFunc(func(e client.Event) { ... })) // the default watcher
//	err = c.Create("/lock/seq-", nil, proto.OpenACLUnsafe, proto.EphemeralSequential,
//		func(r client.CreateResult) { ... }) // r.Err, r.Zxid, r.Xid, r.Session, r.Path, r.Stat
//	err = c.GetData("/config", c.DefaultWatcher(), func(r client.DataResult) { ... }) // watch=true
//	err = c.Multi([]client.Op{client.CheckOp("/a", 3), client.SetDataOp("/a", b, 3)}, func(r client.MultiResult) { ... })
//	err = c.Close(func(r client.Result) { ... })
//
// A returned error means the request was refused locally, as the Java client refuses it by throwing
// (an invalid path, ErrInvalidPath; another bad argument, ErrInvalidArgument; a crashed process,
// ErrCrashed): nothing was sent and no callback follows. Otherwise the callback runs exactly once,
// with the server's code or the one the client chose when it gave up (CONNECTIONLOSS: the outcome of
// a write is then unknown; SESSIONEXPIRED; AUTHFAILED), the reply's zxid, and the xid and session id
// the request was written with (zeros if it never was), by which a checker finds a write of unknown
// outcome in the committed log.
//
// What the client does, as the Java client does it:
//
//   - Connecting: the servers are shuffled once and tried round robin; a second is slept after a
//     full cycle without a session, and a random time below a second before every reconnection
//     after the first TCP connection. The handshake carries lastZxidSeen, the requested timeout, the
//     session id and password; an answer with timeout 0 means the session expired: state CLOSED,
//     the Expired event, every request fails with SESSIONEXPIRED, and the client is dead.
//   - Requests: an outgoing queue and a pending queue, FIFO; xids from 1, taken when the packet is
//     written; a reply whose xid is not the oldest pending one drops the connection. Requests issued
//     while disconnected wait for the next connection, unless the connection attempt fails first:
//     every cleanup fails both queues.
//   - Liveness: a connection is dropped when nothing was heard for two thirds of the negotiated
//     timeout (before the handshake: the timeout divided by the number of servers); pings go out when
//     nothing was sent for half that time (Java's rule, with its one-second slack and ten-second cap).
//     A process paused by the simulator reads what arrived during the pause before it looks at the
//     clock, as a Java client does after a long garbage-collection pause.
//   - Watches: registered when the reply arrives; exists registers an exist watch on NONODE;
//     one-shot watches are removed as they fire; persistent and recursive watches (AddWatch) stay;
//     after a reconnect they are re-registered with SetWatches / SetWatches2 batches of about 128 kB
//     of paths. Watch events and callbacks are delivered in the order they arrived.
//   - Cleanup: after a connection ends the client sleeps 100 ms (ClientCnxnSocketNIO.cleanup) before
//     it fails the requests and tells the watchers Disconnected. The state stays CONNECTED until the
//     next connection attempt starts, as in Java.
//   - A crash of the client's node (sim Process.Crash) ends the client: its timers and connections
//     die with the process, its methods return ErrCrashed, and the session lives on in the servers
//     until it expires. A restarted process makes a new client if it wants one, possibly resuming the
//     session with Config.SessionID and Config.Password.
//
// With Config.Emulate set to GoZookeeper the client behaves instead as github.com/go-zookeeper/zk
// v1.0.4 does wherever that library differs in a way a sequence of requests can observe; the
// Library type lists each difference.
//
// State changes are noted in the trace with kind "client", and DescribePacket renders the protocol's
// packets in rendered traces (New registers it for the client port unless a renderer is there).
package client
