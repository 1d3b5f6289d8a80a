package client

import (
	"fmt"
	"strconv"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Library names the client library whose client-side behaviour a Client reproduces (Config.Emulate).
//
// Java, the zero value, is the Java client of ZooKeeper 3.8.0, as the package documentation
// describes it. GoZookeeper is github.com/go-zookeeper/zk v1.0.4 (conn.go, structs.go, util.go,
// create_mode.go, dnshostprovider.go), which the real-server conformance runner (internal/realzk)
// drives; emulating it lets the simulated-server runner compare server behaviour only. It changes
// these client-side behaviours, the differences that a sequence of create, delete, exists, get,
// set, children, multi, sync, getacl, setacl, addauth, close and expire can observe and the few
// wire details that come with them (xid numbering, the send buffer):
//
//   - Validation: nothing is validated locally but the create mode (parseCreateMode accepts the
//     same seven modes Java does). Paths are sent as given (go-zookeeper's own check, which differs
//     from Java's, is the caller's: conform.ClientRejectsPath), TTLs too (the server judges them),
//     and multi ops are not checked at all. Java's local refusals do not happen.
//   - Create: a plain create is sent as create (op 1), not create2, and CreateResult.Stat stays
//     zero, also for createContainer and createTTL, whose Stat go-zookeeper does not decode.
//   - Multi: create ops always go as create (op 1) with the mode's flags and no TTL (CreateRequest
//     is go-zookeeper's only create op); read ops (GetDataOp, GetChildrenOp) are refused with
//     ErrInvalidArgument (go-zookeeper has no multiRead); an empty multi is sent. A result of a type
//     other than error, create, setData, check or delete (say create2) stops go-zookeeper's
//     decoding: the multi fails with APIERROR and Results holds the results before it. A reply
//     whose header is not OK gives an empty, non-nil Results; a multi the client gave up on, nil.
//   - Xids come from go-zookeeper's counter when the request is queued (from 1, wrapping through
//     0), for auth and setWatches too. Replies are matched to requests by xid, not in FIFO order: a
//     reply out of order is accepted, a reply to an unknown xid and one with an unknown negative
//     xid are ignored (go-zookeeper logs them), where Java drops the connection.
//   - Auth: AddAuth is an ordinary request (op 100 with an xid), and its credential is remembered
//     for reconnects only once the server answered OK. AUTHFAILED is not terminal: the call gets
//     it, the server closes the connection, the client reconnects with the same session and resends
//     only the credentials that succeeded, in the order they were added, one at a time, before
//     anything else. A credential whose reply is lost with its connection is forgotten.
//   - Reply size: MaxPacketBytes is go-zookeeper's WithMaxBufferSize; zero, its default, sets no
//     limit at all (its 1.5 MiB receive buffer grows). Requests are limited instead: one that does
//     not fit go-zookeeper's 1.5 MiB send buffer is refused with ErrRequestTooLarge.
//   - Watches: the default watcher is go-zookeeper's event callback, so it hears every
//     notification the server sends, registered or not, and the other watchers (go-zookeeper's
//     channels) hear the notifications that consume their watch: NodeCreated consumes exist
//     watches only, NodeDataChanged exist and data watches, NodeChildrenChanged child watches,
//     NodeDeleted all three. State changes go to the default watcher only. Notifications of unknown
//     types or states are delivered, not a reason to drop the connection. AddWatch, RemoveWatches
//     and RemoveAllWatches are refused with ErrInvalidArgument (go-zookeeper v1.0.4 has none), and
//     so is Config.DisableAutoWatchReset.
//   - Reconnecting: the ConnectRequest has no readOnly flag and always carries the current session
//     id. The watches are re-registered with setWatches only (never setWatches2), in batches of
//     go-zookeeper's 128 kB measure (28 bytes plus 4 plus the path's length per watch), queued
//     after the handshake behind the requests already waiting. Requests not yet written when a
//     connection ends stay queued for the next one, unless the host provider has gone round all
//     servers (go-zookeeper's flushUnsentRequests, CONNECTIONLOSS here); those written fail with
//     CONNECTIONLOSS.
//   - Expiry: go-zookeeper takes a handshake answer with session id 0 as expiry, where Java looks
//     at the timeout (the real server sets both to 0); an answer with a timeout of 0 and a session
//     id is a protocol error here (go-zookeeper's ping ticker would panic).
//   - Closing: requests issued after Close, and those failed by it, get CONNECTIONLOSS (Java:
//     SESSIONEXPIRED once the state is CLOSED).
//   - Reconnection timing, which decides whether a session outlives a dropped connection (with
//     the shortest timeouts Java's pauses can add up to more than the session timeout): no 100 ms
//     cleanup pause and no random delay before reconnecting, only go-zookeeper's one-second sleep
//     after a full cycle of servers (with one server, before every reconnection); a dial may take
//     one second, the handshake ten read timeouts.
//
// Not emulated, because no conformance sequence can tell: go-zookeeper's ping ticker (Java's ping
// rule stays), the blocking of a caller when 16 requests wait, the shuffle algorithm, a second
// Close returning at once, EventNotWatching events, and what go-zookeeper does after its session
// expired: it would dial again and open a new session under a new id, which realzk's dialer
// forbids and zabsim models as a new client; an emulated client ends at expiry as a Java client
// does, and its requests then fail with SESSIONEXPIRED.
type Library uint8

const (
	// Java is the Java client of ZooKeeper 3.8.0.
	Java Library = iota
	// GoZookeeper is github.com/go-zookeeper/zk v1.0.4.
	GoZookeeper
)

// String names the library.
func (l Library) String() string {
	switch l {
	case Java:
		return "Java"
	case GoZookeeper:
		return "go-zookeeper"
	}
	return "Library(" + strconv.Itoa(int(l)) + ")"
}

// go-zookeeper's sizes (conn.go).
const (
	// goZookeeperBufferBytes is bufferSize, the fixed send buffer that holds the length prefix and
	// the packet.
	goZookeeperBufferBytes = 1536 * 1024
	// goZookeeperSetWatchesLimit and goZookeeperSetWatchesOverhead are sendSetWatches' batch limit
	// and the fixed cost it counts for each batch.
	goZookeeperSetWatchesLimit    = 128 * 1024
	goZookeeperSetWatchesOverhead = 28
	// goZookeeperDialTimeoutMs is connectTimeout, the dialer's timeout.
	goZookeeperDialTimeoutMs = 1000
)

func (c *Client) goZookeeper() bool { return c.emulate == GoZookeeper }

// unsupported refuses a call that go-zookeeper v1.0.4 does not have.
func (c *Client) unsupported(call string) error {
	if c.goZookeeper() {
		return fmt.Errorf("%w: go-zookeeper v1.0.4 has no %s", ErrInvalidArgument, call)
	}
	return nil
}

// takeXid numbers a packet now, as go-zookeeper does when it queues a request.
func (c *Client) takeXid(p *packet) {
	p.header.Xid = c.nextXid()
	p.xidTaken = true
}

// checkSendBuffer refuses a request that go-zookeeper's encodePacket could not fit in its buffer:
// the length prefix, the header and the body must fit in bufferSize bytes.
func (c *Client) checkSendBuffer(p *packet) error {
	if p.request == nil {
		return nil
	}
	c.encoder.Reset()
	p.header.Encode(&c.encoder)
	p.request.Encode(&c.encoder)
	if n := len(c.encoder.Bytes()); 4+n > goZookeeperBufferBytes {
		return fmt.Errorf("%w: %s of %d bytes (buffer %d bytes)", ErrRequestTooLarge, p.op(), n, goZookeeperBufferBytes)
	}
	return nil
}

// nonNilACL encodes a nil list as go-zookeeper does: a vector of length 0, never -1.
func nonNilACL(acl []proto.ACL) []proto.ACL {
	if acl == nil {
		return []proto.ACL{}
	}
	return acl
}

// goZookeeperCreate builds the request of go-zookeeper's Create, CreateContainer or CreateTTL,
// whichever the mode calls for, as the conformance driver picks them.
func goZookeeperCreate(path string, data []byte, acl []proto.ACL, mode proto.CreateMode, ttl int64, cb func(CreateResult)) *packet {
	p := &packet{deliver: deliverCreate(cb, false)}
	acl = nonNilACL(acl)
	switch {
	case mode.IsTTL():
		p.header.Type = proto.OpCreateTTL
		p.request = &proto.CreateTTLRequest{Path: path, Data: data, ACL: acl, Flags: mode, TTL: ttl}
		return p
	case mode.IsContainer():
		p.header.Type = proto.OpCreateContainer
	default:
		p.header.Type = proto.OpCreate
	}
	p.request = &proto.CreateRequest{Path: path, Data: data, ACL: acl, Flags: mode}
	return p
}

// goZookeeperMulti is go-zookeeper's Multi: no validation, create ops as CreateRequest, and an
// empty multi sent like any other.
func (c *Client) goZookeeperMulti(ops []Op, cb func(MultiResult)) error {
	request := &proto.MultiRequest{Ops: make([]proto.MultiOp, 0, len(ops))}
	for _, op := range ops {
		record, err := op.goZookeeperRecord()
		if err != nil {
			return err
		}
		request.Ops = append(request.Ops, record)
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: proto.OpMulti}, request: request, deliver: deliverMulti(cb, true)})
}

// goZookeeperRecord is the op as go-zookeeper's Multi encodes it.
func (o Op) goZookeeperRecord() (proto.MultiOp, error) {
	switch o.typ {
	case proto.OpCreate, proto.OpCreateContainer, proto.OpCreateTTL:
		// The TTL has no field in go-zookeeper's CreateRequest.
		return proto.MultiOp{Type: proto.OpCreate, Request: &proto.CreateRequest{Path: o.path, Data: o.data,
			ACL: nonNilACL(o.acl), Flags: o.mode}}, nil
	case proto.OpDelete, proto.OpSetData, proto.OpCheck:
		return o.record(), nil
	case proto.OpGetData, proto.OpGetChildren:
		return proto.MultiOp{}, fmt.Errorf("%w: go-zookeeper's Multi takes no %v op (unknown operation type)", ErrInvalidArgument, o.typ)
	default:
		return proto.MultiOp{}, fmt.Errorf("%w: an Op must be made by one of the Op constructors", ErrInvalidArgument)
	}
}

// goZookeeperMultiResults decodes the results as multiResponse.Decode does, from the full decoding
// of the reply: it stops at the first result of a type it has no case for, and the multi then
// fails with APIERROR.
func goZookeeperMultiResults(p *packet, r *MultiResult) {
	if !p.replied {
		r.Results = nil // go-zookeeper's Multi returns no responses for a lost connection.
		return
	}
	resp := response[*proto.MultiResponse](p)
	if resp == nil {
		// The header carried an error, so go-zookeeper decoded nothing.
		r.Results = []OpResult{}
		return
	}
	for i, res := range resp.Results {
		switch res.Type {
		case proto.OpError, proto.OpCreate, proto.OpSetData, proto.OpCheck, proto.OpDelete:
		default:
			r.Err, r.Results = proto.APIError, r.Results[:i]
			return
		}
	}
}

// goZookeeperAuthReply finishes an auth packet answered by the server. A credential of AddAuth is
// remembered only when it succeeded; a re-sent credential that fails makes go-zookeeper close the
// connection (resendZkAuth returns an error and its goroutine closes the socket).
func (c *Client) goZookeeperAuthReply(p *packet) error {
	if p.resentAuth {
		c.authResends--
		if c.authResends < 0 {
			panic(fmt.Sprintf("client %s: more re-sent credentials answered than sent", c.name))
		}
		if p.err != proto.OK {
			return fmt.Errorf("error in resending auth creds: failed connection setAuth request: %v", p.err)
		}
		return nil
	}
	if p.err == proto.OK {
		body := p.request.(*proto.AuthPacket)
		c.auth = append(c.auth, authData{scheme: body.Scheme, data: body.Auth})
	}
	if p.authDone != nil {
		done, result := p.authDone, resultOf(p)
		c.queueCallback(func() { done(result) })
	}
	return nil
}

// goZookeeperAuthPacket is AddAuth's request: an ordinary request with an xid.
func goZookeeperAuthPacket(a authData, done func(Result), resent bool) *packet {
	return &packet{
		header:       proto.RequestHeader{Type: proto.OpAuth},
		hasHeader:    true,
		request:      &proto.AuthPacket{Type: 0, Scheme: a.scheme, Auth: a.data},
		numberedAuth: true,
		authDone:     done,
		resentAuth:   resent,
		priming:      resent,
	}
}

// goZookeeperResetWatches is sendSetWatches, run once the session is established: setWatches
// batches queued behind what already waits, each with its xid.
func (c *Client) goZookeeperResetWatches() {
	if c.watches.empty() {
		return
	}
	lists := c.watches.watchLists()
	var batches []*proto.SetWatches
	size := 0
	for kind := watchData; kind <= watchChild; kind++ {
		for _, path := range lists[kind] {
			extra := 4 + len(path)
			if len(batches) == 0 || size+extra > goZookeeperSetWatchesLimit {
				size = goZookeeperSetWatchesOverhead
				batches = append(batches, &proto.SetWatches{RelativeZxid: c.lastZxid,
					DataWatches: []string{}, ExistWatches: []string{}, ChildWatches: []string{}})
			}
			size += extra
			b := batches[len(batches)-1]
			switch kind {
			case watchData:
				b.DataWatches = append(b.DataWatches, path)
			case watchExist:
				b.ExistWatches = append(b.ExistWatches, path)
			default:
				b.ChildWatches = append(b.ChildWatches, path)
			}
		}
	}
	for _, b := range batches {
		p := &packet{header: proto.RequestHeader{Type: proto.OpSetWatches}, hasHeader: true, hasReply: true, request: b}
		c.takeXid(p)
		c.outgoing.push(p)
	}
}

// dropPriming removes from the outgoing queue what go-zookeeper would not carry over to the next
// connection: the handshake, re-sent credentials and pings, which never enter its request
// channel. Application requests and setWatches batches stay.
func (c *Client) dropPriming() {
	for _, p := range c.outgoing.takeAll() {
		if p.priming || (p.hasHeader && p.op() == proto.OpPing) {
			continue
		}
		c.outgoing.push(p)
	}
}

// failUnsent is flushUnsentRequests(ErrNoServer), run when the host provider has gone round every
// server without connecting.
func (c *Client) failUnsent() {
	for _, p := range c.outgoing.takeAll() {
		c.conLossPacket(p)
	}
}
