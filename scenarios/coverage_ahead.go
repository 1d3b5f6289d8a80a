package scenarios

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// Durable state ahead of the ensemble's commit point. The per-server relations of coverage.go
// compare a server's files with each other (its epochs, its log, its tree); what makes a TRUNC, a
// DIFF or a reload dangerous is how a server's state stands against what the ensemble committed:
// a tree or a snapshot that holds transactions no quorum committed (a learner leaving its role
// fast-forwards its logged proposals into its tree, a leader starting up writes a clean snapshot
// of that tree), and the same state once a new leader has been established over a history that
// does not contain them (an orphan, which only a truncation or a SNAP removes). These are
// situations of the ensemble as a whole, known to no single server: the coverage follows, per
// epoch, the highest zxid a leader committed (a COMMIT, or an establishment's history) and reads
// each server's tree and newest snapshot against it. Two of them are site windows (siteWindow),
// so that site injections favour the boundary hits of a server holding such state, and a fault
// that hits such a server is a situation of its own (fault context).
const (
	// windowTreeAhead: the server's in-memory tree holds a transaction its epoch has not committed.
	windowTreeAhead uint64 = 1 << (4 + iota)
	// windowSnapshotAhead: the server's newest snapshot holds a transaction its epoch has not
	// committed.
	windowSnapshotAhead
)

// noteCommitted records that every transaction of zxid's epoch up to zxid is committed.
func (c *Coverage) noteCommitted(zxid int64) {
	if zxid <= 0 {
		return
	}
	epoch := zxid >> 32
	if c.committedIn[epoch] < zxid {
		c.committedIn[epoch] = zxid
	}
}

// ahead says whether zxid names a transaction that no leader has committed (yet) in its epoch.
func (c *Coverage) ahead(zxid int64) bool {
	return zxid > 0 && zxid > c.committedIn[zxid>>32]
}

// aheadWindow is a server's ahead window bits.
func (c *Coverage) aheadWindow(s *serverCoverage) uint64 {
	var w uint64
	if c.ahead(s.treeZxid) && c.aboveOthers(s, s.treeZxid) {
		w |= windowTreeAhead
	}
	if c.ahead(s.lastSnapshot) && c.aboveOthers(s, s.lastSnapshot) {
		w |= windowSnapshotAhead
	}
	return w
}

// aboveOthers says whether zxid is past the last logged zxid of every other server.
func (c *Coverage) aboveOthers(s *serverCoverage, zxid int64) bool {
	for _, other := range c.servers {
		if other != nil && other != s && other.lastLogged >= zxid {
			return false
		}
	}
	return true
}

// aheadEvent follows the commit point and the servers' trees through an event, and records the
// situations of state ahead of it (after advance has updated the server).
func (c *Coverage) aheadEvent(s *serverCoverage, e zabmodel.Event) {
	switch e.Kind {
	case zabmodel.EventApply, zabmodel.EventTreeLoaded:
		s.treeZxid = e.Zxid
	case zabmodel.EventCrash:
		s.treeZxid = 0
	case zabmodel.EventCommit:
		c.noteCommitted(e.Zxid)
	case zabmodel.EventSnapshot:
		if c.ahead(e.Zxid) {
			role, ph := e.Role, s.phase
			c.add(mix(0x2e, uint64(role), uint64(ph)), e.Time, e.Server, func() string {
				return fmt.Sprintf("snapshot holding uncommitted txns %s %s", role, ph)
			})
		}
	case zabmodel.EventEstablished:
		c.noteCommitted(e.Through)
		c.orphans(e)
	case zabmodel.EventLearnerSync:
		// The learner's newest snapshot against the leader's log as the sync is decided: above
		// it, whatever the sync sends, the learner's disk holds a tree the leader never had.
		if learner := c.server(e.Learner); e.Learner > 0 && learner.lastSnapshot > s.lastLogged {
			c.add(mix(0x30, uint64(learner.history)), e.Time, e.Server, func() string {
				return fmt.Sprintf("learner-sync of a learner whose snapshot is past the leader's log, after %s", historyString(learner.history))
			})
		}
	}
}

// orphans records, at a leader's establishment in a new epoch over the history through e.Through,
// the other servers whose log, tree or newest snapshot holds a transaction of an older epoch past
// that history: state that this leader will never commit, which a TRUNC or a SNAP must remove.
func (c *Coverage) orphans(e zabmodel.Event) {
	orphan := func(zxid int64) uint64 {
		return boolBit(zxid > e.Through && zxid>>32 < e.Epoch)
	}
	for sid, other := range c.servers {
		if other == nil || int64(sid) == e.Server {
			continue
		}
		log, tree, snapshot := orphan(other.lastLogged), orphan(other.treeZxid), orphan(other.lastSnapshot)
		if log|tree|snapshot == 0 {
			continue
		}
		ph := other.phase
		c.add(mix(0x2f, log, tree, snapshot, uint64(ph)), e.Time, int64(sid), func() string {
			return fmt.Sprintf("leader established past a server in %s whose log %d tree %d snapshot %d go beyond its history", ph, log, tree, snapshot)
		})
	}
}

// aheadFault is the fault-context situation of a fault that hit a server holding state ahead of
// the commit point, w its ahead window bits when the fault came (none when it held none, so that
// the plain fault context stays as it is).
func (c *Coverage) aheadFault(w uint64, verb string, ph phase, last zabmodel.EventKind, sid int64, at clock.Time) {
	if w == 0 {
		return
	}
	c.add(mix(0x06, hashString(verb), uint64(ph), uint64(last), w), at, sid, func() string {
		return fmt.Sprintf("fault %s in %s after %s in window %s", verb, ph, last, windowString(w))
	})
}
