// Package realzk runs conformance sequences (scenarios/conform) against the real Apache ZooKeeper
// server: Debian's 3.8.0 package, started as a standalone server on a free loopback port with a
// fresh data directory, driven through github.com/go-zookeeper/zk, and stopped afterwards. It is
// the reference the simulated server is compared with; it reads the host clock and starts
// processes, so it is not simulated code.
//
//	if err := realzk.Available(realzk.Options{}); err != nil {
//		return err // no Java or no ZooKeeper jars in /usr/share/java
//	}
//	results, err := realzk.RunFresh(ctx, realzk.Options{}, ops)
//
// Tests call SkipIfUnavailable, which skips with a message where the server is missing, or fails
// when ZABSIM_REQUIRE_ZOOKEEPER=1 is set (as CI sets it).
package realzk
