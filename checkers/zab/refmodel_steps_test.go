package zab

import (
	"slices"

	"github.com/zabsim/zabsim/zabmodel"
)

// actionWeights sets how often each action is tried, in percent: broadcast dominates, faults and
// elections are rarer, as in a real run.
var actionWeights = []struct {
	weight int
	run    func(m *refModel)
}{
	{5, func(m *refModel) { m.elect() }},
	{30, func(m *refModel) { m.propose() }},
	{20, func(m *refModel) { m.fsync(m.servers[m.choose("fsync server", len(m.servers))]) }},
	{20, func(m *refModel) { m.commit() }},
	{5, func(m *refModel) {
		if m.leader != nil && m.choose("crash the leader", 2) == 0 {
			m.crash(m.leader)
			return
		}
		m.crash(m.servers[m.choose("crash server", len(m.servers))])
	}},
	{12, func(m *refModel) { m.restartOrJoin(m.servers[m.choose("restart server", len(m.servers))]) }},
	{8, func(m *refModel) {
		if s := m.servers[m.choose("snapshot server", len(m.servers))]; s.up && s.forwarding {
			m.snapshot(s)
		}
	}},
}

// step runs one action chosen by the model's chooser; an action whose precondition does not hold
// does nothing.
func (m *refModel) step() {
	roll := m.choose("action", 100)
	for _, action := range actionWeights {
		if roll < action.weight {
			action.run(m)
			return
		}
		roll -= action.weight
	}
}

// elect runs an election, discovery and synchronization in a quorum of running voters, if there
// is no leader: the most up-to-date member (currentEpoch, then last zxid, then sid) leads.
func (m *refModel) elect() {
	if m.leader != nil {
		return
	}
	var quorum []*refServer
	for _, s := range m.servers {
		if s.voter && s.up && (len(quorum) < m.quorum || m.choose("extra voter", 2) == 0) {
			quorum = append(quorum, s)
		}
	}
	if len(quorum) < m.quorum {
		return
	}
	winner := slices.MaxFunc(quorum, func(a, b *refServer) int {
		if a.current != b.current {
			return cmpInt(a.current, b.current)
		}
		if a.lastZxid() != b.lastZxid() {
			return cmpInt(a.lastZxid(), b.lastZxid())
		}
		return cmpInt(a.sid, b.sid)
	})
	quorum = slices.DeleteFunc(quorum, func(s *refServer) bool { return s != winner && !canSync(s, winner.applied) })
	if len(quorum) < m.quorum {
		return
	}
	m.round++
	for _, s := range quorum {
		m.emit(zabmodel.Event{Kind: zabmodel.EventVote, Server: s.sid, Leader: s.sid, Zxid: s.lastZxid(),
			Epoch: s.current, Round: m.round})
		if s != winner {
			m.emit(zabmodel.Event{Kind: zabmodel.EventVote, Server: s.sid, Leader: winner.sid,
				Zxid: winner.lastZxid(), Epoch: winner.current, Round: m.round})
		}
	}
	m.discover(winner, quorum)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// discover runs discovery and synchronization with the quorum and establishes the leader.
func (m *refModel) discover(leader *refServer, quorum []*refServer) {
	for _, s := range quorum {
		role := zabmodel.Following
		if s == leader {
			role = zabmodel.Leading
		}
		s.role = role
		m.emit(zabmodel.Event{Kind: zabmodel.EventElected, Server: s.sid, Role: role, Leader: leader.sid,
			Epoch: leader.current, Round: m.round})
	}
	epoch := int64(0)
	for _, s := range quorum {
		epoch = max(epoch, s.accepted)
	}
	epoch++
	for _, s := range quorum {
		s.accepted = epoch
		m.emit(zabmodel.Event{Kind: zabmodel.EventAcceptedEpoch, Server: s.sid, Epoch: epoch})
	}
	m.snapshot(leader) // Leader.lead loads the database and takes a clean snapshot.
	m.emit(zabmodel.Event{Kind: zabmodel.EventEpochQuorum, Server: leader.sid, Epoch: epoch})
	leader.current = epoch
	m.emit(zabmodel.Event{Kind: zabmodel.EventCurrentEpoch, Server: leader.sid, Epoch: epoch})
	m.leader, m.epoch, m.counter, m.pending = leader, epoch, refInitialCounter, nil
	for _, s := range quorum {
		if s != leader {
			m.synchronize(s, epoch)
		}
	}
	// The leader reports that it commits its whole history, as Leader.startZkServer does.
	m.emit(zabmodel.Event{Kind: zabmodel.EventEstablished, Server: leader.sid, Epoch: epoch, Through: lastTxnZxid(leader.history())})
	leader.forwarding = true
	m.emit(zabmodel.Event{Kind: zabmodel.EventServing, Server: leader.sid, Role: zabmodel.Leading, Epoch: epoch})
	for _, s := range quorum {
		if s != leader {
			m.upToDate(s, epoch)
		}
	}
}

// synchronize brings a learner to the leader's applied history, durably, and acknowledges
// NEWLEADER.
func (m *refModel) synchronize(s *refServer, epoch int64) {
	target := m.leader.applied
	mine := s.history()
	if !slices.Equal(mine, s.applied) {
		panic("reference model: a syncing learner's tree is behind its log")
	}
	common := 0
	for common < len(mine) && common < len(target) && mine[common] == target[common] {
		common++
	}
	switch {
	case common == len(mine) && m.choose("diff or snap", 3) > 0:
		m.syncDiff(s, target[common:])
	case common < len(mine) && m.truncate(s, target):
	default:
		m.syncSnap(s, target)
	}
	s.current = epoch
	m.emit(zabmodel.Event{Kind: zabmodel.EventCurrentEpoch, Server: s.sid, Epoch: epoch})
	m.emit(zabmodel.Event{Kind: zabmodel.EventNewLeaderAck, Server: s.sid, Leader: m.leader.sid, Epoch: epoch})
}

// syncDiff logs, applies and fsyncs the leader's transactions the learner lacks.
func (m *refModel) syncDiff(s *refServer, missing []txn) {
	for _, t := range missing {
		m.logRecord(s, t)
	}
	for _, t := range missing {
		m.apply(s, t, zabmodel.SourceSync)
	}
	if index := m.fsync(s); index >= 0 && s.voter && len(missing) > 0 {
		m.syncedDiff = append(m.syncedDiff, index)
	}
}

// truncate cuts the learner's divergent tail at its last logged record that the leader also has,
// reloads from snapshot and log, applies the rest of the leader's history in memory and snapshots
// it. It reports false, doing nothing, if that cannot rebuild a prefix of the leader's history.
func (m *refModel) truncate(s *refServer, target []txn) bool {
	if !truncateFits(s, target) {
		return false
	}
	keep := -1
	for i, t := range s.log {
		if slices.Contains(target, t) {
			keep = i
		}
	}
	reloaded, snapZxid := s.reload(s.log[:keep+1])
	s.log = s.log[:keep+1]
	s.synced = min(s.synced, len(s.log))
	m.emit(zabmodel.Event{Kind: zabmodel.EventTruncate, Server: s.sid, Zxid: s.log[keep].zxid})
	s.applied = nil
	m.emit(zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: s.sid, Zxid: snapZxid, Source: zabmodel.SourceTruncate})
	snapshotLength := len(reloaded) - countAbove(s.log, snapZxid)
	s.applied = slices.Clone(reloaded[:snapshotLength])
	for _, t := range reloaded[snapshotLength:] {
		m.apply(s, t, zabmodel.SourceTruncate)
	}
	for _, t := range target[len(reloaded):] {
		m.apply(s, t, zabmodel.SourceSync)
	}
	m.snapshot(s)
	return true
}

// reload returns what restoring from disk gives with the given log: the restore snapshot's content
// followed by the logged records above its zxid, and the snapshot's zxid.
func (s *refServer) reload(log []txn) ([]txn, int64) {
	snap, _ := s.restoreSnapshot()
	out := slices.Clone(snap.content)
	for _, t := range log {
		if t.zxid > snap.zxid {
			out = append(out, t)
		}
	}
	return out, snap.zxid
}

func countAbove(log []txn, zxid int64) int {
	n := 0
	for _, t := range log {
		if t.zxid > zxid {
			n++
		}
	}
	return n
}

// syncSnap replaces the learner's tree by the leader's and snapshots it.
func (m *refModel) syncSnap(s *refServer, target []txn) {
	zxid := int64(0)
	if len(target) > 0 {
		zxid = target[len(target)-1].zxid
	}
	if !snapFits(s, target) {
		panic("reference model: a SNAP would leave a divergent record above the snapshot")
	}
	s.applied = slices.Clone(target)
	m.emit(zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: s.sid, Zxid: zxid, Source: zabmodel.SourceSnap})
	m.snapshot(s)
}

// upToDate ends a learner's synchronization: it serves, logs the leader's pending proposals, and
// joins the broadcast.
func (m *refModel) upToDate(s *refServer, epoch int64) {
	role := zabmodel.Following
	if !s.voter {
		role = zabmodel.Observing
	}
	m.emit(zabmodel.Event{Kind: zabmodel.EventServing, Server: s.sid, Role: role, Epoch: epoch})
	if s.voter {
		for _, t := range m.pending {
			m.logRecord(s, t)
		}
	}
	s.forwarding = true
}

// canSync reports whether a learner can synchronize with a leader whose applied history is target
// by one of the model's paths.
func canSync(s *refServer, target []txn) bool {
	mine := s.history()
	if len(mine) <= len(target) && slices.Equal(mine, target[:len(mine)]) {
		return true
	}
	return truncateFits(s, target) || snapFits(s, target)
}

// truncateFits reports whether truncating at the last logged record the leader also has and
// reloading from disk rebuilds a prefix of target.
func truncateFits(s *refServer, target []txn) bool {
	keep := -1
	for i, t := range s.log {
		if slices.Contains(target, t) {
			keep = i
		}
	}
	if keep < 0 {
		return false
	}
	reloaded, _ := s.reload(s.log[:keep+1])
	return len(reloaded) <= len(target) && slices.Equal(reloaded, target[:len(reloaded)])
}

// snapFits reports whether a SNAP of target leaves no divergent record above its zxid in the log,
// where a restart would replay it.
func snapFits(s *refServer, target []txn) bool {
	zxid := int64(0)
	if len(target) > 0 {
		zxid = target[len(target)-1].zxid
	}
	for _, t := range s.log {
		if t.zxid > zxid && !slices.Contains(target, t) {
			return false
		}
	}
	return true
}
