package zabmodel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
)

// TestAPingOfAMovedSessionClosesItsConnection: on a leader, PrepRequestProcessor checks a ping's
// session like a read's (checkSession), and FinalRequestProcessor throws the request's
// SessionMovedException before its switch reaches the ping case, so the connection is closed
// (cnxn.sendCloseSession) rather than the ping answered. The client reconnects, and the leader's
// revalidation (LeaderZooKeeperServer.revalidateSession) makes this connection the owner again.
func TestAPingOfAMovedSessionClosesItsConnection(t *testing.T) {
	f := newFixture(t, 3, Config{Voters: 3})
	leader := f.establishedLeader()
	p := leader.p
	node := f.w.AddNode("c1", nil)
	cl, err := client.New(f.w, f.nw, node, client.Config{Servers: []sim.NodeID{leader.Node()}, SessionTimeout: 6 * clock.Second}, nil)
	require.NoError(t, err)
	f.run(3 * clock.Second)
	require.Equal(t, client.StateConnected, cl.State())
	id := cl.SessionID()
	first := p.clients.connOf(id)
	require.NotNil(t, first, "the leader holds the client's connection")

	// The session moves: another owner (as a learner handler after a revalidation elsewhere).
	require.NoError(t, p.zk.global.setOwner(id, &struct{ name string }{"elsewhere"}))
	f.run(3 * clock.Second) // More than readTimeout/2 = 2 s: the client pings.

	assert.Equal(t, connClosed, first.state, "the ping of the moved session closed its connection")
	f.run(3 * clock.Second) // The client's cleanup, its pause after a full cycle of hosts, a handshake.
	second := p.clients.connOf(id)
	require.NotNil(t, second, "the client reconnected to the leader")
	assert.NotSame(t, first, second)
	assert.Equal(t, client.StateConnected, cl.State())
	assert.Equal(t, id, cl.SessionID(), "with the same session")
	assert.NoError(t, p.zk.global.checkSession(id, ownerLocal), "which the leader's connections own again")
}
