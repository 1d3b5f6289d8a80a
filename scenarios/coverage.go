package scenarios

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// Coverage is protocol-state feedback for the fuzzer: the set of protocol situations a run's
// servers lived through, rather than the Go lines it executed (a protocol saturates line coverage
// within a few runs, and what finds bugs is reaching a new situation, not a new line). Set
// Options.Coverage to a NewCoverage() and read Features after the run; it only watches, so a run
// observed is the run unobserved (same trace hash).
//
// A situation is a small tuple, hashed to a Feature. The abstraction, in the spirit of Mallory's
// timeline abstractions and of model-guided fuzzing's spec states, is:
//
//   - step: (event kind, role, ZAB phase, source) for every protocol event of every server, where
//     the phase is derived from the events so far (looking, discovery, sync, broadcast, down);
//   - transition: (previous event kind, event kind, role) on one server, the order of its steps;
//   - durable state: at every event that reads or writes durable state (the epoch files, a
//     NEWLEADER ack, a truncation, a snapshot, a restart, a lost tail), the relations (less, equal,
//     greater) between acceptedEpoch and currentEpoch, the epoch of the last logged zxid and
//     currentEpoch, and the last applied and last logged zxids: the relations the epoch and
//     fsync-ordering bugs live in;
//   - truncation depth: how many epochs and how many records (log2) a TRUNC removed;
//   - fault context: each fault (crash, crash point, pause, reset, partition, clog...) with the
//     phase and last step of the server it hit, and the first two steps that server took after it;
//   - crash points reached: each named persistence boundary a server reached, with its phase;
//   - outstanding proposals across servers and clients (coverage_pending.go): a learner leaving
//     while its leader still waits to commit proposals it acknowledged, and what follows; a learner
//     leaving between its NEWLEADER ack and UPTODATE; a session disconnecting, reconnecting and
//     sending requests while its transaction is pending at the leader; and, at every boundary
//     reached, which of those windows were open (siteWindow);
//   - state ahead of the commit point (coverage_ahead.go): a snapshot holding uncommitted
//     transactions, a fault on a server whose tree or snapshot holds transactions no quorum
//     committed and no other server logged (two more site windows), a leader established past
//     another server's log, tree or snapshot, a learner synced while its snapshot is past the
//     leader's log;
//   - counts: how many times a run took each step, in AFL's logarithmic buckets, so that "more of
//     the same" (many elections, many syncs) is also new.
type Coverage struct {
	seen     map[uint64]int // feature hash -> index in features
	features []Feature
	servers  []*serverCoverage // by sid
	steps    []stepCount       // the step features in first-seen order, with their counts
	// stepAt and transitions index the two situations every event has by their small components
	// rather than by hash, because they are looked up on every event of the run (coverage costs
	// about a sixth of a run through maps, measured with simrun fuzz --fresh-percent 100).
	stepAt      [coverageKinds][8][8][8]int32 // kind, role, phase, source -> index in steps + 1
	transitions [coverageKinds][coverageKinds][8]bool
	// sites are the boundary hits an injection can be aimed at (see Site).
	sites []Site
	// pending are the proposals leaders have outstanding, oldest first, and
	// departedNewLeaderAcks how many NEWLEADER acks of departed learners leaders not yet
	// established hold (coverage_pending.go).
	pending               []*pendingProposal
	departedNewLeaderAcks int
	// sessionWrites is each client session's last proposed write (coverage_pending.go).
	sessionWrites map[int64]sessionWrite
	// committedIn is, per epoch, the highest zxid a leader committed in it (coverage_ahead.go).
	committedIn map[int64]int64
	// sessionClients names each session's client application, and writes are the client writes
	// leaders proposed (coverage_pending.go), which the fuzzer's race edits aim at.
	sessionClients map[int64]string
	writes         []WriteSite
}

// Site is an effect boundary that a server reached in a run: the first hit of that boundary since
// the server's role or phase last changed (its first append of a sync, its first NEWLEADER epoch
// write as a follower, its first COMMIT sent as a new leader). An injection armed a nanosecond
// before At on that server lands on exactly that hit (the run is the parent's up to there), so a
// site is a fault that is sure to fire, inside a window the run is known to open. Key names the
// situation (boundary, phase, role, the server's previous step, the site window: see siteWindow)
// and is what the fuzzer counts to know which sites are rare. A boundary's first hit inside each
// window is a site of its own.
type Site struct {
	Server int64
	Point  string
	At     clock.Time
	Key    uint64
}

// maxSites bounds the sites a run keeps: a long run with many elections reaches many, and beyond a
// few thousand they add memory to the corpus and nothing new to aim at.
const maxSites = 4096

// boundaryIndex numbers the effect boundaries, for the per-server sets of boundaries reached in the
// current phase.
var boundaryIndex = func() map[string]int {
	out := map[string]int{}
	for i, name := range crashPointNames {
		out[name] = i
	}
	return out
}()

// coverageKinds bounds the event kinds the arrays index; a kind past it is folded into the last.
const coverageKinds = 32

// Feature is one protocol situation, with where and when a run first reached it.
type Feature struct {
	Hash   uint64
	Name   string
	At     clock.Time
	Server int64 // 0 for a situation of the whole ensemble
	// Count marks a count bucket: known only at the end of the run, with no moment or server. The
	// fuzzer counts them but does not keep an input for them alone (they change with every run's
	// length and would fill the corpus with inputs that only did more of the same).
	Count bool
	// Point is, for an effect boundary reached, the boundary's name: the fuzzer can arm an
	// injection at exactly that boundary of that server.
	Point string
}

type stepCount struct {
	hash  uint64
	name  string
	count int
}

// phase is a server's stage of ZAB, as its events show it.
type phase uint8

const (
	phaseDown phase = iota
	phaseLooking
	phaseDiscovery
	phaseSync
	phaseBroadcast
)

var phaseNames = [...]string{phaseDown: "down", phaseLooking: "looking", phaseDiscovery: "discovery", phaseSync: "sync", phaseBroadcast: "broadcast"}

func (p phase) String() string { return phaseNames[p] }

type serverCoverage struct {
	role                        zabmodel.Role
	phase                       phase
	last                        zabmodel.EventKind
	acceptedEpoch, currentEpoch int64
	lastLogged, lastApplied     int64
	// fault and after follow the steps after a fault: the fault's verb and how many steps have
	// been recorded since (two are).
	fault string
	after []zabmodel.EventKind
	// aimed holds the phase and last step of the server when an action was about to act on it.
	aimed      bool
	aimedPhase phase
	aimedLast  zabmodel.EventKind
	aimedAhead uint64 // its ahead window bits (coverage_ahead.go)
	// history is what the server's disk has lived through so far (historyBits), and
	// lastSnapshot the zxid of its newest snapshot, written or loaded.
	history      uint8
	lastSnapshot int64
	// treeZxid is the last transaction the server's in-memory tree reflects (0 while it is down).
	treeZxid int64
	// reached holds the boundaries (by boundaryIndex) the server hit since its role or phase last
	// changed, per site window (siteWindow), and reachedRole and reachedPhase that role and phase.
	reached      [windowCount][4]uint64
	reachedRole  zabmodel.Role
	reachedPhase phase
	// newLeaderAckEpoch and newLeaderAckTo are the epoch and leader of the learner's last
	// NEWLEADER ack while it still follows that leader; establishedEpoch is, for a leader, the
	// epoch it was last established in, and departedNewLeaderAckers how many learners left after
	// acknowledging its NEWLEADER before it was established.
	newLeaderAckEpoch, newLeaderAckTo int64
	establishedEpoch                  int64
	departedNewLeaderAckers           int
}

// History bits: what a server's disk has lived through in the run. The bugs of the zoo's rarest
// switches live where two of these meet on one server, or on a leader and its learner: a server
// that was synced by SNAP and now leads (snap-log-gap), a TRUNC on a server holding a newer
// snapshot (trunc-snapshot), a truncated learner whose old ACKs its leader still holds
// (stale-ack).
const (
	historyRestarted uint8 = 1 << iota
	historyLostTail
	historyTruncated
	historySnapSynced
	historyLogDeleted
	historySnapshotted
	historyBits = 6
)

var historyNames = [historyBits]string{"restarted", "lost-tail", "truncated", "snap-synced", "log-deleted", "snapshotted"}

func historyString(h uint8) string {
	var parts []string
	for i, name := range historyNames {
		if h&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// historyKinds are the steps at which a server's history is a situation of its own: the steps
// that start or end a role or a sync.
var historyKinds = func() []bool {
	kinds := make([]bool, coverageKinds)
	for _, k := range []zabmodel.EventKind{
		zabmodel.EventElected, zabmodel.EventEpochQuorum, zabmodel.EventNewLeaderAck, zabmodel.EventEstablished,
		zabmodel.EventTruncate, zabmodel.EventServing, zabmodel.EventLearnerSync, zabmodel.EventTreeLoaded,
	} {
		kinds[k] = true
	}
	return kinds
}()

// NewCoverage returns an empty coverage for one run.
func NewCoverage() *Coverage {
	return &Coverage{seen: map[uint64]int{}, sessionWrites: map[int64]sessionWrite{}, committedIn: map[int64]int64{}, sessionClients: map[int64]string{}}
}

// Features returns the situations the run reached, in the order first reached, with the count
// buckets of its steps last (they are known only at the end). It may be called once the run is
// over; calling it again returns the same list.
func (c *Coverage) Features() []Feature {
	out := append([]Feature(nil), c.features...)
	for _, s := range c.steps {
		bucket := countBucket(s.count)
		out = append(out, Feature{Hash: mix(s.hash, 0xc0, uint64(bucket)), Name: fmt.Sprintf("%s x%s", s.name, bucketNames[bucket]), Count: true})
	}
	return out
}

// countBucket is AFL's hit-count bucketing: 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128 and more.
func countBucket(n int) int {
	switch {
	case n <= 3:
		return n
	case n < 128:
		return min(bits.Len(uint(n)), 6) + 1 // 4-7: 4, 8-15: 5, 16-31: 6, 32-127: 7
	}
	return 8
}

var bucketNames = [...]string{"0", "1", "2", "3", "4-7", "8-15", "16-31", "32-127", "128+"}

func (c *Coverage) server(sid int64) *serverCoverage {
	for int64(len(c.servers)) <= sid {
		c.servers = append(c.servers, nil)
	}
	s := c.servers[sid]
	if s == nil {
		s = &serverCoverage{phase: phaseLooking}
		c.servers[sid] = s
	}
	return s
}

// add records a feature; name is built only when the feature is new.
func (c *Coverage) add(hash uint64, at clock.Time, sid int64, name func() string) {
	if _, ok := c.seen[hash]; ok {
		return
	}
	c.seen[hash] = len(c.features)
	c.features = append(c.features, Feature{Hash: hash, Name: name(), At: at, Server: sid})
}

// durableKinds are the steps that read or write durable state, indexed by kind.
var durableKinds = func() []bool {
	kinds := make([]bool, coverageKinds)
	for _, k := range []zabmodel.EventKind{
		zabmodel.EventAcceptedEpoch, zabmodel.EventCurrentEpoch, zabmodel.EventNewLeaderAck,
		zabmodel.EventTruncate, zabmodel.EventTreeLoaded, zabmodel.EventSnapshot,
		zabmodel.EventRestart, zabmodel.EventLost, zabmodel.EventLogDeleted,
		zabmodel.EventEstablished, zabmodel.EventEpochQuorum,
	} {
		kinds[k] = true
	}
	return kinds
}()

// event takes one protocol event (the runner's observer calls it).
func (c *Coverage) event(e zabmodel.Event) {
	s := c.server(e.Server)
	truncated := s.lastLogged
	prevPhase, prevRole := s.phase, s.role
	c.advance(s, e)
	c.pendingEvent(s, prevPhase, prevRole, e)
	c.aheadEvent(s, e)
	role, ph, kind, source := e.Role, s.phase, e.Kind, e.Source

	k, r, src, prev := min(int(kind), coverageKinds-1), int(role)&7, int(source)&7, s.last
	if i := c.stepAt[k][r][ph][src]; i > 0 {
		c.steps[i-1].count++
	} else {
		step := mix(0x01, uint64(kind), uint64(role), uint64(ph), uint64(source))
		c.steps = append(c.steps, stepCount{hash: step, name: fmt.Sprintf("step %s %s %s from=%s", kind, role, ph, source), count: 1})
		c.stepAt[k][r][ph][src] = int32(len(c.steps))
		c.add(step, e.Time, e.Server, func() string { return c.steps[len(c.steps)-1].name })
	}
	if p := min(int(prev), coverageKinds-1); !c.transitions[p][k][r] {
		c.transitions[p][k][r] = true
		c.add(mix(0x02, uint64(prev), uint64(kind), uint64(role)), e.Time, e.Server, func() string {
			return fmt.Sprintf("transition %s -> %s %s", prev, kind, role)
		})
	}
	if kind < zabmodel.EventKind(len(durableKinds)) && durableKinds[kind] {
		a, b, d := relation(s.acceptedEpoch, s.currentEpoch), relation(s.lastLogged>>32, s.currentEpoch), relation(s.lastApplied, s.lastLogged)
		c.add(mix(0x03, uint64(kind), uint64(ph), a, b, d), e.Time, e.Server, func() string {
			return fmt.Sprintf("durable %s %s accepted%scurrent logged-epoch%scurrent applied%slogged", kind, ph, relationNames[a], relationNames[b], relationNames[d])
		})
	}
	if kind == zabmodel.EventTruncate && truncated > e.Zxid {
		epochs, records := uint64(truncated>>32-e.Zxid>>32), uint64(bits.Len64(uint64(truncated-e.Zxid)&0xffffffff))
		c.add(mix(0x04, epochs, records), e.Time, e.Server, func() string {
			return fmt.Sprintf("truncate across %d epochs, 2^%d records", epochs, records)
		})
	}
	if kind == zabmodel.EventTruncate {
		// Where the newest snapshot is against the truncation point: above it, the reloaded
		// tree may hold what the TRUNC removed.
		snapshot := relation(s.lastSnapshot, e.Zxid)
		c.add(mix(0x09, snapshot, uint64(s.history)), e.Time, e.Server, func() string {
			return fmt.Sprintf("truncate with snapshot%spoint after %s", relationNames[snapshot], historyString(s.history))
		})
	}
	if k < len(historyKinds) && historyKinds[k] {
		c.add(mix(0x08, uint64(kind), uint64(role), uint64(s.history)), e.Time, e.Server, func() string {
			return fmt.Sprintf("history %s %s after %s", kind, role, historyString(s.history))
		})
	}
	if kind == zabmodel.EventLearnerSync && e.Learner > 0 {
		// The leader's and the learner's logs as the sync is decided, with what the leader's disk
		// lived through: the DIFF, TRUNC or SNAP a learner gets and the holes a leader's log may
		// have.
		learner := c.server(e.Learner)
		zxids, epochs := relation(learner.lastLogged, s.lastLogged), relation(learner.lastLogged>>32, s.lastLogged>>32)
		c.add(mix(0x0a, zxids, epochs, uint64(s.history), uint64(learner.history)), e.Time, e.Server, func() string {
			return fmt.Sprintf("learner-sync learner%sleader epoch%s leader %s learner %s", relationNames[zxids], relationNames[epochs],
				historyString(s.history), historyString(learner.history))
		})
	}
	if s.fault != "" {
		s.after = append(s.after, kind)
		verb, after := s.fault, append([]zabmodel.EventKind(nil), s.after...)
		c.add(mix(0x05, hashString(verb), uint64(after[0]), uint64(len(after)), uint64(after[len(after)-1])), e.Time, e.Server, func() string {
			return fmt.Sprintf("after %s: %v", verb, after)
		})
		if len(s.after) == 2 {
			s.fault, s.after = "", s.after[:0]
		}
	}
	s.last = kind
}

// advance updates a server's derived state with an event.
func (c *Coverage) advance(s *serverCoverage, e zabmodel.Event) {
	s.role = e.Role
	switch e.Kind {
	case zabmodel.EventCrash:
		s.phase = phaseDown
	case zabmodel.EventRestart, zabmodel.EventStopServing:
		s.phase = phaseLooking
		if e.Kind == zabmodel.EventRestart {
			s.history |= historyRestarted
		}
	case zabmodel.EventElected:
		s.phase = phaseDiscovery
	case zabmodel.EventEpochQuorum, zabmodel.EventTruncate, zabmodel.EventNewLeaderAck:
		s.phase = phaseSync
	case zabmodel.EventTreeLoaded:
		if e.Source == zabmodel.SourceSnap {
			s.phase = phaseSync
			s.history |= historySnapSynced
		}
		s.lastSnapshot = max(s.lastSnapshot, e.Zxid)
	case zabmodel.EventSnapshot:
		s.history |= historySnapshotted
		s.lastSnapshot = max(s.lastSnapshot, e.Zxid)
	case zabmodel.EventLost:
		s.history |= historyLostTail
	case zabmodel.EventLogDeleted:
		s.history |= historyLogDeleted
	case zabmodel.EventServing, zabmodel.EventEstablished:
		s.phase = phaseBroadcast
	case zabmodel.EventAcceptedEpoch:
		s.acceptedEpoch = e.Epoch
	case zabmodel.EventCurrentEpoch:
		s.currentEpoch = e.Epoch
	case zabmodel.EventLog:
		s.lastLogged = e.Zxid
	case zabmodel.EventApply:
		s.lastApplied = e.Zxid
	}
	if e.Kind == zabmodel.EventTruncate {
		s.lastLogged = e.Zxid
		s.history |= historyTruncated
	}
}

// aim notes the state of a server that an action is about to act on: the action itself emits
// events (a crash), and its context is what the server was doing before it.
func (c *Coverage) aim(sid int64) {
	s := c.server(sid)
	s.aimed, s.aimedPhase, s.aimedLast, s.aimedAhead = true, s.phase, s.last, c.aheadWindow(s)
}

// fault records a fault that acted on a server (the runner calls it for each server an action
// changed, after aim, and for each crash point that crashed one), with the phase and last step
// the server had when the fault came.
func (c *Coverage) fault(verb string, sid int64, at clock.Time) {
	s := c.server(sid)
	ph, last, ahead := s.phase, s.last, c.aheadWindow(s)
	if s.aimed {
		ph, last, ahead, s.aimed = s.aimedPhase, s.aimedLast, s.aimedAhead, false
	}
	c.add(mix(0x06, hashString(verb), uint64(ph), uint64(last)), at, sid, func() string {
		return fmt.Sprintf("fault %s in %s after %s", verb, ph, last)
	})
	c.aheadFault(ahead, verb, ph, last, sid, at)
	s.fault, s.after = verb, s.after[:0]
}

// Sites returns the boundary hits of the run an injection can be aimed at, in the order reached.
func (c *Coverage) Sites() []Site { return c.sites }

// crashPoint records that a server reached a named persistence boundary.
func (c *Coverage) crashPoint(sid int64, point string, at clock.Time) {
	s := c.server(sid)
	ph := s.phase
	window := c.siteWindow(sid)
	if i, ok := boundaryIndex[point]; ok && i < 256 && len(c.sites) < maxSites {
		if s.reachedRole != s.role || s.reachedPhase != ph {
			s.reached, s.reachedRole, s.reachedPhase = [windowCount][4]uint64{}, s.role, ph
		}
		if reached := &s.reached[window]; reached[i/64]&(1<<(i%64)) == 0 {
			reached[i/64] |= 1 << (i % 64)
			c.sites = append(c.sites, Site{Server: sid, Point: point, At: at,
				Key: mix(0x0b, uint64(i), uint64(ph), uint64(s.role), uint64(s.last), window)})
		}
	}
	hash := mix(0x07, hashString(point), uint64(ph), window)
	if _, ok := c.seen[hash]; ok {
		return
	}
	c.add(hash, at, sid, func() string { return fmt.Sprintf("reached %s in %s in window %s", point, ph, windowString(window)) })
	c.features[len(c.features)-1].Point = point
}

// relation is 0, 1 or 2 for less, equal, greater.
func relation(a, b int64) uint64 {
	switch {
	case a < b:
		return 0
	case a == b:
		return 1
	}
	return 2
}

var relationNames = [...]string{"<", "=", ">"}

// mix hashes a small tuple (splitmix64 over each word); the first word tags the kind of feature.
func mix(words ...uint64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, w := range words {
		h ^= w + 0x9e3779b97f4a7c15 + h<<6 + h>>2
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
