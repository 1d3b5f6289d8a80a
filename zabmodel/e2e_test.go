package zabmodel_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// cluster is an ensemble with client nodes, for end-to-end tests through the client library.
type cluster struct {
	t  *testing.T
	w  *sim.World
	nw *net.Network
	e  *zabmodel.Ensemble
}

func newCluster(t *testing.T, seed uint64, cfg zabmodel.Config) *cluster {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	require.NoError(t, err)
	nw, err := net.New(w, net.Config{})
	require.NoError(t, err)
	e, err := zabmodel.NewEnsemble(w, nw, cfg)
	require.NoError(t, err)
	e.Start()
	return &cluster{t: t, w: w, nw: nw, e: e}
}

func (c *cluster) run(d clock.Duration) {
	c.t.Helper()
	c.w.RunFor(d)
	require.False(c.t, c.w.Ended(), "run ended: %v", c.w.Outcome())
}

func (c *cluster) client(name string, servers []sim.NodeID) *client.Client {
	c.t.Helper()
	node := c.w.AddNode(name, nil)
	cl, err := client.New(c.w, c.nw, node, client.Config{Servers: servers, SessionTimeout: 10 * clock.Second}, nil)
	require.NoError(c.t, err)
	return cl
}

func (c *cluster) create(cl *client.Client, path, data string) client.CreateResult {
	c.t.Helper()
	var got *client.CreateResult
	require.NoError(c.t, cl.Create(path, []byte(data), proto.OpenACLUnsafe, proto.Persistent, func(r client.CreateResult) { got = &r }))
	c.run(5 * clock.Second)
	require.NotNil(c.t, got, "no reply to create %s", path)
	return *got
}

func (c *cluster) get(cl *client.Client, path string) client.DataResult {
	c.t.Helper()
	var got *client.DataResult
	require.NoError(c.t, cl.GetData(path, nil, func(r client.DataResult) { got = &r }))
	c.run(5 * clock.Second)
	require.NotNil(c.t, got, "no reply to get %s", path)
	return *got
}

func TestStandaloneServesClients(t *testing.T) {
	c := newCluster(t, 1, zabmodel.Config{Voters: 1})
	cl := c.client("c1", c.e.Nodes())
	c.run(2 * clock.Second)
	require.Equal(t, client.StateConnected, cl.State())
	r := c.create(cl, "/a", "x")
	require.Equal(t, proto.OK, r.Err)
	assert.Equal(t, "/a", r.Path)
	g := c.get(cl, "/a")
	require.Equal(t, proto.OK, g.Err)
	assert.Equal(t, "x", string(g.Data))
	assert.Equal(t, proto.NodeExists, c.create(cl, "/a", "y").Err)
}

func TestEnsembleReplicatesWritesToEveryServer(t *testing.T) {
	c := newCluster(t, 2, zabmodel.Config{Voters: 3, Observers: 1})
	c.run(20 * clock.Second)
	nodes := c.e.Nodes()
	writer := c.client("writer", nodes[:1])
	c.run(2 * clock.Second)
	for i := 0; i < 5; i++ {
		require.Equal(t, proto.OK, c.create(writer, fmt.Sprintf("/n%d", i), "v").Err)
	}
	for i, node := range nodes {
		reader := c.client(fmt.Sprintf("reader%d", i), []sim.NodeID{node})
		c.run(2 * clock.Second)
		g := c.get(reader, "/n4")
		assert.Equal(t, proto.OK, g.Err, "server %d", i+1)
	}
	digests := map[int64]bool{}
	for _, s := range c.e.Servers() {
		digests[s.State().Digest] = true
	}
	assert.Len(t, digests, 1, "every server has the same tree")
}

func TestWritesSurviveLeaderFailover(t *testing.T) {
	c := newCluster(t, 3, zabmodel.Config{Voters: 3})
	c.run(20 * clock.Second)
	cl := c.client("c1", c.e.Nodes())
	c.run(2 * clock.Second)
	require.Equal(t, proto.OK, c.create(cl, "/before", "1").Err)
	leader, _, ok := c.e.Leader()
	require.True(t, ok)
	c.w.Crash(c.e.Server(leader).Node())
	c.run(60 * clock.Second)
	newLeader, epoch, ok := c.e.Leader()
	require.True(t, ok)
	assert.NotEqual(t, leader, newLeader)
	assert.Equal(t, int64(2), epoch)
	require.Equal(t, client.StateConnected, cl.State(), "the client reconnected with its session")
	g := c.get(cl, "/before")
	assert.Equal(t, proto.OK, g.Err)
	require.Equal(t, proto.OK, c.create(cl, "/after", "2").Err)
	c.w.Restart(c.e.Server(leader).Node())
	c.run(60 * clock.Second)
	digests := map[int64]bool{}
	for _, s := range c.e.Servers() {
		st := s.State()
		assert.True(t, st.Serving, "server %d serves", st.Sid)
		digests[st.Digest] = true
	}
	assert.Len(t, digests, 1, "every server has the same tree")
}

func TestEphemeralsGoWithAnExpiredSession(t *testing.T) {
	c := newCluster(t, 4, zabmodel.Config{Voters: 3})
	c.run(20 * clock.Second)
	owner := c.client("owner", c.e.Nodes())
	watcher := c.client("watcher", c.e.Nodes())
	c.run(2 * clock.Second)
	var created *client.CreateResult
	require.NoError(t, owner.Create("/eph", nil, proto.OpenACLUnsafe, proto.Ephemeral, func(r client.CreateResult) { created = &r }))
	c.run(2 * clock.Second)
	require.NotNil(t, created)
	require.Equal(t, proto.OK, created.Err)
	c.w.Pause(owner.Node())
	c.run(30 * clock.Second)
	var exists *client.StatResult
	require.NoError(t, watcher.Exists("/eph", nil, func(r client.StatResult) { exists = &r }))
	c.run(2 * clock.Second)
	require.NotNil(t, exists)
	assert.Equal(t, proto.NoNode, exists.Err, "the paused owner's session expired and took its ephemeral")
	c.w.Resume(owner.Node())
	c.run(20 * clock.Second)
	assert.Equal(t, client.StateClosed, owner.State(), "the owner learns its session expired")
}
