// Package lock judges the lock and leader-election recipes of a run (package lockmodel) against
// what a lock must guarantee, from what the recipes reported, what the protected resource received,
// and the committed log:
//
//   - lock/mutual-exclusion: no two holders use the resource at once (readers may share a
//     read-write lock), and with fencing, the resource never has to reject a holder whose lock node
//     was still alive. A violation is a recipe bug: both holders had been granted the lock.
//   - lock/unsafe-without-fencing: two holders used the resource at once because one of them had
//     lost its lock (its node deleted, typically when its session expired during a long pause)
//     and acted on it anyway. This is the inherent limit of ZooKeeper locks, which only a fencing
//     token checked at the resource removes; it is reported apart from recipe bugs.
//   - lock/fairness: a fair lock (and the read-write lock, and leader election) grants in the
//     order of the queue's sequence numbers.
//   - lock/herd: a change to the queue wakes at most one waiter that must wait alone.
//   - lock/orphans: no lock node outlives the session that created it.
//   - lock/progress: after the faults heal, every live waiter is granted the lock.
//   - lock/exclusive-belief: no two clients believe at once, from their recipes' own state
//     (History.Holds), that they hold conflicting locks or leadership, whatever the resource
//     accepted; a holder whose session the server had expired is left to
//     lock/unsafe-without-fencing. With fencing on, the same findings are
//     lock/exclusive-belief-fenced ("fencing saved you here"), which also fails the run, and which
//     also takes a fenced-off holder whose own session deleted its node while it believed. The
//     one exception is Curator 5.x's own LeaderLatch window after a RECONNECTED started a second
//     create (KnownLatchReplacedNode): with fencing it is a known finding (checkers.Known).
//   - lock/churn: no participant abandons its node and queues again (History.Requeues) more than
//     Options.ChurnBound times in one session, and no lock goes without a holder for more than
//     Options.LivelockBound after the heal while its queue keeps changing, not counting the time
//     in which the queue's first node was one that only its owner's session end removed (a dead
//     client's node waits for its session to expire, which no recipe can hasten).
//
// A queue's parent is a container that the server deletes once it is empty; the checks replay its
// deletes and re-creates from the committed log, and order a queue by the parent's incarnation,
// then by sequence number (a re-made parent numbers its children from 0 again).
//
// Every violation names the holders or waiters, their sessions, tokens (lock node czxids) and the
// virtual times involved.
//
// Usage:
//
//	h := &lock.History{
//		Locks:     []lock.Lock{{Path: "/locks/fair", Kind: lock.KindFair}},
//		Grants:    grants, Attempts: attempts, Watches: watches, Accesses: accesses,
//		Holds:     holds, Requeues: requeues,
//		Committed: history.Committed, Fencing: true, Liveness: history.Liveness, End: history.End,
//	}
//	results, err := lock.Run(h, lock.Options{ProgressBound: 60 * clock.Second})
//
// Like the other checkers, the package reads no clock or randomness and never lets map order reach
// a result.
package lock
