package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPacketQueueStaysFIFOAndCompact(t *testing.T) {
	var q packetQueue
	var want []*packet
	for i := range 10_000 {
		p := &packet{}
		p.header.Xid = int32(i)
		q.push(p)
		want = append(want, p)
		if i%3 != 0 {
			require.Same(t, want[0], q.pop())
			want = want[1:]
		}
	}
	assert.Equal(t, len(want), q.len())
	assert.LessOrEqual(t, len(q.items), 2*q.len()+64, "popped slots are reclaimed")
	q.pushFront([]*packet{{}, {}})
	assert.Equal(t, len(want)+2, q.len())
	all := q.takeAll()
	assert.Equal(t, want, all[2:])
	assert.Zero(t, q.len())
}
