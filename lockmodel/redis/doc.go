// Package redis is a simulated Redis for zabsim's lock comparison: the keyspace and command
// semantics the lock algorithms rely on, served by a process on the simulator's kernel, network
// and clocks, and checked against a real redis-server 7.0 by recorded command sequences
// (testdata/conformance, TestConformanceRealServer).
//
// Usage, the keyspace on its own:
//
//	db := redis.NewDB()
//	reply, propagated := db.Exec([]string{"SET", "lock", "v", "NX", "PX", "8000"}, wallMillis)
package redis
