package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/internal/slab"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// memory is the part of one incarnation of a server that lives only in its own memory: the
// encoder and decoder it borrows from its ensemble, and the chunks its objects are carved from.
// Nothing here reaches the world outside the process, so it is not part of host: an adapter over a
// real network and a real disk would use it as it is.
type memory struct {
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
	// encoded holds the encodings that outlive the scratch encoder (packets queued for several
	// learners, proposals' data), each its own bytes (package slab).
	encoded slab.Bytes

	// hashes remembers the TxnHash of recent transactions; see txnHash.
	hashes [txnHashCacheSize]cachedTxnHash
}

// txnHashCacheSize is how many transactions' hashes a server remembers, indexed by zxid. A server
// hashes one transaction when it proposes it, logs it, applies it and keeps it in its committed
// log, a few events apart, with at most a few hundred other transactions in between.
const txnHashCacheSize = 256

type cachedTxnHash struct {
	entry *proto.TxnEntry
	hash  uint64
}

// txnHash returns TxnHash(entry), computed once per transaction object. The cache is keyed by the
// object itself, not by its zxid: two servers, or a truncated and a new transaction with one zxid,
// never share an object. An entry is never modified after it is built except by the tree's apply
// of a failed multi, which rewrites sub-txn types in a way that TxnHash ignores by design.
func (m *memory) txnHash(entry *proto.TxnEntry) uint64 {
	slot := &m.hashes[uint64(entry.Header.Zxid)%txnHashCacheSize]
	if slot.entry == entry {
		return slot.hash
	}
	hash := txnHashWith(m.scratch, entry)
	slot.entry, slot.hash = entry, hash
	return hash
}

func newMemory(scratch *proto.Encoder, decoder *proto.Decoder) *memory {
	return &memory{scratch: scratch, decoder: decoder}
}

// encodePacket returns a quorum packet's encoding in a new slice of its exact size.
func (m *memory) encodePacket(qp *proto.QuorumPacket) []byte {
	m.scratch.Reset()
	qp.Encode(m.scratch)
	return m.encoded.Copy(m.scratch.Bytes())
}

// encodePacketScratch encodes a quorum packet in the scratch encoder: the bytes are valid until
// its next use. Taking the packet as its own type rather than as a proto.Record lets the caller's
// packet live on its stack.
func (m *memory) encodePacketScratch(qp *proto.QuorumPacket) []byte {
	m.scratch.Reset()
	qp.Encode(m.scratch)
	return m.scratch.Bytes()
}

// encode returns the concatenated encoding of records in a new slice of exactly their size, as
// proto.Marshal does without its growing appends.
func (m *memory) encode(records ...proto.Record) []byte {
	return m.encoded.Copy(m.encodeScratch(records...))
}

// decodeLenient decodes a record and ignores any bytes after it, as
// ByteBufferInputStream.byteBuffer2Record does. It uses the shared decoder: decoded records copy
// what they keep, and no decoding calls back into a server, so one decoding never overlaps another.
func (m *memory) decodeLenient(b []byte, r proto.Record) error {
	d := m.decoder
	d.Reset(b)
	r.Decode(d)
	err := d.Err()
	d.Reset(nil) // Hold no reference to the payload.
	return err
}

// unmarshal is proto.Unmarshal of one record with the shared decoder: b must hold nothing else.
func (m *memory) unmarshal(b []byte, r proto.Record) error {
	d := m.decoder
	d.Reset(b)
	r.Decode(d)
	err := d.Finish()
	d.Reset(nil)
	return err
}

// decodeRequestHeader decodes the request header at the start of b and returns the offset of what
// follows it. The header is decoded as its own type so that the caller's stays on its stack.
func (m *memory) decodeRequestHeader(b []byte, r *proto.RequestHeader) (int, error) {
	d := m.decoder
	d.Reset(b)
	r.Decode(d)
	offset, err := d.Offset(), d.Err()
	d.Reset(nil)
	return offset, err
}

// decodePacket is decodePacket with the shared decoder. Decoding the packet as its own type rather
// than as a proto.Record keeps it off the heap.
func (m *memory) decodePacket(b []byte) (proto.QuorumPacket, error) {
	var qp proto.QuorumPacket
	d := m.decoder
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
func (m *memory) encodeScratch(records ...proto.Record) []byte {
	m.scratch.Reset()
	for _, r := range records {
		r.Encode(m.scratch)
	}
	return m.scratch.Bytes()
}
