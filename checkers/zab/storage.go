package zab

import (
	"github.com/zabsim/zabsim/zabmodel"
)

// onTruncate cuts the log as storage.Disk.Truncate does: it keeps every record up to and including
// the first whose zxid is at least Zxid (the event reports the resulting last record, so normally
// exactly Zxid). CommittedLogDurability (ZAB.md: no committed transaction is ever truncated or
// lost) forbids removing a committed transaction, with one exception the real server allows: a
// transaction its leader has. The leader computes a TRUNC from its committed log when the learner
// connects (LearnerHandler.syncFollower) and may commit the learner's last transaction (with
// another quorum) before the learner executes the TRUNC; Leader.startForwarding queued it, as an
// outstanding proposal, right behind the TRUNC, and the quorum that committed it still holds it
// (which cutLog re-checks). That holds even if the leader dies between writing the TRUNC and
// writing the proposal (seed 1023103): the transaction was not in the committed log the truncation
// point was taken from, and what the invariant protects is the quorum's copies, not this learner's.
func (c *Checker) onTruncate(s *server, e zabmodel.Event) {
	i, _ := searchZxid(s.log, e.Zxid)
	if i >= len(s.log) {
		return // Nothing reaches Zxid: the real truncation fails and removes nothing.
	}
	keep := i + 1
	for _, removed := range s.log[keep:] {
		if !c.isCommitted(removed) || c.leaderHas(s, removed) {
			continue
		}
		c.report(CommittedLogDurability, finding{servers: []int64{s.sid, s.leader.sid}, zxids: []int64{removed.zxid, e.Zxid}},
			"Server %d truncated its txn log to %s, removing the committed transaction %s (hash %#x), "+
				"which its leader (server %d) neither has nor had in the pipeline it forwards behind the "+
				"TRUNC. A TRUNC may only remove transactions that are never committed or that the leader "+
				"sends right behind it: the leader lacked a committed transaction (see "+
				"LeaderLogCompleteness) or computed the truncation point wrongly.",
			s.sid, zx(e.Zxid), zx(removed.zxid), removed.hash, s.leader.sid)
		break
	}
	c.cutLog(s, keep, "truncated its log")
}

// leaderHas reports whether the leader process a learner is synchronizing with has t, so that
// the synchronization sends it after a TRUNC or SNAP that removed it: the process's history now if
// it still runs, or else what the binding kept of it when it computed the synchronization (its
// applied history and the proposals Leader.startForwarding queued behind the DIFF, TRUNC or SNAP).
func (c *Checker) leaderHas(s *server, t txn) bool {
	if s.leader.sid == s.sid || !s.leader.known {
		return false
	}
	if leader, ok := c.boundLeader(s, s.leader.sid); ok && leader.history().contains(t) {
		return true
	}
	return contains(s.leader.history, t) || contains(s.leader.forwarded, t)
}

// onLost applies a crash's loss of the unsynced tail: records after Zxid are gone and what
// survived is on the platter now, as storage.Disk.Crash leaves it.
func (c *Checker) onLost(s *server, e zabmodel.Event) {
	keep := countUpTo(s.log, e.Zxid)
	lost := len(s.log) - keep
	if lost != e.Count || keep < s.synced {
		c.report(EventStream, finding{servers: []int64{s.sid}, zxids: []int64{e.Zxid}},
			"Server %d reported losing %d log records after %s in a crash, but the checker's model of "+
				"its log (%d records, %d of them fsynced) loses %d there, %d of them fsynced. A crash "+
				"loses only records that were never fsynced; the disk model and its events disagree.",
			s.sid, e.Count, zx(e.Zxid), len(s.log), s.synced, lost, max(0, s.synced-keep))
	}
	c.cutLog(s, keep, "lost part of its log in a crash")
	s.synced = len(s.log)
}

// cutLog shortens the log to its first keep records and re-checks the quorum durability of every
// committed transaction that was durable only through a removed synced record.
func (c *Checker) cutLog(s *server, keep int, what string) {
	removedSynced := s.log[keep:max(keep, s.synced)]
	s.log = s.log[:keep]
	s.synced = min(s.synced, keep)
	if !s.voter {
		return
	}
	// Walk the committed order and the snapshot alongside the removed records, all sorted by zxid.
	committed := sortedCursor{sequence: c.committedOrder}
	var inSnapshot sortedCursor
	if snap, ok := s.restoreSnapshot(); ok {
		inSnapshot.sequence = snap.content
	}
	for _, removed := range removedSynced {
		if !committed.holds(removed) || inSnapshot.holds(removed) {
			continue
		}
		c.checkQuorumDurable(removed, s.sid, zabmodel.EpochOf(removed.zxid), "(committed) lost a copy when server %d "+what)
	}
}

// onSnapshot records a durable snapshot covering the applied history up to Zxid. If restore would
// now load it instead of an older one, transactions only the older one covered lose that copy.
func (c *Checker) onSnapshot(s *server, e zabmodel.Event) {
	snap := snapshot{
		zxid:       e.Zxid,
		content:    clip(s.applied, countUpTo(s.applied, e.Zxid)),
		generation: s.generation,
	}
	s.snapshots = append(s.snapshots, snap)
	previous, hadPrevious := s.restoreSnapshot()
	if hadPrevious && snap.zxid < previous.zxid {
		return // Restore keeps loading the one with the highest zxid.
	}
	s.restore = len(s.snapshots) - 1
	if !hadPrevious || !s.voter {
		return
	}
	if previous.generation == snap.generation && len(snap.content) >= len(previous.content) {
		return // The new snapshot extends the old one: nothing loses coverage.
	}
	// What the new snapshot holds at the same place stays durable: skip the common prefix, then
	// walk the committed order and the server's durable copies alongside the rest, all sorted by
	// zxid.
	rest := previous.content[commonPrefix(previous.content, snap.content):]
	if len(rest) == 0 {
		return
	}
	committed := sortedCursor{sequence: c.committedOrder}
	durable := s.durabilityCursor()
	for _, covered := range rest {
		if committed.holds(covered) && !durable.durable(covered) {
			c.checkQuorumDurable(covered, s.sid, zabmodel.EpochOf(covered.zxid),
				"(committed) lost a copy when server %d replaced its snapshot")
		}
	}
}

// onTreeLoaded replaces the applied history: from the server's own snapshot (at startup or after a
// TRUNC; the log replay that follows arrives as applies), or from its leader's history (SNAP).
func (c *Checker) onTreeLoaded(s *server, e zabmodel.Event) {
	before := s.applied
	var content []txn
	switch e.Source {
	case zabmodel.SourceStartup, zabmodel.SourceTruncate:
		content = c.ownSnapshotContent(s, e.Zxid)
	case zabmodel.SourceSnap:
		content = c.leaderSnapshotContent(s, e.Zxid)
	default:
		c.report(EventStream, finding{servers: []int64{s.sid}, zxids: []int64{e.Zxid}},
			"Server %d loaded its tree from source %q, which is not a tree load (startup, truncate or "+
				"snap); the checker treats it as a startup load.", s.sid, e.Source)
		content = c.ownSnapshotContent(s, e.Zxid)
	}
	c.replaceApplied(s, content)
	if e.Source == zabmodel.SourceSnap {
		c.startFuzzyWindow(s)
	}
	if e.Source == zabmodel.SourceTruncate || e.Source == zabmodel.SourceSnap {
		s.monotonic = monotonicCheck{pending: true, before: before, source: e.Source, zxid: e.Zxid}
		if e.Source == zabmodel.SourceSnap {
			c.resolveMonotonic(s, zabmodel.Event{}) // No replay follows a SNAP.
		}
	}
}

// ownSnapshotContent returns the content of the server's newest snapshot with a zxid at most zxid
// (the highest such zxid, the latest taken among equals, as ZooKeeper picks snapshot files).
func (c *Checker) ownSnapshotContent(s *server, zxid int64) []txn {
	best := -1
	for i, snap := range s.snapshots {
		if snap.zxid <= zxid && (best < 0 || snap.zxid >= s.snapshots[best].zxid) {
			best = i
		}
	}
	if best < 0 {
		if zxid != 0 {
			c.report(EventStream, finding{servers: []int64{s.sid}, zxids: []int64{zxid}},
				"Server %d loaded its tree from a snapshot at %s, but it never wrote a snapshot at or "+
					"below that zxid; the checker starts its applied history empty.", s.sid, zx(zxid))
		}
		return nil
	}
	return s.snapshots[best].content
}

// leaderSnapshotContent returns the SNAP content a learner received: the applied history, up to
// zxid, of the leader process that synchronizes it (EventLearnerSync bound the learner to it and
// kept its history as it was when the SNAP was computed, which the binding still holds if that
// process has died or restarted since).
func (c *Checker) leaderSnapshotContent(s *server, zxid int64) []txn {
	if s.leader.sid == s.sid || !s.leader.known {
		c.report(EventStream, finding{servers: []int64{s.sid, s.leader.sid}, zxids: []int64{zxid}},
			"Server %d loaded a SNAP at %s, but the checker does not know which leader process sent it "+
				"(its last EventElected named %d, and no EventLearnerSync bound it to a running leader); "+
				"the checker starts its applied history empty.",
			s.sid, zx(zxid), s.leader.sid)
		return nil
	}
	history := s.leader.history
	if leader, ok := c.boundLeader(s, s.leader.sid); ok {
		history = leader.applied
	}
	return clip(history, countUpTo(history, zxid))
}

// onCrash: the process is gone. The synced log and snapshots stay; the applied history is kept
// only for judging late messages from this process and is replaced at restart; what the unsynced
// tail loses is reported by EventLost.
func (c *Checker) onCrash(s *server) {
	s.up = false
	s.leaveRole()
	s.votes.reset()
	s.monotonic = monotonicCheck{}
}

// onRestart starts a new incarnation with an empty tree; the startup load and replay follow.
// Whatever of the log survived the crash is on the platter now.
func (c *Checker) onRestart(s *server) {
	s.up = true
	s.incarnation++
	s.leaveRole()
	s.votes.reset()
	s.monotonic = monotonicCheck{}
	s.synced = len(s.log)
	c.replaceApplied(s, nil)
}

// monotonicCheck is a pending MonotonicRead check: a TRUNC reload or a SNAP replaced the applied
// history, and once the replay that follows is over, the new history's highest committed zxid
// must be at least the old one's.
type monotonicCheck struct {
	pending bool
	before  []txn
	source  zabmodel.Source
	zxid    int64
}

// resolveMonotonic completes a pending MonotonicRead check at the first event of the server that
// is not part of the replay. A committed transaction that the reload dropped is only a violation
// if the learner's leader does not have it: if it does, it comes back with the rest of the sync
// before the server serves, and it was not yet committed when the leader chose the TRUNC or SNAP
// (the race onTruncate describes). A server that then serves without it breaks PrimaryIntegrity
// at its next commit.
func (c *Checker) resolveMonotonic(s *server, e zabmodel.Event) {
	m := s.monotonic
	if !m.pending || (e.Kind == zabmodel.EventApply && e.Source == m.source) {
		return
	}
	s.monotonic = monotonicCheck{}
	before, after := c.highestCommitted(m.before), c.highestCommitted(s.applied)
	if after >= before {
		return
	}
	for _, t := range m.before {
		if t.zxid <= after || !c.isCommitted(t) || c.leaderHas(s, t) {
			continue
		}
		c.report(MonotonicRead, finding{servers: []int64{s.sid}, zxids: []int64{before, after, t.zxid}},
			"Server %d reloaded its tree (%s at %s): before, its tree reflected committed transactions "+
				"up to %s; after the reload and its replay, only up to %s, and the committed %s is gone "+
				"for good (its leader, server %d, does not have it). A server's committed state must "+
				"never go back within one process: a TRUNC or SNAP may only remove uncommitted "+
				"transactions, so the reload used a stale snapshot or the wrong truncation point.",
			s.sid, m.source, zx(m.zxid), zx(before), zx(after), zx(t.zxid), s.leader.sid)
		return
	}
}

// highestCommitted returns the highest zxid of a committed transaction in a sorted sequence,
// scanning back from its end (the uncommitted tail is short).
func (c *Checker) highestCommitted(sequence []txn) int64 {
	for i := len(sequence) - 1; i >= 0; i-- {
		if c.isCommitted(sequence[i]) {
			return sequence[i].zxid
		}
	}
	return 0
}
