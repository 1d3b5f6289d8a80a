package zab

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/internal/quorum"
	"github.com/zabsim/zabsim/zabmodel"
)

// ErrConfig marks an invalid Config.
var ErrConfig = errors.New("zab: invalid checker configuration")

// DefaultMaxHistory bounds, by default, the transactions the checker keeps per server history, log
// and snapshot list, and in the committed set.
const DefaultMaxHistory = 1 << 24

// counterLimit is the zxid counter a leader must never propose: ZooKeeper's leader shuts down
// rather than use it, forcing a new epoch (ZOOKEEPER-1277).
const counterLimit = 0xffffffff

// Config describes the ensemble the checker watches.
// Listener is told of each kept violation and each transaction as it becomes committed (see
// Config.OnViolation and Config.OnCommit).
type Listener interface {
	Violated(Violation)
	Committed(zxid int64, hash uint64)
}

type Config struct {
	// Voters are the sids of the participants; a quorum is a majority of them.
	Voters []int64
	// Observers are the sids of the observers, which never count in a quorum.
	Observers []int64
	// InitialZxidCounter mirrors zabmodel.Config.InitialZxidCounter (the testing-only
	// zookeeper.testingonly.initialZxid): a new leader's first proposal then has counter
	// InitialZxidCounter+1 instead of 1, as Leader.lead sets the counter before getNextZxid
	// increments it. Only a quorum leader applies it: with a single voter (a standalone server,
	// ZooKeeperServerMain) it is ignored.
	InitialZxidCounter int64
	// OnViolation, if set, is called with each violation the checker keeps, as it is found.
	OnViolation func(Violation)
	// OnCommit, if set, is called once for each transaction when it becomes committed: by a
	// leader's commit, or as part of an established leader's history (which may hold transactions
	// that no server's log does, only snapshots). A runner uses it to keep the committed log that
	// client-visible checkers replay. Calls may come out of zxid order when an establishment fills a
	// hole.
	OnCommit func(zxid int64, hash uint64)
	// Listener, if set, is told what OnViolation and OnCommit are, after them. It is a value with
	// methods rather than functions, so that a checker inside a world the model checker copies
	// (package modelcheck) holds no closure.
	Listener Listener
	// Stopwatch, if set, reads a host monotonic clock; the checker uses it to estimate the host
	// time it spends, timing one event in every HostTimeSampleEvery (two clock reads per event
	// would cost a tenth of a run's time by themselves). Code inside a simulated world must leave
	// it nil.
	Stopwatch func() time.Duration
	// MaxHistory bounds each server's log, applied history and snapshot list, the committed set
	// and the votes of one election round (DefaultMaxHistory if zero). Exceeding it reports an
	// EventStream violation and stops checking, rather than growing without bound.
	MaxHistory int
}

// Validate reports every field that makes no sense.
func (c Config) Validate() error {
	var problems []string
	if len(c.Voters) == 0 {
		problems = append(problems, "no voters")
	}
	seen := map[int64]bool{}
	for _, sid := range slices.Concat(c.Voters, c.Observers) {
		if sid <= 0 {
			problems = append(problems, fmt.Sprintf("sid %d is not positive", sid))
		}
		if seen[sid] {
			problems = append(problems, fmt.Sprintf("sid %d is listed twice", sid))
		}
		seen[sid] = true
	}
	if c.InitialZxidCounter < 0 || c.InitialZxidCounter >= counterLimit-1 {
		problems = append(problems, fmt.Sprintf("initial zxid counter %#x is outside [0, %#x)",
			c.InitialZxidCounter, counterLimit-1))
	}
	if c.MaxHistory < 0 {
		problems = append(problems, fmt.Sprintf("max history %d is negative", c.MaxHistory))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrConfig, strings.Join(problems, "; "))
	}
	return nil
}

// Checker consumes an ensemble's events and reports the invariants they break. It implements
// zabmodel.Observer. It is not safe for concurrent use; a world calls it from its one goroutine.
type Checker struct {
	config  Config
	servers map[int64]*server
	// bySid holds the same servers indexed by sid, for the sids below maxIndexedSid (every
	// ensemble zabsim builds): one lookup per event is cheaper in a slice than in a map.
	bySid      []*server
	voterSids  []int64
	voters     []*server
	quorum     int
	maxHistory int

	// proposals maps every proposed transaction to the epoch of the leader that proposed it.
	proposals proposalIndex
	// committedOrder holds the committed transactions sorted by zxid (at most one per zxid), and
	// committedStamp changes whenever a transaction is inserted anywhere but at its end (which
	// invalidates cursors into it).
	committedOrder []txn
	committedStamp uint64

	epochQuorumBy map[int64]int64
	establishedBy map[int64]establishment
	generations   uint64

	current         zabmodel.Event
	violations      []Violation
	violationCounts []int64
	unknownSids     map[int64]bool
	halted          bool

	events       int64
	eventsByKind []int64
	first, last  clock.Time
	hostTime     time.Duration
	// sampleCountdown counts the events until the next one whose host time is measured.
	sampleCountdown int
}

// The checker is what an ensemble's Config.Observer takes.
var _ zabmodel.Observer = (*Checker)(nil)

// establishment records which server, in which incarnation, established an epoch.
type establishment struct {
	sid         int64
	incarnation int
}

// New returns a checker for the ensemble described by config.
func New(config Config) (*Checker, error) {
	if err := config.Validate(); err != nil {
		return nil, err
	}
	c := &Checker{
		config:          config,
		servers:         map[int64]*server{},
		voterSids:       slices.Sorted(slices.Values(config.Voters)),
		quorum:          quorum.Majority(len(config.Voters)).Size(),
		maxHistory:      config.MaxHistory,
		proposals:       newProposalIndex(),
		epochQuorumBy:   map[int64]int64{},
		establishedBy:   map[int64]establishment{},
		violationCounts: make([]int64, len(invariantOrder)),
		unknownSids:     map[int64]bool{},
		eventsByKind:    make([]int64, int(zabmodel.EventLearnerSync)+1),
		sampleCountdown: HostTimeSampleEvery,
	}
	if c.maxHistory == 0 {
		c.maxHistory = DefaultMaxHistory
	}
	for _, sid := range config.Voters {
		c.servers[sid] = newServer(sid, true)
	}
	for _, sid := range config.Observers {
		c.servers[sid] = newServer(sid, false)
	}
	for _, sid := range c.voterSids {
		c.voters = append(c.voters, c.servers[sid])
	}
	for sid, s := range c.servers { // determinism:ok each server lands at its own index
		if sid < maxIndexedSid {
			if int(sid) >= len(c.bySid) {
				c.bySid = append(c.bySid, make([]*server, int(sid)+1-len(c.bySid))...)
			}
			c.bySid[sid] = s
		}
	}
	return c, nil
}

// Check runs a fresh checker over a recorded event stream and returns what it found.
func Check(config Config, events []zabmodel.Event) ([]Violation, error) {
	c, err := New(config)
	if err != nil {
		return nil, err
	}
	for _, e := range events {
		c.Observe(e)
	}
	return c.Violations(), nil
}

// Violations returns the violations found so far, the first of each invariant, in the order found.
func (c *Checker) Violations() []Violation { return slices.Clone(c.violations) }

// Failed reports whether any invariant was violated.
func (c *Checker) Failed() bool { return len(c.violations) > 0 }

// Observe implements zabmodel.Observer: it updates the model with e and checks the invariants e
// can break.
func (c *Checker) Observe(e zabmodel.Event) {
	c.sampleCountdown--
	if c.config.Stopwatch == nil || c.sampleCountdown > 0 {
		c.observe(e)
		return
	}
	c.sampleCountdown = HostTimeSampleEvery
	start := c.config.Stopwatch()
	c.observe(e)
	end := c.config.Stopwatch()
	// The interval also holds one reading of the clock, which on a virtual machine can cost as
	// much as a cheap event; a reading taken at once after it measures that cost, to take off.
	overhead := c.config.Stopwatch() - end
	c.hostTime += max(0, end-start-overhead) * HostTimeSampleEvery
}

// HostTimeSampleEvery is how many events the host-time estimate stands for per timed event. Event
// kinds interleave finely in a run (each proposal brings its logs, acks and commits on every
// server), so a fixed stride samples them in proportion.
const HostTimeSampleEvery = 16

func (c *Checker) observe(e zabmodel.Event) {
	c.countEvent(e)
	if c.halted {
		return
	}
	c.current = e
	s, ok := c.server(e.Server)
	if !ok {
		c.reportUnknownServer(e)
		return
	}
	c.resolveMonotonic(s, e)
	c.dispatch(s, e)
	c.enforceBudget(s)
}

func (c *Checker) countEvent(e zabmodel.Event) {
	if c.events == 0 {
		c.first = e.Time
	}
	c.events++
	c.last = e.Time
	if int(e.Kind) < len(c.eventsByKind) {
		c.eventsByKind[e.Kind]++
	}
}

func (c *Checker) reportUnknownServer(e zabmodel.Event) {
	if c.unknownSids[e.Server] {
		return
	}
	c.unknownSids[e.Server] = true
	c.report(EventStream, finding{servers: []int64{e.Server}},
		"An event came from sid %d, which the checker's Config lists neither as a voter nor as an "+
			"observer; its events are ignored. Pass the ensemble's sids in zab.Config (voters %v, "+
			"observers %v).", e.Server, c.config.Voters, c.config.Observers)
}

func (c *Checker) dispatch(s *server, e zabmodel.Event) {
	switch e.Kind {
	case zabmodel.EventVote:
		c.onVote(s, e)
	case zabmodel.EventElected:
		c.onElected(s, e)
	case zabmodel.EventAcceptedEpoch:
		s.acceptedEpoch = e.Epoch
	case zabmodel.EventCurrentEpoch:
		c.onCurrentEpoch(s, e)
	case zabmodel.EventEpochQuorum:
		c.onEpochQuorum(s, e)
	case zabmodel.EventNewLeaderAck:
		c.onNewLeaderAck(s, e)
	case zabmodel.EventEstablished:
		c.onEstablished(s, e)
	case zabmodel.EventPropose:
		c.onPropose(s, e)
	case zabmodel.EventLog:
		c.onLog(s, e)
	case zabmodel.EventFsync:
		c.onFsync(s, e)
	case zabmodel.EventAck:
		// An ACK follows the fsync that covers it; the fsync already made the record durable.
	case zabmodel.EventCommit:
		c.onCommit(s, e)
	case zabmodel.EventApply:
		c.onApply(s, e)
	default:
		c.dispatchStorage(s, e)
	}
}

func (c *Checker) dispatchStorage(s *server, e zabmodel.Event) {
	switch e.Kind {
	case zabmodel.EventTruncate:
		c.onTruncate(s, e)
	case zabmodel.EventLost:
		c.onLost(s, e)
	case zabmodel.EventLogDeleted:
		c.cutLog(s, 0, "deleted its log after a SNAP")
	case zabmodel.EventTreeLoaded:
		c.onTreeLoaded(s, e)
	case zabmodel.EventSnapshot:
		c.onSnapshot(s, e)
	case zabmodel.EventServing:
		c.onServing(s, e)
	case zabmodel.EventStopServing:
		// A leader that stopped serving has left its role: it no longer broadcasts, and no
		// learner's connection can reach it as a leader any more (see boundLeader). Its next
		// EventElected says what it becomes.
		s.established = false
		if s.role == zabmodel.Leading {
			s.role = zabmodel.Looking
		}
	case zabmodel.EventCrash:
		c.onCrash(s)
	case zabmodel.EventRestart:
		c.onRestart(s)
	case zabmodel.EventLearnerSync:
		if e.Source == zabmodel.SourceSnap {
			c.onSnapStreamed(s, e)
		} else {
			c.onLearnerSync(s, e)
		}
	case zabmodel.EventDigestMismatch:
		if s.excusedDigestMismatch(e.Zxid) {
			return // The fuzzy part of a SNAP (see fuzzyWindow).
		}
		c.report(DigestMismatch, finding{servers: []int64{s.sid}, zxids: []int64{e.Zxid}},
			"Server %d's tree digest after applying %s is %#x, but the leader computed %#x for the same "+
				"zxid: the two trees differ although they applied the same transactions, so some "+
				"transaction was applied differently or an earlier one was missed or applied twice. "+
				"Compare the servers' applied histories up to %s.",
			s.sid, zx(e.Zxid), e.Digest, e.Hash, zx(e.Zxid))
	case zabmodel.EventTxnThrew:
		how := "while applying it"
		if e.Source == zabmodel.SourceStartup {
			how = "while replaying its log at startup, so the server cannot start"
		}
		c.report(TxnThrew, finding{servers: []int64{s.sid}, zxids: []int64{e.Zxid}},
			"Server %d's DataTree.processTxn threw an unchecked exception on the committed transaction %s "+
				"%s (the trace's apply line says which): a transaction every server applied without "+
				"error cannot be applied on this one, whose tree therefore differs from the others'.",
			s.sid, zx(e.Zxid), how)
	default:
		c.report(EventStream, finding{servers: []int64{s.sid}},
			"Server %d reported an event of unknown kind %d; the checker ignores it.", s.sid, e.Kind)
	}
}

// enforceBudget stops checking once a history outgrows the configured bound, so that a runaway run
// ends as a reported outcome instead of exhausting memory.
func (c *Checker) enforceBudget(s *server) {
	size := max(len(s.log), len(s.applied), len(s.snapshots), len(c.committedOrder))
	if size <= c.maxHistory {
		return
	}
	c.report(EventStream, finding{servers: []int64{s.sid}},
		"The checker's budget of %d transactions per history was exceeded (server %d holds %d log "+
			"records, %d applied transactions and %d snapshots; %d transactions are committed). "+
			"Checking stops here; raise zab.Config.MaxHistory or shorten the run.",
		c.maxHistory, s.sid, len(s.log), len(s.applied), len(s.snapshots), len(c.committedOrder))
	c.halted = true
}

// maxIndexedSid bounds the sids the checker finds by index rather than in its map.
const maxIndexedSid = 1 << 10

// server returns the server with this sid, if the configuration names it.
func (c *Checker) server(sid int64) (*server, bool) {
	if sid >= 0 && sid < int64(len(c.bySid)) {
		s := c.bySid[sid]
		return s, s != nil
	}
	if sid < maxIndexedSid {
		return nil, false
	}
	s, ok := c.servers[sid]
	return s, ok
}

// proposerEpoch returns the epoch of the leader that proposed t, if t was proposed.
func (c *Checker) proposerEpoch(t txn) (int64, bool) { return c.proposals.get(t) }

// committedHash returns the hash of the transaction committed at zxid, if one is.
func (c *Checker) committedHash(zxid int64) (uint64, bool) {
	if i, found := searchZxid(c.committedOrder, zxid); found {
		return c.committedOrder[i].hash, true
	}
	return 0, false
}

// isCommitted reports whether t is the committed transaction at its zxid.
func (c *Checker) isCommitted(t txn) bool {
	hash, ok := c.committedHash(t.zxid)
	return ok && hash == t.hash
}
