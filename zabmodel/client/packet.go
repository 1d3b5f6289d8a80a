package client

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// packet is ClientCnxn.Packet: one message to the server and what the client needs to finish it.
type packet struct {
	header    proto.RequestHeader
	hasHeader bool         // false only for the ConnectRequest, which has no RequestHeader
	request   proto.Record // nil for ping and closeSession
	// hasReply is Java's replyHeader != null: requests whose failure is reported. Pings, auth
	// packets and the ConnectRequest have none, so conLossPacket passes over them.
	hasReply bool

	err      proto.Code
	zxid     int64
	response proto.Record

	watch   *watchRegistration
	unwatch *watchDeregistration
	// deliver turns the finished packet into the application's callback; nil means nobody waits
	// (Java's cb == null), so nothing is queued for the EventThread.
	deliver func(*packet)
	// sink is deliver for a callback that is a value with a method (CreateWith, ExistsWith): a
	// packet in flight then holds no closure, so that a world holding the client can be copied
	// (package modelcheck). At most one of deliver and sink is set.
	sink resultSink
	// onFinish runs when the packet finishes, in the SendThread, as the application thread blocked
	// in submitRequest wakes up (closeSession).
	onFinish func(*packet)
	// authDone reports the reply to an auth packet (see AddAuth); nil for re-sent credentials.
	authDone func(Result)

	// xidTaken: the xid was taken when the packet was made or queued, as go-zookeeper takes it,
	// rather than when it is written.
	xidTaken bool
	// numberedAuth: an auth packet sent as go-zookeeper sends it, an ordinary request with an xid
	// that waits in the pending queue.
	numberedAuth bool
	// resentAuth: a credential go-zookeeper re-sends after a reconnect; priming: a packet of a
	// connection's start (handshake, re-sent credential) that a go-zookeeper cleanup drops.
	resentAuth bool
	priming    bool
	// written is set when the packet went out on a connection, with session the session id then.
	written bool
	session int64
	// replied is set when a reply to the packet was read (not when the client gave up on it).
	replied bool
}

// wire returns the xid and session id the packet was written with, or zeros if it never was.
func (p *packet) wire() (xid int32, session int64) {
	if !p.written {
		return 0, 0
	}
	return p.header.Xid, p.session
}

func (p *packet) op() proto.OpCode { return p.header.Type }

// numbered reports whether the packet takes an xid from the client's counter and waits in the
// pending queue for its reply: every packet with a header except pings and auth packets. This
// includes setWatches, whose SET_WATCHES_XID Java overwrites when it writes the packet.
func (p *packet) numbered() bool {
	return p.hasHeader && p.header.Type != proto.OpPing && (p.header.Type != proto.OpAuth || p.numberedAuth)
}

// packetQueue is a FIFO of packets; Java's outgoingQueue (a deque) and pendingQueue.
type packetQueue struct {
	items []*packet
	head  int
}

func (q *packetQueue) len() int { return len(q.items) - q.head }

func (q *packetQueue) front() *packet {
	if q.len() == 0 {
		panic("client: front of an empty packet queue")
	}
	return q.items[q.head]
}

func (q *packetQueue) push(p *packet) { q.items = append(q.items, p) }

func (q *packetQueue) pop() *packet {
	p := q.front()
	q.items[q.head] = nil
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= 64 && 2*q.head >= len(q.items):
		// A queue that never empties (requests always in flight) would otherwise grow forever.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return p
}

// pushFront puts packets, in the order given, before everything queued, as the series of addFirst
// calls in primeConnection leaves them.
func (q *packetQueue) pushFront(first []*packet) {
	rest := q.items[q.head:]
	items := make([]*packet, 0, len(first)+len(rest))
	items = append(items, first...)
	q.items, q.head = append(items, rest...), 0
}

// removeXid removes and returns the packet with the given xid, or nil. Replies usually answer the
// oldest packet, so the search starts there.
func (q *packetQueue) removeXid(xid int32) *packet {
	for i := q.head; i < len(q.items); i++ {
		if p := q.items[i]; p.header.Xid == xid {
			if i == q.head {
				return q.pop()
			}
			q.items = slices.Delete(q.items, i, i+1) // which clears the vacated slot
			return p
		}
	}
	return nil
}

// takeAll empties the queue and returns what it held, oldest first.
func (q *packetQueue) takeAll() []*packet {
	all := q.items[q.head:]
	q.items, q.head = nil, 0
	return all
}

// String describes a packet for panics and notes.
func (p *packet) String() string {
	if !p.hasHeader {
		return proto.Describe(p.request)
	}
	return fmt.Sprintf("%s err=%v", proto.DescribeRequest(p.header, p.request), p.err)
}
