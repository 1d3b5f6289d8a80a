package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// ZKDatabase's memory and its load from disk as a core (see ready.go). dbCore is what ZKDatabase
// holds in memory (the tree, the session table, the committed-log window, whether it is loaded);
// its steps read the disk through a view (the newest snapshot, the txn log's records), change
// that memory, and return the rest as effects: the checkers' events (EventTreeLoaded, each
// replayed txn's EventApply, a txn that threw, a digest mismatch), the trace's notes, the deletion
// of a txn log the snapshot overtook, a broken assertion of the replayed log, and the process's
// exit when a txn throws at startup. zkDatabase (zkdb.go) embeds it and is its driver (run).
//
// Ordering contract: the effects follow the load's own order. EventTreeLoaded precedes every
// replayed txn's events; a replayed txn's EventApply precedes its EventTxnThrew and the note, and
// those precede the exit that a throw at startup calls for, after which the ready holds nothing
// (the load stops there, as the RuntimeException leaves FileTxnSnapLog.restore); a broken
// assertion of the replayed log is the ready's last effect, before the txn it concerns is applied.
// The deletion of an overtaken log (effectLogDelete) ends its ready (resume): the replay reads the
// log as the deletion left it.

// dbInputKind names what a step of the database's core is about.
type dbInputKind uint8

const (
	// dbLoad is ZKDatabase.loadDataBase from source: the newest snapshot, then every logged txn
	// after it.
	dbLoad dbInputKind = iota + 1
	// dbContinue resumes the load after the deletion of an overtaken txn log.
	dbContinue
	// dbFastForward is ZKDatabase.fastForwardDataBase: the logged txns the tree has not applied.
	dbFastForward
)

// dbInput is one input of the database's core.
type dbInput struct {
	kind   dbInputKind
	source Source
}

// dbView is what the database's core reads of the disk (it never writes it).
type dbView interface {
	LatestSnapshot() (storage.Snapshot, bool)
	Len() int
	LastZxid() int64
	Records(after int64) []storage.Record
}

// dbCore is ZKDatabase's memory.
type dbCore struct {
	cfg *Config
	mem *memory
	sid int64 // the server's, for the message of a snapshot that does not load

	tree        *tree
	committed   []*proposal // the committed log window, in zxid order
	initialized bool
	// sessions is ZKDatabase.sessionsWithTimeouts, the session table: snapshots load and write it,
	// log replay keeps it (FileTxnSnapLog.processTransaction), and so does the role's session
	// tracker for committed txns (ZooKeeperServer.processTxnForSessionEvents); the tree does not.
	sessions map[int64]int32
	// snapThread is the snapshot thread walking the tree, if one runs (snapthread.go).
	snapThread *snapshotThread

	// loading is the source of the load a ready that deleted the txn log paused.
	loading Source
	readies readyPool
}

// step takes one input and returns what must happen; the ready is the driver's until it gives it
// back with done.
func (c *dbCore) step(in dbInput, view dbView) *ready {
	out := c.readies.get()
	switch in.kind {
	case dbLoad:
		c.load(out, in.source, view)
	case dbContinue:
		c.loaded(out, c.loading, view)
	case dbFastForward:
		if c.tree != nil {
			c.replay(out, SourceFastForward, view)
		}
	}
	return out
}

func (c *dbCore) done(r *ready) { c.readies.put(r) }

func (c *dbCore) clear() {
	c.tree = nil
	c.committed = nil
	c.sessions = map[int64]int32{}
	c.initialized = false
	c.snapThread = nil // See snapshotThread: the walk ends with the tree it walks.
}

// load is ZKDatabase.loadDataBase up to the replay: the newest snapshot, or an empty tree.
func (c *dbCore) load(out *ready, source Source, view dbView) {
	c.clear()
	snap, ok := view.LatestSnapshot()
	if !ok {
		c.tree = newTree(c.cfg)
		c.loaded(out, source, view)
		return
	}
	t, sessions, err := deserializeTree(snap.Data, snap.Zxid, c.cfg)
	if err != nil {
		// A corrupt snapshot would be corruption of synced data, outside the fault model.
		panic(fmt.Sprintf("zabmodel: server %d: snapshot at %s does not load: %v", c.sid, FormatZxid(snap.Zxid), err))
	}
	c.tree, c.sessions = t, sessions
	if source == SourceStartup && !c.cfg.Bugs.Has(BugSnapLogGap) && view.Len() > 0 && view.LastZxid() < snap.Zxid {
		// The log ends below the snapshot: every logged txn is in it, and the log may end in
		// another history, since a SNAP's snapshot is written before the old log is deleted (see
		// learner.newLeader) and a crash can fall between the two. Finish the deletion, or the
		// log's jump to the next txn appended would serve a DIFF over the gap, which is the
		// snap-log-gap finding again (seed 4015563 of the sweep from 4000001).
		out.add(effect{kind: effectLogDelete})
		out.resume = true
		c.loading = source
		return
	}
	c.loaded(out, source, view)
}

// loaded is the rest of the load once the tree is there: EventTreeLoaded, then the replay.
func (c *dbCore) loaded(out *ready, source Source, view dbView) {
	out.observe(Event{Kind: EventTreeLoaded, Zxid: c.tree.lastProcessedZxid(), Digest: c.tree.digest(), Source: source})
	if c.replay(out, source, view) {
		c.initialized = true
	}
}

// replay applies every logged txn above the tree's last processed zxid (FileTxnSnapLog.restore's
// and fastForwardFromEdits' loop), each through processTransaction. It reports false if the
// process stops (a broken assertion, an exit).
func (c *dbCore) replay(out *ready, source Source, view dbView) bool {
	previous := c.tree.lastProcessedZxid()
	for _, r := range view.Records(previous) {
		entry := decodeLogRecord(r)
		if r.Zxid <= previous || entry.Header.Zxid != r.Zxid {
			out.add(effect{kind: effectFail, label: InvariantReplayedLog, text: fmt.Sprintf("the record after %s is %s and holds the txn %s",
				FormatZxid(previous), FormatZxid(r.Zxid), FormatZxid(entry.Header.Zxid))})
			return false
		}
		previous = r.Zxid
		if _, goOn := c.processTransaction(out, entry, source); !goOn {
			return false
		}
		c.addCommittedProposal(newCommittedProposal(c.mem, entry))
	}
	return true
}

// processTransaction is FileTxnSnapLog.processTransaction: a replayed createSession or closeSession
// updates the session table, then the tree applies the txn.
func (c *dbCore) processTransaction(out *ready, entry *proto.TxnEntry, source Source) (applyResult, bool) {
	switch entry.Header.Type {
	case proto.OpCreateSession:
		if cs, ok := entry.Txn.(*proto.CreateSessionTxn); ok {
			c.sessions[entry.Header.ClientID] = cs.TimeoutMilliseconds
		}
	case proto.OpCloseSession:
		delete(c.sessions, entry.Header.ClientID)
	}
	return c.applyTxn(out, entry, source)
}

// applyTxn is ZKDatabase.processTxn: the tree applies the txn (DataTree.processTxn). The session
// table is not its business: a path that applies a createSession or closeSession without the
// session tracker or processTransaction leaves the table as it was, as in ZooKeeper. It reports
// false if the process stops: a txn that throws while the database loads at startup.
func (c *dbCore) applyTxn(out *ready, entry *proto.TxnEntry, source Source) (applyResult, bool) {
	hash := c.mem.txnHash(entry) // Before the apply, which may rewrite a failed multi's sub-txn types.
	res := c.tree.apply(entry)
	out.observe(Event{Kind: EventApply, Zxid: entry.Header.Zxid, Hash: hash, Digest: c.tree.digest(), Source: source})
	if fault := res.res.Fault; fault != nil {
		out.observe(Event{Kind: EventTxnThrew, Zxid: entry.Header.Zxid, Digest: c.tree.digest(), Source: source})
		out.note("apply", fmt.Sprintf("processTxn of %s threw: %v", FormatZxid(entry.Header.Zxid), fault))
		if source == SourceStartup {
			// QuorumPeer.loadDataBase: the RuntimeException leaves FileTxnSnapLog.restore and
			// QuorumPeer.start, and the process exits; every start replays the same log again.
			out.add(effect{kind: effectExit, text: fmt.Sprintf("Unable to load database on disk: processTxn of %s threw: %v",
				FormatZxid(entry.Header.Zxid), fault)})
			return res, false
		}
	}
	if res.digestMismatch {
		var expected int64
		if entry.Digest != nil {
			expected = entry.Digest.TreeDigest
		}
		out.observe(Event{Kind: EventDigestMismatch, Zxid: entry.Header.Zxid, Hash: uint64(expected), Digest: c.tree.digest()})
		out.note("digest", fmt.Sprintf("digest mismatch at %s", FormatZxid(entry.Header.Zxid)))
	}
	return res, true
}

// addCommittedProposal keeps the window of recent committed txns, as ZKDatabase does.
func (c *dbCore) addCommittedProposal(pr *proposal) {
	if n := len(c.committed); n > 0 && c.committed[n-1].zxid >= pr.zxid {
		return // Replaying over what the window already holds (a fast-forward after a restart).
	}
	c.committed = append(c.committed, pr)
	if over := len(c.committed) - c.cfg.CommitLogCount; over > 0 {
		clear(c.committed[:over])
		c.committed = c.committed[over:]
	}
}
