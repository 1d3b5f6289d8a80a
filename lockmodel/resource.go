package lockmodel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
)

// DefaultResourcePort is the port the protected resource listens on.
const DefaultResourcePort net.Port = 7000

// MaxResourceAccesses bounds the resource's access log; a run that exceeds it fails.
const MaxResourceAccesses = 1 << 20

// Access is one access the protected resource received, in the order it received them.
type Access struct {
	Time clock.Time
	// Object is the lock path whose holder the accessor claims to be.
	Object  string
	Client  string
	Session int64
	// Token is the accessor's fencing token: the czxid of its lock node.
	Token int64
	// Write says the access changes the object (an exclusive access); a read may share it.
	Write    bool
	Accepted bool
	// Newest is the token the fencing rule compared against: the newest token of any accepted
	// access for a write, of an accepted write for a read.
	Newest int64
}

// ResourceConfig configures the protected resource.
type ResourceConfig struct {
	// Name is the resource's node name (default "resource").
	Name string
	// Port is its port (default DefaultResourcePort).
	Port net.Port
	// Fencing makes it reject an access whose token is older than the newest it accepted: a write
	// older than any accepted access, a read older than an accepted write.
	Fencing bool
}

// Resource is the service the lock holders protect: its own simulated node, reached over the
// simulated network, so that an access sent by a holder that was paused arrives when the network
// delivers it. It records every access with the holder's claimed lock and fencing token, and
// accepts or rejects it by the fencing rule. Its log is durable: a crash loses only connections.
type Resource struct {
	w       *sim.World
	nw      *net.Network
	node    sim.NodeID
	cfg     ResourceConfig
	objects []*objectState
	log     []Access
}

type objectState struct {
	name        string
	newestAny   int64
	newestWrite int64
}

// NewResource registers the resource's node and starts listening.
func NewResource(w *sim.World, nw *net.Network, cfg ResourceConfig) (*Resource, error) {
	if w == nil || nw == nil {
		return nil, errors.New("lockmodel: a resource needs a world and a network")
	}
	if cfg.Name == "" {
		cfg.Name = "resource"
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultResourcePort
	}
	if _, taken := w.Lookup(cfg.Name); taken {
		return nil, fmt.Errorf("lockmodel: node name %q is taken", cfg.Name)
	}
	r := &Resource{w: w, nw: nw, cfg: cfg}
	r.node = w.AddNode(cfg.Name, r)
	if !nw.Describes(cfg.Port) {
		nw.Describe(cfg.Port, describeResourceMessage)
	}
	if err := nw.Listen(r.node, cfg.Port, r); err != nil {
		return nil, err
	}
	return r, nil
}

// Node returns the resource's node.
func (r *Resource) Node() sim.NodeID { return r.node }

// Port returns the resource's port.
func (r *Resource) Port() net.Port { return r.cfg.Port }

// Fencing reports whether the resource checks fencing tokens.
func (r *Resource) Fencing() bool { return r.cfg.Fencing }

// Log returns a copy of the access log.
func (r *Resource) Log() []Access { return slices.Clone(r.log) }

// Crash implements sim.Process: connections die with the process (the network closes them).
func (r *Resource) Crash() {}

// Restart implements sim.Process: the listener comes back.
func (r *Resource) Restart() {
	if err := r.nw.Listen(r.node, r.cfg.Port, r); err != nil {
		r.w.Fail(fmt.Errorf("lockmodel: resource cannot listen again: %w", err))
	}
}

// Accept implements net.Listener.
func (r *Resource) Accept(c net.ConnID, from sim.NodeID) net.Handler { return resourceConn{r: r} }

type resourceConn struct{ r *Resource }

func (h resourceConn) Connected(net.ConnID)     {}
func (h resourceConn) Closed(net.ConnID, error) {}

// Received decides one access. A message that does not decode closes the connection, with a note
// in the trace: bad input is the sender's error, never the resource's crash.
func (h resourceConn) Received(c net.ConnID, payload []byte) {
	r := h.r
	req, err := decodeAccessRequest(payload)
	if err != nil {
		r.w.Note(r.node, "resource", "bad request on conn %d: %v", c, err)
		r.nw.Close(r.node, c)
		return
	}
	if len(r.log) >= MaxResourceAccesses {
		r.w.Fail(fmt.Errorf("lockmodel: the resource received more than %d accesses", MaxResourceAccesses))
		return
	}
	a := r.decide(req)
	r.log = append(r.log, a)
	// Notes feed the trace hash, so this one is written whether or not the trace is rendered.
	r.w.Note(r.node, "resource", "%s", describeAccess(a))
	_ = r.nw.Send(r.node, c, encodeAccessReply(accessReply{seq: req.seq, accepted: a.Accepted, newest: a.Newest}))
}

func (r *Resource) object(name string) *objectState {
	i, found := slices.BinarySearchFunc(r.objects, name, func(o *objectState, n string) int {
		switch {
		case o.name < n:
			return -1
		case o.name > n:
			return 1
		}
		return 0
	})
	if !found {
		r.objects = slices.Insert(r.objects, i, &objectState{name: name})
	}
	return r.objects[i]
}

// decide applies the fencing rule and updates the newest tokens.
func (r *Resource) decide(req accessRequest) Access {
	o := r.object(req.object)
	a := Access{Time: r.w.Now(), Object: req.object, Client: req.client, Session: req.session, Token: req.token, Write: req.write}
	a.Newest = o.newestWrite
	if req.write {
		a.Newest = o.newestAny
	}
	a.Accepted = !r.cfg.Fencing || req.token >= a.Newest
	if a.Accepted {
		o.newestAny = max(o.newestAny, req.token)
		if req.write {
			o.newestWrite = max(o.newestWrite, req.token)
		}
	}
	return a
}

func describeAccess(a Access) string {
	kind, verdict := "read", "rejected"
	if a.Write {
		kind = "write"
	}
	if a.Accepted {
		verdict = "accepted"
	}
	return fmt.Sprintf("%s %s by %s session=0x%x token=0x%x newest=0x%x: %s", kind, a.Object, a.Client, a.Session, a.Token, a.Newest, verdict)
}

// The wire format: a request is 'Q', seq (uint32), write (byte), token and session (int64), then
// the object and the client name, each a uint16 length and bytes; a reply is 'A', seq, accepted
// (byte) and the newest token (int64). Big-endian, as jute.
type accessRequest struct {
	seq     uint32
	write   bool
	token   int64
	session int64
	object  string
	client  string
}

type accessReply struct {
	seq      uint32
	accepted bool
	newest   int64
}

const maxResourceString = 1 << 12

func encodeAccessRequest(q accessRequest) []byte {
	b := make([]byte, 0, 26+len(q.object)+len(q.client))
	b = append(b, 'Q')
	b = binary.BigEndian.AppendUint32(b, q.seq)
	b = append(b, boolByte(q.write))
	b = binary.BigEndian.AppendUint64(b, uint64(q.token))
	b = binary.BigEndian.AppendUint64(b, uint64(q.session))
	for _, s := range []string{q.object, q.client} {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		b = append(b, s...)
	}
	return b
}

func decodeAccessRequest(b []byte) (accessRequest, error) {
	var q accessRequest
	if len(b) < 22 || b[0] != 'Q' {
		return q, fmt.Errorf("not an access request (%d bytes)", len(b))
	}
	q.seq = binary.BigEndian.Uint32(b[1:])
	switch b[5] {
	case 0, 1:
		q.write = b[5] == 1
	default:
		return q, fmt.Errorf("bad access kind %d", b[5])
	}
	q.token = int64(binary.BigEndian.Uint64(b[6:]))
	q.session = int64(binary.BigEndian.Uint64(b[14:]))
	rest := b[22:]
	var strs [2]string
	for i := range strs {
		if len(rest) < 2 {
			return q, errors.New("access request cut short")
		}
		n := int(binary.BigEndian.Uint16(rest))
		if n > maxResourceString || len(rest) < 2+n {
			return q, fmt.Errorf("access request string of %d bytes does not fit", n)
		}
		strs[i], rest = string(rest[2:2+n]), rest[2+n:]
	}
	if len(rest) != 0 {
		return q, fmt.Errorf("%d bytes after the access request", len(rest))
	}
	q.object, q.client = strs[0], strs[1]
	return q, nil
}

func encodeAccessReply(a accessReply) []byte {
	b := make([]byte, 0, 14)
	b = append(b, 'A')
	b = binary.BigEndian.AppendUint32(b, a.seq)
	b = append(b, boolByte(a.accepted))
	return binary.BigEndian.AppendUint64(b, uint64(a.newest))
}

func decodeAccessReply(b []byte) (accessReply, error) {
	if len(b) != 14 || b[0] != 'A' || b[5] > 1 {
		return accessReply{}, fmt.Errorf("not an access reply (%d bytes)", len(b))
	}
	return accessReply{seq: binary.BigEndian.Uint32(b[1:]), accepted: b[5] == 1, newest: int64(binary.BigEndian.Uint64(b[6:]))}, nil
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// describeResourceMessage renders the resource protocol in traces.
func describeResourceMessage(b []byte) string {
	if q, err := decodeAccessRequest(b); err == nil {
		kind := "read"
		if q.write {
			kind = "write"
		}
		return fmt.Sprintf("access#%d %s %s by %s token=0x%x", q.seq, kind, q.object, q.client, q.token)
	}
	if a, err := decodeAccessReply(b); err == nil {
		return fmt.Sprintf("access#%d accepted=%v newest=0x%x", a.seq, a.accepted, a.newest)
	}
	return fmt.Sprintf("resource message of %d bytes", len(b))
}
