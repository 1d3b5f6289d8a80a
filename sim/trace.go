package sim

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"github.com/zabsim/zabsim/clock"
)

// TraceConfig says where a world's trace goes. The zero value keeps only the running hash, which is
// what a sweep over thousands of seeds wants: rendering text costs far more than simulating, and a
// failing seed is replayed with text on.
type TraceConfig struct {
	// Text, if set, receives one line per event: virtual time, node, event kind, detail.
	Text io.Writer
	// JSON, if set, receives the same records as JSON lines.
	JSON io.Writer
	// Tail, if positive, keeps the last Tail text lines in memory, so that a failure can carry the
	// trace leading up to it without writing the whole run anywhere.
	Tail int
	// Records, if set, receives every record in structured form as it is traced, for a consumer
	// inside the same process (an HTML report) that would otherwise parse the text back.
	Records func(Record)
}

// Trace records a run's events. Every record feeds a running 64-bit hash whether or not any text is
// produced, so that two runs can be compared for bit-for-bit equality cheaply; rendering happens only
// when a sink wants it.
type Trace struct {
	hash    uint64
	records int64
	cfg     TraceConfig
	tail    []string
	tailPos int
	err     error
}

// Record is one trace record in structured form, as written to the JSON sink.
type Record struct {
	TimeNanos int64  `json:"t"`
	Time      string `json:"time"`
	Node      string `json:"node"`
	Event     string `json:"ev"`
	Detail    string `json:"detail,omitempty"`
}

const hashSeed = 0x9e3779b97f4a7c15

func newTrace(cfg TraceConfig) *Trace {
	t := &Trace{hash: hashSeed, cfg: cfg}
	if cfg.Tail > 0 {
		t.tail = make([]string, 0, cfg.Tail)
	}
	return t
}

// Hash returns the running hash of every record so far.
func (t *Trace) Hash() uint64 { return t.hash }

// Records returns how many records have been traced.
func (t *Trace) Records() int64 { return t.records }

// Rendering reports whether records are being rendered as text or JSON. Callers that build expensive
// detail strings check it first.
func (t *Trace) Rendering() bool {
	return t.cfg.Text != nil || t.cfg.JSON != nil || t.cfg.Tail > 0 || t.cfg.Records != nil
}

// Tail returns the last lines kept in memory, oldest first.
func (t *Trace) Tail() []string {
	if len(t.tail) < t.cfg.Tail || t.tailPos == 0 {
		return append([]string(nil), t.tail...)
	}
	out := make([]string, 0, len(t.tail))
	out = append(out, t.tail[t.tailPos:]...)
	return append(out, t.tail[:t.tailPos]...)
}

// Err returns the first error a sink returned. The run does not stop for a failing sink, but a caller
// that asked for a trace must learn that it is incomplete.
func (t *Trace) Err() error { return t.err }

// mixWord folds one 64-bit word into the hash. The multiply-xorshift step is a standard avalanche
// mixer; it only needs to make accidental collisions between different runs vanishingly unlikely.
func mixWord(h, v uint64) uint64 {
	h ^= v
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 31
	return h
}

// mixBytes folds a byte string, length first so that adjacent fields cannot run into each other.
func mixBytes(h uint64, b []byte) uint64 {
	h = mixWord(h, uint64(len(b)))
	for len(b) >= 8 {
		h = mixWord(h, binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	if len(b) > 0 {
		var tail [8]byte
		copy(tail[:], b)
		h = mixWord(h, binary.LittleEndian.Uint64(tail[:]))
	}
	return h
}

func mixString(h uint64, s string) uint64 {
	h = mixWord(h, uint64(len(s)))
	for len(s) >= 8 {
		h = mixWord(h, uint64(s[0])|uint64(s[1])<<8|uint64(s[2])<<16|uint64(s[3])<<24|
			uint64(s[4])<<32|uint64(s[5])<<40|uint64(s[6])<<48|uint64(s[7])<<56)
		s = s[8:]
	}
	var tail uint64
	for i := len(s) - 1; i >= 0; i-- {
		tail = tail<<8 | uint64(s[i])
	}
	return mixWord(h, tail)
}

// hashEvent folds a structured kernel record. Kernel events (deliveries, timers) are hashed from
// their fields and payload rather than from rendered text, so that the hash costs a few nanoseconds
// and is identical whether or not text is produced.
func (t *Trace) hashEvent(now clock.Time, node NodeID, kind EventKind, a, b uint64, payload []byte) {
	h := mixWord(t.hash, uint64(now))
	h = mixWord(h, uint64(uint32(node))|uint64(kind)<<32)
	h = mixWord(h, a)
	h = mixWord(h, b)
	if payload != nil {
		h = mixBytes(h, payload)
	}
	t.hash = h
	t.records++
}

// hashNote folds a free-form record (a protocol's annotation of its own state changes).
func (t *Trace) hashNote(now clock.Time, node NodeID, kind, detail string) {
	h := mixWord(t.hash, uint64(now))
	h = mixWord(h, uint64(uint32(node))|uint64(KindNote)<<32)
	h = mixString(h, kind)
	t.hash = mixString(h, detail)
	t.records++
}

// render writes one record to every configured sink.
func (t *Trace) render(now clock.Time, node, kind, detail string) {
	if t.cfg.Text != nil || t.cfg.Tail > 0 {
		line := fmt.Sprintf("%s %-4s %-9s %s", now, node, kind, detail)
		if t.cfg.Text != nil {
			t.write(t.cfg.Text, append([]byte(line), '\n'))
		}
		if t.cfg.Tail > 0 {
			if len(t.tail) < t.cfg.Tail {
				t.tail = append(t.tail, line)
			} else {
				t.tail[t.tailPos] = line
				t.tailPos = (t.tailPos + 1) % t.cfg.Tail
			}
		}
	}
	if t.cfg.Records != nil {
		t.cfg.Records(Record{TimeNanos: int64(now), Node: node, Event: kind, Detail: detail})
	}
	if t.cfg.JSON != nil {
		b, err := json.Marshal(Record{TimeNanos: int64(now), Time: now.String(), Node: node, Event: kind, Detail: detail})
		if err != nil {
			t.fail(err)
			return
		}
		t.write(t.cfg.JSON, append(b, '\n'))
	}
}

func (t *Trace) write(w io.Writer, b []byte) {
	if t.err != nil {
		return
	}
	if _, err := w.Write(b); err != nil {
		t.fail(err)
	}
}

func (t *Trace) fail(err error) {
	if t.err == nil {
		t.err = fmt.Errorf("sim: trace sink: %w", err)
	}
}
