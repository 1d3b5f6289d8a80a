package client

import (
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
)

// hostSpinDelay is the spinDelay SendThread.run passes to HostProvider.next: how long the client
// sleeps before trying again a server it has already tried since the last successful connection.
const hostSpinDelay = 1000 * clock.Millisecond

// hostProvider is StaticHostProvider as a client without reconfiguration uses it: the connect string
// is shuffled once (Collections.shuffle, here through the world's Chooser), then tried round robin;
// next asks for a sleep when it comes back to the server of the last successful connection (or,
// before any success, to the first server), that is, once per full cycle without a session.
type hostProvider struct {
	servers      []sim.NodeID
	currentIndex int
	lastIndex    int
}

func newHostProvider(w *sim.World, servers []sim.NodeID) hostProvider {
	list := slices.Clone(servers)
	// Collections.shuffle swaps i-1 with rnd.nextInt(i) for i from size down to 2, which is what
	// World.Shuffle does.
	w.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	return hostProvider{servers: list, currentIndex: -1, lastIndex: -1}
}

func (h *hostProvider) size() int { return len(h.servers) }

// next returns the next server to try and whether Java would sleep hostSpinDelay before trying it.
func (h *hostProvider) next() (sim.NodeID, bool) {
	h.currentIndex++
	if h.currentIndex == len(h.servers) {
		h.currentIndex = 0
	}
	sleep := h.currentIndex == h.lastIndex
	if h.lastIndex == -1 {
		// Java does not sleep before the very first connection attempt.
		h.lastIndex = 0
	}
	return h.servers[h.currentIndex], sleep
}

// onConnected remembers the server a session was established with.
func (h *hostProvider) onConnected() { h.lastIndex = h.currentIndex }
