package client

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// newClientWith starts a client on the client node with cfg, filling in the servers and, if unset,
// a four-second session timeout.
func (b *testbed) newClientWith(cfg Config, log *eventLog) *Client {
	helper(b.tb)
	if cfg.Servers == nil {
		cfg.Servers = b.serverNodes()
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 4 * clock.Second
	}
	c, err := New(b.w, b.nw, b.clientNode, cfg, log.watcher("default"))
	require.NoError(b.tb, err)
	return c
}

func TestNewRegistersTheTraceRendererOnlyIfThePortHasNone(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	require.False(t, bed.nw.Describes(DefaultPort))
	log := &eventLog{w: bed.w}
	bed.newClient(4*clock.Second, log)
	assert.True(t, bed.nw.Describes(DefaultPort))
	bed.run(10 * ms)
	assert.Contains(t, bed.trace.String(), "request connect", "DescribePacket renders the handshake")

	other := newTestbed(t, 1, 1)
	other.nw.Describe(DefaultPort, func(payload []byte) string { return "rendered-by-the-test" })
	other.newClient(4*clock.Second, &eventLog{w: other.w})
	other.run(10 * ms)
	assert.Contains(t, other.trace.String(), "rendered-by-the-test", "the renderer registered first stays")
	assert.NotContains(t, other.trace.String(), "request connect")
}

func TestConfigRefusesBadNewFields(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	cases := map[string]Config{
		"negative MaxPacketBytes":                {MaxPacketBytes: -1},
		"negative FirstXid":                      {FirstXid: -1},
		"unknown library":                        {Emulate: Library(7)},
		"go-zookeeper has no auto watch setting": {Emulate: GoZookeeper, DisableAutoWatchReset: true},
	}
	for name, cfg := range cases {
		cfg.Servers, cfg.SessionTimeout = bed.serverNodes(), clock.Second
		_, err := New(bed.w, bed.nw, bed.clientNode, cfg, nil)
		assert.ErrorIs(t, err, ErrInvalidArgument, name)
	}
	assert.Equal(t, "Java", Java.String())
	assert.Equal(t, "go-zookeeper", GoZookeeper.String())
	assert.Equal(t, "Library(7)", Library(7).String())
}

// replyWithData answers every getData with data of the requested path's length in bytes, so that
// tests choose reply sizes through paths; the reply packet is 16 + 4 + n + 68 bytes long.
func replyWithData(s *fakeServer, sizes map[string]int) {
	s.onRequest = func(fc *fakeConn, h proto.RequestHeader, body proto.Record) {
		n := sizes[body.(*proto.GetDataRequest).Path]
		fc.reply(proto.ReplyHeader{Xid: h.Xid, Zxid: 5}, &proto.GetDataResponse{Data: bytes.Repeat([]byte{'x'}, n)})
	}
}

// replyPacketBytes is the length of a getData reply packet with n bytes of data: the ReplyHeader
// (16), the data's length and bytes, and the Stat (68).
func replyPacketBytes(n int) int { return 16 + 4 + n + 68 }

func TestMaxPacketBytesIsTheJavaClientsJuteMaxbuffer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int // Config.MaxPacketBytes
		max   int // the longest reply accepted
	}{
		{"default", 0, proto.MaxBufferBytes},
		{"smaller", 1000, 1000},
		{"larger", 3 << 20, 3 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bed := newTestbed(t, 1, 1)
			fits, over := tc.max-replyPacketBytes(0), tc.max-replyPacketBytes(0)+1
			replyWithData(bed.servers[0], map[string]int{"/fits": fits, "/over": over})
			log := &eventLog{w: bed.w}
			c := bed.newClientWith(Config{MaxPacketBytes: tc.limit}, log)
			bed.run(10 * ms)
			var got []DataResult
			record := func(r DataResult) { got = append(got, r) }
			require.NoError(t, c.GetData("/fits", nil, record))
			bed.run(10 * ms)
			require.NoError(t, c.GetData("/over", nil, record))
			bed.run(200 * ms)
			require.Len(t, got, 2)
			assert.Equal(t, proto.OK, got[0].Err)
			assert.Len(t, got[0].Data, fits)
			assert.Equal(t, proto.ConnectionLoss, got[1].Err, "a reply one byte too long drops the connection")
			assert.Contains(t, bed.trace.String(), "out of range")
		})
	}
}

func TestResultsNameTheXidAndSessionTheyWereWrittenWith(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	s.onRequest = func(*fakeConn, proto.RequestHeader, proto.Record) {} // holds every request
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	var got []DataResult
	record := func(r DataResult) { got = append(got, r) }
	bed.run(10 * ms)
	require.NoError(t, c.GetData("/a", nil, record))
	require.NoError(t, c.GetData("/b", nil, record))
	bed.run(10 * ms)
	s.last().close()
	bed.run(2 * ms) // The client sees the FIN and starts its cleanup.
	require.NoError(t, c.GetData("/never-written", nil, record))
	bed.run(200 * ms)
	require.Len(t, got, 3)
	assert.Equal(t, DataResult{Err: proto.ConnectionLoss, Xid: 1, Session: 0x101}, got[0],
		"a request lost with its connection was written: its outcome is unknown, and these find it in the log")
	assert.Equal(t, DataResult{Err: proto.ConnectionLoss, Xid: 2, Session: 0x101}, got[1])
	assert.Equal(t, DataResult{Err: proto.ConnectionLoss}, got[2], "never written: no xid, no session")

	// After the reconnect the same session continues, and the xids go on from the counter.
	s.onRequest = nil
	bed.run(2 * clock.Second)
	require.Len(t, s.conns, 2)
	require.NoError(t, c.GetData("/c", nil, record))
	var closed Result
	require.NoError(t, c.Close(func(r Result) { closed = r }))
	bed.run(500 * ms)
	require.Len(t, got, 4)
	assert.Equal(t, int32(3), got[3].Xid)
	assert.Equal(t, int64(0x101), got[3].Session)
	assert.Equal(t, Result{Zxid: bed.zxid, Xid: 4, Session: 0x101}, closed)
}

func TestAuthResultsCarryTheAuthXid(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	var got Result
	require.NoError(t, c.AddAuth("digest", []byte("u:p"), func(r Result) { got = r }))
	bed.run(10 * ms)
	assert.Equal(t, Result{Xid: proto.AuthXid, Session: 0x101}, got, "Java writes credentials with AUTHPACKET_XID")
}

// TestFirstXidStartsTheRequestCounter: a harness tool that shares a session starts its xids where
// it is told, with either library's counter; by default both start at 1.
func TestFirstXidStartsTheRequestCounter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      Config
		firstTwo []int32
	}{
		{"java default", Config{}, []int32{1, 2}},
		{"java", Config{FirstXid: 1 << 30}, []int32{1 << 30, 1<<30 + 1}},
		{"go-zookeeper default", Config{Emulate: GoZookeeper}, []int32{1, 2}},
		{"go-zookeeper", Config{Emulate: GoZookeeper, FirstXid: 1 << 30}, []int32{1 << 30, 1<<30 + 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bed := newTestbed(t, 1, 1)
			var xids []int32
			bed.servers[0].onRequest = func(fc *fakeConn, h proto.RequestHeader, body proto.Record) {
				xids = append(xids, h.Xid)
				fc.reply(proto.ReplyHeader{Xid: h.Xid, Zxid: 5}, &proto.GetDataResponse{})
			}
			c := bed.newClientWith(tc.cfg, &eventLog{w: bed.w})
			bed.run(10 * ms)
			for range 2 {
				require.NoError(t, c.GetData("/a", nil, func(DataResult) {}))
				bed.run(10 * ms)
			}
			assert.Equal(t, tc.firstTwo, xids)
		})
	}
}
