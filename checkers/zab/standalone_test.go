package zab

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zabsim/zabsim/zabmodel"
)

// TestStandaloneIgnoresTheInitialZxidCounter: zookeeper.testingonly.initialZxid is applied by a
// quorum leader (Leader.lead) and never by a standalone server (ZooKeeperServerMain), which has no
// epochs and no overflow step-down. A checker told of a single voter must therefore expect its
// proposals to count from 1 (or on from its last zxid after a restart), whatever the counter says,
// while a quorum leader under the same configuration must start from the counter.
func TestStandaloneIgnoresTheInitialZxidCounter(t *testing.T) {
	standalone := Config{Voters: []int64{1}, InitialZxidCounter: 0xffffff00}
	established := zabmodel.Event{Kind: zabmodel.EventEstablished, Server: 1}
	s := newScript().add(established).write(1, z(0, 1)).write(1, z(0, 2))
	s.add(zabmodel.Event{Kind: zabmodel.EventCrash, Server: 1},
		zabmodel.Event{Kind: zabmodel.EventRestart, Server: 1},
		zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: 1, Source: zabmodel.SourceStartup})
	s.apply(1, z(0, 1), zabmodel.SourceStartup).apply(1, z(0, 2), zabmodel.SourceStartup)
	s.add(established).write(1, z(0, 3))
	s.requireClean(t, standalone)

	t.Run("a standalone server that jumps to the counter is still caught", func(t *testing.T) {
		s := newScript().add(established)
		s.add(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 1, Zxid: z(0, 0xffffff01), Hash: 1})
		v := s.requireViolation(t, standalone, LocalPrimaryOrder)
		assert.Equal(t, []int64{1}, v.Servers)
	})
	t.Run("a quorum leader starts from the counter", func(t *testing.T) {
		quorum := threeVoters
		quorum.InitialZxidCounter = standalone.InitialZxidCounter
		newScript().start(1, 1, 2, 3).write(1, z(1, 0xffffff01), 2, 3).requireClean(t, quorum)
		s := newScript().start(1, 1, 2, 3)
		s.add(zabmodel.Event{Kind: zabmodel.EventPropose, Server: 1, Zxid: z(1, 1), Hash: 1})
		s.requireViolation(t, quorum, LocalPrimaryOrder)
	})
}
