package client

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// heldServers makes every server of bed hold requests until the test answers them, and expire the
// next handshake when asked.
type heldServers struct {
	bed        *testbed
	held       map[*fakeConn][]proto.RequestHeader
	all        []*fakeConn
	expireNext bool
}

func holdRequests(bed *testbed) *heldServers {
	h := &heldServers{bed: bed, held: map[*fakeConn][]proto.RequestHeader{}}
	for _, s := range bed.servers {
		s.onRequest = func(fc *fakeConn, hd proto.RequestHeader, _ proto.Record) { h.held[fc] = append(h.held[fc], hd) }
		s.onConnect = func(fc *fakeConn, req *proto.ConnectRequest) {
			h.all = append(h.all, fc)
			if h.expireNext && req.SessionID != 0 {
				h.expireNext = false
				fc.expireSession()
				return
			}
			fc.acceptSession(req)
		}
	}
	return h
}

// current returns the open connection the client last made, or nil.
func (h *heldServers) current() *fakeConn {
	if n := len(h.all); n > 0 && !h.all[n-1].closed {
		return h.all[n-1]
	}
	return nil
}

// answer replies to the i-th held request of the current connection.
func (h *heldServers) answer(i int, code proto.Code) {
	fc := h.current()
	if fc == nil || len(h.held[fc]) <= i {
		return
	}
	hd := h.held[fc][i]
	h.held[fc] = slices.Delete(h.held[fc], i, i+1)
	h.bed.zxid++
	fc.reply(proto.ReplyHeader{Xid: hd.Xid, Zxid: h.bed.zxid, Err: code}, nil)
}

// releaseAll answers everything held, in order, and every later request at once.
func (h *heldServers) releaseAll() {
	if fc := h.current(); fc != nil {
		for len(h.held[fc]) > 0 {
			h.answer(0, proto.NoNode)
		}
	}
	for _, s := range h.bed.servers {
		s.onRequest = func(fc *fakeConn, hd proto.RequestHeader, body proto.Record) { fc.answer(hd, body, proto.NoNode) }
	}
}

// issue sends request id with one of the API calls, chosen by kind; every callback logs id.
func issue(c *Client, kind, id int, done func(int, proto.Code)) error {
	path := fmt.Sprintf("/n%d", id)
	switch kind % 7 {
	case 0:
		return c.Create(path, []byte("x"), proto.OpenACLUnsafe, proto.Persistent, func(r CreateResult) { done(id, r.Err) })
	case 1:
		return c.SetData(path, []byte("y"), -1, func(r StatResult) { done(id, r.Err) })
	case 2:
		return c.Delete(path, -1, func(r Result) { done(id, r.Err) })
	case 3:
		return c.Exists(path, c.DefaultWatcher(), func(r StatResult) { done(id, r.Err) })
	case 4:
		return c.GetData(path, nil, func(r DataResult) { done(id, r.Err) })
	case 5:
		return c.Sync(path, func(r Result) { done(id, r.Err) })
	default:
		return c.Multi([]Op{CheckOp(path, -1), DeleteOp(path, -1)}, func(r MultiResult) { done(id, r.Err) })
	}
}

// TestEveryRequestGetsOneCallbackInOrder drives a client through random requests, replies,
// misordered replies, connection losses, resets, pauses and session expiry, and checks that every
// request is called back exactly once, in the order the requests were issued. The one exception is
// Java's too: once the client is dead, a new request fails at once, ahead of older ones that still
// wait for the 100 ms cleanup; those are checked to fail with the death's code.
func TestEveryRequestGetsOneCallbackInOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		bed := newTestbed(rt, seed, 3)
		servers := holdRequests(bed)
		c, err := New(bed.w, bed.nw, bed.clientNode, Config{Servers: bed.serverNodes(), SessionTimeout: 4 * clock.Second},
			WatcherFunc(func(Event) {}))
		require.NoError(rt, err)

		var issued, whileAlive, calledBack []int
		codes := map[int]proto.Code{}
		done := func(id int, code proto.Code) {
			calledBack = append(calledBack, id)
			codes[id] = code
		}
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for i := range steps {
			switch action := rapid.IntRange(0, 9).Draw(rt, "action"); action {
			case 0, 1, 2:
				alive := c.State().IsAlive()
				require.NoError(rt, issue(c, rapid.IntRange(0, 6).Draw(rt, "kind"), i, done))
				issued = append(issued, i)
				if alive {
					whileAlive = append(whileAlive, i)
				}
			case 3, 4:
				servers.answer(0, proto.OK)
			case 5:
				servers.answer(1, proto.OK) // out of order: the client must drop the connection
			case 6:
				if fc := servers.current(); fc != nil {
					fc.close()
				}
			case 7:
				if fc := servers.current(); fc != nil {
					bed.nw.Reset(fc.id)
				}
			case 8:
				bed.w.Pause(bed.clientNode)
				bed.run(clock.Duration(rapid.Int64Range(0, 6000).Draw(rt, "pause ms")) * ms)
				bed.w.Resume(bed.clientNode)
			case 9:
				servers.expireNext = rapid.Bool().Draw(rt, "expire")
			}
			bed.run(clock.Duration(rapid.Int64Range(0, 3000).Draw(rt, "wait ms")) * ms)
		}
		servers.releaseAll()
		bed.run(30 * clock.Second)

		seen := map[int]int{}
		for _, id := range calledBack {
			seen[id]++
		}
		for _, id := range issued {
			assert.Equal(rt, 1, seen[id], "request %d: callbacks", id)
		}
		assert.Len(rt, calledBack, len(issued), "no callback for a request never issued")
		var aliveOrder []int
		for _, id := range calledBack {
			if slices.Contains(whileAlive, id) {
				aliveOrder = append(aliveOrder, id)
			}
		}
		assert.Equal(rt, whileAlive, aliveOrder, "callbacks of requests issued while the client lived come in issue order")
		for _, id := range issued {
			if !slices.Contains(whileAlive, id) {
				assert.Equal(rt, proto.SessionExpired, codes[id], "request %d issued on a dead client", id)
			}
		}
		assert.Zero(rt, c.pending.len()+c.outgoing.len(), "nothing left queued")
	})
}

// workloadHash runs a client with random latencies, requests every few milliseconds, and random
// connection faults for 30 virtual seconds, and returns the trace hash and the callbacks run.
func workloadHash(t *testing.T, seed uint64, trace sim.TraceConfig, library Library) (uint64, int) {
	bed := buildTestbed(t, seed, 3, net.Config{}, trace, &bytes.Buffer{})
	w, nw := bed.w, bed.nw
	c, err := New(w, nw, bed.clientNode, Config{Servers: bed.serverNodes(), SessionTimeout: 3 * clock.Second, Emulate: library},
		WatcherFunc(func(Event) {}))
	require.NoError(t, err)
	callbacks := 0
	var tick func()
	n := 0
	tick = func() {
		n++
		require.NoError(t, issue(c, n, n, func(int, proto.Code) { callbacks++ }))
		if w.Chance(1, 50) {
			if conns := nw.Conns(bed.clientNode); len(conns) > 0 {
				nw.Reset(conns[0])
			}
		}
		if w.Chance(1, 200) {
			w.Pause(bed.clientNode)
			w.After(w.Between(0, 4*clock.Second, ms), func() { w.Resume(bed.clientNode) })
		}
		w.After(w.Between(ms, 20*ms, ms), tick)
	}
	w.After(10*ms, tick)
	require.True(t, w.RunFor(30*clock.Second), "%v", w.Outcome())
	return w.Outcome().TraceHash, callbacks
}

func TestSameSeedSameTrace(t *testing.T) {
	for _, library := range []Library{Java, GoZookeeper} {
		t.Run(library.String(), func(t *testing.T) { checkSameSeedSameTrace(t, library) })
	}
}

func checkSameSeedSameTrace(t *testing.T, library Library) {
	h1, n1 := workloadHash(t, 42, sim.TraceConfig{}, library)
	h2, n2 := workloadHash(t, 42, sim.TraceConfig{}, library)
	var text bytes.Buffer
	h3, _ := workloadHash(t, 42, sim.TraceConfig{Text: &text}, library)
	assert.Equal(t, h1, h2, "seed 42 twice")
	assert.Equal(t, n1, n2)
	assert.Equal(t, h1, h3, "rendering the trace must not change the run")
	assert.Greater(t, n1, 500, "the workload ran")
	assert.Contains(t, text.String(), "client    c1 state CONNECTED")
	assert.Contains(t, text.String(), "request xid=")
	h4, _ := workloadHash(t, 43, sim.TraceConfig{}, library)
	assert.NotEqual(t, h1, h4, "another seed, another run")
}

// TestGoZookeeperEveryRequestGetsOneCallback is TestEveryRequestGetsOneCallbackInOrder for an
// emulated go-zookeeper, which accepts replies out of order, so only "exactly once" holds; and
// every request the server answered names the xid and session it went out with.
func TestGoZookeeperEveryRequestGetsOneCallback(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		bed := newTestbed(rt, seed, 3)
		servers := holdRequests(bed)
		c, err := New(bed.w, bed.nw, bed.clientNode, Config{Servers: bed.serverNodes(), SessionTimeout: 4 * clock.Second,
			Emulate: GoZookeeper}, WatcherFunc(func(Event) {}))
		require.NoError(rt, err)
		var issued []int
		results := map[int][]Result{}
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for i := range steps {
			switch action := rapid.IntRange(0, 8).Draw(rt, "action"); action {
			case 0, 1, 2:
				record := func(r Result) { results[i] = append(results[i], r) }
				if rapid.Bool().Draw(rt, "auth") {
					require.NoError(rt, c.AddAuth("digest", []byte("u:p"), record))
				} else {
					require.NoError(rt, c.Sync(fmt.Sprintf("/n%d", i), record))
				}
				issued = append(issued, i)
			case 3, 4:
				servers.answer(0, proto.OK)
			case 5:
				servers.answer(1, proto.OK) // out of order: accepted
			case 6:
				if fc := servers.current(); fc != nil {
					fc.close()
				}
			case 7:
				bed.w.Pause(bed.clientNode)
				bed.run(clock.Duration(rapid.Int64Range(0, 6000).Draw(rt, "pause ms")) * ms)
				bed.w.Resume(bed.clientNode)
			case 8:
				servers.expireNext = rapid.Bool().Draw(rt, "expire")
			}
			bed.run(clock.Duration(rapid.Int64Range(0, 3000).Draw(rt, "wait ms")) * ms)
		}
		servers.releaseAll()
		bed.run(30 * clock.Second)
		for _, id := range issued {
			require.Len(rt, results[id], 1, "request %d: callbacks", id)
			if r := results[id][0]; r.Zxid != 0 {
				assert.NotZero(rt, r.Session, "request %d was answered, so it was written on a session", id)
			}
		}
		assert.Len(rt, results, len(issued), "no callback for a request never issued")
		assert.Zero(rt, c.pending.len()+c.outgoing.len(), "nothing left queued")
	})
}
