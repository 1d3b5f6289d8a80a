package zabmodel

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

type transportFixture struct {
	w    *sim.World
	nw   *net.Network
	m    map[int64]*cnxManager
	got  map[int64][]string // per receiver: "from:payload"
	node map[int64]sim.NodeID
}

func newTransportFixture(t *testing.T, sids ...int64) *transportFixture {
	w, err := sim.New(sim.Config{Seed: 1})
	require.NoError(t, err)
	nw, err := net.New(w, net.Config{})
	require.NoError(t, err)
	f := &transportFixture{w: w, nw: nw, m: map[int64]*cnxManager{}, got: map[int64][]string{}, node: map[int64]sim.NodeID{}}
	for _, sid := range sids {
		f.node[sid] = w.AddNode(fmt.Sprintf("s%d", sid), nil)
	}
	for _, sid := range sids {
		sid := sid
		h := newSimHost(&Server{ens: &Ensemble{w: w, nw: nw}, sid: sid, node: f.node[sid], disk: storage.New()})
		f.m[sid] = newCnxManager(h, sid, f.node, notificationFunc(func(from int64, b []byte) {
			f.got[sid] = append(f.got[sid], fmt.Sprintf("%d:%s", from, b))
		}))
		require.NoError(t, f.m[sid].listen())
	}
	return f
}

// liveConns returns the number of established election connections each server holds.
func (f *transportFixture) senders(sid int64) map[int64]net.ConnID { return f.m[sid].core.senders }

func TestTransportDeliversAndKeepsOnlyHigherSidConnections(t *testing.T) {
	f := newTransportFixture(t, 1, 2, 3)
	f.m[1].toSend(2, []byte("a")) // The lower sid initiates: it must be dropped and connected back.
	f.m[3].toSend(1, []byte("b"))
	f.m[2].toSend(2, []byte("self"))
	f.w.RunFor(clock.Second)
	assert.Equal(t, []string{"2:self", "1:a"}, f.got[2], "loopback is immediate; the network is not")
	assert.Equal(t, []string{"3:b"}, f.got[1])
	require.Contains(t, f.senders(1), int64(2))
	require.Contains(t, f.senders(2), int64(1))
	c := f.senders(1)[2]
	assert.Equal(t, c, f.senders(2)[1], "both ends use the same connection")
	assert.Equal(t, []net.ConnID{c}, f.nw.Conns(f.node[2]), "the lower sid's own dial was dropped")
	assert.Len(t, f.nw.Conns(f.node[1]), 2, "one connection per peer, no leftovers")
	assert.Len(t, f.nw.Conns(f.node[3]), 1)
}

func TestTransportKeepsOnlyTheLatestMessageWhileDisconnected(t *testing.T) {
	f := newTransportFixture(t, 1, 2)
	f.nw.Cut(f.node[1], f.node[2])
	f.m[2].toSend(1, []byte("old"))
	f.m[2].toSend(1, []byte("new"))
	assert.False(t, f.m[2].haveDelivered(), "the only send slot is full")
	f.w.RunFor(10 * clock.Second) // The dial times out behind the partition.
	assert.Empty(t, f.got[1])
	f.nw.Heal()
	f.m[2].connectAll()
	f.w.RunFor(clock.Second)
	assert.Equal(t, []string{"2:new"}, f.got[1], "SEND_CAPACITY is 1: the older notification was replaced")
	assert.True(t, f.m[2].haveDelivered())
}

func TestTransportResendsTheLastMessageOnANewConnection(t *testing.T) {
	f := newTransportFixture(t, 1, 2)
	f.m[2].toSend(1, []byte("vote"))
	f.w.RunFor(clock.Second)
	require.Equal(t, []string{"2:vote"}, f.got[1])
	f.nw.Reset(f.senders(2)[1])
	f.w.RunFor(clock.Second)
	assert.NotContains(t, f.senders(2), int64(1), "a reset connection is forgotten")
	f.m[2].connectAll()
	f.w.RunFor(clock.Second)
	assert.Equal(t, []string{"2:vote", "2:vote"}, f.got[1], "the last message is sent again, as SendWorker does")
}

func TestTransportIgnoresStrangers(t *testing.T) {
	f := newTransportFixture(t, 1, 2)
	f.m[1].toSend(9, []byte("x"))
	f.w.RunFor(clock.Second)
	assert.Empty(t, f.got)
	assert.Empty(t, f.nw.Conns(f.node[1]))
}
