package zabmodel_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers/zab"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// These are the failure scenarios of issue 4: a leader crash in each phase of ZAB (discovery,
// synchronization, broadcast), a partition that isolates the leader, a minority partition, and a
// crash of the whole ensemble, each for 3, 5 and 7 voters. Clients write through every server
// while the faults happen. Every event of every run goes to the streaming ZAB invariant checker
// (checkers/zab), and each scenario then asserts its outcome: who led which epoch, that epochs
// only grew, that every server converged to the same tree, and that every create a client saw
// acknowledged with OK is present on every server, read back through a client of that server.

// scenarioTickTime shortens ZooKeeper's 2 s tick so that failure detection (syncLimit ticks) takes
// 2.5 s of virtual time instead of 10 s; the protocol is the same, and the runs stay short.
const scenarioTickTime = 500 * clock.Millisecond

// The writers' load: each keeps up to writeWindow creates outstanding, tops the window up every
// writeInterval, and stops after writesPerWriterMax creates, so that a run's work is bounded.
const (
	writeInterval      = 50 * clock.Millisecond
	writeWindow        = 2
	writesPerWriterMax = 2000
)

// scenario is a watched cluster whose events also feed the ZAB checker and the scenario's
// triggers, which inject a fault at a chosen protocol step, and whose clients write on every server.
type scenario struct {
	*watched
	seed     uint64
	checker  *zab.Checker
	triggers []func(zabmodel.Event) bool
	writers  []*loadWriter
}

func newScenario(t *testing.T, seed uint64, cfg zabmodel.Config) *scenario {
	t.Helper()
	if cfg.TickTime == 0 {
		cfg.TickTime = scenarioTickTime
	}
	full := cfg.WithDefaults()
	checker, err := zab.New(zab.Config{Voters: full.VoterSids(), Observers: full.Sids()[full.Voters:]})
	require.NoError(t, err)
	s := &scenario{watched: &watched{}, seed: seed, checker: checker}
	cfg.Observer = zabmodel.ObserverFunc(s.observe)
	s.cluster = newCluster(t, seed, cfg)
	return s
}

// observe keeps the event, has the checker judge it, then offers it to the triggers; a trigger
// that returns true has fired and is dropped.
func (s *scenario) observe(e zabmodel.Event) {
	s.events = append(s.events, e)
	s.checker.Observe(e)
	pending := s.triggers
	s.triggers = nil
	for _, fire := range pending {
		if !fire(e) {
			s.triggers = append(s.triggers, fire)
		}
	}
}

// when installs a trigger.
func (s *scenario) when(fire func(zabmodel.Event) bool) { s.triggers = append(s.triggers, fire) }

// crashSoon crashes server sid at the current instant, right after the event being handled: an
// Observer must not modify servers from inside its callback, so the crash is an event of its own.
func (s *scenario) crashSoon(sid int64) {
	node := s.e.Server(sid).Node()
	s.w.After(0, func() { s.w.Crash(node) })
}

func (s *scenario) crash(sids ...int64) {
	for _, sid := range sids {
		s.w.Crash(s.e.Server(sid).Node())
	}
}

func (s *scenario) restart(sids ...int64) {
	for _, sid := range sids {
		s.w.Restart(s.e.Server(sid).Node())
	}
}

// runUntil runs in steps of 50 ms until done holds, for at most limit of virtual time.
func (s *scenario) runUntil(limit clock.Duration, what string, done func() bool) {
	s.t.Helper()
	for waited := clock.Duration(0); !done(); waited += 50 * clock.Millisecond {
		require.Less(s.t, waited, limit, "seed %d: %s within %v", s.seed, what, limit)
		s.run(50 * clock.Millisecond)
	}
}

// epoch returns the epoch of the established leader.
func (s *scenario) epoch() int64 {
	s.t.Helper()
	_, epoch, ok := s.e.Leader()
	require.True(s.t, ok, "seed %d: an established leader", s.seed)
	return epoch
}

// followers returns the voters other than leader, in sid order.
func (s *scenario) followers(leader int64) []int64 {
	var out []int64
	for _, sid := range s.e.Config().VoterSids() {
		if sid != leader {
			out = append(out, sid)
		}
	}
	return out
}

// established returns, in the order they happened, the epochs established and who established
// each.
func (s *scenario) established() (epochs, leaders []int64) {
	for _, e := range s.events {
		if e.Kind == zabmodel.EventEstablished {
			epochs = append(epochs, e.Epoch)
			leaders = append(leaders, e.Server)
		}
	}
	return epochs, leaders
}

// wasEstablished reports whether sid established epoch.
func (s *scenario) wasEstablished(sid, epoch int64) bool {
	epochs, leaders := s.established()
	for i := range epochs {
		if epochs[i] == epoch && leaders[i] == sid {
			return true
		}
	}
	return false
}

// loadWriter keeps creates outstanding through a client pinned to one server, each a new child of its
// own directory, and records every reply.
type loadWriter struct {
	s           *scenario
	sid         int64
	cl          *client.Client
	dir         string
	issued      int
	outstanding int
	stopped     bool
	acked       []ackedWrite
	// unknown counts the creates answered with an error: CONNECTIONLOSS or SESSIONEXPIRED leave
	// their outcome unknown.
	unknown int
}

// ackedWrite is a create a client saw answered with OK.
type ackedWrite struct {
	name string
	zxid int64
	at   clock.Time
}

// startWriters creates a directory per server, then a writer per server, pinned to it.
func (s *scenario) startWriters() {
	s.t.Helper()
	setup := s.client("setup", s.e.Nodes())
	s.run(2 * clock.Second)
	created := 0
	for _, srv := range s.e.Servers() {
		require.NoError(s.t, setup.Create(fmt.Sprintf("/w%d", srv.Sid()), nil, proto.OpenACLUnsafe, proto.Persistent,
			func(r client.CreateResult) {
				require.Equal(s.t, proto.OK, r.Err, "seed %d: create %s", s.seed, r.Path)
				created++
			}))
	}
	s.run(2 * clock.Second)
	require.Equal(s.t, len(s.e.Servers()), created, "seed %d: every directory created", s.seed)
	require.NoError(s.t, setup.Close(nil))
	for _, srv := range s.e.Servers() {
		wr := &loadWriter{s: s, sid: srv.Sid(), dir: fmt.Sprintf("/w%d", srv.Sid())}
		wr.cl = s.client(fmt.Sprintf("writer%d", srv.Sid()), []sim.NodeID{srv.Node()})
		s.writers = append(s.writers, wr)
	}
	s.run(2 * clock.Second)
	for _, wr := range s.writers {
		require.True(s.t, wr.cl.State().IsConnected(), "seed %d: writer %d connected", s.seed, wr.sid)
		wr.tick()
	}
}

// tick tops the writer's window up while its client is connected, and comes back after
// writeInterval.
func (wr *loadWriter) tick() {
	if wr.stopped || !wr.cl.State().IsAlive() {
		return
	}
	for wr.cl.State().IsConnected() && wr.outstanding < writeWindow && wr.issued < writesPerWriterMax {
		name := fmt.Sprintf("n%04d", wr.issued)
		err := wr.cl.Create(wr.dir+"/"+name, []byte(name), proto.OpenACLUnsafe, proto.Persistent,
			func(r client.CreateResult) { wr.replied(name, r) })
		if err != nil {
			wr.s.t.Errorf("seed %d: writer %d refused a create: %v", wr.s.seed, wr.sid, err)
			wr.stopped = true
			return
		}
		wr.issued++
		wr.outstanding++
	}
	wr.s.w.AfterFunc(wr.cl.Node(), writeInterval, wr.tick)
}

func (wr *loadWriter) replied(name string, r client.CreateResult) {
	wr.outstanding--
	if r.Err != proto.OK {
		// CONNECTIONLOSS and SESSIONEXPIRED leave the outcome unknown: the create may or may not
		// have been committed, so it is neither required nor forbidden afterwards.
		wr.unknown++
		return
	}
	wr.acked = append(wr.acked, ackedWrite{name: name, zxid: r.Zxid, at: wr.s.w.Now()})
}

// inFlight returns how many writers have a create outstanding.
func (s *scenario) inFlight() int {
	n := 0
	for _, wr := range s.writers {
		if wr.outstanding > 0 {
			n++
		}
	}
	return n
}

// ackedSince counts the creates acknowledged at or after from, in epoch (any epoch if 0), by the
// writers pinned to the given servers (every writer if none are given).
func (s *scenario) ackedSince(from clock.Time, epoch int64, sids ...int64) int {
	n := 0
	for _, wr := range s.writers {
		if len(sids) > 0 && !slices.Contains(sids, wr.sid) {
			continue
		}
		for _, a := range wr.acked {
			if a.at >= from && (epoch == 0 || zabmodel.EpochOf(a.zxid) == epoch) {
				n++
			}
		}
	}
	return n
}

// stopWriters stops the load, waits until every create has its answer and closes the sessions.
func (s *scenario) stopWriters() {
	s.t.Helper()
	for _, wr := range s.writers {
		wr.stopped = true
	}
	s.runUntil(20*clock.Second, "every create answered", func() bool { return s.inFlight() == 0 })
	for _, wr := range s.writers {
		if wr.cl.State().IsAlive() {
			require.NoError(s.t, wr.cl.Close(nil))
		}
	}
	s.run(2 * clock.Second)
}

// judge ends a scenario: the load stops, every server must serve the same tree, hold every
// acknowledged create, and have broken no ZAB invariant; established epochs must have grown, one
// leader each. It returns the final leader and epoch.
func (s *scenario) judge() (leader, epoch int64) {
	s.t.Helper()
	s.stopWriters()
	s.converged()
	s.verifyWrites()
	epochs, leaders := s.established()
	for i := 1; i < len(epochs); i++ {
		assert.Greater(s.t, epochs[i], epochs[i-1], "seed %d: established epochs grow (leaders %v of epochs %v)",
			s.seed, leaders, epochs)
	}
	s.assertNoViolation()
	leader, epoch, ok := s.e.Leader()
	require.True(s.t, ok, "seed %d: an established leader at the end", s.seed)
	require.NotEmpty(s.t, epochs)
	assert.Equal(s.t, epochs[len(epochs)-1], epoch, "seed %d: the last established epoch is led", s.seed)
	assert.Equal(s.t, leaders[len(leaders)-1], leader, "seed %d: by the server that established it", s.seed)
	return leader, epoch
}

func (s *scenario) assertNoViolation() {
	s.t.Helper()
	for _, v := range s.checker.Violations() {
		s.t.Errorf("seed %d: ZAB invariant broken: %s", s.seed, v)
	}
	assert.False(s.t, s.checker.Failed(), "seed %d: %s", s.seed, s.checker.Summary())
}

// verifyWrites reads every writer's directory back through a client of each server: every create
// acknowledged with OK must be there, and nothing that no writer issued. Each writer's OK replies
// carry increasing zxids: a session's writes are applied in its order.
func (s *scenario) verifyWrites() {
	s.t.Helper()
	total := 0
	for _, wr := range s.writers {
		total += len(wr.acked)
		for i := 1; i < len(wr.acked); i++ {
			assert.Greater(s.t, wr.acked[i].zxid, wr.acked[i-1].zxid, "seed %d: writer %d's acknowledged zxids", s.seed, wr.sid)
		}
	}
	require.Positive(s.t, total, "seed %d: some creates were acknowledged", s.seed)
	unknown := 0
	for _, wr := range s.writers {
		unknown += wr.unknown
	}
	s.t.Logf("seed %d: %d creates acknowledged, %d of unknown outcome", s.seed, total, unknown)
	listings := s.readChildren()
	for i, srv := range s.e.Servers() {
		for _, wr := range s.writers {
			s.compareListing(srv.Sid(), wr, listings[i][wr.dir])
		}
	}
}

// compareListing checks one server's listing of one writer's directory.
func (s *scenario) compareListing(sid int64, wr *loadWriter, children []string) {
	missing, unknown := wr.compare(children)
	assert.Empty(s.t, unknown, "seed %d: server %d holds children of %s that writer %d never issued", s.seed, sid, wr.dir, wr.sid)
	assert.Zero(s.t, missing, "seed %d: server %d lacks %d of the %d creates acknowledged to writer %d",
		s.seed, sid, missing, len(wr.acked), wr.sid)
}

// compare returns how many of the writer's acknowledged creates a listing of its directory lacks,
// and the children in it that the writer never issued.
func (wr *loadWriter) compare(children []string) (missing int, unknown []string) {
	present := map[string]bool{}
	for _, name := range children {
		present[name] = true
		var number int
		if _, err := fmt.Sscanf(name, "n%04d", &number); err != nil || number >= wr.issued {
			unknown = append(unknown, name)
		}
	}
	for _, a := range wr.acked {
		if !present[a.name] {
			missing++
		}
	}
	return missing, unknown
}

// readChildren lists every writer's directory through a new client pinned to each server, and
// returns the listings by server (in sid order) and directory.
func (s *scenario) readChildren() []map[string][]string {
	s.t.Helper()
	servers := s.e.Servers()
	readers := make([]*client.Client, len(servers))
	for i, srv := range servers {
		readers[i] = s.client(fmt.Sprintf("reader%d", srv.Sid()), []sim.NodeID{srv.Node()})
	}
	s.run(2 * clock.Second)
	out := make([]map[string][]string, len(servers))
	for i, srv := range servers {
		require.True(s.t, readers[i].State().IsConnected(), "seed %d: a reader of server %d connected", s.seed, srv.Sid())
		out[i] = map[string][]string{}
		for _, wr := range s.writers {
			listing, sid, dir := out[i], srv.Sid(), wr.dir
			require.NoError(s.t, readers[i].GetChildren(dir, nil, func(r client.ChildrenResult) {
				assert.Equal(s.t, proto.OK, r.Err, "seed %d: list %s on server %d", s.seed, dir, sid)
				listing[dir] = r.Children
			}))
		}
	}
	s.run(clock.Second)
	for i, srv := range servers {
		require.Len(s.t, out[i], len(s.writers), "seed %d: every directory listed on server %d", s.seed, srv.Sid())
		require.NoError(s.t, readers[i].Close(nil))
	}
	return out
}

var scenarioVoters = []int{3, 5, 7}

// TestScenarioLeaderCrashDuringBroadcast crashes the leader at one of its proposals, while every
// writer has creates outstanding: the proposal just made, and any other not yet committed, is in
// flight. A new leader in a new epoch must keep everything acknowledged and serve writes again.
func TestScenarioLeaderCrashDuringBroadcast(t *testing.T) {
	for _, voters := range scenarioVoters {
		t.Run(fmt.Sprintf("voters=%d", voters), func(t *testing.T) {
			t.Parallel()
			s := newScenario(t, uint64(400+voters), zabmodel.Config{Voters: voters})
			old := s.leader()
			oldEpoch := s.epoch()
			s.startWriters()
			s.run(clock.Second)
			var crashedAt clock.Time
			s.when(func(e zabmodel.Event) bool {
				if e.Kind != zabmodel.EventPropose || e.Server != old || s.inFlight() < len(s.writers) {
					return false
				}
				crashedAt = e.Time
				s.crashSoon(old)
				return true
			})
			s.runUntil(5*clock.Second, "a proposal with every writer in flight", func() bool { return crashedAt != 0 })
			s.runUntil(10*clock.Second, "a new leader", func() bool { sid, _, ok := s.e.Leader(); return ok && sid != old })
			newLeader, newEpoch, _ := s.e.Leader()
			s.run(2 * clock.Second)
			s.restart(old)
			s.run(3 * clock.Second)
			assert.Positive(t, s.ackedSince(crashedAt, newEpoch), "seed %d: the new leader commits writes", s.seed)
			leader, epoch := s.judge()
			assert.NotEqual(t, old, newLeader, "seed %d", s.seed)
			assert.Greater(t, newEpoch, oldEpoch, "seed %d", s.seed)
			assert.Equal(t, newLeader, leader, "seed %d: the restarted leader follows", s.seed)
			assert.Equal(t, newEpoch, epoch, "seed %d: no election after the restart", s.seed)
		})
	}
}

// syncCrash is where TestScenarioLeaderCrashDuringSync crashes the new leader.
type syncCrash struct {
	name string
	// snap configures a committed-log window too small for the lag and no txn-log sync, so that
	// the lagging followers get a SNAP instead of a DIFF.
	snap bool
}

var syncCrashes = []syncCrash{
	// The DIFF's proposals were persisted and the learner's NEWLEADER ACK is on its way: the
	// leader crashes before it can count it, so the learner holds the new epoch's currentEpoch
	// and history with no established leader.
	{name: "diff-after-newleader-ack"},
	// The learner loaded the leader's snapshot into memory but has not made it durable (that
	// happens at NEWLEADER): its tree is ahead of its disk when the leader goes.
	{name: "snap-loaded", snap: true},
}

// syncCrashRun is the outcome of runSyncCrash.
type syncCrashRun struct {
	old, synced   int64   // the first leader, and the leader crashed while syncing
	syncedEpoch   int64   // the epoch it was synchronizing
	laggers       []int64 // the followers that were down and needed the sync
	learnerServed bool    // whether the learner that triggered the crash was serving then
	diffTxns      int     // how many txns the DIFF brought the learner before its NEWLEADER ACK
}

// runSyncCrash takes half the followers down while the others commit a few hundred creates, then
// the leader, and brings the laggards back at once: the remaining history holders alone are no
// quorum, so the next leader must synchronize a laggard to establish itself, and it crashes at the
// moment c names. The first leader comes back half a second later (with 3 voters nobody else could
// form a quorum), the crashed one two seconds after it.
func runSyncCrash(t *testing.T, voters int, c syncCrash, bugs zabmodel.Bugs) (*scenario, syncCrashRun) {
	cfg := zabmodel.Config{Voters: voters, Bugs: bugs}
	if c.snap {
		cfg.CommitLogCount, cfg.SnapshotSizeFactor = 5, -1
	} else {
		// Seven writers commit more than the default window of 500 txns while the laggards are
		// down; a larger window keeps the sync a DIFF from the committed log.
		cfg.CommitLogCount = 2000
	}
	s := newScenario(t, uint64(500+voters), cfg)
	var r syncCrashRun
	r.old = s.leader()
	s.startWriters()
	s.run(clock.Second)
	r.laggers = s.followers(r.old)[:voters/2]
	s.crash(r.laggers...)
	s.run(2 * clock.Second)
	restarted := 0
	s.when(func(e zabmodel.Event) bool {
		if !slices.Contains(r.laggers, e.Server) {
			return false
		}
		switch {
		case !c.snap && e.Kind == zabmodel.EventNewLeaderAck:
			r.synced, r.syncedEpoch = e.Leader, e.Epoch
			r.diffTxns = len(syncApplies(s.watched, restarted, e.Server))
		case c.snap && e.Kind == zabmodel.EventTreeLoaded && e.Source == zabmodel.SourceSnap:
			r.synced = s.e.Server(e.Server).State().Leader
			r.syncedEpoch = s.e.Server(r.synced).State().AcceptedEpoch
		default:
			return false
		}
		r.learnerServed = s.e.Server(e.Server).State().Serving
		s.crashSoon(r.synced)
		return true
	})
	s.crash(r.old)
	restarted = len(s.events)
	s.restart(r.laggers...)
	s.runUntil(20*clock.Second, "a laggard in sync", func() bool { return r.synced != 0 })
	s.run(500 * clock.Millisecond)
	s.restart(r.old)
	s.run(2 * clock.Second)
	s.restart(r.synced)
	s.run(3 * clock.Second)
	return s, r
}

// TestScenarioLeaderCrashDuringSync crashes a new leader while it synchronizes laggards (by DIFF
// or SNAP). No epoch it was synchronizing may lose what the old epoch committed.
func TestScenarioLeaderCrashDuringSync(t *testing.T) {
	for _, c := range syncCrashes {
		for _, voters := range scenarioVoters {
			t.Run(fmt.Sprintf("%s/voters=%d", c.name, voters), func(t *testing.T) {
				t.Parallel()
				s, r := runSyncCrash(t, voters, c, zabmodel.Bugs{})
				require.NotZero(t, r.synced, "seed %d: the crash fired", s.seed)
				assert.NotEqual(t, r.old, r.synced, "seed %d: a history holder leads the sync", s.seed)
				assert.NotContains(t, r.laggers, r.synced, "seed %d", s.seed)
				assert.False(t, r.learnerServed, "seed %d: the learner was still synchronizing", s.seed)
				if !c.snap {
					assert.GreaterOrEqual(t, r.diffTxns, 100, "seed %d: a DIFF of many txns", s.seed)
				}
				leader, epoch := s.judge()
				assert.Greater(t, epoch, r.syncedEpoch, "seed %d: a later epoch than the interrupted one", s.seed)
				assert.NotEqual(t, r.synced, leader, "seed %d", s.seed)
			})
		}
	}
}

// TestScenarioLeaderCrashDuringSyncReachesZK3911 runs the DIFF scenario with learners that
// acknowledge NEWLEADER before their DIFF is durable (ZOOKEEPER-3911, ZOOKEEPER-4646): the checker
// must report it, which shows that the scenario reaches the window those bugs lose data in.
func TestScenarioLeaderCrashDuringSyncReachesZK3911(t *testing.T) {
	for _, bug := range []zabmodel.Bug{zabmodel.BugZK3911, zabmodel.BugZK4646} {
		bugs := zabmodel.Bugs{}.With(bug)
		t.Run(bugs.String(), func(t *testing.T) {
			t.Parallel()
			s, r := runSyncCrash(t, 3, syncCrashes[0], bugs)
			require.NotZero(t, r.synced, "seed %d: the crash fired", s.seed)
			var found []zab.Invariant
			for _, v := range s.checker.Violations() {
				found = append(found, v.Invariant)
				t.Log(v)
			}
			assert.Contains(t, found, zab.ProcessConsistency, "seed %d: the early NEWLEADER ACK is caught", s.seed)
			if bug != zabmodel.BugZK3911 {
				return
			}
			// ZOOKEEPER-3911 loses data here: the laggard acknowledged NEWLEADER and wrote
			// currentEpoch 2 without its DIFF, so its vote beats the first leader's in the next
			// election and its TRUNC erases creates that clients saw acknowledged.
			assert.Contains(t, found, zab.CommittedLogDurability, "seed %d", s.seed)
			s.stopWriters()
			lost := 0
			for _, listing := range s.readChildren() {
				for _, wr := range s.writers {
					missing, _ := wr.compare(listing[wr.dir])
					lost += missing
				}
			}
			assert.Positive(t, lost, "seed %d: acknowledged creates are gone", s.seed)
			t.Logf("seed %d: %d acknowledged creates missing across the servers", s.seed, lost)
		})
	}
}

// discoveryCrash is where TestScenarioLeaderCrashDuringDiscovery crashes the prospective leader.
type discoveryCrash struct {
	name string
	// event, if set, is the prospective leader's event after which it crashes; otherwise it
	// crashes at the crash point, between writing an epoch file's temporary copy and renaming it.
	event zabmodel.EventKind
	point string
	// quorumAccepted says whether a quorum of followers has accepted the new epoch by then.
	quorumAccepted bool
}

var discoveryCrashes = []discoveryCrash{
	// A quorum connected and the leader is persisting the epoch it fixed; no follower has been
	// told it.
	{name: "accepted-epoch-rename", point: "epoch-file-renamed:acceptedEpoch"},
	// The epoch is persisted and LEADERINFO has left for the quorum that connected.
	{name: "accepted-epoch", event: zabmodel.EventAcceptedEpoch, quorumAccepted: true},
	// The quorum's ACKEPOCHs arrived; the leader is persisting currentEpoch.
	{name: "current-epoch-rename", point: "epoch-file-renamed:currentEpoch", quorumAccepted: true},
	// The quorum's ACKEPOCHs arrived; synchronization has just started.
	{name: "epoch-quorum", event: zabmodel.EventEpochQuorum, quorumAccepted: true},
}

// discoveryCrashRun is what runDiscoveryCrash saw.
type discoveryCrashRun struct {
	old, oldEpoch int64 // the first leader and its epoch
	prospective   int64 // the server elected next
	crashed       int64 // the server crashed during discovery
	crashedEpoch  int64 // the epoch it had fixed
}

// runDiscoveryCrash crashes the leader, then the server elected next at c. The first leader comes
// back half a second later; the crashed one only once another server established itself, so that
// the next epoch is decided without it.
func runDiscoveryCrash(t *testing.T, voters int, c discoveryCrash) (*scenario, discoveryCrashRun) {
	s := newScenario(t, uint64(600+voters), zabmodel.Config{Voters: voters})
	var r discoveryCrashRun
	r.old = s.leader()
	r.oldEpoch = s.epoch()
	s.startWriters()
	s.run(clock.Second)
	s.armDiscoveryCrash(c, &r)
	s.crash(r.old)
	s.runUntil(10*clock.Second, "the prospective leader's crash", func() bool { return r.crashed != 0 })
	if c.point != "" {
		// The crash left the temporary copy of the epoch file, holding the epoch being written.
		tmp, ok := s.e.Server(r.crashed).Disk().ReadFile(c.point[len("epoch-file-renamed:"):] + ".tmp")
		require.True(t, ok, "seed %d: the crash left the temporary epoch file", s.seed)
		_, err := fmt.Sscan(string(tmp), &r.crashedEpoch)
		require.NoError(t, err)
	}
	s.run(500 * clock.Millisecond)
	s.restart(r.old)
	s.runUntil(10*clock.Second, "a new leader", func() bool { _, epoch, ok := s.e.Leader(); return ok && epoch > r.oldEpoch })
	s.restart(r.crashed)
	s.run(3 * clock.Second)
	return s, r
}

// armDiscoveryCrash arms the crash of c: the server that next decides to lead crashes at c's
// event or crash point.
func (s *scenario) armDiscoveryCrash(c discoveryCrash, r *discoveryCrashRun) {
	s.when(func(e zabmodel.Event) bool {
		if e.Kind == zabmodel.EventElected && e.Leader == e.Server {
			r.prospective = e.Server
		}
		return r.prospective != 0
	})
	s.when(func(e zabmodel.Event) bool {
		if r.crashed != 0 || r.prospective != e.Server {
			return r.crashed != 0
		}
		if e.Kind == zabmodel.EventAcceptedEpoch {
			r.crashedEpoch = e.Epoch
		}
		if c.event == 0 || e.Kind != c.event {
			return false
		}
		r.crashed = e.Server
		s.crashSoon(e.Server)
		return true
	})
	if c.point != "" {
		s.e.SetCrashHook(func(sid int64, point string) bool {
			if r.crashed != 0 || sid != r.prospective || point != c.point {
				return false
			}
			r.crashed = sid
			return true
		})
	}
}

// TestScenarioLeaderCrashDuringDiscovery crashes the leader, then the server elected next before
// it establishes itself, at a step of discovery. It must never establish the epoch it fixed; if a
// quorum accepted that epoch, the next leader (elected without it) must take a higher one.
func TestScenarioLeaderCrashDuringDiscovery(t *testing.T) {
	for _, c := range discoveryCrashes {
		for _, voters := range scenarioVoters {
			t.Run(fmt.Sprintf("%s/voters=%d", c.name, voters), func(t *testing.T) {
				t.Parallel()
				s, r := runDiscoveryCrash(t, voters, c)
				leader, epoch := s.judge()
				assert.Equal(t, r.prospective, r.crashed, "seed %d: the crash took the prospective leader", s.seed)
				assert.Greater(t, r.crashedEpoch, r.oldEpoch, "seed %d: it had fixed a new epoch", s.seed)
				assert.False(t, s.wasEstablished(r.crashed, r.crashedEpoch), "seed %d: it never established epoch %d", s.seed, r.crashedEpoch)
				assert.Greater(t, epoch, r.oldEpoch, "seed %d", s.seed)
				next := s.firstEstablishedAfter(r.oldEpoch)
				if c.quorumAccepted {
					// Any quorum without the crashed server holds one of the followers that
					// accepted its epoch, and a new epoch exceeds every accepted one.
					assert.Greater(t, next, r.crashedEpoch, "seed %d: a quorum accepted epoch %d", s.seed, r.crashedEpoch)
				} else {
					// Nobody else accepted it: the next leader, elected without the crashed
					// server, takes the same epoch number, which was never established.
					assert.Equal(t, r.crashedEpoch, next, "seed %d: epoch %d is taken again", s.seed, r.crashedEpoch)
				}
				t.Logf("seed %d: epoch %d (first after the crash: %d) led by %d; the crashed prospective leader %d had fixed epoch %d",
					s.seed, epoch, next, leader, r.crashed, r.crashedEpoch)
			})
		}
	}
}

// firstEstablishedAfter returns the first epoch established after epoch, or 0.
func (s *scenario) firstEstablishedAfter(epoch int64) int64 {
	epochs, _ := s.established()
	for _, e := range epochs {
		if e > epoch {
			return e
		}
	}
	return 0
}

// partitionGrace is how long after a partition a reply may still report a commit decided before
// it: the leader's own fsync can complete a quorum whose follower ACKs arrived just before the cut,
// and the COMMIT and the reply are then already on their way.
const partitionGrace = 50 * clock.Millisecond

// cutOff partitions the given servers from the other servers. Clients are in no group: they keep
// reaching every server, so that the writers pinned to the cut-off servers keep sending to them.
func (s *scenario) cutOff(sids []int64) {
	var inside, outside []sim.NodeID
	for _, srv := range s.e.Servers() {
		if slices.Contains(sids, srv.Sid()) {
			inside = append(inside, srv.Node())
		} else {
			outside = append(outside, srv.Node())
		}
	}
	s.nw.Partition(inside, outside)
}

// commitsBy counts the commits server sid decided in [from, to).
func (s *scenario) commitsBy(sid int64, from, to clock.Time) int {
	n := 0
	for _, e := range s.events {
		if e.Kind == zabmodel.EventCommit && e.Server == sid && e.Time >= from && e.Time < to {
			n++
		}
	}
	return n
}

// TestScenarioPartitionIsolatesTheLeader cuts the leader off from every other server while clients
// write through all of them: the leader must commit nothing more, the majority must elect a new
// leader in a higher epoch and go on committing, and after the heal the old leader must follow.
func TestScenarioPartitionIsolatesTheLeader(t *testing.T) {
	for _, voters := range scenarioVoters {
		t.Run(fmt.Sprintf("voters=%d", voters), func(t *testing.T) {
			t.Parallel()
			s := newScenario(t, uint64(700+voters), zabmodel.Config{Voters: voters})
			old := s.leader()
			oldEpoch := s.epoch()
			s.startWriters()
			s.run(clock.Second)
			cut := s.w.Now()
			s.cutOff([]int64{old})
			s.runUntil(10*clock.Second, "a leader on the majority side", func() bool { sid, _, ok := s.e.Leader(); return ok && sid != old })
			newLeader, newEpoch, _ := s.e.Leader()
			s.run(4 * clock.Second)
			healed := s.w.Now()
			assert.NotEqual(t, zabmodel.Leading, s.e.Server(old).State().Role, "seed %d: the isolated leader stepped down", s.seed)
			assert.Zero(t, s.commitsBy(old, cut.Add(partitionGrace), healed), "seed %d: the isolated leader committed alone", s.seed)
			assert.Zero(t, s.ackedSince(cut.Add(partitionGrace), 0, old), "seed %d: its clients saw no write succeed", s.seed)
			assert.Positive(t, s.ackedSince(cut, newEpoch), "seed %d: the majority commits in epoch %d", s.seed, newEpoch)
			s.nw.Heal()
			s.run(3 * clock.Second)
			leader, epoch := s.judge()
			assert.Greater(t, newEpoch, oldEpoch, "seed %d", s.seed)
			assert.Equal(t, newLeader, leader, "seed %d: the healed leader follows", s.seed)
			assert.Equal(t, newEpoch, epoch, "seed %d", s.seed)
		})
	}
}

// TestScenarioMinorityPartition cuts as many followers as can be spared (one of three, two of five,
// three of seven) off from the rest: the leader keeps its epoch and goes on committing, the cut-off
// followers stop serving, and after the heal they rejoin the same epoch.
func TestScenarioMinorityPartition(t *testing.T) {
	for _, voters := range scenarioVoters {
		t.Run(fmt.Sprintf("voters=%d", voters), func(t *testing.T) {
			t.Parallel()
			s := newScenario(t, uint64(800+voters), zabmodel.Config{Voters: voters})
			leader := s.leader()
			epoch := s.epoch()
			s.startWriters()
			s.run(clock.Second)
			minority := s.followers(leader)[:voters/2]
			cut := s.w.Now()
			s.cutOff(minority)
			s.run(5 * clock.Second)
			healed := s.w.Now()
			sid, nowEpoch, ok := s.e.Leader()
			require.True(t, ok, "seed %d: a leader during the partition", s.seed)
			assert.Equal(t, leader, sid, "seed %d: the leader kept its quorum", s.seed)
			assert.Equal(t, epoch, nowEpoch, "seed %d", s.seed)
			for _, f := range minority {
				assert.False(t, s.e.Server(f).State().Serving, "seed %d: cut-off follower %d stopped serving", s.seed, f)
			}
			assert.Zero(t, s.ackedSince(cut.Add(partitionGrace), 0, minority...), "seed %d: no write succeeded on the minority side", s.seed)
			assert.Positive(t, s.ackedSince(cut.Add(3*clock.Second), epoch), "seed %d: the majority keeps committing", s.seed)
			s.nw.Heal()
			s.run(3 * clock.Second)
			finalLeader, finalEpoch := s.judge()
			assert.Equal(t, leader, finalLeader, "seed %d", s.seed)
			assert.Equal(t, epoch, finalEpoch, "seed %d: the minority rejoined the epoch", s.seed)
			epochs, _ := s.established()
			assert.Len(t, epochs, 1, "seed %d: no other leader was established", s.seed)
			t.Logf("seed %d: %d creates acknowledged during the partition", s.seed, s.ackedSince(cut, 0)-s.ackedSince(healed, 0))
		})
	}
}

// TestScenarioWholeEnsembleCrash crashes every server at once, at one of the leader's proposals
// with every writer in flight, and restarts them all a second later. Unsynced log tails may be
// lost (the fault model's lost unsynced writes), but nothing a client saw acknowledged.
func TestScenarioWholeEnsembleCrash(t *testing.T) {
	configs := []zabmodel.Config{{Voters: 3, Observers: 1}, {Voters: 5}, {Voters: 7}}
	for _, cfg := range configs {
		t.Run(fmt.Sprintf("voters=%d,observers=%d", cfg.Voters, cfg.Observers), func(t *testing.T) {
			t.Parallel()
			s := newScenario(t, uint64(900+cfg.Voters), cfg)
			old := s.leader()
			oldEpoch := s.epoch()
			s.startWriters()
			s.run(clock.Second)
			crashed, unsynced := false, 0
			s.when(func(e zabmodel.Event) bool {
				if e.Kind != zabmodel.EventLog || e.Server != old || s.inFlight() < len(s.writers) {
					return false
				}
				unsynced = s.e.Server(old).Disk().Unsynced()
				s.crashSoon(old)
				for _, sid := range s.e.Config().Sids() {
					if sid != old {
						s.crashSoon(sid)
					}
				}
				crashed = true
				return true
			})
			s.runUntil(5*clock.Second, "a leader's log append with every writer in flight", func() bool { return crashed })
			acked := s.ackedSince(0, 0)
			s.run(clock.Second)
			for _, srv := range s.e.Servers() {
				s.restart(srv.Sid())
			}
			s.runUntil(10*clock.Second, "a leader after the restart", func() bool { _, _, ok := s.e.Leader(); return ok })
			s.run(3 * clock.Second)
			_, epoch := s.judge()
			assert.Greater(t, epoch, oldEpoch, "seed %d: a new epoch after the restart", s.seed)
			assert.Positive(t, acked, "seed %d: creates were acknowledged before the crash", s.seed)
			if cfg.Observers > 0 {
				assert.Equal(t, zabmodel.Observing, s.e.Server(int64(cfg.Voters+1)).State().Role, "seed %d", s.seed)
			}
			// How much of an unsynced tail a crash keeps is the world's choice (the operating
			// system may have written some of it), so only the tail's existence is certain.
			assert.Positive(t, unsynced, "seed %d: the leader's log had an unsynced tail at the crash", s.seed)
			t.Logf("seed %d: %d acknowledged before the crash; unsynced tails lost: %v", s.seed, acked,
				s.since(0, 0, zabmodel.EventLost))
		})
	}
}
