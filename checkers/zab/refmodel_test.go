package zab

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// refModel is a tiny reference implementation of correct ZAB at the level of the checker's
// events: elections that pick the most up-to-date server of a quorum, discovery and
// synchronization that copy the leader's history (DIFF, TRUNC or SNAP, each durable before the
// NEWLEADER ACK), broadcast with quorum acknowledgements, snapshots, crashes that lose unsynced
// log tails, and restarts that replay the disk. Each step is atomic, which keeps it small and
// correct by construction; the checker must accept every stream it produces.
//
// It is written independently of the checker (its own logs, histories and snapshot choice), so
// that the property test compares two implementations of the same definitions.
type refModel struct {
	servers    []*refServer
	voters     int
	quorum     int
	now        clock.Time
	events     []zabmodel.Event
	leader     *refServer
	epoch      int64
	counter    int64
	pending    []txn // proposed by the current leader and not yet committed, in zxid order
	round      int64
	nextHash   uint64
	choose     func(what string, n int) int
	syncedDiff []int // indexes of EventFsync events that made a DIFF durable just before a voter's ACK
}

type refServer struct {
	sid        int64
	voter      bool
	up         bool
	log        []txn
	synced     int
	applied    []txn
	snapshots  []refSnapshot
	accepted   int64
	current    int64
	role       zabmodel.Role
	forwarding bool // synchronized with the current leader and receiving its broadcast
}

type refSnapshot struct {
	zxid    int64
	content []txn
}

const refInitialCounter = 0

func newRefModel(voters, observers int, choose func(what string, n int) int) *refModel {
	// The reference model keeps its own arithmetic for the quorum (QuorumMaj: more than half, so
	// half rounded down plus one), independent of internal/quorum, which the checker under test uses.
	m := &refModel{voters: voters, quorum: voters/2 + 1, choose: choose, nextHash: 0x9e3779b97f4a7c15}
	for i := range voters + observers {
		m.servers = append(m.servers, &refServer{sid: int64(i + 1), voter: i < voters, up: true})
	}
	return m
}

func (m *refModel) config() Config {
	var c Config
	for _, s := range m.servers {
		if s.voter {
			c.Voters = append(c.Voters, s.sid)
		} else {
			c.Observers = append(c.Observers, s.sid)
		}
	}
	c.InitialZxidCounter = refInitialCounter
	return c
}

func (m *refModel) emit(e zabmodel.Event) int {
	m.now = m.now.Add(clock.Millisecond)
	e.Time = m.now
	m.events = append(m.events, e)
	return len(m.events) - 1
}

func (m *refModel) freshHash() uint64 {
	m.nextHash = m.nextHash*6364136223846793005 + 1442695040888963407
	return m.nextHash
}

// history is the server's applied history followed by its logged records beyond it.
func (s *refServer) history() []txn {
	out := slices.Clone(s.applied)
	var last int64
	if len(s.applied) > 0 {
		last = s.applied[len(s.applied)-1].zxid
	}
	for _, t := range s.log {
		if t.zxid > last {
			out = append(out, t)
		}
	}
	return out
}

// lastTxnZxid is the zxid of a history's last transaction, 0 if it is empty.
func lastTxnZxid(history []txn) int64 {
	if len(history) == 0 {
		return 0
	}
	return history[len(history)-1].zxid
}

func (s *refServer) lastZxid() int64 {
	h := s.history()
	if len(h) == 0 {
		return 0
	}
	return h[len(h)-1].zxid
}

// restoreSnapshot is the snapshot a restart loads: the highest zxid, the latest among equals.
func (s *refServer) restoreSnapshot() (refSnapshot, bool) {
	best := -1
	for i, snap := range s.snapshots {
		if best < 0 || snap.zxid >= s.snapshots[best].zxid {
			best = i
		}
	}
	if best < 0 {
		return refSnapshot{}, false
	}
	return s.snapshots[best], true
}

func (m *refModel) apply(s *refServer, t txn, source zabmodel.Source) {
	s.applied = append(s.applied, t)
	m.emit(zabmodel.Event{Kind: zabmodel.EventApply, Server: s.sid, Zxid: t.zxid, Hash: t.hash, Source: source})
}

func (m *refModel) logRecord(s *refServer, t txn) {
	if n := len(s.log); n > 0 && s.log[n-1].zxid >= t.zxid {
		panic(fmt.Sprintf("reference model: server %d logs %#x after %#x", s.sid, t.zxid, s.log[n-1].zxid))
	}
	s.log = append(s.log, t)
	m.emit(zabmodel.Event{Kind: zabmodel.EventLog, Server: s.sid, Zxid: t.zxid, Hash: t.hash})
}

// fsync makes the whole log durable and returns the index of the event, or -1 if nothing was
// unsynced. A follower acknowledges the pending proposals the fsync covered.
func (m *refModel) fsync(s *refServer) int {
	if s.synced == len(s.log) {
		return -1
	}
	before := s.synced
	s.synced = len(s.log)
	index := m.emit(zabmodel.Event{Kind: zabmodel.EventFsync, Server: s.sid, Count: s.synced,
		Zxid: s.log[s.synced-1].zxid})
	if s.forwarding && s.voter && s != m.leader {
		for _, t := range s.log[before:] {
			if slices.Contains(m.pending, t) {
				m.emit(zabmodel.Event{Kind: zabmodel.EventAck, Server: s.sid, Zxid: t.zxid})
			}
		}
	}
	return index
}

func (m *refModel) snapshot(s *refServer) {
	zxid := int64(0)
	if len(s.applied) > 0 {
		zxid = s.applied[len(s.applied)-1].zxid
	}
	s.snapshots = append(s.snapshots, refSnapshot{zxid: zxid, content: slices.Clone(s.applied)})
	m.emit(zabmodel.Event{Kind: zabmodel.EventSnapshot, Server: s.sid, Zxid: zxid})
}
