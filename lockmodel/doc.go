// Package lockmodel holds the lock and leader-election recipes that simulated applications run on
// ZooKeeper, as Apache Curator implements them, and the protected resource their holders use.
//
// Each recipe is a state machine driven by the simulator: it issues requests through a simulated
// ZooKeeper client (zabmodel/client), continues from their callbacks and from watch events, and
// takes its timers and random draws from the world. There are no goroutines and no blocking calls:
// Acquire and Release return at once and report later.
//
//   - Session is what CuratorFramework is to the recipes, for one ZooKeeper session: connection
//     states (CONNECTED, SUSPENDED, RECONNECTED, LOST), the retry policy (ExponentialBackoffRetry)
//     around every operation, the protected-mode create (with the background deletion of the node
//     of a protected create that ended in a connection loss, FindAndDeleteProtectedNodeInBackground)
//     and the guaranteed delete, and the dispatch of watch events. A foreground operation waits
//     for a connection before its first attempt only (RetryLoop.callWithRetry), a background one
//     until the connection timeout has passed since it began (CuratorFrameworkImpl); the
//     protected-mode search of a foreground create shares the create's retries
//     (ThreadLocalRetryLoop, CURATOR-559).
//   - ExclusiveLock: one ephemeral node; a create that finds it watches it and tries again, and
//     recognises its own node (a lost reply's) by the ephemeral owner; an acquisition given up
//     while its create's outcome was unknown deletes the node if this session made it.
//   - Mutex: InterProcessMutex with LockInternals and StandardLockInternalsDriver: a fair,
//     reentrant lock on ephemeral-sequential nodes with protected names; each waiter watches only
//     its predecessor and lists the children again after every notification.
//   - ReadWriteLock: InterProcessReadWriteLock, two Mutexes sharing one queue; a writer may
//     downgrade, its read node taking the write node's sequence (CURATOR-621, Curator 5.5.0).
//   - LeaderLatch: Curator 5.8's LeaderLatch, with the leadership checks of CURATOR-653 (5.4.0:
//     leadership is given up when the node is no longer first) and CURATOR-696 (5.7.0: the
//     node's ephemeral owner is checked before leading).
//   - LeaderSelector: Curator 5's LeaderSelector on an InterProcessMutex, with autoRequeue and
//     LeaderSelectorListenerAdapter's cancellation on SUSPENDED and LOST (the election task is
//     interrupted, acquiring or leading, and its node deleted).
//   - Resource and ResourceClient: the protected service, on its own node, recording every access
//     with the holder's fencing token (its lock node's czxid), with fencing on or off.
//
// Every recipe creates its lock's parent as Curator 5 does, with creatingParentContainersIfNeeded:
// ZKPaths.mkdirs (as of Curator 5.8) makes each missing ancestor as a CONTAINER znode, which the
// leader's container manager deletes once it is empty and has had a child. A lock's parent may
// therefore vanish between two acquisitions, or between the mkdirs that made it and the create of
// the lock node, and the recipes handle that as Curator does:
//
//   - Mutex (and so the read-write lock's read and write locks): the foreground create makes the parents and creates
//     once more; a NONODE of that create, or a listing of a parent that is gone (getSortedChildren
//     takes it for no children, so the node is "not found"), is the NoNodeException that
//     LockInternals.attemptLock catches: it starts over after the retry policy's sleep.
//   - LeaderLatch: its create runs in the background, where a NONODE makes the parents and queues
//     the whole create again (backgroundCreateParentsThenNode); a listing of a parent that is gone
//     resets the latch with a new node (CURATOR-724).
//   - ExclusiveLock (not a Curator recipe) starts over after the retry policy's sleep, as
//     attemptLock does.
//
// A recipe bound to a Session lives and dies with its ZooKeeper session: when the session is LOST
// (expired), every acquisition fails with ErrLost and a holder is told it lost the lock; the
// application starts over with a new client and a new Session. The recipe bugs of the bug zoo are
// switches on the Session (Config.Bugs) and the resource (ResourceConfig.Fencing); see Bugs.
//
// Where the model departs from Curator, and why:
//
//   - The protected-mode search after a connection loss syncs before it lists the children.
//     Curator's search can read a server that has not applied the lost create yet (its leader was
//     still waiting for a quorum), miss it, and create a second node; the first, committed later,
//     blocks the queue while the session lives. zabsim's sweeps found this. BugUnsyncedSearch
//     restores Curator's search.
//   - A Session is one ZooKeeper session. Curator's framework survives an expiry with a new handle
//     and retries SESSIONEXPIRED; here SESSIONEXPIRED ends every operation, a lost session drops
//     its pending guaranteed deletes, and the application makes a new Session.
//   - Curator 3+ declares LOST by itself once SUSPENDED has lasted a session timeout (injecting an
//     expiry into its handle); this model learns LOST only from the server, so a holder cut off
//     from every server stays SUSPENDED (and idle) until it reconnects and hears of the expiry.
//   - One watcher per session carries every recipe watch, so that the client registers a path once
//     per table, as the client-visible checkers expect; recipes see the same events.
//   - Acquire timeouts run on the node's monotonic clock (Curator reads the wall clock).
//   - A background create that keeps finding its new parent deleted queues itself again at most
//     maxRequeues times and then fails the run (Curator has no bound): every round needs the
//     container manager to delete the parent between mkdirs and the create.
//   - A holder needs its fencing token: a node found by the protected-mode search comes without
//     its stat, so a Mutex reads its czxid with exists before it takes the lock (a LeaderLatch
//     reads it with the getData of its owner check).
//
// Besides the bug zoo's switches, a Session takes self-test switches (Config.SelfTests, see
// SelfTests): deliberate faults that show a lock checker firing end to end, such as
// latch-keeps-leadership (LeaderLatch before Curator 5.4.0).
//
// Usage, inside the simulator:
//
//	var s *lockmodel.Session
//	c, _ := client.New(w, nw, node, client.Config{Servers: servers, SessionTimeout: 6 * clock.Second},
//		client.WatcherFunc(func(e client.Event) { s.ConnectionEvent(e) })) // state events to the session
//	s, _ = lockmodel.NewSession(w, c, lockmodel.Config{Name: "c1", Observer: obs, Tracer: tracer})
//	m, _ := lockmodel.NewMutex(s, "/locks/fair", nil)
//	_ = m.Acquire(0, func(g lockmodel.Grant) { // 0: wait as long as it takes
//		if !g.Held { return } // g.Err says why
//		_ = rc.Access("/locks/fair", s.SessionID(), g.Token, true, func(r lockmodel.AccessResult) {
//			_ = m.Release(func(err error) { ... })
//		})
//	})
//
// where rc is a ResourceClient of the application's node for a Resource made with NewResource.
package lockmodel
