package client

import (
	"encoding/binary"
	"strconv"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// DescribePacket renders one packet of the client protocol, in either direction, for a rendered
// trace; New registers it with the network for the client port. A renderer sees only the bytes, not
// the direction or the request a reply answers, so it decides by shape, and says "?" where it cannot:
//
//   - xid 0 never occurs after the handshake, so a packet starting with a zero int is a
//     ConnectRequest or a ConnectResponse, told apart by which decodes exactly;
//   - eight bytes are a request with no body (ping, closeSession);
//   - xid -1 is a notification; xids -2 and -4 are pings and auth packets, requests if their type
//     field says so;
//   - any other packet is a request if its type is a client op whose body decodes exactly, and
//     otherwise a reply, whose body is shown as a length because its type is unknown here.
func DescribePacket(payload []byte) string {
	if len(payload) < 8 {
		return "? " + strconv.Itoa(len(payload)) + "B"
	}
	xid := int32(binary.BigEndian.Uint32(payload))
	if xid == 0 {
		return describeHandshake(payload)
	}
	if s, ok := describeAsRequest(payload); ok {
		return s
	}
	return describeAsReply(payload)
}

func describeHandshake(payload []byte) string {
	var req proto.ConnectRequest
	if exact(payload, &req) {
		return "request " + proto.Describe(&req)
	}
	var resp proto.ConnectResponse
	if exact(payload, &resp) {
		return "reply " + proto.Describe(&resp)
	}
	return "? handshake " + strconv.Itoa(len(payload)) + "B"
}

func exact(payload []byte, r proto.Record) bool {
	d := proto.NewDecoder(payload)
	r.Decode(d)
	return d.Finish() == nil
}

func describeAsRequest(payload []byte) (string, bool) {
	d := proto.NewDecoder(payload)
	var h proto.RequestHeader
	h.Decode(d)
	if d.Err() != nil || !h.Type.IsValid() && h.Type != proto.OpAuth {
		return "", false
	}
	body := proto.NewRequest(h.Type)
	if body == nil {
		if d.Remaining() != 0 {
			return "", false
		}
		return proto.DescribeRequest(h, nil), true
	}
	body.Decode(d)
	if d.Finish() != nil {
		return "", false
	}
	return proto.DescribeRequest(h, body), true
}

func describeAsReply(payload []byte) string {
	d := proto.NewDecoder(payload)
	var h proto.ReplyHeader
	h.Decode(d)
	if d.Err() != nil {
		return "? " + strconv.Itoa(len(payload)) + "B"
	}
	if h.Xid == proto.NotificationXid {
		var e proto.WatcherEvent
		e.Decode(d)
		if d.Err() == nil {
			return proto.DescribeReply(h, &e)
		}
	}
	s := proto.DescribeReply(h, nil)
	if n := d.Remaining(); n > 0 {
		s += " body=" + strconv.Itoa(n) + "B"
	}
	return s
}
