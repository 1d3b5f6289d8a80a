package proto_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// decodeEverything feeds b to the decoder of record type c, to DecodeRequest
// and to DecodeReply, and renders whatever decodes. It must never panic, and
// a successful decode must re-encode.
func decodeEverything(t require.TestingT, c recordCase, op proto.OpCode, b []byte) {
	r := c.new()
	d := proto.NewDecoder(b)
	r.Decode(d)
	require.LessOrEqual(t, d.Offset(), len(b))
	if d.Err() == nil {
		_ = proto.Describe(r)
		_ = proto.Marshal(r)
	}
	if h, body, err := proto.DecodeRequest(b); err == nil {
		_ = proto.DescribeRequest(h, body)
	}
	if h, body, err := proto.DecodeReply(op, b); err == nil {
		_ = proto.DescribeReply(h, body)
	}
}

// TestDecodeNeverPanics decodes arbitrary bytes, and valid encodings with
// bytes overwritten, cut off or appended, as every record type.
func TestDecodeNeverPanics(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		source := rapid.SampledFrom(recordCases).Draw(t, "source")
		b := proto.Marshal(source.gen.Draw(t, "record"))
		if rapid.Bool().Draw(t, "arbitrary") {
			b = rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "bytes")
		}
		for range rapid.IntRange(0, 4).Draw(t, "overwrites") {
			if len(b) > 0 {
				b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] = rapid.Byte().Draw(t, "byte")
			}
		}
		b = b[:rapid.IntRange(0, len(b)).Draw(t, "cut")]
		b = append(b, rapid.SliceOfN(rapid.Byte(), 0, 4).Draw(t, "tail")...)
		op := proto.OpCode(rapid.Int32Range(-12, 110).Draw(t, "op"))
		decodeEverything(t, source, op, b)
		decodeEverything(t, rapid.SampledFrom(recordCases).Draw(t, "other"), op, b)
	})
}

// FuzzDecode is the same check as a Go fuzz target: the first byte picks the
// record type (and the op for DecodeReply), the rest is the input. The seeds
// are valid encodings of a few records.
func FuzzDecode(f *testing.F) {
	seeds := []proto.Record{
		&proto.CreateRequest{Path: "/a", Data: []byte("xyz"), ACL: proto.OpenACLUnsafe, Flags: proto.EphemeralSequential},
		&proto.MultiRequest{Ops: []proto.MultiOp{{Type: proto.OpDelete, Request: &proto.DeleteRequest{Path: "/b", Version: -1}}}},
		&proto.MultiResponse{Results: []proto.MultiResult{{Type: proto.OpError, Err: proto.NoNode}}},
		&proto.TxnEntry{Header: proto.TxnHeader{Type: proto.OpMulti}, Txn: &proto.MultiTxn{Txns: []proto.Txn{
			proto.MakeTxn(proto.OpCheck, &proto.CheckVersionTxn{Path: "/c", Version: 1}),
		}}},
		&proto.ConnectRequest{TimeoutMilliseconds: 30000, Password: make([]byte, 16)},
		&proto.GetChildren2Response{Children: []string{"a", "b"}},
	}
	for _, seed := range seeds {
		i := slices.IndexFunc(recordCases, func(c recordCase) bool {
			return reflect.TypeOf(c.new()) == reflect.TypeOf(seed)
		})
		require.GreaterOrEqual(f, i, 0)
		f.Add(append([]byte{byte(i)}, proto.Marshal(seed)...))
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xfe})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		c := recordCases[int(data[0])%len(recordCases)]
		decodeEverything(t, c, proto.OpCode(data[0]), data[1:])
	})
}
