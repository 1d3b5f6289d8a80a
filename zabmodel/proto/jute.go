package proto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/zabsim/zabsim/internal/slab"
)

// Record is a jute record: a fixed sequence of fields that encodes to and
// decodes from the binary archive format of org.apache.jute. Every record type
// in this package implements it with pointer receivers.
type Record interface {
	// Encode appends the record to e in jute field order.
	Encode(e *Encoder)
	// Decode reads the record from d in jute field order. Decode never panics
	// on malformed input; the first failure is recorded in d and fields after
	// it are left at their zero values.
	Decode(d *Decoder)
}

// Sentinel errors reported by Decoder.Err, wrapped with the offset at which
// they occurred.
var (
	// ErrTruncated means the input ended inside a field. Java reports this as
	// an EOFException from DataInputStream.
	ErrTruncated = errors.New("jute: truncated input")
	// ErrLength means a buffer or string length was negative (other than the
	// -1 that encodes null) or above the Decoder's field limit. Java reports
	// this as IOException "Unreasonable length = n" from
	// BinaryInputArchive.checkLength.
	ErrLength = errors.New("jute: unreasonable length")
	// ErrTrailingBytes means bytes remained after the records the caller
	// expected. Java itself never checks this; only Unmarshal and
	// Decoder.Finish do.
	ErrTrailingBytes = errors.New("jute: trailing bytes")
	// ErrInvalidRecord means the bytes were well formed but the record's own
	// rules rejected them, such as an op type that MultiOperationRecord does
	// not accept.
	ErrInvalidRecord = errors.New("jute: invalid record")
)

// Encoder appends jute's binary encoding to a byte slice, as
// org.apache.jute.BinaryOutputArchive writes it: big-endian integers, a bool as
// one byte, and buffers, strings and vectors prefixed by an int32 length or
// count with -1 for null. The zero value is ready to use; Reset keeps the
// buffer so that an Encoder used for many messages stops allocating.
type Encoder struct {
	buf []byte
}

// NewEncoder returns an Encoder that appends to buf[:0], reusing its capacity.
func NewEncoder(buf []byte) *Encoder {
	return &Encoder{buf: buf[:0]}
}

// Reset empties the Encoder and keeps its buffer for reuse.
func (e *Encoder) Reset() { e.buf = e.buf[:0] }

// Bytes returns the encoded bytes. The slice aliases the Encoder's buffer and
// is valid only until the next write or Reset; clone it before handing it to
// anything that keeps it, such as a simulated network.
func (e *Encoder) Bytes() []byte { return e.buf }

// Len returns the number of bytes encoded so far.
func (e *Encoder) Len() int { return len(e.buf) }

// WriteInt32 appends a jute int.
func (e *Encoder) WriteInt32(v int32) {
	e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v))
}

// WriteInt64 appends a jute long.
func (e *Encoder) WriteInt64(v int64) {
	e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v))
}

// WriteBool appends a jute boolean: one byte, 1 for true and 0 for false.
func (e *Encoder) WriteBool(v bool) {
	var b byte
	if v {
		b = 1
	}
	e.buf = append(e.buf, b)
}

// WriteBuffer appends a jute buffer: the length, then the bytes. A nil slice
// is written as length -1 (Java's null) and an empty one as length 0.
func (e *Encoder) WriteBuffer(b []byte) {
	if b == nil {
		e.WriteInt32(-1)
		return
	}
	e.writeLength(len(b))
	e.buf = append(e.buf, b...)
}

// WriteString appends a jute ustring: the byte length, then the bytes as
// BinaryOutputArchive.stringToByteBuffer produces them. That method encodes
// each UTF-16 unit on its own, so a supplementary character (a 4-byte UTF-8
// sequence in Go) is written as two 3-byte surrogate encodings (CESU-8).
// Everything else, including bytes that are not valid UTF-8, is written as is.
// Jute's null string cannot be expressed; "" is written as length 0.
func (e *Encoder) WriteString(s string) {
	e.writeLength(javaEncodedLength(s))
	e.buf = appendJavaString(e.buf, s)
}

// WriteStrings appends a jute vector<ustring>; nil is written as count -1.
func (e *Encoder) WriteStrings(v []string) {
	if v == nil {
		e.WriteInt32(-1)
		return
	}
	e.writeLength(len(v))
	for _, s := range v {
		e.WriteString(s)
	}
}

// WriteRecord appends a nested record, as jute's writeRecord does: with no
// framing of its own.
func (e *Encoder) WriteRecord(r Record) { r.Encode(e) }

func (e *Encoder) writeLength(n int) {
	if n > math.MaxInt32 {
		panic(fmt.Sprintf("proto: length %d does not fit a jute int", n))
	}
	e.WriteInt32(int32(n))
}

// Decoder reads jute's binary encoding from a byte slice, as
// org.apache.jute.BinaryInputArchive does. It never panics on malformed input:
// the first failure (truncation, an unreasonable length, a record rule) is
// recorded, every later read returns a zero value, and Err reports it. Buffers
// and strings are copied, so decoded records never alias the input.
type Decoder struct {
	buf        []byte
	off        int
	err        error
	fieldLimit int
	// copies, when set, holds the copies of decoded buffers, carved from shared
	// chunks; each is still its own bytes (see package slab).
	copies *slab.Bytes
	// interned, when set, maps the bytes of each valid UTF-8 string decoded so far to the one
	// string returned for them; see InternStrings.
	interned      map[string]string
	internedLimit int
}

// InternStrings makes the Decoder return one string for every occurrence of the same valid UTF-8
// bytes, remembering up to limit distinct strings, for a long-lived Decoder that reads the same
// paths and names again and again. Go strings are immutable, so owners that share one share
// nothing they can change. Reset keeps it.
func (d *Decoder) InternStrings(limit int) {
	d.interned = make(map[string]string)
	d.internedLimit = limit
}

// SetCopies makes the Decoder copy buffers into s rather than allocate each
// copy, for a long-lived Decoder that decodes many small buffers. Reset keeps it.
func (d *Decoder) SetCopies(s *slab.Bytes) { d.copies = s }

// NewDecoder returns a Decoder over b with the default field limit,
// MaxFieldBytes.
func NewDecoder(b []byte) *Decoder {
	return &Decoder{buf: b}
}

// Reset points the Decoder at b and clears its error; the field limit stays.
func (d *Decoder) Reset(b []byte) {
	d.buf, d.off, d.err = b, 0, nil
}

// SetFieldLimit sets the largest buffer or string length the Decoder accepts,
// the maxBufferSize + extraMaxBufferSize of BinaryInputArchive. A value of 0 or
// less restores the default, MaxFieldBytes.
func (d *Decoder) SetFieldLimit(n int) {
	d.fieldLimit = max(n, 0)
}

func (d *Decoder) limit() int {
	if d.fieldLimit == 0 {
		return MaxFieldBytes
	}
	return d.fieldLimit
}

// Err returns the first error met, or nil.
func (d *Decoder) Err() error { return d.err }

// Offset returns the number of bytes consumed.
func (d *Decoder) Offset() int { return d.off }

// Remaining returns the number of bytes not yet consumed.
func (d *Decoder) Remaining() int { return len(d.buf) - d.off }

// Finish records ErrTrailingBytes if input remains and returns Err. Java never
// rejects trailing bytes, so call it only where exactness is wanted, as in
// tests and in decoding our own logs.
func (d *Decoder) Finish() error {
	if d.err == nil && d.Remaining() > 0 {
		d.err = fmt.Errorf("%w: %d bytes after offset %d", ErrTrailingBytes, d.Remaining(), d.off)
	}
	return d.err
}

// Fail records err as the Decoder's error unless one is already recorded.
// Records use it to report rule violations; it is exported for records
// defined outside this package.
func (d *Decoder) Fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// truncated reports whether the recorded error is a truncation, the
// EOFException that some Java readers catch to accept older formats.
func (d *Decoder) truncated() bool { return errors.Is(d.err, ErrTruncated) }

// restart clears the error and moves to offset off, to read the same bytes
// again in another format.
func (d *Decoder) restart(off int) { d.off, d.err = off, nil }

func (d *Decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > d.Remaining() {
		d.err = fmt.Errorf("%w: need %d bytes at offset %d, have %d", ErrTruncated, n, d.off, d.Remaining())
		return nil
	}
	b := d.buf[d.off : d.off+n : d.off+n]
	d.off += n
	return b
}

// ReadInt32 reads a jute int.
func (d *Decoder) ReadInt32() int32 {
	b := d.take(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// ReadInt64 reads a jute long.
func (d *Decoder) ReadInt64() int64 {
	b := d.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// ReadBool reads a jute boolean. Like DataInput.readBoolean, any non-zero byte
// is true.
func (d *Decoder) ReadBool() bool {
	b := d.take(1)
	return b != nil && b[0] != 0
}

// readField reads a length-prefixed field and checks the length the way
// BinaryInputArchive.checkLength does. It returns nil for -1 (null) and on
// error, and a non-nil slice otherwise.
func (d *Decoder) readField() []byte {
	start := d.off
	n := d.ReadInt32()
	if d.err != nil || n == -1 {
		return nil
	}
	if n < 0 || int(n) > d.limit() {
		d.Fail(fmt.Errorf("%w: %d at offset %d (limit %d)", ErrLength, n, start, d.limit()))
		return nil
	}
	return d.take(int(n))
}

// ReadBuffer reads a jute buffer. Length -1 yields nil and length 0 a non-nil
// empty slice, so that null and empty survive a round trip.
func (d *Decoder) ReadBuffer() []byte {
	b := d.readField()
	if b == nil {
		return nil
	}
	if d.copies != nil && len(b) > 0 {
		return d.copies.Copy(b)
	}
	return bytes.Clone(b)
}

// ReadString reads a jute ustring as BinaryInputArchive.readString does with
// new String(bytes, UTF_8): valid UTF-8 is returned unchanged, and each
// malformed sequence is replaced by U+FFFD exactly where Java's decoder
// replaces it. A null string (length -1) reads as "".
func (d *Decoder) ReadString() string {
	b := d.readField()
	if d.interned == nil || len(b) == 0 {
		return decodeJavaString(b)
	}
	// Indexing with string(b) does not allocate.
	if s, ok := d.interned[string(b)]; ok {
		return s
	}
	if !utf8.Valid(b) {
		return decodeJavaString(b)
	}
	s := string(b) // decodeJavaString of valid UTF-8
	if len(d.interned) < d.internedLimit {
		d.interned[s] = s
	}
	return s
}

// readCount reads a vector count as BinaryInputArchive.startVector does: -1 is
// null (ok false); any other negative count is an empty vector, because the
// generated code loops while the count is positive.
func (d *Decoder) readCount() (n int, ok bool) {
	c := d.ReadInt32()
	if d.err != nil || c == -1 {
		return 0, false
	}
	return max(int(c), 0), true
}

// capacityFor bounds the capacity reserved for a vector by what the remaining
// input could hold, so that a forged count cannot force a large allocation.
func (d *Decoder) capacityFor(n, minElementBytes int) int {
	return min(n, d.Remaining()/minElementBytes)
}

// ReadStrings reads a jute vector<ustring>; count -1 yields nil.
func (d *Decoder) ReadStrings() []string {
	n, ok := d.readCount()
	if !ok {
		return nil
	}
	v := make([]string, 0, d.capacityFor(n, 4))
	for i := 0; i < n && d.err == nil; i++ {
		v = append(v, d.ReadString())
	}
	return v
}

// ReadRecord reads a nested record.
func (d *Decoder) ReadRecord(r Record) { r.Decode(d) }

// RecordPointer is the constraint for WriteVector and ReadVector: a pointer to
// a record type T.
type RecordPointer[T any] interface {
	*T
	Record
}

// WriteVector appends a jute vector of records; nil is written as count -1.
func WriteVector[T any, P RecordPointer[T]](e *Encoder, v []T) {
	if v == nil {
		e.WriteInt32(-1)
		return
	}
	e.writeLength(len(v))
	for i := range v {
		P(&v[i]).Encode(e)
	}
}

// ReadVector reads a jute vector of records; count -1 yields nil. Every record
// in this package takes at least four bytes, which bounds the capacity
// reserved up front.
func ReadVector[T any, P RecordPointer[T]](d *Decoder) []T {
	n, ok := d.readCount()
	if !ok {
		return nil
	}
	v := make([]T, 0, d.capacityFor(n, 4))
	for i := 0; i < n && d.err == nil; i++ {
		var x T
		P(&x).Decode(d)
		v = append(v, x)
	}
	return v
}

// Marshal returns the concatenated encoding of records in a new slice, the
// form a message takes on the simulated network. Use an Encoder directly to
// avoid the allocation.
func Marshal(records ...Record) []byte {
	var e Encoder
	for _, r := range records {
		r.Encode(&e)
	}
	return e.buf
}

// Unmarshal decodes records from b in order and requires that b hold nothing
// else.
func Unmarshal(b []byte, records ...Record) error {
	d := NewDecoder(b)
	for _, r := range records {
		r.Decode(d)
	}
	return d.Finish()
}
