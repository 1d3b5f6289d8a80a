// Package clock defines virtual time for zabsim and the per-node local clocks through which simulated
// processes read it.
//
// Global virtual time ([Time]) is owned by the simulator: it starts at zero and only the event loop
// advances it. No simulated process ever reads it directly to make decisions that a real process would
// make with its own clock. Instead each node has a [Local] clock that reads global time through two
// distortions, so that clock-skew faults can be injected:
//
//   - drift: the node's oscillator runs fast or slow by a rate in parts per million, which affects both
//     its monotonic clock (Java's System.nanoTime, used by ZooKeeper for ticks and session expiry) and
//     its wall clock;
//   - offset: the node's wall clock (Java's System.currentTimeMillis, used for znode ctime and mtime)
//     can be stepped forwards or backwards, as NTP or an operator would, without touching the
//     monotonic clock.
//
// Usage:
//
//	var c clock.Local                             // a perfect clock: no drift, no offset
//	_ = c.SetDrift(now, 200)                      // from now on run 200 µs per second fast
//	c.StepWall(now, -3*clock.Second)              // the wall clock jumps back three seconds
//	elapsed := c.Elapsed(now)                     // monotonic reading, for timeouts
//	ms := c.WallMillis(now)                       // wall reading, for ctime/mtime
//	wait := c.GlobalDelay(2 * clock.Second)       // global time until the local clock advances 2 s
//
// Duration is an alias of time.Duration so that its constants and String method can be used, but a
// Time is never a time.Time: nothing in the simulated world refers to the host's clock.
package clock
