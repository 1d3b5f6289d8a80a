package lockmodel

import (
	"errors"
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
)

// ErrResourceUnavailable: the connection to the resource failed before the access was answered;
// the access may or may not have reached it.
var ErrResourceUnavailable = errors.New("lockmodel: the resource connection failed")

// resourceDialTimeout bounds a connection attempt to the resource.
const resourceDialTimeout = 5 * clock.Second

// maxPendingAccesses bounds the accesses a client has in flight.
const maxPendingAccesses = 64

// AccessResult is the resource's answer to an access.
type AccessResult struct {
	Accepted bool
	Newest   int64
	// Err is ErrResourceUnavailable if the connection failed before the answer came.
	Err error
}

// ResourceClient is a holder's connection to the resource: one connection, dialed when needed,
// with answers matched to accesses in order.
type ResourceClient struct {
	w        *sim.World
	nw       *net.Network
	node     sim.NodeID
	inc      uint32
	resource sim.NodeID
	port     net.Port
	name     string

	conn    net.ConnID
	seq     uint32
	pending []pendingAccess
}

type pendingAccess struct {
	seq  uint32
	done func(AccessResult)
}

// NewResourceClient returns the client of the application name on node for the resource.
func NewResourceClient(w *sim.World, nw *net.Network, node sim.NodeID, r *Resource, name string) (*ResourceClient, error) {
	if w == nil || nw == nil || r == nil {
		return nil, errors.New("lockmodel: a resource client needs a world, a network and a resource")
	}
	if node < 0 || int(node) >= w.NumNodes() {
		return nil, fmt.Errorf("lockmodel: unknown node %d", node)
	}
	return &ResourceClient{w: w, nw: nw, node: node, inc: w.Incarnation(node), resource: r.node, port: r.cfg.Port, name: name}, nil
}

// Access sends one access claiming the lock object with token, and calls done with the answer
// (never from inside this call). It refuses after the process crashed or with too many accesses in
// flight.
func (c *ResourceClient) Access(object string, session, token int64, write bool, done func(AccessResult)) error {
	if !c.w.IsUp(c.node) || c.w.Incarnation(c.node) != c.inc {
		return ErrCrashed
	}
	if len(c.pending) >= maxPendingAccesses {
		return fmt.Errorf("lockmodel: %d accesses already in flight", len(c.pending))
	}
	if len(object) > maxResourceString || len(c.name) > maxResourceString {
		return fmt.Errorf("lockmodel: object or client name longer than %d bytes", maxResourceString)
	}
	if c.conn == 0 {
		conn, err := c.nw.Dial(c.node, c.resource, c.port, resourceDialTimeout, c)
		if err != nil {
			return err
		}
		c.conn = conn
	}
	c.seq++
	req := accessRequest{seq: c.seq, write: write, token: token, session: session, object: object, client: c.name}
	if err := c.nw.Send(c.node, c.conn, encodeAccessRequest(req)); err != nil {
		return err
	}
	c.pending = append(c.pending, pendingAccess{seq: c.seq, done: done})
	return nil
}

// Connected implements net.Handler.
func (c *ResourceClient) Connected(net.ConnID) {}

// Received implements net.Handler: answers come in the order of the accesses.
func (c *ResourceClient) Received(conn net.ConnID, payload []byte) {
	if conn != c.conn {
		return
	}
	a, err := decodeAccessReply(payload)
	if err != nil || len(c.pending) == 0 || c.pending[0].seq != a.seq {
		c.w.Note(c.node, "resource", "%s: unexpected answer from the resource (%v); closing", c.name, err)
		c.nw.Close(c.node, conn)
		c.Closed(conn, ErrResourceUnavailable)
		return
	}
	p := c.pending[0]
	c.pending = c.pending[1:]
	p.done(AccessResult{Accepted: a.accepted, Newest: a.newest})
}

// Closed implements net.Handler: every access in flight fails.
func (c *ResourceClient) Closed(conn net.ConnID, _ error) {
	if conn != c.conn {
		return
	}
	c.conn = 0
	pending := c.pending
	c.pending = nil
	for _, p := range pending {
		p.done(AccessResult{Err: ErrResourceUnavailable})
	}
}
