package client

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
)

// BenchmarkRequestRoundTrip measures the simulator's wall-clock cost of one request through the
// client: queue, encode, send, the fake server's decode and answer, match, decode, callback. The
// client keeps 100 requests in flight.
func BenchmarkRequestRoundTrip(b *testing.B) {
	bed := buildTestbed(b, 1, 1, net.Config{}, sim.TraceConfig{}, &bytes.Buffer{})
	log := &eventLog{w: bed.w}
	c := bed.newClient(4*clock.Second, log)
	bed.run(10 * ms)
	done := 0
	var next func(StatResult)
	next = func(r StatResult) {
		done++
		if done+100 <= b.N {
			require.NoError(b, c.SetData("/a", []byte("x"), -1, next))
		}
	}
	b.ResetTimer()
	for range min(100, b.N) {
		require.NoError(b, c.SetData("/a", []byte("x"), -1, next))
	}
	for done < b.N {
		bed.run(100 * ms)
	}
	b.StopTimer()
	require.Equal(b, StateConnected, c.State(), "no connection was lost")
}
