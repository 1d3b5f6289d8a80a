package zabmodel

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
)

// fixture is an ensemble in a world, with every observation recorded.
type fixture struct {
	t      *testing.T
	w      *sim.World
	nw     *net.Network
	e      *Ensemble
	events []Event
}

func newFixture(t *testing.T, seed uint64, cfg Config) *fixture {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	require.NoError(t, err)
	nw, err := net.New(w, net.Config{})
	require.NoError(t, err)
	f := &fixture{t: t, w: w, nw: nw}
	cfg.Observer = ObserverFunc(func(e Event) { f.events = append(f.events, e) })
	f.e, err = NewEnsemble(w, nw, cfg)
	require.NoError(t, err)
	f.e.Start()
	return f
}

func (f *fixture) run(d clock.Duration) {
	f.t.Helper()
	f.w.RunFor(d)
	require.False(f.t, f.w.Ended(), "run ended: %v", f.w.Outcome())
}

// established returns the epochs in which each server became an established leader.
func (f *fixture) established() map[int64][]int64 {
	out := map[int64][]int64{}
	for _, e := range f.events {
		if e.Kind == EventEstablished {
			out[e.Epoch] = append(out[e.Epoch], e.Server)
		}
	}
	return out
}

// serving returns the sids that currently serve, and the leader among them.
func (f *fixture) serving() (sids []int64, leader int64) {
	for _, s := range f.e.Servers() {
		st := s.State()
		if st.Serving {
			sids = append(sids, st.Sid)
			if st.Role == Leading {
				leader = st.Sid
			}
		}
	}
	return sids, leader
}

func TestEnsembleElectsAndEstablishesALeader(t *testing.T) {
	for _, n := range []int{2, 3, 4, 5, 6, 7} {
		t.Run(fmt.Sprintf("voters=%d", n), func(t *testing.T) {
			f := newFixture(t, 1, Config{Voters: n})
			f.run(30 * clock.Second)
			sids, leader := f.serving()
			assert.Len(t, sids, n, "every server serves")
			assert.Equal(t, int64(n), leader, "with equal logs the highest sid leads")
			est := f.established()
			require.Len(t, est, 1, "one epoch established: %v", est)
			for epoch, leaders := range est {
				assert.Equal(t, []int64{leader}, leaders, "epoch %d", epoch)
				assert.Equal(t, int64(1), epoch)
			}
			for _, s := range f.e.Servers() {
				st := s.State()
				assert.Equal(t, int64(1), st.CurrentEpoch, "server %d", st.Sid)
				assert.Equal(t, int64(1), st.AcceptedEpoch, "server %d", st.Sid)
			}
		})
	}
}

func TestLeaderCrashElectsANewLeaderInANewEpoch(t *testing.T) {
	f := newFixture(t, 2, Config{Voters: 3})
	f.run(30 * clock.Second)
	_, first := f.serving()
	require.NotZero(t, first)
	f.w.Crash(f.e.Server(first).Node())
	f.run(60 * clock.Second)
	sids, second := f.serving()
	require.NotZero(t, second, "a new leader")
	assert.NotEqual(t, first, second)
	assert.Len(t, sids, 2)
	f.w.Restart(f.e.Server(first).Node())
	f.run(60 * clock.Second)
	sids, third := f.serving()
	assert.Equal(t, second, third, "the restarted server follows the new leader")
	assert.Len(t, sids, 3)
	for _, s := range f.e.Servers() {
		assert.Equal(t, int64(2), s.State().CurrentEpoch, "server %d", s.Sid())
	}
}

func TestMinorityPartitionKeepsServingMajority(t *testing.T) {
	f := newFixture(t, 3, Config{Voters: 5})
	f.run(30 * clock.Second)
	_, leader := f.serving()
	require.NotZero(t, leader)
	isolated := f.e.Server(leader).Node()
	f.nw.Isolate(isolated)
	f.run(60 * clock.Second)
	sids, newLeader := f.serving()
	assert.NotEqual(t, leader, newLeader, "the isolated leader stepped down, another leads")
	assert.Len(t, sids, 4)
	assert.NotEqual(t, Leading, f.e.Server(leader).State().Role, "the isolated server lost its quorum")
	f.nw.Heal()
	f.run(60 * clock.Second)
	sids, _ = f.serving()
	assert.Len(t, sids, 5, "the healed server rejoins")
}

func TestWholeEnsembleRestart(t *testing.T) {
	f := newFixture(t, 4, Config{Voters: 3, Observers: 1})
	f.run(30 * clock.Second)
	for _, s := range f.e.Servers() {
		f.w.Crash(s.Node())
	}
	f.run(clock.Second)
	for _, s := range f.e.Servers() {
		f.w.Restart(s.Node())
	}
	f.run(60 * clock.Second)
	sids, leader := f.serving()
	assert.Len(t, sids, 4)
	assert.NotZero(t, leader)
	assert.Equal(t, Observing, f.e.Server(4).State().Role)
}

func TestSameSeedSameTrace(t *testing.T) {
	hash := func() uint64 {
		f := newFixture(t, 99, Config{Voters: 5, Observers: 2})
		f.run(20 * clock.Second)
		f.w.Crash(f.e.Server(5).Node())
		f.run(30 * clock.Second)
		return f.w.Outcome().TraceHash
	}
	assert.Equal(t, hash(), hash())
}
