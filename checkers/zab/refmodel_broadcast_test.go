package zab

import (
	"github.com/zabsim/zabsim/zabmodel"
)

// propose has the leader assign the next zxid to a new transaction, log it, and send it to the
// followers it forwards to.
func (m *refModel) propose() {
	leader := m.leader
	if leader == nil {
		return
	}
	m.counter++
	t := txn{zxid: zabmodel.MakeZxid(m.epoch, m.counter), hash: m.freshHash()}
	m.emit(zabmodel.Event{Kind: zabmodel.EventPropose, Server: leader.sid, Zxid: t.zxid, Hash: t.hash, Epoch: m.epoch})
	m.logRecord(leader, t)
	for _, s := range m.servers {
		if s != leader && s.voter && s.forwarding {
			m.logRecord(s, t)
		}
	}
	m.pending = append(m.pending, t)
}

// commit commits the oldest pending proposal once a quorum of the leader and its followers
// fsynced it; everyone forwarding applies it, observers through INFORM.
func (m *refModel) commit() {
	leader := m.leader
	if leader == nil || len(m.pending) == 0 {
		return
	}
	t := m.pending[0]
	holders := 0
	for _, s := range m.servers {
		if s.voter && s.forwarding && containsSynced(s, t) {
			holders++
		}
	}
	if holders < m.quorum {
		return
	}
	m.pending = m.pending[1:]
	m.emit(zabmodel.Event{Kind: zabmodel.EventCommit, Server: leader.sid, Zxid: t.zxid, Hash: t.hash, Epoch: m.epoch})
	m.apply(leader, t, zabmodel.SourceCommit)
	for _, s := range m.servers {
		if s == leader || !s.forwarding {
			continue
		}
		if !s.voter {
			m.logRecord(s, t)
		}
		m.apply(s, t, zabmodel.SourceCommit)
	}
}

func containsSynced(s *refServer, t txn) bool {
	for _, record := range s.log[:s.synced] {
		if record == t {
			return true
		}
	}
	return false
}

// crash stops a running server: its unsynced log tail is partly lost, its tree is gone. If the
// leader loses its quorum, it steps down.
func (m *refModel) crash(s *refServer) {
	if !s.up {
		return
	}
	kept := m.choose("unsynced records kept", len(s.log)-s.synced+1)
	lost := len(s.log) - s.synced - kept
	m.emit(zabmodel.Event{Kind: zabmodel.EventCrash, Server: s.sid})
	s.log = s.log[:s.synced+kept]
	s.synced = len(s.log)
	last := int64(0)
	if len(s.log) > 0 {
		last = s.log[len(s.log)-1].zxid
	}
	m.emit(zabmodel.Event{Kind: zabmodel.EventLost, Server: s.sid, Zxid: last, Count: lost})
	s.up, s.applied, s.forwarding, s.role = false, nil, false, zabmodel.Looking
	if s == m.leader {
		m.stepDown()
		return
	}
	if m.leader != nil && m.forwardingVoters() < m.quorum {
		m.stepDown()
	}
}

func (m *refModel) forwardingVoters() int {
	n := 0
	for _, s := range m.servers {
		if s.up && s.voter && s.forwarding {
			n++
		}
	}
	return n
}

// stepDown ends the leader's reign: every running server in a role flushes its log, fast-forwards
// its tree to it, and stops serving.
func (m *refModel) stepDown() {
	m.leader, m.pending = nil, nil
	for _, s := range m.servers {
		if !s.up || s.role == zabmodel.Looking {
			continue
		}
		m.fsync(s)
		m.fastForward(s, zabmodel.SourceFastForward)
		m.emit(zabmodel.Event{Kind: zabmodel.EventStopServing, Server: s.sid})
		s.role, s.forwarding = zabmodel.Looking, false
	}
}

// fastForward applies the logged records beyond the tree.
func (m *refModel) fastForward(s *refServer, source zabmodel.Source) {
	last := int64(0)
	if len(s.applied) > 0 {
		last = s.applied[len(s.applied)-1].zxid
	}
	for _, t := range s.log {
		if t.zxid > last {
			m.apply(s, t, source)
		}
	}
}

// restartOrJoin restarts a crashed server from its disk, or lets a running server without a role
// join the established leader.
func (m *refModel) restartOrJoin(s *refServer) {
	if !s.up {
		s.up = true
		m.emit(zabmodel.Event{Kind: zabmodel.EventRestart, Server: s.sid})
		snap, _ := s.restoreSnapshot()
		m.emit(zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: s.sid, Zxid: snap.zxid, Source: zabmodel.SourceStartup})
		s.applied = append([]txn(nil), snap.content...)
		m.fastForward(s, zabmodel.SourceStartup)
		return
	}
	if m.leader == nil || s.role != zabmodel.Looking || !canSync(s, m.leader.applied) {
		return
	}
	m.join(s)
}

// join synchronizes a server with the established leader, as a follower or an observer.
func (m *refModel) join(s *refServer) {
	role := zabmodel.Following
	if s.voter {
		m.round++
		m.emit(zabmodel.Event{Kind: zabmodel.EventVote, Server: s.sid, Leader: s.sid, Zxid: s.lastZxid(),
			Epoch: s.current, Round: m.round})
		m.emit(zabmodel.Event{Kind: zabmodel.EventVote, Server: s.sid, Leader: m.leader.sid,
			Zxid: m.leader.lastZxid(), Epoch: m.epoch, Round: m.round})
	} else {
		role = zabmodel.Observing
	}
	s.role = role
	m.emit(zabmodel.Event{Kind: zabmodel.EventElected, Server: s.sid, Role: role, Leader: m.leader.sid,
		Epoch: m.epoch, Round: m.round})
	if s.accepted < m.epoch {
		s.accepted = m.epoch
		m.emit(zabmodel.Event{Kind: zabmodel.EventAcceptedEpoch, Server: s.sid, Epoch: m.epoch})
	}
	m.synchronize(s, m.epoch)
	m.upToDate(s, m.epoch)
}

// run performs the given number of steps and returns the events.
func (m *refModel) run(steps int) []zabmodel.Event {
	for range steps {
		m.step()
	}
	return m.events
}
