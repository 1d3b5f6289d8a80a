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

// host is the kernel side of one server process: its node in the world, the network, and its disk.
// Everything a server does to the outside world goes through it, so that every effect is an event of
// the simulator.
type host struct {
	w    *sim.World
	nw   *net.Network
	node sim.NodeID
	disk *storage.Disk
}

// post runs fn as a separate event of this node at the current instant: after the event being
// handled, and not at all if the node crashes first.
func (h *host) post(fn func()) { h.w.AfterFunc(h.node, 0, fn) }

// after runs fn after d of this node's own monotonic clock, unless it crashes first.
func (h *host) after(d clock.Duration, fn func()) sim.TimerID { return h.w.AfterFunc(h.node, d, fn) }

// elapsed is System.nanoTime: the node's monotonic clock.
func (h *host) elapsed() clock.Time { return h.w.Elapsed(h.node) }

// wallMillis is System.currentTimeMillis: the node's wall clock, which can be stepped.
func (h *host) wallMillis() int64 { return h.w.WallMillis(h.node) }

func (h *host) note(kind, format string, args ...any) { h.w.Note(h.node, kind, format, args...) }

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
