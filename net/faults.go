package net

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
)

// A partition holds messages rather than dropping them, because TCP retransmits: a connection that
// crosses a partition stalls, delivers its backlog in order once the partition heals, and breaks only
// if the stall outlasts StallBreakAfter. Dials across a partition stall the same way and fail when
// their own timeout expires. Clogging uses the same mechanism: a clog is a partition that lifts by
// itself. Either way FIFO order inside a connection is never broken.

// ensure grows the partition matrix to cover size nodes.
func (n *Network) ensure(size int) {
	if size <= n.size {
		return
	}
	grown := make([]bool, size*size)
	for from := 0; from < n.size; from++ {
		copy(grown[from*size:from*size+n.size], n.blocked[from*n.size:(from+1)*n.size])
	}
	n.blocked = grown
	n.size = size
	for len(n.clogNode) < size {
		n.clogNode = append(n.clogNode, 0)
	}
}

// isBlocked reports whether a message from 'from' to 'to' can pass now.
func (n *Network) isBlocked(from, to sim.NodeID) bool {
	if int(from) < n.size && int(to) < n.size && n.blocked[int(from)*n.size+int(to)] {
		return true
	}
	now := n.w.Now()
	if int(from) < len(n.clogNode) && n.clogNode[from] > now {
		return true
	}
	if int(to) < len(n.clogNode) && n.clogNode[to] > now {
		return true
	}
	if until, ok := n.clogPair[[2]sim.NodeID{from, to}]; ok && until > now {
		return true
	}
	return false
}

// headBlocked decides whether d's head may be delivered now. A SYN also needs the way back, because
// an acceptor whose SYN-ACK cannot get through never completes the handshake and never accepts.
func (n *Network) headBlocked(d *direction) bool {
	from, to := d.conn.ends[d.from].node, d.conn.ends[d.to].node
	if n.isBlocked(from, to) {
		return true
	}
	return d.queue[d.head].kind == msgSyn && n.isBlocked(to, from)
}

// Blocked reports whether messages from 'from' to 'to' are held by a partition or a clog.
func (n *Network) Blocked(from, to sim.NodeID) bool { return n.isBlocked(from, to) }

func (n *Network) setBlocked(from, to sim.NodeID, v bool) {
	if from == to {
		return
	}
	n.ensure(int(max(from, to)) + 1)
	i := int(from)*n.size + int(to)
	if n.blocked[i] != v {
		n.blocked[i] = v
		if v {
			n.faultCount++
		} else {
			n.faultCount--
		}
	}
}

// Partition replaces every partition in force with the given groups: nodes in different groups
// cannot reach each other in either direction. Nodes in no group keep reaching everyone, which is how
// a bridge is built (Partition({1,2},{4,5}) leaves 3 talking to both sides).
func (n *Network) Partition(groups ...[]sim.NodeID) {
	n.clearBlocked()
	for gi, g := range groups {
		for _, other := range groups[gi+1:] {
			for _, a := range g {
				for _, b := range other {
					n.setBlocked(a, b, true)
					n.setBlocked(b, a, true)
				}
			}
		}
	}
	n.w.Note(sim.NoNode, "partition", "%s", n.describeGroups(groups))
	n.kick()
}

// Cut blocks both directions between a and b, in addition to what is already blocked.
func (n *Network) Cut(a, b sim.NodeID) {
	n.setBlocked(a, b, true)
	n.setBlocked(b, a, true)
	n.w.Note(sim.NoNode, "partition", "cut %s<->%s", n.w.Name(a), n.w.Name(b))
}

// CutOneWay blocks messages from 'from' to 'to' only: 'to' still reaches 'from'.
func (n *Network) CutOneWay(from, to sim.NodeID) {
	n.setBlocked(from, to, true)
	n.w.Note(sim.NoNode, "partition", "cut %s->%s", n.w.Name(from), n.w.Name(to))
}

// Isolate cuts node from every other node registered so far.
func (n *Network) Isolate(node sim.NodeID) {
	for other := sim.NodeID(0); int(other) < n.w.NumNodes(); other++ {
		if other != node {
			n.setBlocked(node, other, true)
			n.setBlocked(other, node, true)
		}
	}
	n.w.Note(sim.NoNode, "partition", "isolate %s", n.w.Name(node))
}

// Heal removes every partition (clogs stay until they lift).
func (n *Network) Heal() {
	n.clearBlocked()
	n.w.Note(sim.NoNode, "partition", "heal")
	n.kick()
}

// HealPair removes the partition between a and b in both directions.
func (n *Network) HealPair(a, b sim.NodeID) {
	n.setBlocked(a, b, false)
	n.setBlocked(b, a, false)
	n.w.Note(sim.NoNode, "partition", "heal %s<->%s", n.w.Name(a), n.w.Name(b))
	n.kick()
}

func (n *Network) clearBlocked() {
	for i, v := range n.blocked {
		if v {
			n.blocked[i] = false
			n.faultCount--
		}
	}
}

func (n *Network) describeGroups(groups [][]sim.NodeID) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		names := make([]string, len(g))
		for j, id := range g {
			names[j] = n.w.Name(id)
		}
		parts[i] = "{" + strings.Join(names, ",") + "}"
	}
	return strings.Join(parts, " | ")
}

// --- Clogging -------------------------------------------------------------------------------------

func (n *Network) clogUntil(d clock.Duration) clock.Time {
	if d <= 0 {
		return clock.Never
	}
	return n.w.Now().Add(d)
}

// ClogNode delays every message to and from node for d (d <= 0: until UnclogNode), without losing
// any. New dials to and from it stall too.
func (n *Network) ClogNode(node sim.NodeID, d clock.Duration) {
	n.ensure(int(node) + 1)
	until := n.clogUntil(d)
	if n.clogNode[node] <= n.w.Now() {
		n.faultCount++
	}
	n.clogNode[node] = max(n.clogNode[node], until)
	n.w.Note(sim.NoNode, "clog", "%s for %v", n.w.Name(node), describeFor(d))
	n.scheduleUnclog(until)
}

// ClogPair delays messages between a and b, both ways, for d (d <= 0: until UnclogPair).
func (n *Network) ClogPair(a, b sim.NodeID, d clock.Duration) {
	n.clogOneWay(a, b, d)
	n.clogOneWay(b, a, d)
	n.w.Note(sim.NoNode, "clog", "%s<->%s for %v", n.w.Name(a), n.w.Name(b), describeFor(d))
}

// ClogOneWay delays messages from 'from' to 'to' for d (d <= 0: until UnclogPair).
func (n *Network) ClogOneWay(from, to sim.NodeID, d clock.Duration) {
	n.clogOneWay(from, to, d)
	n.w.Note(sim.NoNode, "clog", "%s->%s for %v", n.w.Name(from), n.w.Name(to), describeFor(d))
}

func (n *Network) clogOneWay(from, to sim.NodeID, d clock.Duration) {
	key := [2]sim.NodeID{from, to}
	until := n.clogUntil(d)
	if prev, ok := n.clogPair[key]; !ok || prev <= n.w.Now() {
		n.faultCount++
		n.clogPair[key] = until
	} else {
		n.clogPair[key] = max(prev, until)
	}
	n.scheduleUnclog(until)
}

func describeFor(d clock.Duration) any {
	if d <= 0 {
		return "ever"
	}
	return d
}

// UnclogNode lifts node's clog now.
func (n *Network) UnclogNode(node sim.NodeID) {
	if int(node) < len(n.clogNode) && n.clogNode[node] > n.w.Now() {
		n.clogNode[node] = 0
		n.faultCount--
		n.w.Note(sim.NoNode, "unclog", "%s", n.w.Name(node))
		n.kick()
	}
}

// UnclogPair lifts the clogs between a and b, both ways, now.
func (n *Network) UnclogPair(a, b sim.NodeID) {
	for _, key := range [][2]sim.NodeID{{a, b}, {b, a}} {
		if until, ok := n.clogPair[key]; ok {
			if until > n.w.Now() {
				n.faultCount--
			}
			delete(n.clogPair, key)
		}
	}
	n.w.Note(sim.NoNode, "unclog", "%s<->%s", n.w.Name(a), n.w.Name(b))
	n.kick()
}

// UnclogAll lifts every clog now, and stops every swizzle in progress.
func (n *Network) UnclogAll() {
	n.swizzles++
	now := n.w.Now()
	for i, until := range n.clogNode {
		if until > now {
			n.faultCount--
		}
		n.clogNode[i] = 0
	}
	for key, until := range n.clogPair { // determinism:ok only counts and deletes; order cannot matter
		if until > now {
			n.faultCount--
		}
		delete(n.clogPair, key)
	}
	n.w.Note(sim.NoNode, "unclog", "all")
	n.kick()
}

// scheduleUnclog re-examines stalled directions when a timed clog lifts, and forgets expired clogs.
func (n *Network) scheduleUnclog(until clock.Time) {
	if until == clock.Never {
		return
	}
	n.w.At(until, func() {
		now := n.w.Now()
		for i, t := range n.clogNode {
			if t != 0 && t <= now {
				n.clogNode[i] = 0
				n.faultCount--
			}
		}
		// Collect expired pairs in a sorted order: the map's own order must not reach the trace.
		var expired [][2]sim.NodeID
		for key, t := range n.clogPair { // determinism:ok the keys are sorted before use
			if t <= now {
				expired = append(expired, key)
			}
		}
		slices.SortFunc(expired, func(a, b [2]sim.NodeID) int {
			if a[0] != b[0] {
				return int(a[0] - b[0])
			}
			return int(a[1] - b[1])
		})
		for _, key := range expired {
			delete(n.clogPair, key)
			n.faultCount--
		}
		n.kick()
	})
}

// Swizzle clogs a random non-empty subset of candidates one node at a time, step apart, keeps them
// all clogged for hold, then unclogs them one at a time in a different random order. This is
// FoundationDB's "swizzle-clogging", which is unusually good at finding bugs that need a particular
// order of recoveries. It returns how long the whole swizzle lasts.
func (n *Network) Swizzle(candidates []sim.NodeID, step, hold clock.Duration) clock.Duration {
	if len(candidates) == 0 {
		return 0
	}
	pool := slices.Clone(candidates)
	n.w.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	chosen := pool[:1+n.w.Choose(len(pool))]
	unclogOrder := slices.Clone(chosen)
	n.w.Shuffle(len(unclogOrder), func(i, j int) { unclogOrder[i], unclogOrder[j] = unclogOrder[j], unclogOrder[i] })
	// An UnclogAll (the end of all faults) also ends the swizzle: its later steps do nothing.
	generation := n.swizzles
	for i, node := range chosen {
		node := node
		n.w.After(clock.Duration(i)*step, func() {
			if n.swizzles == generation {
				n.ClogNode(node, 0)
			}
		})
	}
	start := clock.Duration(len(chosen)-1)*step + hold
	for i, node := range unclogOrder {
		node := node
		n.w.After(start+clock.Duration(i)*step, func() {
			if n.swizzles == generation {
				n.UnclogNode(node)
			}
		})
	}
	return start + clock.Duration(len(unclogOrder)-1)*step
}

// --- Stalls ---------------------------------------------------------------------------------------

// stall parks a direction whose head cannot pass. It is re-examined whenever a partition heals or a
// clog lifts, and broken if it stays stalled past StallBreakAfter.
func (n *Network) stall(d *direction) {
	d.stalled = true
	n.stallSeq++
	d.stallSeq = n.stallSeq
	n.stalled = append(n.stalled, d)
	n.w.Post(sim.NoNode, n.w.Now().Add(n.cfg.StallBreakAfter), stallBreak{d: d, seq: d.stallSeq}, 0)
}

// kick resumes every stalled direction that can pass again, in the order in which they stalled.
func (n *Network) kick() {
	if len(n.stalled) == 0 {
		return
	}
	keep := n.stalled[:0]
	for _, d := range n.stalled {
		if !d.stalled {
			continue
		}
		if d.conn.dead || d.pending() == 0 {
			d.stalled = false
			continue
		}
		if n.headBlocked(d) {
			keep = append(keep, d)
			continue
		}
		d.stalled = false
		// Retransmission after the path reopens costs one more one-way latency.
		ready := n.w.Now().Add(n.latency())
		d.queue[d.head].ready = ready
		d.lastReady = max(d.lastReady, ready)
		if !d.scheduled {
			d.schedule(ready)
		}
	}
	clear(n.stalled[len(keep):])
	n.stalled = keep
}

// stallBreak is the sender's TCP giving up on a stalled direction.
type stallBreak struct {
	d   *direction
	seq uint64
}

func (s stallBreak) Fire(uint64) {
	d := s.d
	if !d.stalled || d.stallSeq != s.seq || d.conn.dead {
		return
	}
	n := d.net
	c := d.conn
	sender := &c.ends[d.from]
	d.dropQueued()
	if sender.state != endClosed {
		// The sender learns at once; the receiver only when the RST gets through, if ever.
		sender.state = endClosed
		c.dialT = 0
		c.dirs[d.to].dropQueued()
		n.w.TraceEvent(sender.node, sim.KindClose, uint64(c.id), 2, nil, n.detail(func() string {
			return fmt.Sprintf("conn=%d %v", c.id, ErrTimedOut)
		}))
		if sender.handler != nil {
			sender.handler.Closed(c.id, ErrTimedOut)
		}
	}
	if c.ends[d.to].state != endClosed {
		d.queue = append(d.queue, message{kind: msgRst, err: ErrReset, ready: n.w.Now()})
	} else {
		d.stalled = false
		n.maybeRetire(c)
	}
}

// --- Faults outside the model ---------------------------------------------------------------------

// EnableDatagramFaults turns on message loss, duplication and reordering inside connections. These
// break TCP's guarantees, which ZAB relies on; the world's outcome records that they were used.
func (n *Network) EnableDatagramFaults(f DatagramFaults) error {
	for _, p := range []int{f.DropPermille, f.DuplicatePermille, f.ReorderPermille} {
		if p < 0 || p > 1000 {
			return fmt.Errorf("net: datagram fault probability %d outside [0, 1000] permille", p)
		}
	}
	n.datagram = f
	if f.DropPermille > 0 {
		n.w.NoteOutsideFaultModel("net: message loss inside a connection")
	}
	if f.DuplicatePermille > 0 {
		n.w.NoteOutsideFaultModel("net: message duplication inside a connection")
	}
	if f.ReorderPermille > 0 {
		n.w.NoteOutsideFaultModel("net: message reordering inside a connection")
	}
	return nil
}

func (n *Network) sendDatagram(d *direction, payload []byte) error {
	c := d.conn
	from := c.ends[d.from].node
	if n.w.Chance(n.datagram.DropPermille, 1000) {
		n.w.TraceEvent(from, sim.KindDrop, uint64(c.id), uint64(len(payload)), payload, n.detail(func() string {
			return fmt.Sprintf("conn=%d %dB", c.id, len(payload))
		}))
		return nil
	}
	n.enqueue(d, message{kind: msgData, payload: n.copies.Copy(payload)})
	if k := len(d.queue); d.pending() >= 2 && d.queue[k-2].kind == msgData && n.w.Chance(n.datagram.ReorderPermille, 1000) {
		// Swap the new message with its predecessor, keeping the ready times where they were so
		// that delivery times stay monotonic.
		d.queue[k-1].payload, d.queue[k-2].payload = d.queue[k-2].payload, d.queue[k-1].payload
		n.w.TraceEvent(from, sim.KindReorder, uint64(c.id), 0, nil, n.detail(func() string { return fmt.Sprintf("conn=%d", c.id) }))
	}
	if n.w.Chance(n.datagram.DuplicatePermille, 1000) {
		n.w.TraceEvent(from, sim.KindDuplicate, uint64(c.id), uint64(len(payload)), nil, n.detail(func() string {
			return fmt.Sprintf("conn=%d %dB", c.id, len(payload))
		}))
		n.enqueue(d, message{kind: msgData, payload: n.copies.Copy(payload)})
	}
	return nil
}
