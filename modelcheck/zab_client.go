package modelcheck

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"slices"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The client-visible judges of the ZAB model. The client's calls, replies, watch events and
// connection states, and the transactions as they become committed, are recorded into a
// checkers.Recorder exactly as the sweep's runner records them (scenarios/app.go,
// scenarios/run.go), and every state's history so far is judged by checkers.Run: the
// linearizability of the tree under /k (the zxid-order checker), sequential consistency,
// watches and sessions. Those rules are the ones that apply to a partial history: an operation
// still outstanding is pending (it may or may not take effect), and the one rule that needs the
// end of a run, watch-missed (a live session still holds a watch whose change committed), runs
// only at a settled state where the client is connected to a serving server, when nothing is
// due and so no event can still be on its way. The liveness checker's bounds are the sweep's and
// not the model checker's (its deadlock judge is its own), so it is not applied.

// clientName is the one client's name in the recorded history.
const clientName = "c1"

// watchedPath is the node the client's reads ask about, with a watch: the path of the first write.
const watchedPath = "/k0"

// clientHistory records what the client saw and what became committed.
type clientHistory struct {
	zw       *zabWorld
	rec      *checkers.Recorder
	proposed map[txnKey]proposal
	decoder  proto.Decoder
	session  int64
	err      error // the first misuse the recorder refused: a bug of this driver

	// The session's health as last observed (observeHealth): whether it was healthy, which
	// session, and when.
	healthy       bool
	healthSession int64
	healthSince   clock.Time

	// content digests every record in order with all its arguments (note), so that the digest
	// and the time identify the history judge(false) judges (see ZABModel.passed).
	content hash.Hash
}

// txnKey identifies a transaction: its zxid and its hash (zabmodel.TxnHash).
type txnKey struct {
	zxid int64
	hash uint64
}

func newClientHistory(zw *zabWorld) *clientHistory {
	return &clientHistory{zw: zw, rec: checkers.NewRecorder(), proposed: map[txnKey]proposal{}, content: sha256.New()}
}

// proposal is a proposed transaction, decoded and as its leader encoded it.
type proposal struct {
	entry *proto.TxnEntry
	data  []byte
}

// note folds one record into the content digest: every argument the recorder is given, or what
// determines it, rendered by format.
func (c *clientHistory) note(format string, args ...any) {
	fmt.Fprintf(c.content, format+"\n", args...)
}

func (c *clientHistory) fail(err error) {
	if err != nil && c.err == nil {
		c.err = err
	}
}

// observe keeps a copy of every proposed transaction, for the committed log (the runner's
// cloneTxn: applying a failed multi rewrites it in place).
func (c *clientHistory) observe(e zabmodel.Event) {
	if e.Kind != zabmodel.EventPropose || e.Txn == nil {
		return
	}
	data := e.TxnData
	if data == nil {
		data = proto.Marshal(e.Txn)
	}
	var entry proto.TxnEntry
	c.decoder.Reset(data)
	entry.Decode(&c.decoder)
	err := c.decoder.Finish()
	c.decoder.Reset(nil)
	if err != nil {
		c.fail(fmt.Errorf("a proposed transaction does not round-trip: %w", err))
		return
	}
	c.proposed[txnKey{e.Zxid, e.Hash}] = proposal{entry: &entry, data: slices.Clone(data)}
}

// committed is the ZAB checker's report that a transaction became committed.
func (c *clientHistory) committed(zxid int64, hash uint64) {
	p, ok := c.proposed[txnKey{zxid, hash}]
	if !ok {
		c.fail(fmt.Errorf("transaction %s became committed but no leader proposed it", zabmodel.FormatZxid(zxid)))
		return
	}
	entry := p.entry
	now := c.zw.w.Now()
	c.note("commit %d %d %x", zxid, now, p.data)
	c.fail(c.rec.Commit(*entry, now))
	if entry.Header.Type == proto.OpCloseSession {
		c.fail(c.rec.SessionEnded(entry.Header.ClientID, checkers.SessionEnd{Zxid: zxid, Time: now, Expired: entry.Header.Cxid == 0}))
	}
}

// clientWatcher is the client's default watcher, a value so that the world can be copied.
type clientWatcher struct{ c *clientHistory }

func (w clientWatcher) Process(e client.Event) { w.c.event(e) }

// event is the client's default watcher: watch events and state changes in arrival order.
func (c *clientHistory) event(e client.Event) {
	now := c.zw.w.Now()
	if cl := c.zw.client; cl != nil && cl.SessionID() != 0 && cl.SessionID() != c.session {
		c.session = cl.SessionID()
		c.note("session %d %d", c.session, cl.NegotiatedTimeout())
		c.rec.SessionStarted(c.session, clientName, cl.NegotiatedTimeout())
	}
	if e.Type == proto.EventNone {
		c.note("state %d %d %d", c.session, now, e.State)
		c.rec.State(clientName, c.session, now, e.State)
		return
	}
	c.note("event %d %d %d %q", c.session, now, e.Type, e.Path)
	c.rec.Event(clientName, c.session, now, e.Type, e.Path, -1)
}

// result records an operation's outcome as the runner does (scenarios app.done).
func (c *clientHistory) result(ref checkers.OpRef, code proto.Code, zxid int64, xid int32, session int64, reply checkers.Reply) {
	now := c.zw.w.Now()
	stat := "none"
	if reply.Stat != nil {
		stat = fmt.Sprintf("%+v", *reply.Stat)
	}
	c.note("result %q %d %d %d %d %d %d %q %s", ref.Client, ref.Index, now, code, zxid, xid, session, reply.CreatedPath, stat)
	c.fail(c.rec.Written(ref, session, xid))
	if zxid == 0 && (code == proto.ConnectionLoss || code == proto.SessionExpired || code == proto.AuthFailed) {
		outcome := checkers.OutcomeUnknown
		if xid == 0 {
			outcome = checkers.OutcomeNotApplied
		}
		c.fail(c.rec.Fail(ref, now, code, outcome))
		return
	}
	reply.Err, reply.Zxid = code, zxid
	c.fail(c.rec.Reply(ref, now, reply))
}

// createDone and readDone are the callbacks of the client's writes and reads: values rather than
// closures, so that a world with a request in flight can be copied.
type createDone struct {
	c   *clientHistory
	ref checkers.OpRef
}

func (d createDone) CreateDone(r client.CreateResult) {
	reply := checkers.Reply{CreatedPath: r.Path, Stat: statIfOK(r.Err, r.Stat)}
	d.c.result(d.ref, r.Err, r.Zxid, r.Xid, r.Session, reply)
	d.c.zw.writesDone++
}

type readDone struct {
	c   *clientHistory
	ref checkers.OpRef
}

func (d readDone) StatDone(r client.StatResult) {
	d.c.result(d.ref, r.Err, r.Zxid, r.Xid, r.Session, checkers.Reply{Stat: statIfOK(r.Err, r.Stat)})
	d.c.zw.readsDone++
}

// create issues the client's k-th write.
func (c *clientHistory) create(k int) error {
	cl := c.zw.client
	path := fmt.Sprintf("/k%d", k)
	c.note("create %d %d %d", k, c.zw.w.Now(), cl.SessionID())
	data := []byte{byte(k)}
	ref := c.rec.Call(clientName, c.zw.w.Now(), checkers.Operation{Session: cl.SessionID(), Kind: proto.OpCreate, Path: path, Data: data, Mode: proto.Persistent})
	err := cl.CreateWith(path, data, proto.OpenACLUnsafe, proto.Persistent, createDone{c, ref})
	if err != nil {
		c.note("refused %d", c.zw.w.Now())
		c.fail(c.rec.Fail(ref, c.zw.w.Now(), proto.BadArguments, checkers.OutcomeNotApplied))
	}
	return err
}

// statIfOK is the stat a reply carries: the server's on success, none on an error.
func statIfOK(code proto.Code, stat proto.Stat) *proto.Stat {
	if code != proto.OK {
		return nil
	}
	return &stat
}

// read issues exists(/k0) with a watch: the first write's create fires it.
func (c *clientHistory) read() error {
	cl := c.zw.client
	c.note("read %d %d", c.zw.w.Now(), cl.SessionID())
	ref := c.rec.Call(clientName, c.zw.w.Now(), checkers.Operation{Session: cl.SessionID(), Kind: proto.OpExists, Path: watchedPath, Watch: true})
	err := cl.ExistsWith(watchedPath, cl.DefaultWatcher(), readDone{c, ref})
	if err != nil {
		c.note("refused %d", c.zw.w.Now())
		c.fail(c.rec.Fail(ref, c.zw.w.Now(), proto.BadArguments, checkers.OutcomeNotApplied))
	}
	return err
}

// judge runs the client-visible checkers on the history so far; final says the state is settled
// with the client connected to a serving server, so that watch-missed applies too.
func (c *clientHistory) judge(final bool) *Violation {
	if c.err != nil {
		return &Violation{Invariant: "History", Explanation: "the client's history could not be recorded: " + c.err.Error()}
	}
	now := c.zw.w.Now()
	var key Fingerprint
	if !final {
		// The history is the records in order and the time it ends: two with one digest and one
		// end are one history, and its verdict was the same.
		sum := c.content.Sum(binary.LittleEndian.AppendUint64(nil, uint64(now)))
		key = hashBytes(sum)
		if c.zw.m.historyPassed(key) {
			return nil
		}
	}
	var liveness *checkers.LivenessFacts
	if final {
		liveness = &checkers.LivenessFacts{HealTime: now, LeaderTime: now, Completed: true}
	}
	h := c.rec.Finish(now, liveness)
	report, err := checkers.Run(h, checkers.Options{
		Linearizability: []checkers.LinearizabilityOptions{{Model: checkers.TreeModel, Prefix: "/"}},
	})
	if err != nil {
		return &Violation{Invariant: "History", Explanation: "the client's history is malformed: " + err.Error()}
	}
	results := slices.DeleteFunc(report.Results, func(r checkers.Result) bool { return r.Checker == checkers.CheckerLiveness })
	v := firstViolation(results)
	if v == nil && !final {
		c.zw.m.historyPasses(key)
	}
	return v
}

// observeHealth records the session's health for the wrongful-expiry rule, as the sweep's
// health sampler does (scenarios/health.go), but exactly: it is called at every state, after the
// step's events, and nothing happens in the world between two states but the next step, whose
// first event is the one that moves the clock. So the configuration a state shows is the one
// the world keeps until the next state's time, and a session healthy at a state was healthy over
// that whole interval. The interval from the previous state to this one is recorded if the
// session was healthy at the previous state; then this state is observed. (The warm-up's own
// steps are not observed: the health before the first state is not claimed, which can only
// hide a wrongful expiry, never invent one.)
func (c *clientHistory) observeHealth() {
	now := c.zw.w.Now()
	if c.healthy && now > c.healthSince {
		c.note("healthy %d %d %d", c.healthSession, c.healthSince, now)
		c.fail(c.rec.SessionHealthy(c.healthSession, c.healthSince, now))
	}
	c.healthy = c.session != 0 && c.zw.clientHealthy()
	c.healthSession, c.healthSince = c.session, now
}

// clientHealthy reports whether expiring the client's session now would be wrong, by the sweep's
// rule (scenarios' healthSampler.healthy): its recorded session is the client's, the client is
// connected over exactly one connection to a server that serves as leader, follower or
// observer, and that server is the established leader or follows it. (The model has no pauses
// and no partitions.)
func (zw *zabWorld) clientHealthy() bool {
	cl := zw.client
	if cl.SessionID() != zw.history.session || !cl.State().IsConnected() || !zw.w.IsUp(zw.clientN) {
		return false
	}
	conns := zw.nw.Conns(zw.clientN)
	if len(conns) != 1 {
		return false
	}
	peer, ok := zw.nw.Peer(zw.clientN, conns[0])
	if !ok {
		return false
	}
	sid := int64(slices.Index(zw.nodes, peer) + 1)
	leader, _, ok := zw.ens.Leader()
	if sid == 0 || !ok || !zw.serverHealthy(sid) || !zw.serverHealthy(leader) {
		return false
	}
	return sid == leader || zw.ens.Server(sid).State().Leader == leader
}

func (zw *zabWorld) serverHealthy(sid int64) bool {
	if !zw.w.IsUp(zw.nodes[sid-1]) {
		return false
	}
	st := zw.ens.Server(sid).State()
	return st.Serving && (st.Role == zabmodel.Leading || st.Role == zabmodel.Following || st.Role == zabmodel.Observing)
}

// clientServes reports whether the client is connected to a server that serves.
func (zw *zabWorld) clientServes() bool {
	if !zw.client.State().IsConnected() {
		return false
	}
	return zw.serving()
}
