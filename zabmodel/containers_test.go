package zabmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// exists reads a node's existence through cl.
func (c *cluster) exists(cl *client.Client, path string) proto.Code {
	c.t.Helper()
	var got *client.StatResult
	require.NoError(c.t, cl.Exists(path, nil, func(r client.StatResult) { got = &r }))
	c.run(5 * clock.Second)
	require.NotNil(c.t, got, "no reply to exists %s", path)
	return got.Err
}

func (c *cluster) do(cl *client.Client, what string, issue func(done func(proto.Code)) error) {
	c.t.Helper()
	var code *proto.Code
	require.NoError(c.t, issue(func(got proto.Code) { code = &got }))
	c.run(5 * clock.Second)
	require.NotNil(c.t, code, "no reply to %s", what)
	require.Equal(c.t, proto.OK, *code, what)
}

// TestContainerManagerDeletesEmptiedContainersAndExpiredTTLNodes runs ContainerManager on a
// standalone server and on an ensemble's leader: an emptied container and a TTL node past its time
// go at the next check, a container that never had a child and one that still has one stay.
func TestContainerManagerDeletesEmptiedContainersAndExpiredTTLNodes(t *testing.T) {
	for _, voters := range []int{1, 3} {
		// The default interval, one minute: the set-up below takes well under it.
		c := newCluster(t, 21, zabmodel.Config{Voters: voters, ExtendedTypes: true, TickTime: 200 * clock.Millisecond})
		c.run(5 * clock.Second)
		cl := c.client("c1", c.e.Nodes())
		c.run(2 * clock.Second)
		require.Equal(t, client.StateConnected, cl.State())
		create := func(path string, mode proto.CreateMode) {
			c.do(cl, "create "+path, func(done func(proto.Code)) error {
				return cl.Create(path, nil, proto.OpenACLUnsafe, mode, func(r client.CreateResult) { done(r.Err) })
			})
		}
		create("/emptied", proto.Container)
		create("/emptied/child", proto.Persistent)
		c.do(cl, "delete /emptied/child", func(done func(proto.Code)) error {
			return cl.Delete("/emptied/child", -1, func(r client.Result) { done(r.Err) })
		})
		create("/unused", proto.Container)
		create("/full", proto.Container)
		create("/full/child", proto.Persistent)
		c.do(cl, "createTTL /ttl", func(done func(proto.Code)) error {
			return cl.CreateTTL("/ttl", nil, proto.OpenACLUnsafe, proto.PersistentWithTTL, 1000, func(r client.CreateResult) { done(r.Err) })
		})
		assert.Equal(t, proto.OK, c.exists(cl, "/emptied"), "voters=%d: not yet checked", voters)

		c.run(clock.Minute)
		assert.Equal(t, proto.NoNode, c.exists(cl, "/emptied"), "voters=%d: an emptied container goes", voters)
		assert.Equal(t, proto.NoNode, c.exists(cl, "/ttl"), "voters=%d: a TTL node past its time goes", voters)
		assert.Equal(t, proto.OK, c.exists(cl, "/unused"), "voters=%d: a container that never had a child stays", voters)
		assert.Equal(t, proto.OK, c.exists(cl, "/full"), "voters=%d: a container with a child stays", voters)
		for _, s := range c.e.Servers() {
			assert.Equal(t, c.e.Servers()[0].State().Digest, s.State().Digest, "voters=%d: server %d applied the deletes", voters, s.Sid())
		}
	}
}

func TestContainerManagerDeletesNeverUsedContainersOnlyWhenConfigured(t *testing.T) {
	c := newCluster(t, 22, zabmodel.Config{Voters: 1, ContainerCheckInterval: 10 * clock.Second, ContainerMaxNeverUsed: 5 * clock.Second})
	cl := c.client("c1", c.e.Nodes())
	c.run(2 * clock.Second)
	c.do(cl, "create /unused", func(done func(proto.Code)) error {
		return cl.Create("/unused", nil, proto.OpenACLUnsafe, proto.Container, func(r client.CreateResult) { done(r.Err) })
	})
	c.run(15 * clock.Second)
	assert.Equal(t, proto.NoNode, c.exists(cl, "/unused"))
}

func TestContainerManagerConfigIsValidated(t *testing.T) {
	for _, cfg := range []zabmodel.Config{
		{Voters: 3, ContainerCheckInterval: -clock.Second},
		{Voters: 3, ContainerMaxPerMinute: -1},
		{Voters: 3, ContainerMaxNeverUsed: -clock.Second},
	} {
		assert.ErrorIs(t, cfg.WithDefaults().Validate(), zabmodel.ErrConfig, "%+v", cfg)
	}
}
