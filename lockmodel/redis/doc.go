// Package redis is a simulated Redis, and the Redis lock algorithms, for zabsim's comparison of
// ZooKeeper locks with Redis locks: the same protected resource, the same lock checkers and the
// same faults (package scenarios, workloads redis-lock, redis-failover and redlock; simrun
// compare-locks).
//
// What is modelled:
//
//   - DB: the keyspace and the commands a lock uses: SET with NX, XX, PX, EX, PXAT and KEEPTTL,
//     GET, DEL, PEXPIRE, PEXPIREAT, PTTL, INCR, EVAL and EVALSHA of the compare-and-delete and
//     compare-and-extend scripts (ScriptCompareAndDelete, ScriptCompareAndExtend), known by their
//     SHA-1 and applied by effect, SCRIPT LOAD, PING and FLUSHALL, with Redis 7.0's replies and
//     error texts. Any other script or command is an error reply.
//   - Expiry by the server's own wall clock. Redis 7.0's src/db.c keyIsExpired compares a key's
//     absolute expiry (Unix ms) with the command's time snapshot, which is mstime(), that is
//     gettimeofday: the wall clock, not the monotonic clock Redis 6.2+ keeps for its own timers
//     (monotonic.c, used by the event loop and for measuring durations). So a wall-clock step on
//     the server moves every expiry at once, and drift stretches or shrinks every TTL. A master
//     expires a key when a command touches it (expireIfNeeded) and in its active expiry cycle
//     (ten times a second; every key is sampled, there being few); a replica never expires a key
//     itself but answers as if it were gone, and applies the master's DEL.
//   - Server: one process, commands run one at a time in arrival order (the single-threaded
//     event loop), on a simulated node and port; commands and replies travel as RESP messages on
//     simulated connections. Writes propagate in the absolute form Redis 7 uses (SET ... PXAT,
//     PEXPIREAT, DEL for expiries and for the scripts' effects).
//   - Replication: a replica dials its master, takes a full resynchronisation (on every
//     connection: no backlog, no partial resync), then applies the write stream. The master
//     answers its client before the replica has the write: asynchronous, so a failover loses what
//     was on the way. min-replicas-to-write and WAIT are not modelled.
//   - Persistence: none (a restart starts empty) or AOF with appendfsync everysec: writes are
//     fsynced once a second and a crash loses the rest. zabsim's crashes are machine crashes (as
//     zabmodel's lose the unsynced log tail); a real process crash would keep what the kernel
//     had been given.
//   - Sentinel: one Sentinel that promotes the replica when the master has been down or paused
//     for DownAfter (5 s here; 30 s by default in Redis), names the master to clients at every
//     connection, and makes a returning old master a replica. Not modelled: the Sentinels' quorum,
//     votes and epochs, and their network view (a partition alone never triggers a failover).
//   - Lock: go-redsync/redsync v4's Mutex (mutex.go lockContext, Extend, Unlock, with the
//     defaults of redsync.go NewMutex): a random value, SET NX PX on every instance with a
//     per-command timeout of 5% of the TTL, quorum N/2+1, validity = TTL - elapsed - 1% of the TTL,
//     up to 32 rounds with a random 50-250 ms delay, release on every instance after a failed
//     round and on Release. The single-instance lock of the SET command's documentation is the
//     case N = 1. With Fencing an INCR of key:token follows every SET NX on the same connection.
//
// Checked against Debian's redis-server 7.0 by recorded sequences (testdata/conformance/*.seq,
// TestConformanceRealServer, required in CI with ZABSIM_REQUIRE_REDIS=1).
//
// Usage, inside the simulator:
//
//	master, _ := redis.NewServer(w, nw, redis.Config{Name: "r1", Persistence: redis.PersistenceAOFEverySec})
//	c, _ := redis.NewClient(w, nw, appNode, func() *redis.Server { return master })
//	l, _ := redis.NewLock(w, appNode, redis.LockConfig{Key: "lock", Fencing: true}, c)
//	_ = l.Acquire(func(g redis.Grant) {
//		if !g.Held { return }
//		// use the resource with g.Token while l.Held(); then:
//		_ = l.Release(func(deleted int) {})
//	})
package redis
