package zabmodel

import (
	"cmp"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// Ports of a ZooKeeper server, as in the usual zoo.cfg.
const (
	ClientPort   net.Port = 2181
	QuorumPort   net.Port = 2888
	ElectionPort net.Port = 3888
)

// host is everything one incarnation of a server process does to, or learns from, the world
// outside its memory: its clocks, its timers, the choices the world makes for it, its sockets, its
// disk, the trace and the checkers' events, and the faults that may stop it at an effect boundary.
// The protocol code (peer and the roles it runs) reaches the world through this interface and
// nothing else. simHost (simhost.go) implements it over the simulator, which makes every effect an
// event of the world; an adapter over real TCP connections and a real disk would implement it too
// (see the README's "The ZAB core and its host").
//
// A host belongs to one incarnation, and every entry into the process's code (a timer, a posted
// step, a connection's callback, the start) is a step of that host. The host decides where a
// process dies: at an effect boundary or at a halt, it ends the step there, so that no code of a
// dead incarnation ever runs on and the protocol code needs no guard against its own death.
type host interface {
	// boundary is asked at each effect boundary (see Boundaries) with the connection the boundary
	// writes to (0 for a persistence step); a fault may pause the process or reset the
	// connection there, or end the process: then boundary does not return, and nothing the
	// process would have done after it happens.
	boundary(name string, conn net.ConnID)
	// halt stops the process on its own, as System.exit or a refused start does. It does not
	// return.
	halt(reason string)
	// fail ends the run as a failure with err, a broken assertion (see assert.go). It does not
	// return.
	fail(err error)

	// elapsed is System.nanoTime: the process's monotonic clock.
	elapsed() clock.Time
	// wallMillis is System.currentTimeMillis: the wall clock, which can be stepped.
	wallMillis() int64

	// setTimer arms the timer t (see timer) to fire after d of the monotonic clock, unless the
	// process crashes first. A d of 0 is a post: t runs as a separate step of this process at the
	// current instant, after the step being run. The protocol code has no other way to run later:
	// its pending work is data, never a closure.
	setTimer(d clock.Duration, t timer) sim.TimerID
	// cancel cancels a timer of setTimer; cancelling a fired or cancelled timer does nothing.
	cancel(t sim.TimerID)
	// fire runs t's code as a step of this process: the entry of a timer armed with setTimer.
	fire(t timer)

	// choose returns a choice in [0, n) and between a duration in [lo, hi] in multiples of step:
	// what Java leaves to ThreadLocalRandom or to the machine's speed (an fsync's latency).
	choose(n int) int
	between(lo, hi, step clock.Duration) clock.Duration

	// send writes payload to connection c; the host copies what it keeps.
	send(c net.ConnID, payload []byte)
	// close closes connection c.
	close(c net.ConnID)
	// dial opens a connection to a node's port, reported to handler; it returns 0 when the
	// incarnation is dead.
	dial(to sim.NodeID, port net.Port, timeout clock.Duration, handler net.Handler) net.ConnID
	// listen accepts connections on port; unlisten stops.
	listen(port net.Port, l net.Listener) error
	unlisten(port net.Port)
	// nodeName names a node (a client) for the trace.
	nodeName(n sim.NodeID) string
	// clientAddress is the IP address the server sees for a client node.
	clientAddress(n sim.NodeID) string

	// disk is the process's durable storage.
	disk() durable
	// waitForDisk is asked when a timed disk write (an fsync, a learner's currentEpoch write) is
	// about to complete: if the machine's disk is stalled (Server.StallDisk), it arms t to fire
	// again when the stall ends, or at once if the stall is ended early, and returns true; the
	// write completes then. It returns false when the disk works.
	waitForDisk(t timer) bool

	// note writes a line to the trace; observe reports a protocol event to the checkers.
	note(kind, format string, args ...any)
	observe(ev Event)
}

// durable is the durable storage of a server as its protocol code uses it: the txn log with its
// fsync frontier, the snapshots, and the small files (the epoch files). storage.Disk implements
// it; a real adapter would implement it over FileTxnSnapLog's files.
type durable interface {
	Append(r storage.Record) error
	Len() int
	Generation() uint64
	Synced(n int)
	SyncedLen() int
	SyncedZxid() int64
	LastZxid() int64
	Records(after int64) []storage.Record
	Truncate(zxid int64) error
	TruncateAfter(zxid int64)
	ClearLog()
	SaveSnapshot(s storage.Snapshot, fsync bool)
	LatestSnapshot() (storage.Snapshot, bool)
	DeleteSnapshots(drop func(storage.Snapshot) bool) int
	WriteFile(name string, data []byte)
	ReadFile(name string) ([]byte, bool)
	DeleteFile(name string)
}

var _ durable = (*storage.Disk)(nil)

// timer is a server's timer as data rather than a closure: a value whose type names the timer
// (the learner's epoch write, a quorum waiter's deadline, the snapshot walk's next step, an fsync's
// completion) and which points at the object it fires on. The world keeps it as the timer's
// handler (sim.TimerHandler, with tag 0, so that trace hashes are those of the closures it
// replaces): in schedule mode its type is the timer's key, and a copy of a server's state can
// find and remap its pending timers. OnTimer enters the server's code through its host (fire);
// fire is that code; TimerName names the timer in rendered traces.
type timer interface {
	sim.TimerHandler
	fire()
}

// elapsedMillis is Time.currentElapsedTime.
func elapsedMillis(h host) int64 { return int64(h.elapsed()) / int64(clock.Millisecond) }

// sortedKeys returns a map's keys in order: every iteration whose order can reach a message, a timer
// or the trace goes through it.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m { // determinism:ok the keys are sorted before use
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
