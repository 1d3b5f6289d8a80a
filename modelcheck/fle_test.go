package modelcheck

import (
	"context"
	"testing"

	"github.com/zabsim/zabsim/electionmodel"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func checkFLE(t *testing.T, cfg FLEConfig, opts Options) Result {
	t.Helper()
	m, err := NewFLE(cfg)
	require.NoError(t, err)
	r, err := Check(context.Background(), m, opts)
	require.NoError(t, err)
	return r
}

// TestFLETwoServersWithFaultsComplete is the bounded check of the test suite: two servers, a
// crash, a restart, a notification timeout and an abandoned role, explored completely (77,984
// distinct states, a few seconds).
func TestFLETwoServersWithFaultsComplete(t *testing.T) {
	r := checkFLE(t, FLEConfig{Servers: 2, Crashes: 1, Restarts: 1, Timeouts: 1, Abandons: 1}, Options{Workers: 2})
	assert.Nil(t, r.Violation)
	assert.True(t, r.Complete)
	assert.Equal(t, int64(77984), r.Distinct)
	assert.Positive(t, r.Terminal, "fault-free paths end, and the liveness judge saw them")
}

func stepAll(t *testing.T, s State, path ...Action) State {
	t.Helper()
	for _, a := range path {
		var err error
		s, err = s.Step(a)
		require.NoError(t, err)
	}
	return s
}

// TestFLEFingerprintIsCanonical: deliveries to different servers commute, and the two orders
// reach one fingerprint; changing any part of a state changes it.
func TestFLEFingerprintIsCanonical(t *testing.T) {
	m, err := NewFLE(FLEConfig{Servers: 3, Crashes: 1, Timeouts: 1})
	require.NoError(t, err)
	init, err := m.Init()
	require.NoError(t, err)
	d11, d22, d12 := fleAction(fleDeliver, 0, 0), fleAction(fleDeliver, 1, 1), fleAction(fleDeliver, 0, 1)
	a := stepAll(t, init, d11, d22, d12)
	b := stepAll(t, init, d22, d11, d12)
	assert.Equal(t, a.Fingerprint(), b.Fingerprint(), "the two orders reach one state")
	c := stepAll(t, init, d11, d12, d22)
	assert.Equal(t, a.Fingerprint(), c.Fingerprint(), "zk2 keeps its own better vote whatever the order: one state")
	d := stepAll(t, init, d11, d22)
	assert.NotEqual(t, a.Fingerprint(), d.Fingerprint(), "one delivery less is another state")

	base := a.(*fleState)
	variants := map[string]func(s *fleState){
		"a bound used":        func(s *fleState) { s.timeouts++ },
		"a timer":             func(s *fleState) { s.processes[2].timer = !s.processes[2].timer },
		"a process down":      func(s *fleState) { s.processes[2] = fleProcess{} },
		"a message in flight": func(s *fleState) { s.channels[2*3+1] = nil },
		"a message's content": func(s *fleState) {
			ch := append([]electionmodel.Notification(nil), s.channels[2*3+1]...)
			ch[0].Zxid++
			s.channels[2*3+1] = ch
		},
		"an election's state": func(s *fleState) { s.processes[2].election = base.processes[1].election },
	}
	for name, change := range variants {
		s := base.clone()
		require.NotEmpty(t, s.channels[2*3+1])
		change(s)
		assert.NotEqual(t, base.fp, s.fingerprint(), name)
	}
	assert.Equal(t, base.fp, base.clone().fingerprint(), "a copy is the same state")
}

// TestFLEJudgesFail: a fault-free dead end without a leader breaks ElectionLiveness; a bound
// that cut it does not; a single server that elects itself passes.
func TestFLEJudgesFail(t *testing.T) {
	m, err := NewFLE(FLEConfig{Servers: 3})
	require.NoError(t, err)
	init, err := m.Init()
	require.NoError(t, err)
	stuck := init.(*fleState).clone()
	for k := range stuck.channels {
		stuck.channels[k] = nil
	}
	v := stuck.CheckTerminal(false)
	require.NotNil(t, v)
	assert.Equal(t, "ElectionLiveness", v.Invariant)
	assert.Nil(t, stuck.CheckTerminal(true), "a dead end made by a bound is not judged")

	solo := checkFLE(t, FLEConfig{Servers: 1}, Options{})
	assert.Nil(t, solo.Violation)
	assert.True(t, solo.Complete)
}

func TestFLEBadConfigs(t *testing.T) {
	for _, cfg := range []FLEConfig{{Servers: 0}, {Servers: 10}, {Servers: 3, Crashes: -1}, {Servers: 3, Restarts: 1}, {Servers: 3, LastZxids: []int64{1}}} {
		_, err := NewFLE(cfg)
		assert.ErrorIs(t, err, errBadOptions, "%+v", cfg)
	}
}
