package redis

import (
	"errors"
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
)

// Errors a command can end with instead of a reply.
var (
	// ErrTimeout: no reply within the command's timeout; the client closed its connection, and the
	// command may or may not have run.
	ErrTimeout = errors.New("redis: command timed out")
	// ErrConnection: the connection failed before the reply; the command may or may not have run.
	ErrConnection = errors.New("redis: connection failed")
	// ErrCrashed: the client's process crashed (or restarted) since the client was made.
	ErrCrashed = errors.New("redis: the client's process crashed")
)

// maxPending bounds the commands a client has in flight.
const maxPending = 256

// Target says which server a client talks to; it is asked at every (re)connection, so that a
// client of a replicated pair follows the master Sentinel names.
type Target func() *Server

// Client is one connection's worth of a Redis client library on a simulated node: commands are
// pipelined on one connection, replies matched in order, each with a timeout on the node's
// monotonic clock after which the connection is closed (as go-redis and redigo do on a read
// timeout) and every command in flight fails.
type Client struct {
	w      *sim.World
	nw     *net.Network
	node   sim.NodeID
	inc    uint32
	target Target

	conn    net.ConnID
	pending []*call
}

type call struct {
	done  func(Reply, error)
	timer sim.TimerID
}

// NewClient returns a client on node for the server target names.
func NewClient(w *sim.World, nw *net.Network, node sim.NodeID, target Target) (*Client, error) {
	if w == nil || nw == nil || target == nil {
		return nil, errors.New("redis: a client needs a world, a network and a target")
	}
	if node < 0 || int(node) >= w.NumNodes() {
		return nil, fmt.Errorf("redis: unknown node %d", node)
	}
	return &Client{w: w, nw: nw, node: node, inc: w.Incarnation(node), target: target}, nil
}

// Do sends one command and calls done with its reply or an error (never from inside this call).
func (c *Client) Do(timeout clock.Duration, done func(Reply, error), args ...string) error {
	if !c.w.IsUp(c.node) || c.w.Incarnation(c.node) != c.inc {
		return ErrCrashed
	}
	if len(c.pending) >= maxPending {
		return fmt.Errorf("redis: %d commands already in flight", len(c.pending))
	}
	if c.conn == 0 {
		s := c.target()
		if s == nil {
			return fmt.Errorf("redis: no server to talk to: %w", ErrConnection)
		}
		conn, err := c.nw.Dial(c.node, s.node, s.cfg.Port, timeout, c)
		if err != nil {
			return fmt.Errorf("redis: dial %s: %w", s.cfg.Name, err)
		}
		c.conn = conn
	}
	if err := c.nw.Send(c.node, c.conn, AppendCommand(nil, args...)); err != nil {
		return fmt.Errorf("redis: send: %w", err)
	}
	cl := &call{done: done}
	conn := c.conn
	cl.timer = c.w.AfterFunc(c.node, timeout, func() { c.timedOut(conn, cl) })
	c.pending = append(c.pending, cl)
	return nil
}

func (c *Client) timedOut(conn net.ConnID, cl *call) {
	if conn != c.conn || len(c.pending) == 0 {
		return
	}
	c.nw.Close(c.node, conn)
	c.fail(conn, cl, ErrTimeout)
}

// fail ends every command in flight on conn; cl (if in flight) gets err, the others ErrConnection.
func (c *Client) fail(conn net.ConnID, cl *call, err error) {
	if conn != c.conn {
		return
	}
	c.conn = 0
	pending := c.pending
	c.pending = nil
	for _, p := range pending {
		c.w.CancelTimer(p.timer)
		if p == cl {
			p.done(Reply{}, err)
		} else {
			p.done(Reply{}, ErrConnection)
		}
	}
}

// Connected implements net.Handler.
func (c *Client) Connected(net.ConnID) {}

// Received implements net.Handler: replies come in the order of the commands.
func (c *Client) Received(conn net.ConnID, payload []byte) {
	if conn != c.conn {
		return
	}
	rep, err := decodeReply(payload)
	if err != nil || len(c.pending) == 0 {
		c.w.Note(c.node, "redis", "unexpected reply (%v); closing", err)
		c.nw.Close(c.node, conn)
		c.fail(conn, nil, ErrConnection)
		return
	}
	p := c.pending[0]
	c.pending = c.pending[1:]
	c.w.CancelTimer(p.timer)
	p.done(rep, nil)
}

// Closed implements net.Handler.
func (c *Client) Closed(conn net.ConnID, _ error) { c.fail(conn, nil, ErrConnection) }
