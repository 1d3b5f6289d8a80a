package proto

import "fmt"

// NewRequest returns an empty request record for a request of type op, the
// record the 3.8.0 server reads after the RequestHeader. It returns nil for
// ops without a body (ping, closeSession, whoAmI), for types the server does
// not accept from clients, and for deleteContainer, whose body is the raw
// UTF-8 path without a length prefix (only the leader's ContainerManager
// issues it, and PrepRequestProcessor reads it as new String(bytes)).
func NewRequest(op OpCode) Record {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return new(CreateRequest)
	case OpCreateTTL:
		return new(CreateTTLRequest)
	case OpDelete:
		return new(DeleteRequest)
	case OpExists:
		return new(ExistsRequest)
	case OpGetData:
		return new(GetDataRequest)
	case OpSetData:
		return new(SetDataRequest)
	case OpGetACL:
		return new(GetACLRequest)
	case OpSetACL:
		return new(SetACLRequest)
	case OpGetChildren:
		return new(GetChildrenRequest)
	case OpGetChildren2:
		return new(GetChildren2Request)
	case OpSync:
		return new(SyncRequest)
	case OpCheck:
		return new(CheckVersionRequest)
	case OpMulti, OpMultiRead:
		return new(MultiRequest)
	case OpReconfig:
		return new(ReconfigRequest)
	case OpCheckWatches:
		return new(CheckWatchesRequest)
	case OpRemoveWatches:
		return new(RemoveWatchesRequest)
	case OpGetEphemerals:
		return new(GetEphemeralsRequest)
	case OpGetAllChildrenNumber:
		return new(GetAllChildrenNumberRequest)
	case OpSetWatches:
		return new(SetWatches)
	case OpSetWatches2:
		return new(SetWatches2)
	case OpAddWatch:
		return new(AddWatchRequest)
	case OpAuth:
		return new(AuthPacket)
	case OpSASL:
		return new(GetSASLRequest)
	default:
		return nil
	}
}

// NewResponse returns an empty response record for a successful reply to a
// request of type op, as FinalRequestProcessor builds it. It returns nil for
// ops whose reply is the ReplyHeader alone (delete, deleteContainer,
// closeSession, setWatches, setWatches2, checkWatches, removeWatches, ping,
// auth). A reply whose Err is not OK never has a body.
func NewResponse(op OpCode) Record {
	switch op {
	case OpCreate:
		return new(CreateResponse)
	case OpCreate2, OpCreateTTL, OpCreateContainer:
		return new(Create2Response)
	case OpSetData, OpCheck:
		return new(SetDataResponse)
	case OpGetData, OpReconfig:
		return new(GetDataResponse)
	case OpSetACL:
		return new(SetACLResponse)
	case OpSync:
		return new(SyncResponse)
	case OpExists:
		return new(ExistsResponse)
	case OpAddWatch:
		return new(ErrorResponse)
	case OpGetACL:
		return new(GetACLResponse)
	case OpGetChildren:
		return new(GetChildrenResponse)
	case OpGetChildren2:
		return new(GetChildren2Response)
	case OpGetAllChildrenNumber:
		return new(GetAllChildrenNumberResponse)
	case OpGetEphemerals:
		return new(GetEphemeralsResponse)
	case OpWhoAmI:
		return new(WhoAmIResponse)
	case OpMulti, OpMultiRead:
		return new(MultiResponse)
	case OpSASL:
		return new(SetSASLResponse)
	default:
		return nil
	}
}

// DecodeRequest decodes a request packet (without its length prefix): the
// RequestHeader and the body NewRequest gives for its type, or nil. Like the
// server it ignores bytes after the body. If the header decodes but the body
// does not, it returns the header and the error; the 3.8.0 server answers
// such a request with MarshallingError (PrepRequestProcessor logs an error
// txn for a write; FinalRequestProcessor replies for a read).
func DecodeRequest(b []byte) (RequestHeader, Record, error) {
	d := NewDecoder(b)
	var h RequestHeader
	h.Decode(d)
	if err := d.Err(); err != nil {
		return h, nil, fmt.Errorf("request header: %w", err)
	}
	body := NewRequest(h.Type)
	if body == nil {
		return h, nil, nil
	}
	body.Decode(d)
	if err := d.Err(); err != nil {
		return h, nil, fmt.Errorf("%v request xid %d: %w", h.Type, h.Xid, err)
	}
	return h, body, nil
}

// DecodeReply decodes a reply packet (without its length prefix) as
// ClientCnxn.SendThread.readResponse does: the ReplyHeader, then a
// WatcherEvent for a notification, nothing for a ping or auth reply or when
// Err is not OK, and otherwise the body NewResponse gives for op, the type
// of the pending request the client matched by xid. Bytes after the body are
// ignored.
func DecodeReply(op OpCode, b []byte) (ReplyHeader, Record, error) {
	d := NewDecoder(b)
	var h ReplyHeader
	h.Decode(d)
	if err := d.Err(); err != nil {
		return h, nil, fmt.Errorf("reply header: %w", err)
	}
	var body Record
	switch {
	case h.Xid == NotificationXid:
		body = new(WatcherEvent)
	case h.Xid == PingXid || h.Xid == AuthXid || h.Err != OK:
		return h, nil, nil
	default:
		body = NewResponse(op)
	}
	if body == nil {
		return h, nil, nil
	}
	body.Decode(d)
	if err := d.Err(); err != nil {
		return h, nil, fmt.Errorf("reply xid %d to %v: %w", h.Xid, op, err)
	}
	return h, body, nil
}
