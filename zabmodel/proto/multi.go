package proto

import "fmt"

// MultiHeader frames each op of a MultiRequest and each result of a
// MultiResponse. Jute record org.apache.zookeeper.proto.MultiHeader. A header
// with Done set (and Type -1, Err -1) ends the list.
type MultiHeader struct {
	Type OpCode
	Done bool
	Err  Code
}

func (r *MultiHeader) fields(c codec) {
	intField(c, &r.Type)
	c.boolean(&r.Done)
	intField(c, &r.Err)
}

// Encode implements Record.
func (r *MultiHeader) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *MultiHeader) Decode(d *Decoder) { r.fields(decoding(d)) }

// multiEnd is the header that ends a multi's list in both directions.
var multiEnd = MultiHeader{Type: -1, Done: true, Err: -1}

// MultiRequest is the body of multi and multiRead,
// org.apache.zookeeper.MultiOperationRecord (hand-written in Java, not in
// zookeeper.jute). Each op is written as MultiHeader{Type, false, -1} followed
// by its request record; the list ends with MultiHeader{-1, true, -1}. There
// is no count, so an empty multi is the end header alone (the Java client
// does not send an empty multi at all).
type MultiRequest struct {
	Ops []MultiOp
}

// MultiOp is one op of a MultiRequest: a type and its request record.
//
// Decode accepts only the types MultiOperationRecord.deserialize accepts,
// with these records: create, create2 and createContainer with
// *CreateRequest; createTTL with *CreateTTLRequest; delete with
// *DeleteRequest; setData with *SetDataRequest; check with
// *CheckVersionRequest; getChildren with *GetChildrenRequest; getData with
// *GetDataRequest. Like Java, it fails if the list mixes reads (getChildren,
// getData) with writes. Encode writes whatever it is given.
//
// Decode keeps Type as sent, but note what the 3.8.0 server does with it: a
// create op's type is derived again from its flags (Op.create), so create2
// inside a multi runs as create, and flags 4 or 5/6 make it createContainer
// or createTTL; the Watch flag of a read op is dropped (Op.getData(path)).
type MultiOp struct {
	Type    OpCode
	Request Record
}

// multiOpRequest returns an empty request record for an op type that a multi
// may carry, and whether the type reads.
func multiOpRequest(op OpCode) (r Record, read bool) {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return new(CreateRequest), false
	case OpCreateTTL:
		return new(CreateTTLRequest), false
	case OpDelete:
		return new(DeleteRequest), false
	case OpSetData:
		return new(SetDataRequest), false
	case OpCheck:
		return new(CheckVersionRequest), false
	case OpGetChildren:
		return new(GetChildrenRequest), true
	case OpGetData:
		return new(GetDataRequest), true
	default:
		return nil, false
	}
}

// Encode implements Record.
func (r *MultiRequest) Encode(e *Encoder) {
	for _, op := range r.Ops {
		h := MultiHeader{Type: op.Type, Err: -1}
		h.Encode(e)
		if op.Request != nil {
			op.Request.Encode(e)
		}
	}
	multiEnd.Encode(e)
}

// Decode implements Record.
func (r *MultiRequest) Decode(d *Decoder) {
	r.Ops = nil
	var h MultiHeader
	h.Decode(d)
	reads, writes := 0, 0
	for d.Err() == nil && !h.Done {
		req, read := multiOpRequest(h.Type)
		if req == nil {
			d.Fail(fmt.Errorf("%w: invalid type of op %v in a multi", ErrInvalidRecord, h.Type))
			return
		}
		if read {
			reads++
		} else {
			writes++
		}
		if reads > 0 && writes > 0 {
			d.Fail(fmt.Errorf("%w: a multi mixes read and write ops", ErrInvalidRecord))
			return
		}
		req.Decode(d)
		r.Ops = append(r.Ops, MultiOp{Type: h.Type, Request: req})
		h.Decode(d)
	}
}

// MultiResponse answers multi and multiRead, org.apache.zookeeper.MultiResponse
// (hand-written in Java). Each result is written as MultiHeader{Type, false,
// err} followed by its response record, and the list ends with
// MultiHeader{-1, true, -1}.
//
// A multi that fails still gets a MultiResponse, with ReplyHeader.Err OK: in
// 3.8.0 every result is then an error result, OK for the ops before the one
// that failed (DataTree rewrites their txns), that op's code for it, and
// RuntimeInconsistency for the ops after it. The Java client raises the first
// result whose code is not OK.
type MultiResponse struct {
	Results []MultiResult
}

// MultiResult is one result of a MultiResponse.
//
// Type is one of create (Response *CreateResponse), create2 (used for
// create2, createContainer and createTTL ops; *Create2Response), delete and
// check (no Response), setData (*SetDataResponse), getChildren
// (*GetChildrenResponse), getData (*GetDataResponse), or error. An error
// result carries its code in Err and has no Response: the code is written both
// in the header and as an ErrorResponse body, and Decode, like Java, takes
// the body's. For other types Err is OK, which is what the header holds.
type MultiResult struct {
	Type     OpCode
	Err      Code
	Response Record
}

// multiResultResponse returns an empty response record for a result type,
// and whether the type is valid at all.
func multiResultResponse(op OpCode) (r Record, ok bool) {
	switch op {
	case OpCreate:
		return new(CreateResponse), true
	case OpCreate2:
		return new(Create2Response), true
	case OpSetData:
		return new(SetDataResponse), true
	case OpGetChildren:
		return new(GetChildrenResponse), true
	case OpGetData:
		return new(GetDataResponse), true
	case OpDelete, OpCheck, OpError:
		return nil, true
	default:
		return nil, false
	}
}

// Encode implements Record.
func (r *MultiResponse) Encode(e *Encoder) {
	for _, res := range r.Results {
		h := MultiHeader{Type: res.Type}
		if res.Type == OpError {
			h.Err = res.Err
		}
		h.Encode(e)
		switch {
		case res.Type == OpError:
			body := ErrorResponse{Err: res.Err}
			body.Encode(e)
		case res.Response != nil:
			res.Response.Encode(e)
		}
	}
	multiEnd.Encode(e)
}

// Decode implements Record.
func (r *MultiResponse) Decode(d *Decoder) {
	r.Results = nil
	var h MultiHeader
	h.Decode(d)
	for d.Err() == nil && !h.Done {
		resp, ok := multiResultResponse(h.Type)
		if !ok {
			d.Fail(fmt.Errorf("%w: invalid type %v in a multi response", ErrInvalidRecord, h.Type))
			return
		}
		res := MultiResult{Type: h.Type, Response: resp}
		if h.Type == OpError {
			var body ErrorResponse
			body.Decode(d)
			res.Err = body.Err
		} else if resp != nil {
			resp.Decode(d)
		}
		r.Results = append(r.Results, res)
		h.Decode(d)
	}
}
