package zab

import (
	"slices"

	"github.com/zabsim/zabsim/zabmodel"
)

// mutations are the ways the property test breaks a correct execution.
var mutations = []mutation{
	{
		name: "apply a different hash", expect: Integrity,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			return indexesOf(events, isApplyFrom(zabmodel.SourceCommit))
		},
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			e := events[site]
			e.Hash = ^e.Hash
			return replaceAt(events, site, e)
		},
	},
	{
		name: "commit a second hash", expect: Agreement,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			return indexesOf(events, isKind(zabmodel.EventCommit))
		},
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			e := events[site]
			e.Hash ^= 1
			return insertAfter(events, site, e)
		},
	},
	{
		name: "two servers establish one epoch", expect: Leadership,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			return indexesOf(events, isKind(zabmodel.EventEstablished))
		},
		apply: func(m *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			e := events[site]
			e.Server = otherVoter(m, e.Server)
			return insertAfter(events, site, e)
		},
	},
	{
		// A leader whose report of what its establishment commits stops one transaction short of
		// its history: the checker commits what the leader reports, so it must notice.
		name: "under-report what establishment commits", expect: EventStream,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			return indexesOf(events, func(e zabmodel.Event) bool {
				return e.Kind == zabmodel.EventEstablished && e.Through != 0
			})
		},
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			e := events[site]
			e.Through--
			return replaceAt(events, site, e)
		},
	},
	{
		name: "two epoch quorums for one epoch", expect: Leadership,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			return indexesOf(events, isKind(zabmodel.EventEpochQuorum))
		},
		apply: func(m *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			e := events[site]
			e.Server = otherVoter(m, e.Server)
			return insertAfter(events, site, e)
		},
	},
	{
		name: "apply twice", expect: TotalOrder,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			return indexesOf(events, isKind(zabmodel.EventApply))
		},
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			return insertAfter(events, site, events[site])
		},
	},
	{
		name: "skip a counter", expect: LocalPrimaryOrder,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			return indexesOf(events, isKind(zabmodel.EventPropose))
		},
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			e := events[site]
			e.Zxid += 2
			e.Hash = ^e.Hash
			return insertAfter(events, site, e)
		},
	},
	{
		name: "drop the fsync of a DIFF before NEWLEADER ACK", expect: ProcessConsistency,
		sites: func(m *refModel, _ []zabmodel.Event) []int { return m.syncedDiff },
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			return slices.Delete(slices.Clone(events), site, site+1)
		},
	},
	{
		name: "truncate a committed transaction", expect: CommittedLogDurability,
		sites: truncateCommittedSites,
		apply: func(m *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			sid, zxid, _ := truncateCommittedTarget(m, events, site)
			return insertAfter(events, site, zabmodel.Event{Kind: zabmodel.EventTruncate, Server: sid, Zxid: zxid})
		},
	},
	{
		name: "skip a commit", expect: PrimaryIntegrity,
		sites: skippableCommitSites,
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			return slices.Delete(slices.Clone(events), site, site+1)
		},
	},
	{
		// A leader's reload has no other leader to send back what it drops.
		name: "reload an empty tree at a leader", expect: MonotonicRead,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			var out []int
			for _, i := range indexesOf(events, isApplyFrom(zabmodel.SourceCommit)) {
				// The reference leader applies each commit right after deciding it.
				if previous := events[i-1]; previous.Kind == zabmodel.EventCommit && previous.Server == events[i].Server {
					out = append(out, i)
				}
			}
			return out
		},
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			sid := events[site].Server
			return insertAfter(events, site,
				zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: sid, Source: zabmodel.SourceTruncate},
				zabmodel.Event{Kind: zabmodel.EventStopServing, Server: sid})
		},
	},
	{
		name: "leader loses a committed transaction", expect: LeaderLogCompleteness,
		sites: leaderLosesSites,
		apply: func(m *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			c := stateAt(m, events, site)
			leader := c.servers[events[site].Server]
			var extra []zabmodel.Event
			if len(leader.log) > 0 {
				extra = append(extra, zabmodel.Event{Kind: zabmodel.EventTruncate, Server: leader.sid, Zxid: leader.log[0].zxid})
			}
			extra = append(extra, zabmodel.Event{Kind: zabmodel.EventTreeLoaded, Server: leader.sid, Source: zabmodel.SourceTruncate})
			return insertAfter(events, site-1, extra...)
		},
	},
	{
		name: "sync a different transaction", expect: PrefixConsistency,
		sites: func(m *refModel, events []zabmodel.Event) []int {
			var out []int
			for _, i := range indexesOf(events, isApplyFrom(zabmodel.SourceSync)) {
				if _, ok := stateAt(m, events, i).committedHash(events[i].Zxid); ok {
					out = append(out, i)
				}
			}
			return out
		},
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			e := events[site]
			e.Hash = ^e.Hash
			return replaceAt(events, site, e)
		},
	},
	{
		// ZOOKEEPER-1277's shape: a leader of an older epoch proposes a zxid that reads as a later
		// epoch's (its counter overflowed), and a server that already applied that later epoch's
		// transactions applies it too. The zxids still increase; only the proposer's epoch tells.
		name: "an older epoch's proposal applied after a newer epoch's", expect: GlobalPrimaryOrder,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			var out []int
			for _, i := range indexesOf(events, isKind(zabmodel.EventPropose)) {
				if _, ok := laterEpochApply(events, i); ok {
					out = append(out, i)
				}
			}
			return out
		},
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			at, _ := laterEpochApply(events, site)
			later := events[at]
			wrapped := zabmodel.MakeZxid(zabmodel.EpochOf(later.Zxid), 0xfffffff0)
			proposal := zabmodel.Event{Kind: zabmodel.EventPropose, Server: events[site].Server, Zxid: wrapped, Hash: hashOf(wrapped)}
			applied := zabmodel.Event{Kind: zabmodel.EventApply, Server: later.Server, Zxid: wrapped, Hash: hashOf(wrapped),
				Source: zabmodel.SourceFastForward}
			// The apply goes in first, so that the proposal's index stays site.
			return insertAfter(insertAfter(events, at, applied), site, proposal)
		},
	},
	{
		name: "vote circle", expect: NoVoteCircle,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			if len(events) == 0 {
				return nil
			}
			return []int{len(events) / 2}
		},
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			a, b := int64(2), int64(3) // Every run has at least three voters.
			vote := func(leader int64) zabmodel.Event {
				return zabmodel.Event{Kind: zabmodel.EventVote, Server: 1, Leader: leader, Round: 1 << 40}
			}
			return insertAfter(events, site, vote(a), vote(b), vote(a))
		},
	},
	{
		name: "digest mismatch", expect: DigestMismatch,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			return indexesOf(events, isKind(zabmodel.EventApply))
		},
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			e := events[site]
			return insertAfter(events, site, zabmodel.Event{Kind: zabmodel.EventDigestMismatch, Server: e.Server,
				Zxid: e.Zxid, Hash: 1, Digest: 2})
		},
	},
	{
		name: "txn threw", expect: TxnThrew,
		sites: func(_ *refModel, events []zabmodel.Event) []int {
			return indexesOf(events, isKind(zabmodel.EventApply))
		},
		apply: func(_ *refModel, events []zabmodel.Event, site int) []zabmodel.Event {
			e := events[site]
			return insertAfter(events, site, zabmodel.Event{Kind: zabmodel.EventTxnThrew, Server: e.Server,
				Zxid: e.Zxid, Source: e.Source})
		},
	},
}

// truncateCommittedTarget checks that, after the commit at site, the committing leader's log holds
// the transaction after another record, and returns the zxid to truncate to so that it goes. (A
// follower's TRUNC of a transaction its leader still has is allowed; a leader has no one to get
// it back from.)
func truncateCommittedTarget(m *refModel, events []zabmodel.Event, site int) (int64, int64, bool) {
	c := stateAt(m, events, site+1)
	committed := txn{zxid: events[site].Zxid, hash: events[site].Hash}
	s := c.servers[events[site].Server]
	if i, found := searchZxid(s.log, committed.zxid); found && i > 0 && s.log[i] == committed {
		return s.sid, s.log[i-1].zxid, true
	}
	return 0, 0, false
}

func truncateCommittedSites(m *refModel, events []zabmodel.Event) []int {
	var out []int
	for _, i := range indexesOf(events, isKind(zabmodel.EventCommit)) {
		if _, _, ok := truncateCommittedTarget(m, events, i); ok {
			out = append(out, i)
		}
	}
	return out
}

// skippableCommitSites lists commit-time applies followed by another commit-time apply of the
// same server with no tree reload or restart in between.
func skippableCommitSites(_ *refModel, events []zabmodel.Event) []int {
	var out []int
	last := map[int64]int{}
	for i, e := range events {
		switch {
		case e.Kind == zabmodel.EventApply && e.Source == zabmodel.SourceCommit:
			if previous, ok := last[e.Server]; ok {
				out = append(out, previous)
			}
			last[e.Server] = i
		case e.Kind == zabmodel.EventCrash || e.Kind == zabmodel.EventRestart || e.Kind == zabmodel.EventTreeLoaded:
			delete(last, e.Server)
		}
	}
	slices.Sort(out)
	return out
}

// leaderLosesSites lists establishments before which a committed transaction exists that the
// leader would lose by truncating its log to its first record and reloading an empty tree.
func leaderLosesSites(m *refModel, events []zabmodel.Event) []int {
	var out []int
	for _, i := range indexesOf(events, isKind(zabmodel.EventEstablished)) {
		c := stateAt(m, events, i)
		leader := c.servers[events[i].Server]
		for _, t := range c.committedOrder {
			if len(leader.log) == 0 || leader.log[0] != t {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// laterEpochApply finds, after the proposal at site, the last apply of a transaction of a later
// epoch than the proposal's, by a server that applies nothing after it in that run (so that a
// transaction with a larger zxid can follow it in that server's history).
func laterEpochApply(events []zabmodel.Event, site int) (int, bool) {
	epoch := zabmodel.EpochOf(events[site].Zxid)
	for i := len(events) - 1; i > site; i-- {
		e := events[i]
		if e.Kind != zabmodel.EventApply || zabmodel.EpochOf(e.Zxid) <= epoch {
			continue
		}
		if slices.ContainsFunc(events[i+1:], func(after zabmodel.Event) bool {
			return after.Server == e.Server && after.Kind == zabmodel.EventApply
		}) {
			continue
		}
		return i, true
	}
	return 0, false
}
