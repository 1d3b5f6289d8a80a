package client

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// With every message taking 1 ms, a client started at 0 has TCP up at 2 ms (and writes its
// ConnectRequest then) and its session at 4 ms.

// connectedClient starts a client whose server negotiates 6 s: readTimeout 4 s, pings every 2 s.
func connectedClient(t *testing.T) (*testbed, *Client, *eventLog) {
	bed := newTestbed(t, 1, 1)
	bed.servers[0].negotiate = func(int32) int32 { return 6000 }
	log := &eventLog{w: bed.w}
	c := bed.newClient(6*clock.Second, log)
	bed.run(10 * ms)
	require.Equal(t, StateConnected, c.State())
	return bed, c, log
}

func TestPingsGoOutWhenNothingWasSentForHalfTheReadTimeout(t *testing.T) {
	bed, c, _ := connectedClient(t)
	bed.run(10*clock.Second - 10*ms)
	fc := bed.servers[0].last()
	assert.Equal(t, []clock.Time{2003 * clock.Time(ms), 4003 * clock.Time(ms), 6003 * clock.Time(ms), 8003 * clock.Time(ms)},
		fc.pings(), "the first ping 2000 ms after the ConnectRequest, then one per 2000 ms")

	// A request at 11.49 s wakes the loop 1488 ms after the last ping: past readTimeout/2 less the
	// one-second slack, so a ping goes out behind the request; the next one 2000 ms later.
	bed.run(1490 * ms) // now 11.49 s
	require.NoError(t, c.Sync("/", nil))
	bed.run(2500 * ms)
	assert.Equal(t, []proto.OpCode{proto.OpSync}, fc.ops())
	pings := fc.pings()
	require.Len(t, pings, 7)
	assert.Equal(t, []clock.Time{10003 * clock.Time(ms), 11491 * clock.Time(ms), 13491 * clock.Time(ms)}, pings[4:])
	assert.Equal(t, fc.nonPing()[0].at, pings[5], "the ping follows the sync at once")
}

func TestTenSecondPingCapActsOnlyWhenTheLoopWakes(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	s := bed.servers[0]
	s.negotiate = func(int32) int32 { return 60000 } // readTimeout 40 s: pings every 20 s by the first rule
	var conn *fakeConn
	s.onRequest = func(fc *fakeConn, h proto.RequestHeader, body proto.Record) { conn = fc }
	log := &eventLog{w: bed.w}
	c := bed.newClient(60*clock.Second, log)
	bed.run(10 * ms)
	assert.Empty(t, s.last().pings())
	bed.run(20 * clock.Second)
	assert.Equal(t, []clock.Time{20003 * clock.Time(ms)}, s.last().pings())

	// A request at 21 s, answered at 33 s: the reply wakes the loop at 33.001 s, more than ten
	// seconds after the last send, so a ping goes out at once although readTimeout/2 is 20 s.
	bed.run(990 * ms) // now 21 s
	require.NoError(t, c.Sync("/", nil))
	bed.run(12 * clock.Second) // now 33 s
	require.NotNil(t, conn)
	conn.answer(conn.requests[len(conn.requests)-1].header, nil, proto.OK)
	bed.run(5 * ms)
	assert.Equal(t, []clock.Time{20003 * clock.Time(ms), 33002 * clock.Time(ms)}, s.last().pings())
}

func TestPausedClientPingsWhenItResumes(t *testing.T) {
	bed, c, log := connectedClient(t)
	bed.run(2490 * ms) // now 2.5 s; a ping went out at 2.002 s and was answered at 2.004 s
	bed.w.Pause(bed.clientNode)
	bed.run(3 * clock.Second) // the ping due at 4.002 s waits
	fc := bed.servers[0].last()
	assert.Equal(t, []clock.Time{2003 * clock.Time(ms)}, fc.pings(), "a paused process sends nothing")
	bed.w.Resume(bed.clientNode)
	bed.run(10 * ms)
	assert.Equal(t, []clock.Time{2003 * clock.Time(ms), 5501 * clock.Time(ms)}, fc.pings(),
		"the overdue ping goes out at once: 3.5 s idle is less than the 4 s read timeout")
	assert.False(t, fc.closed)
	assert.Equal(t, StateConnected, c.State())
	assert.Equal(t, []string{"default: None SyncConnected "}, log.entries)
}

func TestLongPauseTimesTheConnectionOut(t *testing.T) {
	bed, c, log := connectedClient(t)
	bed.run(2490 * ms)
	bed.w.Pause(bed.clientNode)
	bed.run(5 * clock.Second)
	bed.w.Resume(bed.clientNode) // 7.5 s: last heard at 2.004 s, 5.496 s ago
	bed.run(2 * ms)
	fc := bed.servers[0].last()
	assert.True(t, fc.closed, "the client gave up on the server at once")
	assert.Contains(t, bed.trace.String(), "have not heard from server in 5496ms")
	bed.run(3 * clock.Second)
	assert.Equal(t, []string{"default: None SyncConnected ", "default: None Disconnected ", "default: None SyncConnected "}, log.entries)
	assert.Len(t, bed.servers[0].conns, 2)
	assert.Equal(t, c.SessionID(), bed.servers[0].last().connect.SessionID, "the session is resumed")
}

func TestPausedClientReadsWhatArrivedBeforeJudgingTheTimeout(t *testing.T) {
	bed, c, log := connectedClient(t)
	bed.run(2490 * ms)
	bed.w.Pause(bed.clientNode)
	bed.run(2 * clock.Second)
	// At 4.5 s, after the client's 4.002 s wake-up fell due, the server notifies it.
	fc := bed.servers[0].last()
	fc.notify(proto.EventNodeDataChanged, "/a")
	bed.run(3 * clock.Second)
	bed.w.Resume(bed.clientNode) // 7.5 s
	bed.run(2 * ms)
	assert.False(t, fc.closed, "a Java client after a GC pause reads its socket before it looks at the clock")
	assert.Equal(t, StateConnected, c.State())
	assert.Len(t, fc.pings(), 2, "and then sends the overdue ping")
	assert.Equal(t, []string{"default: None SyncConnected "}, log.entries)
}

func TestReadTimeoutWhenTheServerFallsSilent(t *testing.T) {
	bed, c, log := connectedClient(t)
	bed.servers[0].silentPings = true
	bed.run(3990 * ms) // now 4 s
	fc := bed.servers[0].last()
	assert.False(t, fc.closed)
	bed.run(5 * ms)
	// Last heard at 4 ms (the handshake; the ping at 2.002 s went unanswered), so the read timeout of
	// 4 s ends the connection at 4.004 s, and the server sees the FIN at 4.005 s.
	assert.True(t, fc.closed)
	assert.Contains(t, bed.trace.String(), "have not heard from server in 4000ms")
	bed.run(100 * ms)
	assert.Equal(t, []string{"default: None SyncConnected ", "default: None Disconnected "}, log.entries)
	assert.Equal(t, 4104*clock.Time(ms), log.times[1], "the Disconnected event follows the 100 ms cleanup")
	assert.Equal(t, StateConnected, c.State())
}

func TestConnectTimeoutMovesToTheNextServer(t *testing.T) {
	bed := newTestbed(t, 1, 2)
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	order := c.hosts.servers
	silent, other := bed.server(order[0]), bed.server(order[1])
	silent.onConnect = func(*fakeConn, *proto.ConnectRequest) {} // accepts TCP, never answers
	bed.run(2001 * ms)
	assert.False(t, silent.last().closed, "connectTimeout is 4000/2 ms from the TCP connection at 2 ms")
	bed.run(2 * ms)
	assert.True(t, silent.last().closed)
	bed.run(1200 * ms)
	require.Len(t, other.conns, 1)
	assert.Equal(t, StateConnected, c.State())
	assert.Equal(t, []string{"default: None SyncConnected "}, log.entries,
		"no Disconnected event: the client was never connected, and Java drops a repeated state")
}

func TestRefusedFirstConnectionRetriesWithoutRandomDelay(t *testing.T) {
	bed := newTestbed(t, 1, 2)
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	order := c.hosts.servers
	bed.nw.Unlisten(order[0], DefaultPort)
	bed.run(200 * ms)
	second := bed.server(order[1])
	require.Len(t, second.conns, 1)
	// Refused at 2 ms, cleanup until 102 ms, then at once: no TCP connection has succeeded yet, so
	// startConnect does not sleep.
	assert.Equal(t, 103*clock.Time(ms), second.last().acceptedAt)
	assert.Equal(t, StateConnected, c.State())
}

func TestFullCycleOfServersSleepsASecond(t *testing.T) {
	bed := newTestbed(t, 1, 2)
	for _, s := range bed.servers {
		bed.nw.Unlisten(s.node, DefaultPort)
	}
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(5 * ms)
	bed.run(300 * ms)
	var dials []string
	for _, line := range strings.Split(bed.trace.String(), "\n") {
		if strings.Contains(line, "connecting to") {
			dials = append(dials, strings.Fields(line)[0])
		}
	}
	// 0: first server; 102 ms: second (no sleep, no delay: nothing ever connected); then back to
	// the first, which is a full cycle: a second's sleep first.
	require.Len(t, dials, 2)
	bed.run(1 * clock.Second)
	dials = dials[:0]
	for _, line := range strings.Split(bed.trace.String(), "\n") {
		if strings.Contains(line, "connecting to") {
			dials = append(dials, strings.Fields(line)[0])
		}
	}
	require.Len(t, dials, 3)
	assert.Equal(t, "1.204000000", dials[2], "refused at 104 ms, cleanup until 204 ms, a second's sleep")
	assert.Equal(t, StateConnecting, c.State())
}

func TestTimingFollowsTheClientsOwnDriftingClock(t *testing.T) {
	bed := newTestbed(t, 1, 1)
	bed.servers[0].negotiate = func(int32) int32 { return 6000 }
	require.NoError(t, bed.w.Clock(bed.clientNode).SetDrift(bed.w.Now(), 100_000)) // 10% fast
	log := &eventLog{w: bed.w}
	bed.newClient(6*clock.Second, log)
	bed.run(10 * clock.Second)
	pings := bed.servers[0].last().pings()
	require.GreaterOrEqual(t, len(pings), 4)
	for i := 1; i < len(pings); i++ {
		// 2000 ms of the client's clock is 1818.18 ms of global time.
		gap := pings[i].Sub(pings[i-1])
		assert.InDelta(t, float64(1818*ms), float64(gap), float64(2*ms), "gap %d", i)
	}
}
