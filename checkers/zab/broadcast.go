package zab

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/zabmodel"
)

// onPropose checks that only an established leader proposes (Leadership) and LocalPrimaryOrder,
// then records the proposal for Integrity.
func (c *Checker) onPropose(s *server, e zabmodel.Event) {
	t := txn{zxid: e.Zxid, hash: e.Hash}
	epoch := s.leading
	if !s.established {
		c.report(Leadership, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid}, epoch: epoch},
			"Server %d proposed %s without being an established leader (its last role event was %s "+
				"with epoch %d). Only a leader that collected a NEWLEADER quorum may broadcast; a "+
				"proposal from anyone else is a second primary.",
			s.sid, zx(t.zxid), s.role, epoch)
		if epoch == 0 {
			epoch = zabmodel.EpochOf(t.zxid)
		}
	} else {
		c.checkLocalOrder(s, t)
	}
	c.proposals.add(t, epoch)
	if n := len(s.proposed); n == 0 || s.proposed[n-1].zxid < t.zxid {
		s.proposed = append(s.proposed, t)
	}
}

// checkLocalOrder checks that an established leader's proposal is the next counter in its epoch.
func (c *Checker) checkLocalOrder(s *server, t txn) {
	counter := zabmodel.CounterOf(t.zxid)
	expected := s.lastCounter + 1
	switch {
	case zabmodel.EpochOf(t.zxid) != s.leading:
		c.report(LocalPrimaryOrder, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid}, epoch: s.leading},
			"Leader %d of epoch %d proposed %s, a zxid of epoch %d. A leader's zxids carry its own "+
				"epoch; a different epoch means the counter overflowed into the epoch bits "+
				"(ZOOKEEPER-1277) or the leader took a zxid it did not assign.",
			s.sid, s.leading, zx(t.zxid), zabmodel.EpochOf(t.zxid))
	case counter >= counterLimit:
		c.report(LocalPrimaryOrder, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid}, epoch: s.leading},
			"Leader %d proposed %s, whose counter is 0xffffffff. Leader.propose must shut the leader "+
				"down instead, forcing a new epoch, because the next zxid would overflow into the "+
				"epoch (ZOOKEEPER-1277).",
			s.sid, zx(t.zxid))
	case counter != expected:
		c.report(LocalPrimaryOrder, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid}, epoch: s.leading},
			"Leader %d proposed %s after %s in epoch %d; the next proposal must have counter %#x. "+
				"Zxids are assigned one by one in request order (PrepRequestProcessor), so a gap or a "+
				"step back means a zxid was skipped, reused or proposed out of order.",
			s.sid, zx(t.zxid), zx(zabmodel.MakeZxid(s.leading, s.lastCounter)), s.leading, expected)
	}
	if counter > s.lastCounter {
		s.lastCounter = counter
	}
}

// checkProposed checks Integrity for a transaction a server logged, applied (from source) or
// committed, and returns the epoch of its proposer.
func (c *Checker) checkProposed(s *server, t txn, what string, source zabmodel.Source) (int64, bool) {
	epoch, ok := c.proposerEpoch(t)
	if !ok {
		c.report(Integrity, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid}, epoch: zabmodel.EpochOf(t.zxid)},
			"Server %d %s %s (source %s) with hash %#x, but no leader ever proposed that transaction "+
				"under that zxid. A server may only hold what a leader broadcast: the transaction was "+
				"corrupted, invented, or paired with the wrong zxid on its way (a PROPOSAL, a DIFF, a "+
				"SNAP or the server's own disk).",
			s.sid, what, zx(t.zxid), source, t.hash)
	}
	return epoch, ok
}

// onLog appends a record to the server's txn log.
func (c *Checker) onLog(s *server, e zabmodel.Event) {
	t := txn{zxid: e.Zxid, hash: e.Hash}
	c.checkProposed(s, t, "logged", zabmodel.SourceNone)
	if n := len(s.log); n > 0 && t.zxid <= s.log[n-1].zxid {
		c.report(EventStream, finding{servers: []int64{s.sid}, zxids: []int64{s.log[n-1].zxid, t.zxid}},
			"Server %d logged %s after %s, but a txn log refuses a zxid that is not above its last "+
				"record (FileTxnLog.append); the checker does not record it.",
			s.sid, zx(t.zxid), zx(s.log[n-1].zxid))
		return
	}
	s.log = append(s.log, t)
}

// onFsync marks the first Count records durable, as storage.Disk.Synced does: a count beyond the
// log means a truncation happened while the fsync was in flight, and a smaller count than already
// synced changes nothing.
func (c *Checker) onFsync(s *server, e zabmodel.Event) {
	s.synced = max(s.synced, min(e.Count, len(s.log)))
}

// onCommit checks Integrity and Agreement and records the commit.
func (c *Checker) onCommit(s *server, e zabmodel.Event) {
	t := txn{zxid: e.Zxid, hash: e.Hash}
	c.checkProposed(s, t, "committed", zabmodel.SourceNone)
	hash, ok := c.committedHash(t.zxid)
	switch {
	case ok && hash != t.hash:
		c.report(Agreement, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid}, epoch: s.leading},
			"Leader %d committed %s with hash %#x, but a different transaction (hash %#x) was already "+
				"committed at that zxid. Two committed transactions under one zxid mean two leaders "+
				"broadcast in the same epoch, or a leader committed something other than what it "+
				"proposed.",
			s.sid, zx(t.zxid), t.hash, hash)
	case !ok:
		c.commit(t, s.sid, s.leading)
	}
}

// commit adds t to the committed set and checks that a quorum of voters durably holds it.
func (c *Checker) commit(t txn, by, epoch int64) {
	if c.config.OnCommit != nil {
		c.config.OnCommit(t.zxid, t.hash)
	}
	if c.config.Listener != nil {
		c.config.Listener.Committed(t.zxid, t.hash)
	}
	n := len(c.committedOrder)
	if n == 0 || c.committedOrder[n-1].zxid < t.zxid {
		c.committedOrder = append(c.committedOrder, t)
	} else {
		i, _ := searchZxid(c.committedOrder, t.zxid)
		c.committedOrder = slices.Insert(c.committedOrder, i, t)
		c.committedStamp++
	}
	c.checkQuorumDurable(t, by, epoch, "became committed at server %d")
}

// checkQuorumDurable checks the second half of CommittedLogDurability for one committed
// transaction: a quorum of voters durably holds it. when says what just happened, with a %d for
// the server where it happened; it is formatted only if the check fails.
func (c *Checker) checkQuorumDurable(t txn, server, epoch int64, when string) {
	count := 0
	for _, s := range c.voters {
		if s.durable(t) {
			count++
			if count >= c.quorum {
				return
			}
		}
	}
	var holders []int64
	for _, s := range c.voters {
		if s.durable(t) {
			holders = append(holders, s.sid)
		}
	}
	c.report(CommittedLogDurability, finding{servers: []int64{server}, zxids: []int64{t.zxid}, epoch: epoch},
		"Transaction %s (hash %#x) %s while only voters %v of %v hold it durably (in the fsynced "+
			"part of their txn log or in the snapshot a restart would load); a quorum of %d must. If "+
			"those servers crash the transaction is gone although it was committed: something "+
			"acknowledged it (ACK or NEWLEADER ACK) before fsyncing it, or truncated or lost it "+
			"afterwards.",
		zx(t.zxid), t.hash, fmt.Sprintf(when, server), holders, c.voterSids, c.quorum)
}

// onApply checks Integrity, TotalOrder, GlobalPrimaryOrder, PrefixConsistency and
// PrimaryIntegrity for one applied transaction, then appends it to the applied history.
func (c *Checker) onApply(s *server, e zabmodel.Event) {
	t := txn{zxid: e.Zxid, hash: e.Hash}
	epoch, proposed := c.checkProposed(s, t, "applied", e.Source)
	if last, ok := s.lastApplied(); ok && t.zxid <= last.zxid {
		if s.excusedDuplicate(t) {
			return // A fuzzy SNAP's transaction applied again (see fuzzyWindow).
		}
		c.report(TotalOrder, finding{servers: []int64{s.sid}, zxids: []int64{last.zxid, t.zxid}},
			"Server %d applied %s (from %s) after %s: zxids must strictly increase along a server's "+
				"applied history, or a transaction is applied twice or out of order. The checker "+
				"does not record it.",
			s.sid, zx(t.zxid), e.Source, zx(last.zxid))
		return
	}
	if proposed && epoch < s.lastAppliedEpoch {
		c.report(GlobalPrimaryOrder, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid}, epoch: epoch},
			"Server %d applied %s, proposed by the leader of epoch %d, after a transaction proposed in "+
				"epoch %d. Transactions of an older epoch must all come before a newer epoch's.",
			s.sid, zx(t.zxid), epoch, s.lastAppliedEpoch)
	}
	if e.Source == zabmodel.SourceCommit || e.Source == zabmodel.SourceSync {
		c.checkAppliedCommitted(s, t, e.Source)
	}
	if e.Source == zabmodel.SourceCommit {
		c.checkPrimaryIntegrity(s, t)
	}
	s.applied = append(s.applied, t)
	if proposed {
		s.lastAppliedEpoch = max(s.lastAppliedEpoch, epoch)
	}
}

// checkAppliedCommitted checks PrefixConsistency for an apply that claims the transaction is
// committed (a commit while serving) or comes from the leader's sync.
func (c *Checker) checkAppliedCommitted(s *server, t txn, source zabmodel.Source) {
	hash, committed := c.committedHash(t.zxid)
	switch {
	case committed && hash != t.hash:
		c.report(PrefixConsistency, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid}},
			"Server %d applied %s (from %s) with hash %#x, but the transaction committed at that zxid "+
				"has hash %#x. The server's history diverges from the committed one: it kept a "+
				"transaction a new leader discarded, or synchronized from the wrong point.",
			s.sid, zx(t.zxid), source, t.hash, hash)
	case !committed && source == zabmodel.SourceCommit:
		c.report(PrefixConsistency, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid}},
			"Server %d applied %s as a commit, but no leader committed that zxid. A COMMIT (or "+
				"INFORM) may only follow the leader's quorum decision.",
			s.sid, zx(t.zxid))
	}
}

// primaryCursor remembers how far PrimaryIntegrity has verified a server's applied history: every
// committed transaction before committedOrder[committed] is in the applied history, and applied
// is where the walk through the applied history stands. stamp and generation say which committed
// order and applied history the cursor belongs to.
type primaryCursor struct {
	committed, applied int
	stamp, generation  uint64
	valid              bool
}

// checkPrimaryIntegrity checks that every committed transaction with a smaller zxid than t is in
// the server's applied history, walking both sorted sequences forward from where the last check
// stopped.
func (c *Checker) checkPrimaryIntegrity(s *server, t txn) {
	cursor := &s.primary
	if !cursor.valid || cursor.stamp != c.committedStamp || cursor.generation != s.generation {
		*cursor = primaryCursor{stamp: c.committedStamp, generation: s.generation, valid: true}
	}
	for cursor.committed < len(c.committedOrder) && c.committedOrder[cursor.committed].zxid < t.zxid {
		want := c.committedOrder[cursor.committed]
		for cursor.applied < len(s.applied) && s.applied[cursor.applied].zxid < want.zxid {
			cursor.applied++
		}
		cursor.committed++
		if cursor.applied < len(s.applied) && s.applied[cursor.applied] == want {
			continue
		}
		c.report(PrimaryIntegrity, finding{servers: []int64{s.sid}, zxids: []int64{t.zxid, want.zxid}},
			"Server %d applied the commit of %s before the committed transaction %s (hash %#x), which "+
				"is not in its applied history. A server must deliver every earlier committed "+
				"transaction, including those of earlier epochs, before a newer commit: its sync with "+
				"the leader skipped or lost one.",
			s.sid, zx(t.zxid), zx(want.zxid), want.hash)
		return
	}
}
