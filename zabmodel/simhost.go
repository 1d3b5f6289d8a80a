package zabmodel

import (
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
)

// simHost is host over the simulator: one incarnation of a Server's process, its node in the world,
// the network and its disk. Every effect is an event of the world, so that a run is decided by its
// seed alone. It is the only code of a server that calls the world, the network or the disk.
type simHost struct {
	s    *Server
	w    *sim.World
	nw   *net.Network
	node sim.NodeID
	inc  uint32
	// held holds, in order, the writes made while the process was paused at a boundary and every
	// write after them, until flushHeld (posted once: flushPosted) hands them to the network.
	held        []heldWrite
	flushPosted bool
}

var _ host = (*simHost)(nil)

func newSimHost(s *Server) *simHost {
	w := s.ens.w
	return &simHost{s: s, w: w, nw: s.ens.nw, node: s.node, inc: w.Incarnation(s.node)}
}

func (h *simHost) alive() bool { return h.w.IsUp(h.node) && h.w.Incarnation(h.node) == h.inc }

// boundary asks the ensemble's hook about one effect boundary and crashes the node if it says so.
// The crash happens here, with the server's code still on the stack: the code after the boundary
// runs on, but its effects are dropped (alive is false).
func (h *simHost) boundary(name string, conn net.ConnID) bool {
	if !h.alive() {
		return true
	}
	if hook := h.s.ens.boundaryHook; hook != nil && name != "" && hook(h.s.sid, name, conn) {
		h.note("fault", "crash at %s", name)
		h.w.Crash(h.node)
	}
	return !h.alive()
}

func (h *simHost) halt(reason string) { h.s.halt(reason) }

func (h *simHost) post(fn func()) {
	if h.alive() {
		h.w.AfterFunc(h.node, 0, fn)
	}
}

func (h *simHost) after(d clock.Duration, fn func()) sim.TimerID {
	if !h.alive() {
		return 0
	}
	return h.w.AfterFunc(h.node, d, fn)
}

func (h *simHost) cancel(t sim.TimerID) { h.w.CancelTimer(t) }

func (h *simHost) elapsed() clock.Time { return h.w.Elapsed(h.node) }

func (h *simHost) wallMillis() int64 { return h.w.WallMillis(h.node) }

func (h *simHost) choose(n int) int { return h.w.Choose(n) }

func (h *simHost) between(lo, hi, step clock.Duration) clock.Duration {
	return h.w.Between(lo, hi, step)
}

func (h *simHost) nodeName(n sim.NodeID) string { return h.w.Name(n) }

func (h *simHost) clientAddress(n sim.NodeID) string { return h.s.ens.clientAddress(n) }

func (h *simHost) disk() durable { return h.s.disk }

func (h *simHost) note(kind, format string, args ...any) {
	if h.alive() {
		h.w.Note(h.node, kind, format, args...)
	}
}

func (h *simHost) observe(ev Event) { h.s.ens.observe(ev) }

func (h *simHost) send(c net.ConnID, payload []byte) {
	if h.alive() {
		h.write(c, payload)
	}
}

// write hands payload to the network, unless the process was paused by a fault at an effect
// boundary earlier in this event: a stopped process writes nothing until it runs again. Its writes
// are then held, in order, with every write after them, until an event of the node (which the
// kernel defers until the pause ends) hands them all to the network; events that the pause
// deferred and that run before it write behind them, so no connection's order changes.
func (h *simHost) write(c net.ConnID, payload []byte) {
	if len(h.held) > 0 || h.w.IsPaused(h.node) {
		h.held = append(h.held, heldWrite{conn: c, payload: slices.Clone(payload)})
		if !h.flushPosted {
			h.flushPosted = true
			h.post(h.flushHeld)
		}
		return
	}
	_ = h.nw.Send(h.node, c, payload)
}

// heldWrite is a write of a paused process, waiting for it to run again.
type heldWrite struct {
	conn    net.ConnID
	payload []byte
}

// flushHeld hands the held writes to the network, in the order they were made.
func (h *simHost) flushHeld() {
	h.flushPosted = false
	held := h.held
	h.held = nil
	for _, w := range held {
		_ = h.nw.Send(h.node, w.conn, w.payload)
	}
}

func (h *simHost) close(c net.ConnID) {
	if h.alive() {
		h.nw.Close(h.node, c)
	}
}

func (h *simHost) dial(to sim.NodeID, port net.Port, timeout clock.Duration, handler net.Handler) net.ConnID {
	if !h.alive() {
		return 0
	}
	c, err := h.nw.Dial(h.node, to, port, timeout, handler)
	if err != nil {
		panic("zabmodel: dial from a running server failed: " + err.Error())
	}
	return c
}

func (h *simHost) listen(port net.Port, l net.Listener) error {
	if !h.alive() {
		return nil
	}
	return h.nw.Listen(h.node, port, l)
}

func (h *simHost) unlisten(port net.Port) {
	if h.alive() {
		h.nw.Unlisten(h.node, port)
	}
}
