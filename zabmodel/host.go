package zabmodel

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/internal/slab"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// Ports of a ZooKeeper server, as in the usual zoo.cfg.
const (
	ClientPort   net.Port = 2181
	QuorumPort   net.Port = 2888
	ElectionPort net.Port = 3888
)

// host is the kernel side of one incarnation of a server process: its node in the world, the
// network, and its disk. Everything a server does to the outside world goes through it, so that
// every effect is an event of the simulator.
//
// A host belongs to one incarnation. Once that incarnation has crashed, every effect is dropped:
// code that was running when a crash point fired may go on executing on the dead incarnation's
// objects, but it can no longer write the disk, send, or arm timers, exactly as a killed process
// can do nothing more.
type host struct {
	w    *sim.World
	nw   *net.Network
	node sim.NodeID
	disk *storage.Disk
	inc  uint32
	// scratch and decoder are the ensemble's shared encoder and decoder (Ensemble.scratch).
	scratch *proto.Encoder
	decoder *proto.Decoder

	// proposals, requests and entries hold the incarnation's new proposals, requests and decoded
	// transactions, carved from chunks (package slab): one of each per transaction on every
	// server, they were the most frequent allocations of a run. Each value is its own, and the
	// chunks belong to this incarnation alone.
	proposals slab.Objects[proposal]
	requests  slab.Objects[request]
	entries   slab.Objects[proto.TxnEntry]
	// leaderProposals and acks are a leader's proposals and their ack lists, likewise.
	leaderProposals slab.Objects[leaderProposal]
	acks            slab.Slices[int64]
	// held holds, in order, the writes made while the process was paused at a boundary and every
	// write after them, until flushHeld (posted once: flushPosted) hands them to the network.
	held        []heldWrite
	flushPosted bool
	// encoded holds the encodings that outlive the scratch encoder (packets queued for several
	// learners, proposals' data), each its own bytes (package slab).
	encoded slab.Bytes
}

func newHost(w *sim.World, nw *net.Network, node sim.NodeID, disk *storage.Disk, scratch *proto.Encoder, decoder *proto.Decoder) *host {
	return &host{w: w, nw: nw, node: node, disk: disk, inc: w.Incarnation(node), scratch: scratch, decoder: decoder}
}

// alive reports whether the incarnation this host belongs to is still running.
func (h *host) alive() bool { return h.w.IsUp(h.node) && h.w.Incarnation(h.node) == h.inc }

// post runs fn as a separate event of this node at the current instant: after the event being
// handled, and not at all if the node crashes first.
func (h *host) post(fn func()) {
	if h.alive() {
		h.w.AfterFunc(h.node, 0, fn)
	}
}

// after runs fn after d of this node's own monotonic clock, unless it crashes first.
func (h *host) after(d clock.Duration, fn func()) sim.TimerID {
	if !h.alive() {
		return 0
	}
	return h.w.AfterFunc(h.node, d, fn)
}

func (h *host) cancel(t sim.TimerID) { h.w.CancelTimer(t) }

// elapsed is System.nanoTime: the node's monotonic clock.
func (h *host) elapsed() clock.Time { return h.w.Elapsed(h.node) }

// elapsedMillis is Time.currentElapsedTime.
func (h *host) elapsedMillis() int64 { return int64(h.elapsed()) / int64(clock.Millisecond) }

// wallMillis is System.currentTimeMillis: the node's wall clock, which can be stepped.
func (h *host) wallMillis() int64 { return h.w.WallMillis(h.node) }

func (h *host) note(kind, format string, args ...any) {
	if h.alive() {
		h.w.Note(h.node, kind, format, args...)
	}
}

func (h *host) send(c net.ConnID, payload []byte) {
	if h.alive() {
		h.write(c, payload)
	}
}

// write hands payload to the network, unless the process was paused by a fault at an effect
// boundary earlier in this event: a stopped process writes nothing until it runs again. Its writes
// are then held, in order, with every write after them, until an event of the node (which the
// kernel defers until the pause ends) hands them all to the network; events that the pause
// deferred and that run before it write behind them, so no connection's order changes.
func (h *host) write(c net.ConnID, payload []byte) {
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
func (h *host) flushHeld() {
	h.flushPosted = false
	held := h.held
	h.held = nil
	for _, w := range held {
		_ = h.nw.Send(h.node, w.conn, w.payload)
	}
}

// sendRecords sends the concatenated encoding of records, encoded in the scratch encoder: the
// network copies the payload, so the message costs one allocation of its exact size.
func (h *host) sendRecords(c net.ConnID, records ...proto.Record) {
	if h.alive() {
		h.write(c, h.encodeScratch(records...))
	}
}

// sendPacket sends a quorum packet as sendRecords does. Taking the packet as its own type rather
// than as a proto.Record lets the caller's packet live on its stack.
func (h *host) sendPacket(c net.ConnID, qp *proto.QuorumPacket) {
	if h.alive() {
		h.scratch.Reset()
		qp.Encode(h.scratch)
		h.write(c, h.scratch.Bytes())
	}
}

// encodePacket returns a quorum packet's encoding in a new slice of its exact size.
func (h *host) encodePacket(qp *proto.QuorumPacket) []byte {
	h.scratch.Reset()
	qp.Encode(h.scratch)
	return h.encoded.Copy(h.scratch.Bytes())
}

// encode returns the concatenated encoding of records in a new slice of exactly their size, as
// proto.Marshal does without its growing appends.
func (h *host) encode(records ...proto.Record) []byte {
	return h.encoded.Copy(h.encodeScratch(records...))
}

// decodeLenient decodes a record and ignores any bytes after it, as
// ByteBufferInputStream.byteBuffer2Record does. It uses the shared decoder: decoded records copy
// what they keep, and no decoding calls back into a server, so one decoding never overlaps another.
func (h *host) decodeLenient(b []byte, r proto.Record) error {
	d := h.decoder
	d.Reset(b)
	r.Decode(d)
	err := d.Err()
	d.Reset(nil) // Hold no reference to the payload.
	return err
}

// unmarshal is proto.Unmarshal of one record with the shared decoder: b must hold nothing else.
func (h *host) unmarshal(b []byte, r proto.Record) error {
	d := h.decoder
	d.Reset(b)
	r.Decode(d)
	err := d.Finish()
	d.Reset(nil)
	return err
}

// decodeRequestHeader decodes the request header at the start of b and returns the offset of what
// follows it. The header is decoded as its own type so that the caller's stays on its stack.
func (h *host) decodeRequestHeader(b []byte, r *proto.RequestHeader) (int, error) {
	d := h.decoder
	d.Reset(b)
	r.Decode(d)
	offset, err := d.Offset(), d.Err()
	d.Reset(nil)
	return offset, err
}

// decodePacket is decodePacket with the shared decoder. Decoding the packet as its own type rather
// than as a proto.Record keeps it off the heap.
func (h *host) decodePacket(b []byte) (proto.QuorumPacket, error) {
	var qp proto.QuorumPacket
	d := h.decoder
	d.Reset(b)
	qp.Decode(d)
	err := d.Finish()
	d.Reset(nil)
	if err != nil {
		return qp, fmt.Errorf("%w: %v", errPacket, err)
	}
	return qp, nil
}

// encodeScratch encodes records in the scratch encoder. The bytes are valid until its next use.
func (h *host) encodeScratch(records ...proto.Record) []byte {
	h.scratch.Reset()
	for _, r := range records {
		r.Encode(h.scratch)
	}
	return h.scratch.Bytes()
}

func (h *host) close(c net.ConnID) {
	if h.alive() {
		h.nw.Close(h.node, c)
	}
}

// dial opens a connection; it returns 0 when the incarnation is dead.
func (h *host) dial(to sim.NodeID, port net.Port, timeout clock.Duration, handler net.Handler) net.ConnID {
	if !h.alive() {
		return 0
	}
	c, err := h.nw.Dial(h.node, to, port, timeout, handler)
	if err != nil {
		panic("zabmodel: dial from a running server failed: " + err.Error())
	}
	return c
}

func (h *host) listen(port net.Port, l net.Listener) {
	if !h.alive() {
		return
	}
	if err := h.nw.Listen(h.node, port, l); err != nil {
		panic("zabmodel: " + err.Error())
	}
}

func (h *host) unlisten(port net.Port) {
	if h.alive() {
		h.nw.Unlisten(h.node, port)
	}
}

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
