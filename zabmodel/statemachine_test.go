package zabmodel_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The state-machine test drives random client operations and faults through a simulated ensemble
// and compares every reply with the reference model of refmodel_test.go. Each rapid step is one
// action run to completion in virtual time; faults happen only between operations, and the harness
// waits after each step until the ensemble has settled (a serving leader, every healthy server
// serving the same tree, every client connected to a healthy server), so that the model stays exact:
// no operation is ever in flight across a fault, and a CONNECTIONLOSS that reaches one is a failure.
// After every step the check reads the whole tree through every client and compares it with the model.
//
// By default rapid runs 100 cases of about 30 steps each. To run longer:
//
//	go test ./zabmodel -run StateMachine -rapid.checks=2000
//	go test ./zabmodel -run StateMachine -rapid.checks=500 -rapid.steps=100
//
// A failure prints the actions and a -rapid.seed that replays it (the simulator's own seed is one of
// the drawn values, so the replay is exact).

const (
	// smSessionTimeout is long enough that a client whose server fails reconnects elsewhere well
	// before its session could expire, even while an isolated leader takes syncLimit ticks to notice.
	smSessionTimeout = 30 * clock.Second
	// smReplyBound is how long an operation may take with no fault in flight.
	smReplyBound = 30 * clock.Second
	// smSettleBound is how long the ensemble may take to settle after a fault: an election, a sync,
	// and the clients' reconnections.
	smSettleBound = 120 * clock.Second
	// smReplyPoll and smSettlePoll are the steps of virtual time between two looks at the world.
	smReplyPoll  = 5 * clock.Millisecond
	smSettlePoll = 100 * clock.Millisecond
)

// smConfig describes one case of the state machine.
type smConfig struct {
	seed      uint64
	voters    int
	observers int
	// placement gives, for each client, the index (sid-1) of the server it first connects to.
	placement []int
	bugs      zabmodel.Bugs
	flaws     refFlaw
	// coverage, if not nil, counts the outcomes the case reached (see smCoverage).
	coverage smCoverage
}

// smCoverage counts outcomes by name ("create NODEEXISTS", "multi RUNTIMEINCONSISTENCY", "fault
// isolate"), so that a test can show that the generator reaches every error path of the model.
type smCoverage map[string]int

// smClient is one client of the harness.
type smClient struct {
	name string
	cl   *client.Client
}

// smHarness is the system under test (an ensemble and its clients in one world) with the model.
type smHarness struct {
	w       *sim.World
	nw      *net.Network
	ens     *zabmodel.Ensemble
	model   *refModel
	clients []*smClient
	// crashed and isolated are indexed by sid-1: the faults the harness has injected and not undone.
	crashed     []bool
	isolated    []bool
	clientsMade int
	coverage    smCoverage
}

// newSMHarness starts the ensemble, waits for it to serve, and connects one client per placement.
func newSMHarness(cfg smConfig) (*smHarness, error) {
	w, err := sim.New(sim.Config{Seed: cfg.seed})
	if err != nil {
		return nil, err
	}
	nw, err := net.New(w, net.Config{})
	if err != nil {
		return nil, err
	}
	ens, err := zabmodel.NewEnsemble(w, nw, zabmodel.Config{Voters: cfg.voters, Observers: cfg.observers, Bugs: cfg.bugs})
	if err != nil {
		return nil, err
	}
	ens.Start()
	size := cfg.voters + cfg.observers
	h := &smHarness{w: w, nw: nw, ens: ens, model: newRefModel(cfg.flaws),
		crashed: make([]bool, size), isolated: make([]bool, size), coverage: cfg.coverage}
	if err := h.settle("start"); err != nil {
		return nil, err
	}
	for _, index := range cfg.placement {
		if err := h.addClient(index); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// runUntil runs virtual time in steps of poll until cond holds (true) or bound has passed (false).
// A world that ended (a panic in simulated code, a budget) is an error.
func (h *smHarness) runUntil(bound, poll clock.Duration, cond func() bool) (bool, error) {
	deadline := h.w.Now().Add(bound)
	for !cond() {
		if !h.w.Now().Before(deadline) {
			return false, nil
		}
		h.w.RunFor(poll)
		if h.w.Ended() {
			return false, fmt.Errorf("the world ended at %v: %v", h.w.Now(), h.w.Outcome())
		}
	}
	return true, nil
}

// await waits for an operation's callback. With no fault in flight a reply must come.
func (h *smHarness) await(what string, done func() bool) error {
	ok, err := h.runUntil(smReplyBound, smReplyPoll, done)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !ok {
		return fmt.Errorf("%s: no reply within %v, with no fault in flight", what, smReplyBound)
	}
	return nil
}

// addClient makes a new client whose session is established with the server at index. The client
// gets every server in its connect string (so that it can fail over), and the network keeps it from
// the others until it has connected, which decides where it lands without touching the client.
func (h *smHarness) addClient(index int) error {
	name := fmt.Sprintf("client%d", h.clientsMade)
	h.clientsMade++
	node := h.w.AddNode(name, nil)
	servers := h.ens.Nodes()
	for i, s := range servers {
		if i != index {
			h.nw.Cut(node, s)
		}
	}
	cl, err := client.New(h.w, h.nw, node, client.Config{Servers: servers, SessionTimeout: smSessionTimeout, Name: name}, nil)
	if err != nil {
		return err
	}
	ok, err := h.runUntil(smSettleBound, smSettlePoll, func() bool { return cl.State() == client.StateConnected })
	for i, s := range servers {
		if i != index {
			h.nw.HealPair(node, s)
		}
	}
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s did not connect to server %d within %v (state %v)", name, index+1, smSettleBound, cl.State())
	}
	h.clients = append(h.clients, &smClient{name: name, cl: cl})
	return nil
}

// reached counts an outcome, if the case keeps coverage.
func (h *smHarness) reached(outcome string) {
	if h.coverage != nil {
		h.coverage[outcome]++
	}
}

// healthy reports whether the harness has left the server alone: not crashed, not isolated.
func (h *smHarness) healthy(sid int64) bool { return !h.crashed[sid-1] && !h.isolated[sid-1] }

// healthyVoters counts the voters that are neither crashed nor isolated.
func (h *smHarness) healthyVoters() int {
	n := 0
	for _, sid := range h.ens.Config().VoterSids() {
		if h.healthy(sid) {
			n++
		}
	}
	return n
}

// attachedServer returns the sid of the server the client's connection goes to, if it has one.
func (h *smHarness) attachedServer(c *smClient) (int64, bool) {
	node := c.cl.Node()
	for _, conn := range h.nw.Conns(node) {
		peer, ok := h.nw.Peer(node, conn)
		if !ok {
			continue
		}
		for _, s := range h.ens.Servers() {
			if s.Node() == peer {
				return s.Sid(), true
			}
		}
	}
	return 0, false
}

// unsettled says why the ensemble has not settled, or "" if it has: the established leader is
// healthy; every healthy server is up, serving, has applied the last successful write and has the
// leader's tree digest; no isolated server still serves; every client is connected to a healthy
// serving server. Servers may differ in lastProcessedZxid and still agree: a new leader sets its own
// to the new epoch's first zxid and a learner synced by DIFF keeps its old one (Leader.java and
// Learner.java do the same), and a failed write's error txn changes no tree.
func (h *smHarness) unsettled() string {
	leader, _, ok := h.ens.Leader()
	if !ok || !h.healthy(leader) {
		return "no healthy established leader"
	}
	want := h.ens.Server(leader).State()
	for _, s := range h.ens.Servers() {
		st := s.State()
		switch {
		case h.crashed[st.Sid-1]:
			continue
		case h.isolated[st.Sid-1]:
			if st.Serving {
				return fmt.Sprintf("isolated server %d still serves", st.Sid)
			}
			continue
		case !st.Up:
			return fmt.Sprintf("server %d is down: %s", st.Sid, s.Exit())
		case !st.Serving:
			return fmt.Sprintf("server %d is not serving (%v)", st.Sid, st.Role)
		case st.LastProcessedZxid < h.model.lastZxid || st.Digest != want.Digest:
			return fmt.Sprintf("server %d at zxid %s digest %#x; last write %s, leader %d digest %#x", st.Sid,
				zabmodel.FormatZxid(st.LastProcessedZxid), st.Digest, zabmodel.FormatZxid(h.model.lastZxid), leader, want.Digest)
		}
	}
	for _, c := range h.clients {
		if c.cl.State() != client.StateConnected {
			return fmt.Sprintf("%s is %v", c.name, c.cl.State())
		}
		sid, ok := h.attachedServer(c)
		if !ok || !h.healthy(sid) || !h.ens.Server(sid).State().Serving {
			return fmt.Sprintf("%s is attached to server %d, which is not a healthy serving one", c.name, sid)
		}
	}
	return ""
}

// settle runs the world until it has settled, or fails once smSettleBound has passed. A client whose
// session ended is a failure at once: no fault here may cost a session.
func (h *smHarness) settle(after string) error {
	var why string
	ok, err := h.runUntil(smSettleBound, smSettlePoll, func() bool {
		why = h.unsettled()
		return why == "" || h.anyClientClosed()
	})
	switch {
	case err != nil:
		return fmt.Errorf("after %s: %w", after, err)
	case h.anyClientClosed():
		return fmt.Errorf("after %s: a client's session ended: %s", after, h.describeClients())
	case !ok:
		return fmt.Errorf("after %s: the ensemble did not settle within %v: %s\n%s", after, smSettleBound, why, h.describeServers())
	}
	return nil
}

func (h *smHarness) anyClientClosed() bool {
	return slices.ContainsFunc(h.clients, func(c *smClient) bool { return !c.cl.State().IsAlive() })
}

func (h *smHarness) describeClients() string {
	var out []string
	for _, c := range h.clients {
		out = append(out, fmt.Sprintf("%s session %#x %v", c.name, c.cl.SessionID(), c.cl.State()))
	}
	return strings.Join(out, "; ")
}

func (h *smHarness) describeServers() string {
	var out []string
	for _, s := range h.ens.Servers() {
		st := s.State()
		out = append(out, fmt.Sprintf("  server %d: up=%v crashed=%v isolated=%v role=%v serving=%v zxid=%s digest=%#x exit=%q",
			st.Sid, st.Up, h.crashed[st.Sid-1], h.isolated[st.Sid-1], st.Role, st.Serving,
			zabmodel.FormatZxid(st.LastProcessedZxid), st.Digest, s.Exit()))
	}
	return strings.Join(out, "\n")
}

// check is the invariant after every step: the ensemble settles (the healthy servers converge on one
// tree), and the whole tree read through every client agrees with the model.
func (h *smHarness) check() error {
	if err := h.settle("the last step"); err != nil {
		return err
	}
	return h.checkReads()
}

// checkReads reads every node the model knows (getData, and getChildren with its Stat) through every
// client, all requests in flight together. Children reveal any node the server has and the model
// lacks; the model's nodes reveal any the server lacks. (Plain reads rather than one multiRead per
// client: getChildren2 also returns the parent's Stat, which multiRead's getChildren does not.)
func (h *smHarness) checkReads() error {
	paths := h.model.paths()
	type reads struct {
		data     []*client.DataResult
		children []*client.ChildrenResult
	}
	all := make([]reads, len(h.clients))
	for i, c := range h.clients {
		all[i] = reads{data: make([]*client.DataResult, len(paths)), children: make([]*client.ChildrenResult, len(paths))}
		for j, p := range paths {
			if err := errors.Join(
				c.cl.GetData(p, nil, func(r client.DataResult) { all[i].data[j] = &r }),
				c.cl.GetChildren(p, nil, func(r client.ChildrenResult) { all[i].children[j] = &r })); err != nil {
				return fmt.Errorf("%s reading %s refused: %w", c.name, p, err)
			}
		}
	}
	done := func() bool {
		return !slices.ContainsFunc(all, func(r reads) bool {
			return slices.Contains(r.data, nil) || slices.Contains(r.children, nil)
		})
	}
	if err := h.await("reading the tree", done); err != nil {
		return err
	}
	for i, c := range h.clients {
		for j, p := range paths {
			d, ch := all[i].data[j], all[i].children[j]
			what := c.name + " tree read"
			if err := errors.Join(lost(what, d.Err), lost(what, ch.Err),
				h.model.expectNode(what+" getData", p, d.Err, &d.Data, d.Stat),
				h.model.expectChildren(what+" getChildren", p, ch.Err, ch.Children),
				h.model.expectNode(what+" getChildren", p, ch.Err, nil, ch.Stat)); err != nil {
				return err
			}
		}
	}
	return nil
}

// errLostReply marks an operation that lost its connection or session although no fault was in
// flight: the harness only faults between operations and waits for every client to reconnect.
var errLostReply = errors.New("an operation lost its connection with no fault in flight")

func lost(what string, code proto.Code) error {
	if code == proto.ConnectionLoss || code == proto.SessionExpired || code == proto.SessionMoved {
		return fmt.Errorf("%s: %w (%s)", what, errLostReply, code.String())
	}
	return nil
}

// --- Operations: each issues one request, waits for its reply and compares it with the model -------

func (h *smHarness) create(ci int, path string, data []byte, mode proto.CreateMode) error {
	c := h.clients[ci]
	what := fmt.Sprintf("%s create %s %v %q", c.name, path, mode, data)
	var got *client.CreateResult
	if err := c.cl.Create(path, data, proto.OpenACLUnsafe, mode, func(r client.CreateResult) { got = &r }); err != nil {
		return fmt.Errorf("%s: refused: %w", what, err)
	}
	if err := h.await(what, func() bool { return got != nil }); err != nil {
		return err
	}
	if err := lost(what, got.Err); err != nil {
		return err
	}
	wantCode, wantPath := h.model.checkCreate(path, mode)
	h.reached("create " + got.Err.String())
	switch {
	case got.Err != wantCode:
		return fmt.Errorf("%s: got %s, want %s", what, got.Err.String(), wantCode.String())
	case wantCode != proto.OK:
		return nil
	case got.Path != wantPath:
		return fmt.Errorf("%s: created %s, want %s", what, got.Path, wantPath)
	}
	if err := h.model.acceptZxid(what, got.Zxid); err != nil {
		return err
	}
	h.model.applyCreate(wantPath, data, mode, c.cl.SessionID(), got.Zxid)
	if mode.IsSequential() {
		h.reached("create sequential OK")
	}
	if d := diffStat(got.Stat, h.model.nodes[wantPath].stat()); d != "" {
		return fmt.Errorf("%s: stat differs: %s", what, d)
	}
	return nil
}

func (h *smHarness) delete(ci int, path string, version int32) error {
	c := h.clients[ci]
	what := fmt.Sprintf("%s delete %s v%d", c.name, path, version)
	var got *client.Result
	if err := c.cl.Delete(path, version, func(r client.Result) { got = &r }); err != nil {
		return fmt.Errorf("%s: refused: %w", what, err)
	}
	if err := h.await(what, func() bool { return got != nil }); err != nil {
		return err
	}
	if err := lost(what, got.Err); err != nil {
		return err
	}
	want := h.model.checkDelete(path, version)
	h.reached("delete " + got.Err.String())
	if got.Err != want {
		return fmt.Errorf("%s: got %s, want %s", what, got.Err.String(), want.String())
	}
	if want != proto.OK {
		return nil
	}
	if err := h.model.acceptZxid(what, got.Zxid); err != nil {
		return err
	}
	h.model.applyDelete(path, got.Zxid)
	return nil
}

func (h *smHarness) setData(ci int, path string, data []byte, version int32) error {
	c := h.clients[ci]
	what := fmt.Sprintf("%s setData %s %q v%d", c.name, path, data, version)
	var got *client.StatResult
	if err := c.cl.SetData(path, data, version, func(r client.StatResult) { got = &r }); err != nil {
		return fmt.Errorf("%s: refused: %w", what, err)
	}
	if err := h.await(what, func() bool { return got != nil }); err != nil {
		return err
	}
	if err := lost(what, got.Err); err != nil {
		return err
	}
	want := h.model.checkSetData(path, version)
	h.reached("setData " + got.Err.String())
	if got.Err != want {
		return fmt.Errorf("%s: got %s, want %s", what, got.Err.String(), want.String())
	}
	if want != proto.OK {
		return nil
	}
	if err := h.model.acceptZxid(what, got.Zxid); err != nil {
		return err
	}
	h.model.applySetData(path, data, got.Zxid)
	if d := diffStat(got.Stat, h.model.nodes[path].stat()); d != "" {
		return fmt.Errorf("%s: stat differs: %s", what, d)
	}
	return nil
}

func (h *smHarness) getData(ci int, path string) error {
	c := h.clients[ci]
	what := c.name + " getData"
	var got *client.DataResult
	if err := c.cl.GetData(path, nil, func(r client.DataResult) { got = &r }); err != nil {
		return fmt.Errorf("%s %s: refused: %w", what, path, err)
	}
	if err := h.await(what+" "+path, func() bool { return got != nil }); err != nil {
		return err
	}
	if err := lost(what+" "+path, got.Err); err != nil {
		return err
	}
	return h.model.expectNode(what, path, got.Err, &got.Data, got.Stat)
}

func (h *smHarness) exists(ci int, path string) error {
	c := h.clients[ci]
	what := c.name + " exists"
	var got *client.StatResult
	if err := c.cl.Exists(path, nil, func(r client.StatResult) { got = &r }); err != nil {
		return fmt.Errorf("%s %s: refused: %w", what, path, err)
	}
	if err := h.await(what+" "+path, func() bool { return got != nil }); err != nil {
		return err
	}
	if err := lost(what+" "+path, got.Err); err != nil {
		return err
	}
	return h.model.expectNode(what, path, got.Err, nil, got.Stat)
}

func (h *smHarness) getChildren(ci int, path string) error {
	c := h.clients[ci]
	what := c.name + " getChildren"
	var got *client.ChildrenResult
	if err := c.cl.GetChildren(path, nil, func(r client.ChildrenResult) { got = &r }); err != nil {
		return fmt.Errorf("%s %s: refused: %w", what, path, err)
	}
	if err := h.await(what+" "+path, func() bool { return got != nil }); err != nil {
		return err
	}
	if err := lost(what+" "+path, got.Err); err != nil {
		return err
	}
	if err := h.model.expectChildren(what, path, got.Err, got.Children); err != nil {
		return err
	}
	if got.Err != proto.OK {
		return nil
	}
	return h.model.expectNode(what, path, got.Err, nil, got.Stat)
}

// syncRead sends sync then getData back to back: the read is answered after the sync, by a server
// that has caught up with the leader as of the sync.
func (h *smHarness) syncRead(ci int, path string) error {
	c := h.clients[ci]
	what := fmt.Sprintf("%s sync+getData %s", c.name, path)
	var synced *client.Result
	var got *client.DataResult
	if err := c.cl.Sync(path, func(r client.Result) { synced = &r }); err != nil {
		return fmt.Errorf("%s: sync refused: %w", what, err)
	}
	if err := c.cl.GetData(path, nil, func(r client.DataResult) {
		if synced == nil {
			panic("getData answered before the sync sent ahead of it")
		}
		got = &r
	}); err != nil {
		return fmt.Errorf("%s: getData refused: %w", what, err)
	}
	if err := h.await(what, func() bool { return got != nil }); err != nil {
		return err
	}
	if err := errors.Join(lost(what, synced.Err), lost(what, got.Err)); err != nil {
		return err
	}
	if synced.Err != proto.OK {
		return fmt.Errorf("%s: sync got %s", what, synced.Err.String())
	}
	return h.model.expectNode(what, path, got.Err, &got.Data, got.Stat)
}

// multiRead reads the data and children of paths as one multiRead and compares every result (each op
// answers for itself; a missing node is that op's NONODE, the multi's code is the first error).
func (h *smHarness) multiRead(ci int, paths []string) error {
	c := h.clients[ci]
	what := fmt.Sprintf("%s multiRead %q", c.name, paths)
	ops := make([]client.Op, 0, 2*len(paths))
	wantCode := proto.OK
	for _, p := range paths {
		ops = append(ops, client.GetDataOp(p), client.GetChildrenOp(p))
		if _, ok := h.model.nodes[p]; !ok && wantCode == proto.OK {
			wantCode = proto.NoNode
		}
	}
	var got *client.MultiResult
	if err := c.cl.Multi(ops, func(r client.MultiResult) { got = &r }); err != nil {
		return fmt.Errorf("%s: refused: %w", what, err)
	}
	if err := h.await(what, func() bool { return got != nil }); err != nil {
		return err
	}
	if err := lost(what, got.Err); err != nil {
		return err
	}
	if got.Err != wantCode || len(got.Results) != len(ops) {
		return fmt.Errorf("%s: got %s with %d results, want %s with %d", what, got.Err.String(), len(got.Results), wantCode.String(), len(ops))
	}
	for i, p := range paths {
		data, children := got.Results[2*i], got.Results[2*i+1]
		if err := errors.Join(
			h.model.expectNode(what+" getData", p, readCode(data), &data.Data, data.Stat),
			h.model.expectChildren(what+" getChildren", p, readCode(children), children.Children)); err != nil {
			return err
		}
	}
	return nil
}

// readCode is a multiRead op's code: an error result carries it, any other result is OK.
func readCode(r client.OpResult) proto.Code {
	if r.Type == proto.OpError {
		return r.Err
	}
	return proto.OK
}

// multi sends the ops as one multi and compares the code and every op's result with the model.
func (h *smHarness) multi(ci int, ops []refOp) error {
	c := h.clients[ci]
	what := fmt.Sprintf("%s multi %v", c.name, ops)
	request := make([]client.Op, len(ops))
	for i, op := range ops {
		switch op.typ {
		case proto.OpCreate:
			request[i] = client.CreateOp(op.path, op.data, proto.OpenACLUnsafe, op.mode)
		case proto.OpDelete:
			request[i] = client.DeleteOp(op.path, op.version)
		case proto.OpSetData:
			request[i] = client.SetDataOp(op.path, op.data, op.version)
		case proto.OpCheck:
			request[i] = client.CheckOp(op.path, op.version)
		}
	}
	var got *client.MultiResult
	if err := c.cl.Multi(request, func(r client.MultiResult) { got = &r }); err != nil {
		return fmt.Errorf("%s: refused: %w", what, err)
	}
	if err := h.await(what, func() bool { return got != nil }); err != nil {
		return err
	}
	if err := lost(what, got.Err); err != nil {
		return err
	}
	want, wantCode := h.model.multi(ops, c.cl.SessionID(), got.Zxid)
	h.reached("multi " + got.Err.String())
	for _, r := range got.Results {
		if r.Type == proto.OpError && r.Err == proto.RuntimeInconsistency {
			h.reached("multi op " + r.Err.String())
		}
	}
	if got.Err != wantCode {
		return fmt.Errorf("%s: got %s, want %s", what, got.Err.String(), wantCode.String())
	}
	if wantCode == proto.OK {
		if err := h.model.acceptZxid(what, got.Zxid); err != nil {
			return err
		}
	}
	return compareMultiResults(what, got.Results, want)
}

func compareMultiResults(what string, got []client.OpResult, want []refOpResult) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d results, want %d", what, len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		switch {
		case g.Type != w.typ:
			return fmt.Errorf("%s: result %d is %v (%s), want %v (%s)", what, i, g.Type, g.Err.String(), w.typ, w.err.String())
		case w.typ == proto.OpError && g.Err != w.err:
			return fmt.Errorf("%s: result %d is error %s, want %s", what, i, g.Err.String(), w.err.String())
		case w.typ == proto.OpCreate && g.Path != w.path:
			return fmt.Errorf("%s: result %d created %s, want %s", what, i, g.Path, w.path)
		}
		if w.typ == proto.OpSetData {
			if d := diffStat(g.Stat, w.stat); d != "" {
				return fmt.Errorf("%s: result %d stat differs: %s", what, i, d)
			}
		}
	}
	return nil
}

// reopen closes a client's session (its ephemeral nodes go with it, at the closeSession's zxid) and
// puts a new client in its place, connected to the server at index.
func (h *smHarness) reopen(ci int, index int) error {
	c := h.clients[ci]
	what := fmt.Sprintf("%s close", c.name)
	session := c.cl.SessionID()
	var got *client.Result
	if err := c.cl.Close(func(r client.Result) { got = &r }); err != nil {
		return fmt.Errorf("%s: refused: %w", what, err)
	}
	if err := h.await(what, func() bool { return got != nil }); err != nil {
		return err
	}
	if got.Err != proto.OK {
		return fmt.Errorf("%s: got %s", what, got.Err.String())
	}
	if err := h.model.acceptZxid(what, got.Zxid); err != nil {
		return err
	}
	if h.model.closeSession(session, got.Zxid) > 0 {
		h.reached("close session with ephemerals")
	}
	h.clients = slices.Delete(h.clients, ci, ci+1)
	if err := h.addClient(index); err != nil {
		return err
	}
	// Keep the new client at the old one's index, so that the indexes of the others do not move.
	last := len(h.clients) - 1
	h.clients = slices.Insert(h.clients[:last], ci, h.clients[last])
	return nil
}

// --- Faults, each keeping a quorum of voters healthy -----------------------------------------------

func (h *smHarness) crash(sid int64) {
	h.reached("fault crash")
	h.w.Crash(h.ens.Server(sid).Node())
	h.crashed[sid-1] = true
}

func (h *smHarness) restart(sid int64) {
	h.reached("fault restart")
	h.w.Restart(h.ens.Server(sid).Node())
	h.crashed[sid-1] = false
}

// restartLeader crashes the leader, waits until another server leads in a later epoch, and restarts
// the old leader.
func (h *smHarness) restartLeader() error {
	leader, epoch, ok := h.ens.Leader()
	if !ok {
		return errors.New("restart leader: no leader")
	}
	h.crash(leader)
	found, err := h.runUntil(smSettleBound, smSettlePoll, func() bool {
		sid, e, ok := h.ens.Leader()
		return ok && sid != leader && e > epoch
	})
	if err != nil {
		return fmt.Errorf("restart leader %d: %w", leader, err)
	}
	if !found {
		return fmt.Errorf("restart leader %d: no new leader within %v\n%s", leader, smSettleBound, h.describeServers())
	}
	h.restart(leader)
	h.reached("fault leader restarted")
	return nil
}

// isolate cuts a server off from every other server; clients still reach it, and it must turn them
// away once it notices it has lost the ensemble.
func (h *smHarness) isolate(sid int64) {
	h.reached("fault isolate")
	node := h.ens.Server(sid).Node()
	for _, s := range h.ens.Servers() {
		if s.Sid() != sid {
			h.nw.Cut(node, s.Node())
		}
	}
	h.isolated[sid-1] = true
}

// heal reconnects an isolated server with every server that is not isolated itself.
func (h *smHarness) heal(sid int64) {
	node := h.ens.Server(sid).Node()
	for _, s := range h.ens.Servers() {
		if s.Sid() != sid && !h.isolated[s.Sid()-1] {
			h.nw.HealPair(node, s.Node())
		}
	}
	h.isolated[sid-1] = false
	h.reached("fault heal")
}

// faultCandidates returns the servers that may be crashed or isolated now: up, not isolated, not
// the leader (restartLeader is the leader's fault), and, for a voter, only if a majority of voters
// stays healthy without it.
func (h *smHarness) faultCandidates() []int64 {
	leader, _, _ := h.ens.Leader()
	spareVoter := h.healthyVoters()-1 > len(h.ens.Config().VoterSids())/2
	var out []int64
	for _, s := range h.ens.Servers() {
		sid := s.Sid()
		if !h.healthy(sid) || sid == leader || (h.ens.Config().IsVoter(sid) && !spareVoter) {
			continue
		}
		out = append(out, sid)
	}
	return out
}

func (h *smHarness) crashedServers() []int64  { return h.flagged(h.crashed) }
func (h *smHarness) isolatedServers() []int64 { return h.flagged(h.isolated) }

func (h *smHarness) flagged(flags []bool) []int64 {
	var out []int64
	for i, f := range flags {
		if f {
			out = append(out, int64(i+1))
		}
	}
	return out
}

// healthyServing returns the indexes of the servers a new client may connect to.
func (h *smHarness) healthyServing() []int {
	var out []int
	for i, s := range h.ens.Servers() {
		if h.healthy(s.Sid()) && s.State().Serving {
			out = append(out, i)
		}
	}
	return out
}

// --- The rapid state machine -----------------------------------------------------------------------

// smStaticPaths are the paths writes aim at besides the nodes that exist: a small space, so that
// creates collide, deletes find children, and some parents are missing (/c/d).
var smStaticPaths = []string{"/a", "/a/x", "/a/y", "/a/x/z", "/b", "/b/x", "/c/d"}

var smData = []string{"", "v", "data-2", "a longer value, forty bytes or so......."}

var smModes = []proto.CreateMode{proto.Persistent, proto.Ephemeral, proto.PersistentSequential, proto.EphemeralSequential}

// smPaths returns the static paths and every node of the model but the root, sorted, with extra
// added.
func (h *smHarness) smPaths(extra ...string) []string {
	out := slices.Concat(smStaticPaths, extra)
	for _, p := range h.model.paths() {
		if p != "/" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (h *smHarness) drawClient(t *rapid.T) int {
	return rapid.IntRange(0, len(h.clients)-1).Draw(t, "client")
}

// existingPaths returns the model's nodes but the root, which no write may touch.
func (h *smHarness) existingPaths() []string {
	return slices.DeleteFunc(h.model.paths(), func(p string) bool { return p == "/" })
}

// drawPath draws a path for an op on a node: half the time one that exists, otherwise any of the
// static paths and existing nodes (so that NONODE stays common but does not crowd out the rest).
// Reads may also aim at the root, passed as extra.
func (h *smHarness) drawPath(t *rapid.T, extra ...string) string {
	if existing := slices.Concat(h.existingPaths(), extra); len(existing) > 0 && rapid.Bool().Draw(t, "existing") {
		return rapid.SampledFrom(existing).Draw(t, "path")
	}
	return rapid.SampledFrom(h.smPaths(extra...)).Draw(t, "path")
}

// drawDeletePath draws the path of a delete: a third of the time a node with children (NOTEMPTY
// unless the version is wrong), otherwise as drawPath.
func (h *smHarness) drawDeletePath(t *rapid.T) string {
	parents := slices.DeleteFunc(h.existingPaths(), func(p string) bool { return len(h.model.nodes[p].children) == 0 })
	if len(parents) > 0 && rapid.IntRange(0, 2).Draw(t, "parent") == 0 {
		return rapid.SampledFrom(parents).Draw(t, "path")
	}
	return h.drawPath(t)
}

// drawCreatePath draws the path of a create: a new child of an existing node (OK, or
// NOCHILDRENFOREPHEMERALS under an ephemeral), an existing node (NODEEXISTS unless sequential), or
// a static path (some of whose parents are missing).
func (h *smHarness) drawCreatePath(t *rapid.T) string {
	switch rapid.SampledFrom([]string{"child", "existing", "static"}).Draw(t, "where") {
	case "child":
		parent := rapid.SampledFrom(h.model.paths()).Draw(t, "parent")
		return childPath(parent, rapid.SampledFrom([]string{"k", "s-"}).Draw(t, "name"))
	case "existing":
		if existing := h.existingPaths(); len(existing) > 0 {
			return rapid.SampledFrom(existing).Draw(t, "path")
		}
	}
	return rapid.SampledFrom(smStaticPaths).Draw(t, "path")
}

func drawData(t *rapid.T) []byte { return []byte(rapid.SampledFrom(smData).Draw(t, "data")) }

// drawVersion draws the version of a conditional op: any (-1), the node's current one, or a wrong one.
func (h *smHarness) drawVersion(t *rapid.T, path string) int32 {
	current := int32(0)
	if n, ok := h.model.nodes[path]; ok {
		current = n.version
	}
	switch rapid.SampledFrom([]string{"any", "current", "wrong"}).Draw(t, "version") {
	case "any":
		return -1
	case "current":
		return current
	}
	return current + 1
}

func (h *smHarness) drawMultiOp(t *rapid.T) refOp {
	typ := rapid.SampledFrom([]proto.OpCode{proto.OpCreate, proto.OpDelete, proto.OpSetData, proto.OpCheck}).Draw(t, "op")
	switch typ {
	case proto.OpCreate:
		return refOp{typ: typ, path: h.drawCreatePath(t), data: drawData(t), mode: rapid.SampledFrom(smModes).Draw(t, "mode")}
	case proto.OpSetData:
		path := h.drawPath(t)
		return refOp{typ: typ, path: path, data: drawData(t), version: h.drawVersion(t, path)}
	case proto.OpDelete:
		path := h.drawDeletePath(t)
		return refOp{typ: typ, path: path, version: h.drawVersion(t, path)}
	}
	path := h.drawPath(t)
	return refOp{typ: typ, path: path, version: h.drawVersion(t, path)}
}

func must(t *rapid.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// actions is the state machine: client operations, faults, and the check after every step.
func (h *smHarness) actions() map[string]func(*rapid.T) {
	actions := h.faultActions()
	maps.Copy(actions, h.operationActions())
	actions[""] = func(t *rapid.T) {
		h.reached("steps")
		must(t, h.check())
	}
	return actions
}

// operationActions are the client operations, each on a drawn client.
func (h *smHarness) operationActions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"create": func(t *rapid.T) {
			ci, path, data := h.drawClient(t), h.drawCreatePath(t), drawData(t)
			must(t, h.create(ci, path, data, rapid.SampledFrom(smModes).Draw(t, "mode")))
		},
		"delete": func(t *rapid.T) {
			ci, path := h.drawClient(t), h.drawDeletePath(t)
			must(t, h.delete(ci, path, h.drawVersion(t, path)))
		},
		"setData": func(t *rapid.T) {
			ci, path, data := h.drawClient(t), h.drawPath(t), drawData(t)
			must(t, h.setData(ci, path, data, h.drawVersion(t, path)))
		},
		"getData":     func(t *rapid.T) { must(t, h.getData(h.drawClient(t), h.drawPath(t, "/"))) },
		"exists":      func(t *rapid.T) { must(t, h.exists(h.drawClient(t), h.drawPath(t, "/"))) },
		"getChildren": func(t *rapid.T) { must(t, h.getChildren(h.drawClient(t), h.drawPath(t, "/"))) },
		"syncRead":    func(t *rapid.T) { must(t, h.syncRead(h.drawClient(t), h.drawPath(t, "/"))) },
		"multi": func(t *rapid.T) {
			ci := h.drawClient(t)
			ops := make([]refOp, rapid.IntRange(1, 4).Draw(t, "ops"))
			for i := range ops {
				ops[i] = h.drawMultiOp(t)
			}
			must(t, h.multi(ci, ops))
		},
		"reopenSession": func(t *rapid.T) {
			ci := h.drawClient(t)
			must(t, h.reopen(ci, rapid.SampledFrom(h.healthyServing()).Draw(t, "server")))
		},
	}
}

// faultActions are the faults; each skips itself when it would cost the quorum or has nothing to
// undo.
func (h *smHarness) faultActions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"crashServer": func(t *rapid.T) {
			candidates := h.faultCandidates()
			if len(candidates) == 0 {
				t.Skip("no server can go down without costing the quorum")
			}
			h.crash(rapid.SampledFrom(candidates).Draw(t, "server"))
		},
		"restartServer": func(t *rapid.T) {
			down := h.crashedServers()
			if len(down) == 0 {
				t.Skip("no server is down")
			}
			h.restart(rapid.SampledFrom(down).Draw(t, "server"))
		},
		"restartLeader": func(t *rapid.T) {
			if h.healthyVoters()-1 <= len(h.ens.Config().VoterSids())/2 {
				t.Skip("the leader cannot go down without costing the quorum")
			}
			must(t, h.restartLeader())
		},
		"isolateServer": func(t *rapid.T) {
			candidates := h.faultCandidates()
			if len(candidates) == 0 {
				t.Skip("no server can be isolated without costing the quorum")
			}
			h.isolate(rapid.SampledFrom(candidates).Draw(t, "server"))
		},
		"healServer": func(t *rapid.T) {
			isolated := h.isolatedServers()
			if len(isolated) == 0 {
				t.Skip("no server is isolated")
			}
			h.heal(rapid.SampledFrom(isolated).Draw(t, "server"))
		},
	}
}

// drawSMConfig draws a case: the simulator's seed, 3 voters or 5 voters and an observer, and two or
// three clients, each placed on a different server.
func drawSMConfig(t *rapid.T) smConfig {
	cfg := smConfig{seed: rapid.Uint64().Draw(t, "seed"), voters: 3}
	if rapid.Bool().Draw(t, "fiveVotersAndAnObserver") {
		cfg.voters, cfg.observers = 5, 1
	}
	servers := make([]int, cfg.voters+cfg.observers)
	for i := range servers {
		servers[i] = i
	}
	order := rapid.Permutation(servers).Draw(t, "placement")
	cfg.placement = order[:rapid.IntRange(2, 3).Draw(t, "clients")]
	return cfg
}

// smRequiredOutcomes are the outcomes a default run must reach, or the generator has lost a path.
// Each comes up a dozen times or more in a default run's ~3000 steps, so that missing one is
// not bad luck. The rarer ones (a multi failing on NODEEXISTS, NOTEMPTY or NOCHILDRENFOREPHEMERALS)
// are only logged here; TestStateMachineScriptedTour reaches them on purpose.
var smRequiredOutcomes = []string{
	"create OK", "create NODEEXISTS", "create NONODE", "create NOCHILDRENFOREPHEMERALS", "create sequential OK",
	"delete OK", "delete NONODE", "delete BADVERSION", "delete NOTEMPTY",
	"setData OK", "setData NONODE", "setData BADVERSION",
	"multi OK", "multi NONODE", "multi BADVERSION", "multi op RUNTIMEINCONSISTENCY",
	"close session with ephemerals",
	"fault crash", "fault restart", "fault leader restarted", "fault isolate", "fault heal",
}

// smCoverageMinimumSteps is how many steps make reaching every required outcome near certain; with
// fewer (-short, or a small -rapid.checks) the coverage is only logged.
const smCoverageMinimumSteps = 2000

func TestStateMachineAgainstReferenceModel(t *testing.T) {
	coverage := smCoverage{}
	rapid.Check(t, func(t *rapid.T) {
		cfg := drawSMConfig(t)
		cfg.coverage = coverage
		coverage["cases"]++
		h, err := newSMHarness(cfg)
		must(t, err)
		t.Repeat(h.actions())
	})
	outcomes := slices.Sorted(maps.Keys(coverage))
	for _, outcome := range outcomes {
		t.Logf("%6d %s", coverage[outcome], outcome)
	}
	if coverage["steps"] < smCoverageMinimumSteps {
		return
	}
	for _, outcome := range smRequiredOutcomes {
		assert.Positive(t, coverage[outcome], "no case reached %q", outcome)
	}
}

// --- Hand-written sequences ------------------------------------------------------------------------

// smStep is one action of a hand-written sequence.
type smStep struct {
	name string
	run  func(h *smHarness) error
}

// runSMScript runs steps as the state machine runs its actions, each followed by the check, and
// returns the first mismatch (naming the step) instead of failing: the tests that expect a failure
// use it, and so does the control run of each.
func runSMScript(cfg smConfig, steps []smStep) error {
	h, err := newSMHarness(cfg)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if err := h.check(); err != nil {
		return fmt.Errorf("before the first step: %w", err)
	}
	for i, step := range steps {
		if err := step.run(h); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, step.name, err)
		}
		if err := h.check(); err != nil {
			return fmt.Errorf("check after step %d (%s): %w", i+1, step.name, err)
		}
	}
	return nil
}

func stepCreate(ci int, path, data string, mode proto.CreateMode) smStep {
	return smStep{fmt.Sprintf("client %d creates %s %v", ci, path, mode),
		func(h *smHarness) error { return h.create(ci, path, []byte(data), mode) }}
}

func stepSetData(ci int, path, data string, version int32) smStep {
	return smStep{fmt.Sprintf("client %d sets %s v%d", ci, path, version),
		func(h *smHarness) error { return h.setData(ci, path, []byte(data), version) }}
}

func stepDelete(ci int, path string, version int32) smStep {
	return smStep{fmt.Sprintf("client %d deletes %s v%d", ci, path, version),
		func(h *smHarness) error { return h.delete(ci, path, version) }}
}

func stepMulti(ci int, ops ...refOp) smStep {
	return smStep{fmt.Sprintf("client %d multi %v", ci, ops), func(h *smHarness) error { return h.multi(ci, ops) }}
}

func stepReads(ci int, path string) smStep {
	return smStep{fmt.Sprintf("client %d reads %s", ci, path), func(h *smHarness) error {
		return errors.Join(h.getData(ci, path), h.exists(ci, path), h.getChildren(ci, path), h.syncRead(ci, path))
	}}
}

func stepReopen(ci, index int) smStep {
	return smStep{fmt.Sprintf("client %d reopens its session on server %d", ci, index+1),
		func(h *smHarness) error { return h.reopen(ci, index) }}
}

func stepCrash(sid int64) smStep {
	return smStep{fmt.Sprintf("crash server %d", sid), func(h *smHarness) error { h.crash(sid); return nil }}
}

func stepRestart(sid int64) smStep {
	return smStep{fmt.Sprintf("restart server %d", sid), func(h *smHarness) error { h.restart(sid); return nil }}
}

func stepRestartLeader() smStep {
	return smStep{"restart the leader", func(h *smHarness) error { return h.restartLeader() }}
}

func stepIsolate(sid int64) smStep {
	return smStep{fmt.Sprintf("isolate server %d", sid), func(h *smHarness) error { h.isolate(sid); return nil }}
}

func stepHeal(sid int64) smStep {
	return smStep{fmt.Sprintf("heal server %d", sid), func(h *smHarness) error { h.heal(sid); return nil }}
}

// TestStateMachineScriptedTour runs every action and fault once, in a fixed order, with the model
// exact throughout: a fixed path through what the random cases reach by chance.
func TestStateMachineScriptedTour(t *testing.T) {
	cfg := smConfig{seed: 7, voters: 3, placement: []int{0, 1, 2}}
	steps := []smStep{
		stepCreate(0, "/a", "1", proto.Persistent),
		stepCreate(1, "/a/e", "", proto.Ephemeral),
		stepCreate(2, "/a/e/k", "x", proto.Persistent), // NOCHILDRENFOREPHEMERALS
		stepCreate(2, "/a/s-", "q", proto.PersistentSequential),
		stepCreate(0, "/a/s-", "r", proto.EphemeralSequential),
		stepSetData(2, "/a", "2", 0),
		stepSetData(2, "/a", "3", 0), // BADVERSION
		stepDelete(0, "/a", -1),      // NOTEMPTY
		stepCrash(1),
		stepMulti(0, refOp{typ: proto.OpCheck, path: "/a", version: 1},
			refOp{typ: proto.OpCreate, path: "/b", data: []byte("m"), mode: proto.Persistent},
			refOp{typ: proto.OpSetData, path: "/b", data: []byte("n"), version: 0}),
		stepRestart(1),
		stepRestartLeader(),
		stepMulti(1, refOp{typ: proto.OpDelete, path: "/b", version: -1},
			refOp{typ: proto.OpCreate, path: "/a/e", mode: proto.Persistent}, // NODEEXISTS fails it all
			refOp{typ: proto.OpSetData, path: "/a", version: -1}),
		stepIsolate(1),
		stepCreate(2, "/c", "while isolated", proto.Persistent),
		stepHeal(1),
		stepReads(1, "/a"),
		stepReads(2, "/missing"),
		stepReopen(1, 0), // its ephemeral /a/e goes with its session
		stepDelete(2, "/c", 0),
		stepReads(0, "/"),
	}
	cfg.coverage = smCoverage{}
	require.NoError(t, runSMScript(cfg, steps), "seed %d", cfg.seed)
	for _, outcome := range []string{"create NOCHILDRENFOREPHEMERALS", "create sequential OK", "setData BADVERSION",
		"delete NOTEMPTY", "multi OK", "multi NODEEXISTS", "multi op RUNTIMEINCONSISTENCY", "close session with ephemerals",
		"fault crash", "fault restart", "fault leader restarted", "fault isolate", "fault heal"} {
		assert.Positive(t, cfg.coverage[outcome], "the tour reached %q", outcome)
	}
}

// TestStateMachineCatchesAWrongModel feeds the comparison a model that is wrong on purpose and
// checks that the very reply it gets wrong is reported; the same sequence passes with the right model.
func TestStateMachineCatchesAWrongModel(t *testing.T) {
	cases := []struct {
		name  string
		flaw  refFlaw
		steps []smStep
		want  string
	}{
		{"setData keeps the version", flawSetDataKeepsVersion, []smStep{
			stepCreate(0, "/a", "1", proto.Persistent),
			stepSetData(1, "/a", "2", -1),
		}, `step 2 (client 1 sets /a v-1): client1 setData /a "2" v-1: stat differs: version=0x1 want 0x0`},
		{"a failed multi reports OK after the failing op", flawMultiFailureReportsOK, []smStep{
			stepCreate(0, "/a", "1", proto.Persistent),
			stepMulti(1, refOp{typ: proto.OpSetData, path: "/a", version: -1},
				refOp{typ: proto.OpCreate, path: "/a", mode: proto.Persistent},
				refOp{typ: proto.OpCheck, path: "/a", version: -1}),
		}, "result 2 is error RUNTIMEINCONSISTENCY, want OK"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := smConfig{seed: 1, voters: 3, placement: []int{0, 1}}
			require.NoError(t, runSMScript(cfg, c.steps), "the right model passes")
			cfg.flaws = c.flaw
			err := runSMScript(cfg, c.steps)
			require.Error(t, err, "the wrong model must be caught")
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestStateMachineFindsBugSwitches replays sequences that the state machine found (and shrank) with a
// real ZooKeeper bug switched on: with the switch the check fails, without it the same sequence
// passes. The simulator's seed is part of each sequence, so the replay is exact.
func TestStateMachineFindsBugSwitches(t *testing.T) {
	cases := []struct {
		bug   zabmodel.Bug
		steps []smStep
		want  string
	}{
		// Server 4, restarted after missing the create of /a, applies /a during its DIFF sync without
		// putting it in its committed log. Once 4 leads, the hole makes it TRUNC the restarted old
		// leader 5 and the observer 6 below /a (their last zxid is beyond its committed log), and
		// their trees lose /a for good.
		{zabmodel.BugZK4925, []smStep{
			stepCrash(1), stepCrash(4),
			stepCreate(0, "/a", "", proto.Persistent),
			stepRestart(4),
			stepRestartLeader(),
		}, "did not settle"},
	}
	for _, c := range cases {
		t.Run(zabmodel.Bugs{}.With(c.bug).String(), func(t *testing.T) {
			cfg := smConfig{seed: 0, voters: 5, observers: 1, placement: []int{0, 1}}
			require.NoError(t, runSMScript(cfg, c.steps), "without the bug the sequence passes")
			cfg.bugs = cfg.bugs.With(c.bug)
			err := runSMScript(cfg, c.steps)
			require.Error(t, err, "the bug must be caught")
			assert.Contains(t, err.Error(), c.want)
			t.Log(err)
		})
	}
}

// TestStateMachineMultiRead compares multiReads with the model: each read's result on its own, a
// missing node an error result among good ones.
func TestStateMachineMultiRead(t *testing.T) {
	cfg := smConfig{seed: 3, voters: 3, placement: []int{0, 1}}
	steps := []smStep{
		stepCreate(0, "/a", "1", proto.Persistent),
		stepCreate(1, "/a/b", "2", proto.Ephemeral),
		{"multiRead", func(h *smHarness) error { return h.multiRead(1, []string{"/", "/a", "/a/b", "/missing"}) }},
		{"multiRead", func(h *smHarness) error { return h.multiRead(0, []string{"/a/b", "/a"}) }},
	}
	require.NoError(t, runSMScript(cfg, steps), "seed %d", cfg.seed)
}

// TestZK4394SwitchLeavesObserversAsJavaDid: 3.8.0's NEWLEADER handling (the ZK-4394 switch) drained
// the pending proposals of followers only; an observer synced by DIFF while proposals are in flight
// still commits them after UPTODATE. An observer that dropped them would stay behind the others.
func TestZK4394SwitchLeavesObserversAsJavaDid(t *testing.T) {
	cfg := smConfig{seed: 0, voters: 5, observers: 1, placement: []int{0, 1}, bugs: zabmodel.Bugs{}.With(zabmodel.BugZK4394)}
	steps := []smStep{
		stepIsolate(6),
		stepReopen(0, 0),
		stepHeal(6),
		stepCreate(1, "/after", "x", proto.Persistent),
	}
	require.NoError(t, runSMScript(cfg, steps))
}
