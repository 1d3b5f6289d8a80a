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

// alive reports whether the incarnation this host belongs to is still running. Server code never
// runs in a dead incarnation (see step), so only the host's own defences ask.
func (h *simHost) alive() bool { return h.w.IsUp(h.node) && h.w.Incarnation(h.node) == h.inc }

// Steps and deaths. Every entry into a server's code (a timer, a posted step, a connection's
// callback, the process's start) runs as a step of its host (step). When the process dies inside a
// step, at an effect boundary whose hook says crash or at a halt, the host ends the step there: it
// unwinds the server's stack with a death panic, which the step recovers, and only then crashes the
// node in the world. Nothing after the point of death runs, as nothing runs in a killed process,
// and the world never calls back into a server while that server's own code is on the stack.

// death is the panic value with which a host ends a step at the point where its process dies.
type death struct {
	h *simHost
	// exit is the reason of a halt (System.exit, a refused start); "" for a crash at a boundary.
	exit string
	// failure is a broken assertion: the run ends as a failure, and the node stays as it is.
	failure error
}

// step runs fn, one step of the server, and applies its death if it dies in it.
func (h *simHost) step(fn func()) {
	defer h.settle()
	fn()
}

// settle is deferred by every step: it recovers the step's own death and crashes the node (or halts
// it); any other panic goes on.
func (h *simHost) settle() {
	r := recover()
	if r == nil {
		return
	}
	d, ok := r.(*death)
	if !ok || d.h != h {
		panic(r)
	}
	if d.failure != nil {
		h.w.Note(h.node, "assert", "%v", d.failure)
		h.w.Fail(d.failure)
		return
	}
	if d.exit != "" {
		h.s.halt(d.exit)
		return
	}
	h.w.Crash(h.node)
}

// boundary asks the ensemble's hook about one effect boundary, and ends the step there if it says
// crash.
func (h *simHost) boundary(name string, conn net.ConnID) {
	if hook := h.s.ens.boundaryHook; hook != nil && name != "" && h.alive() && hook.CrashAt(h.s.sid, name, conn) {
		h.note("fault", "crash at %s", name)
		panic(&death{h: h})
	}
}

// halt ends the step and stops the process, which the scenario may start again.
func (h *simHost) halt(reason string) { panic(&death{h: h, exit: reason}) }

// fail ends the step and the run: a broken assertion.
func (h *simHost) fail(err error) { panic(&death{h: h, failure: err}) }

// postFlush runs the host's own flush of held writes as a step of its own at this instant (the
// protocol code posts timers, setTimer). The flush is a typed timer, not a closure, so that a
// server's pending events hold no closure and the world can be copied (package modelcheck).
func (h *simHost) postFlush() {
	if h.alive() {
		h.w.SetTimer(h.node, 0, flushTimer{h}, 0)
	}
}

// flushTimer is the step postFlush posts.
type flushTimer struct{ h *simHost }

func (t flushTimer) OnTimer(uint64) { t.h.step(t.h.flushHeld) }

func (h *simHost) cancel(t sim.TimerID) { h.w.CancelTimer(t) }

func (h *simHost) setTimer(d clock.Duration, t timer) sim.TimerID {
	if !h.alive() {
		return 0
	}
	return h.w.SetTimer(h.node, d, t, 0)
}

func (h *simHost) fire(t timer) {
	defer h.settle()
	t.fire()
}

func (h *simHost) elapsed() clock.Time { return h.w.Elapsed(h.node) }

func (h *simHost) wallMillis() int64 { return h.w.WallMillis(h.node) }

func (h *simHost) choose(n int) int { return h.w.Choose(n) }

func (h *simHost) between(lo, hi, step clock.Duration) clock.Duration {
	return h.w.Between(lo, hi, step)
}

func (h *simHost) nodeName(n sim.NodeID) string { return h.w.Name(n) }

func (h *simHost) clientAddress(n sim.NodeID) string { return h.s.ens.address(n) }

func (h *simHost) disk() durable { return h.s.disk }

func (h *simHost) waitForDisk(t timer) bool {
	s := h.s
	now := h.w.Now()
	if s.stallUntil <= now || !h.alive() {
		return false
	}
	// The stall ends at a moment of the world's clock; the process's timers run on its own, which
	// may drift: arm the timer for the local time that passes until then.
	c := h.w.Clock(h.node)
	local := max(clock.Duration(c.Elapsed(s.stallUntil)-c.Elapsed(now)), clock.Nanosecond)
	id := h.setTimer(local, t)
	s.diskWaiters = slices.DeleteFunc(s.diskWaiters, func(w diskWaiter) bool { return w.until <= now })
	s.diskWaiters = append(s.diskWaiters, diskWaiter{h: h, t: t, id: id, until: s.stallUntil})
	return true
}

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
			h.postFlush()
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
	c, err := h.nw.Dial(h.node, to, port, timeout, stepHandler{h: h, handler: handler})
	if err != nil {
		panic("zabmodel: dial from a running server failed: " + err.Error())
	}
	return c
}

func (h *simHost) listen(port net.Port, l net.Listener) error {
	if !h.alive() {
		return nil
	}
	return h.nw.Listen(h.node, port, stepListener{h: h, listener: l})
}

func (h *simHost) unlisten(port net.Port) {
	if h.alive() {
		h.nw.Unlisten(h.node, port)
	}
}

// stepListener runs a listener's Accept as a step of its host, and the handler it returns likewise.
type stepListener struct {
	h        *simHost
	listener net.Listener
}

func (l stepListener) Accept(c net.ConnID, from sim.NodeID) (handler net.Handler) {
	defer l.h.settle()
	if accepted := l.listener.Accept(c, from); accepted != nil {
		handler = stepHandler{h: l.h, handler: accepted}
	}
	return handler
}

// stepHandler runs a connection's callbacks as steps of its host.
type stepHandler struct {
	h       *simHost
	handler net.Handler
}

func (s stepHandler) Connected(c net.ConnID) {
	defer s.h.settle()
	s.handler.Connected(c)
}

func (s stepHandler) Received(c net.ConnID, payload []byte) {
	defer s.h.settle()
	s.handler.Received(c, payload)
}

func (s stepHandler) Closed(c net.ConnID, err error) {
	defer s.h.settle()
	s.handler.Closed(c, err)
}
