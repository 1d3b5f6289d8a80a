package lockmodel

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// harness is a small world for recipe tests: an ensemble, a resource, and applications with a
// client and a Session each. It keeps every recipe event and the committed transactions.
type harness struct {
	t        *testing.T
	seed     uint64
	w        *sim.World
	nw       *net.Network
	e        *zabmodel.Ensemble
	res      *Resource
	events   []Event
	commits  []*proto.TxnEntry
	onCommit func(*proto.TxnEntry)
}

func newHarness(t *testing.T, seed uint64, voters int, fencing bool) *harness {
	t.Helper()
	return newHarnessConfig(t, seed, zabmodel.Config{Voters: voters}, fencing)
}

// newHarnessConfig makes the harness with an ensemble of cfg (its observer is the harness's).
func newHarnessConfig(t *testing.T, seed uint64, cfg zabmodel.Config, fencing bool) *harness {
	t.Helper()
	h := &harness{t: t, seed: seed}
	w, err := sim.New(sim.Config{Seed: seed})
	require.NoError(t, err)
	nw, err := net.New(w, net.Config{})
	require.NoError(t, err)
	cfg.Observer = zabmodel.ObserverFunc(h.observe)
	e, err := zabmodel.NewEnsemble(w, nw, cfg)
	require.NoError(t, err)
	res, err := NewResource(w, nw, ResourceConfig{Fencing: fencing})
	require.NoError(t, err)
	h.w, h.nw, h.e, h.res = w, nw, e, res
	e.Start()
	h.run(10 * clock.Second)
	_, _, ok := e.Leader()
	require.True(t, ok, "seed %d: no leader after 10 s", seed)
	return h
}

func (h *harness) observe(ev zabmodel.Event) {
	if ev.Kind != zabmodel.EventCommit || ev.Txn == nil {
		return
	}
	if n := len(h.commits); n > 0 && h.commits[n-1].Header.Zxid >= ev.Txn.Header.Zxid {
		return
	}
	h.commits = append(h.commits, ev.Txn)
	if h.onCommit != nil {
		h.onCommit(ev.Txn)
	}
}

func (h *harness) run(d clock.Duration) {
	h.t.Helper()
	h.w.RunFor(d)
	require.False(h.t, h.w.Ended(), "seed %d: the run ended: %v", h.seed, h.w.Outcome())
}

// testApp is one application: its node, client, Session and resource client.
type testApp struct {
	name string
	node sim.NodeID
	c    *client.Client
	s    *Session
	rc   *ResourceClient
}

func (h *harness) app(name string, bugs Bugs) *testApp {
	h.t.Helper()
	return h.appWith(name, Config{Bugs: bugs})
}

// appWith is app with a session configuration of the test's (its Name and Observer are set here).
func (h *harness) appWith(name string, cfg Config) *testApp {
	h.t.Helper()
	a := &testApp{name: name, node: h.w.AddNode(name, nil)}
	var err error
	a.c, err = client.New(h.w, h.nw, a.node, client.Config{Servers: h.e.Nodes(), SessionTimeout: 6 * clock.Second, Name: name},
		client.WatcherFunc(func(e client.Event) {
			if a.s != nil {
				a.s.ConnectionEvent(e)
			}
		}))
	require.NoError(h.t, err)
	cfg.Name, cfg.Observer = name, ObserverFunc(func(e Event) { h.events = append(h.events, e) })
	a.s, err = NewSession(h.w, a.c, cfg)
	require.NoError(h.t, err)
	a.rc, err = NewResourceClient(h.w, h.nw, a.node, h.res, name)
	require.NoError(h.t, err)
	return a
}

// ensure creates persistent nodes through a helper client, parents first.
func (h *harness) ensure(paths ...string) {
	h.t.Helper()
	a := h.app(fmt.Sprintf("setup%d", len(h.events)+h.w.NumNodes()), Bugs{})
	h.run(2 * clock.Second)
	for _, p := range paths {
		var got *client.CreateResult
		require.NoError(h.t, a.c.Create(p, nil, proto.OpenACLUnsafe, proto.Persistent, func(r client.CreateResult) { got = &r }))
		h.run(2 * clock.Second)
		require.NotNil(h.t, got)
		require.Contains(h.t, []proto.Code{proto.OK, proto.NodeExists}, got.Err)
	}
}

// children lists a node's children through a fresh client.
func (h *harness) children(path string) []string {
	h.t.Helper()
	a := h.app(fmt.Sprintf("lister%d", h.w.NumNodes()), Bugs{})
	h.run(2 * clock.Second)
	var got *client.ChildrenResult
	require.NoError(h.t, a.c.GetChildren(path, nil, func(r client.ChildrenResult) { got = &r }))
	h.run(2 * clock.Second)
	require.NotNil(h.t, got)
	require.Equal(h.t, proto.OK, got.Err)
	out := slices.Clone(got.Children)
	slices.Sort(out)
	return out
}

// eventsOf returns the recorded events of a kind, optionally of one client.
func (h *harness) eventsOf(kind EventKind, clientName string) []Event {
	var out []Event
	for _, e := range h.events {
		if e.Kind == kind && (clientName == "" || e.Client == clientName) {
			out = append(out, e)
		}
	}
	return out
}

// acquire starts an acquisition and returns where its grant will land.
func acquire(t *testing.T, l interface {
	Acquire(clock.Duration, func(Grant)) error
}, timeout clock.Duration) *Grant {
	t.Helper()
	g := new(Grant)
	require.NoError(t, l.Acquire(timeout, func(r Grant) { *g = r }))
	return g
}

func release(t *testing.T, l interface{ Release(func(error)) error }) *error {
	t.Helper()
	var done = new(error)
	*done = errPending
	require.NoError(t, l.Release(func(err error) { *done = err }))
	return done
}

var errPending = fmt.Errorf("pending")

func hasSequenceSuffix(name, lockName string) bool {
	i := strings.LastIndex(name, lockName)
	_, ok := Sequence(name)
	return i >= 0 && ok
}
