package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/datatree"
	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// proposal is one committed transaction kept in memory for DIFF sync: ZKDatabase's committedLog
// entries and Leader's Proposal objects.
type proposal struct {
	zxid  int64
	hash  uint64
	entry *proto.TxnEntry
	// data is the encoded TxnEntry, a PROPOSAL's data; see encoded.
	data []byte
}

// newProposal wraps a transaction of server p, encoded as it is now: a leader's new proposal, whose
// PROPOSAL goes out at once, before the apply that rewrites a failed multi's sub-txn types.
func newProposal(p *peer, entry *proto.TxnEntry) *proposal {
	pr := p.mem.proposals.New()
	*pr = proposal{zxid: entry.Header.Zxid, hash: p.txnHash(entry), entry: entry, data: p.mem.encode(entry)}
	return pr
}

// newCommittedProposal wraps a transaction for the committed log, to be encoded only if a DIFF
// sends it. Its entry is either applied already (a failed multi's sub-txns typed error, and a
// second apply would rewrite nothing more) or never applied (read back from the txn log for a
// DIFF), so encoding it later gives the bytes encoding it now would.
func newCommittedProposal(m *memory, entry *proto.TxnEntry) *proposal {
	pr := m.proposals.New()
	*pr = proposal{zxid: entry.Header.Zxid, hash: m.txnHash(entry), entry: entry}
	return pr
}

// encoded returns the proposal's data, encoding it on first use with m (the bytes proto.Marshal
// gives, copied into m's slab).
func (pr *proposal) encoded(m *memory) []byte {
	if pr.data == nil {
		pr.data = m.encode(pr.entry)
	}
	return pr.data
}

// zkDatabase is ZKDatabase: the in-memory tree, the sessions with their timeouts, the committed-log
// window (dbCore, zkdbcore.go, whose driver it is), and the way to and from the disk
// (FileTxnSnapLog). It lives as long as the process: an election inside a running server keeps it.
type zkDatabase struct {
	p *peer
	dbCore

	// txnsSinceSnapshot counts appends since the last snapshot, for SyncRequestProcessor.
	txnsSinceSnapshot int
}

func newZKDatabase(p *peer) *zkDatabase {
	return &zkDatabase{p: p, dbCore: dbCore{cfg: p.cfg, mem: p.mem, sid: p.sid, sessions: map[int64]int32{}}}
}

func (db *zkDatabase) disk() durable { return db.p.h.disk() }

func (db *zkDatabase) lastProcessedZxid() int64 {
	if db.tree == nil {
		return 0
	}
	return db.tree.lastProcessedZxid()
}

func (db *zkDatabase) digest() int64 {
	if db.tree == nil {
		return 0
	}
	return db.tree.digest()
}

// loadDataBase is ZKDatabase.loadDataBase: the newest snapshot, then every logged txn after it,
// applied and added to the committed log (a step of the database's core, dbLoad). It returns the
// last processed zxid.
func (db *zkDatabase) loadDataBase(source Source) int64 {
	db.run(dbInput{kind: dbLoad, source: source})
	return db.tree.lastProcessedZxid()
}

// fastForward is ZKDatabase.fastForwardDataBase, run when a server leaves its role: the logged txns
// the tree has not applied yet are applied (a step of the database's core, dbFastForward).
func (db *zkDatabase) fastForward() { db.run(dbInput{kind: dbFastForward}) }

// run is the driver of the database's core: it steps the core with in and applies what it
// returns, stepping it again as long as a ready asks to resume.
func (db *zkDatabase) run(in dbInput) {
	for {
		out := db.step(in, db.disk())
		resume := out.resume
		db.applyEffects(out)
		if !resume {
			return
		}
		in = dbInput{kind: dbContinue}
	}
}

// applyEffects applies a ready of the database's core in order and gives it back.
func (db *zkDatabase) applyEffects(out *ready) {
	p := db.p
	for i := range out.effects {
		e := &out.effects[i]
		if p.applyReport(out, e) {
			continue
		}
		switch e.kind {
		case effectLogDelete:
			p.applyStorageEffect(*e)
		default:
			panic("zabmodel: the database's core asked for " + e.kind.String())
		}
	}
	db.done(out)
}

func decodeLogRecord(r storage.Record) *proto.TxnEntry {
	var entry proto.TxnEntry
	if err := proto.Unmarshal(r.Data, &entry); err != nil {
		panic(fmt.Sprintf("zabmodel: txn log record %s does not decode: %v", FormatZxid(r.Zxid), err))
	}
	return &entry
}

// applyTxn is ZKDatabase.processTxn (dbCore.applyTxn), with its events applied at once.
func (db *zkDatabase) applyTxn(entry *proto.TxnEntry, source Source) applyResult {
	out := db.readies.get()
	res, _ := db.dbCore.applyTxn(out, entry, source)
	db.applyEffects(out)
	return res
}

func (db *zkDatabase) minCommittedLog() int64 {
	if len(db.committed) == 0 {
		return 0
	}
	return db.committed[0].zxid
}

func (db *zkDatabase) maxCommittedLog() int64 {
	if len(db.committed) == 0 {
		return 0
	}
	return db.committed[len(db.committed)-1].zxid
}

// truncateLog is ZKDatabase.truncateLog: truncate the txn log and rebuild the tree from disk.
func (db *zkDatabase) truncateLog(zxid int64) bool {
	db.clear()
	// FileTxnLog.truncate as in 3.8.0 (snap-log-gap) keeps the first record at or after zxid, so
	// a log that lacks zxid keeps one record beyond it; with no record that far it fails.
	if !db.p.applyStorageEffect(effect{kind: effectTruncate, zxid: zxid, legacy: db.p.cfg.Bugs.Has(BugSnapLogGap)}) {
		return false
	}
	if !db.p.cfg.Bugs.Has(BugTruncSnapshot) {
		// FileTxnSnapLog.truncateLog leaves snapshots above the truncation point in place, and
		// the reload below would restore from them: their trees may hold truncated txns. The
		// boundaries bracket the search for them even when it finds none, as a crash between
		// the truncation and the search is a state of its own.
		db.p.applyStorageEffect(effect{kind: effectSnapshotDelete, zxid: zxid})
	}
	db.loadDataBase(SourceTruncate)
	return true
}

// snapshotReach is the highest zxid whose transaction a snapshot file may reflect: its name's, or,
// for a fuzzy snapshot, the zxid of the digest stored after its nodes, the last transaction the
// tree had applied when the walk ended (datatree.StoredDigest). A snapshot thread that walks the
// tree while a learner leaving its role fast-forwards it to its log (ZooKeeperServer.shutdown,
// ZKDatabase.fastForwardDataBase) writes, under the name of the zxid before, proposals that were
// logged and never committed; once a TRUNC removes them from the log, only this stored zxid tells
// that the file holds them (seed 3071591 of the sweep from 3000001). FileTxnSnapLog.restore sees
// it too late: its "Highest txn zxid ... is not covering the snapshot digest zxid" is a warning.
func snapshotReach(s storage.Snapshot) int64 {
	reach := s.Zxid
	if digest, ok := datatree.StoredDigest(s.Data); ok {
		reach = max(reach, digest.Zxid)
	}
	return reach
}

// clearLog deletes the txn log after a SNAP sync's snapshot is durable.
func (db *zkDatabase) clearLog() {
	if db.disk().Len() == 0 {
		return
	}
	db.p.applyStorageEffect(effect{kind: effectLogDelete})
}

// append writes a txn to the log, unsynced (ZKDatabase.append), between its boundaries (the
// driver's applyStorageEffect). It reports false for a zxid that is not above the last logged one,
// which FileTxnLog refuses.
func (db *zkDatabase) append(entry *proto.TxnEntry) bool {
	return db.p.applyStorageEffect(effect{kind: effectAppend, entry: entry})
}

// appendRecord is the append itself, the storage effect effectAppend.
func (db *zkDatabase) appendRecord(entry *proto.TxnEntry) bool {
	if err := db.disk().Append(storage.Record{Zxid: entry.Header.Zxid, Data: db.p.mem.encodeScratch(entry)}); err != nil { // Append copies the data.
		db.p.note("log", "append refused: %v", err)
		return false
	}
	db.txnsSinceSnapshot++
	db.p.observe(Event{Kind: EventLog, Zxid: entry.Header.Zxid, Hash: db.p.txnHash(entry)})
	return true
}

// fsyncNow makes the whole log durable at once (ZKDatabase.commit called synchronously).
func (db *zkDatabase) fsyncNow() { db.p.applyStorageEffect(effect{kind: effectFsyncAll}) }

// snapshot is ZooKeeperServer.takeSnapshot(): the tree and the sessions at the last processed zxid,
// written without fsync, as every snapshot is but a learner's after a SNAP sync.
func (db *zkDatabase) snapshot() { db.takeSnapshot(false) }

// takeSnapshot is ZooKeeperServer.takeSnapshot(syncSnap): with syncSnap the file is fsynced
// (FileSnap.serialize through SnapStream's AtomicFileOutputStream); without, a crash may keep it,
// leave it partly written or lose it, and the restore then takes the newest valid snapshot.
func (db *zkDatabase) takeSnapshot(syncSnap bool) {
	if db.tree == nil {
		return
	}
	db.p.applyStorageEffect(effect{kind: effectSnapshotSave, legacy: syncSnap})
}

// deserializeSnapshot replaces the database by a leader's snapshot (Learner's SNAP case).
func (db *zkDatabase) deserializeSnapshot(b []byte, zxid int64) error {
	t, sessions, err := deserializeSync(b, zxid, db.p.cfg)
	if err != nil {
		return err
	}
	db.clear()
	db.tree, db.sessions, db.initialized = t, sessions, true
	db.p.observe(Event{Kind: EventTreeLoaded, Zxid: zxid, Digest: t.digest(), Source: SourceSnap})
	return nil
}

// proposalsFromLog returns the logged txns after peerZxid for a DIFF from the txn log, or nil if the
// log does not hold peerZxid itself or is larger than sizeLimit bytes (ZKDatabase
// .getProposalsFromTxnLog). A sizeLimit of 0 means no limit.
func (db *zkDatabase) proposalsFromLog(peerZxid int64, sizeLimit int64) []*proposal {
	records := db.disk().Records(peerZxid - 1)
	if len(records) == 0 || records[0].Zxid != peerZxid {
		return nil
	}
	var size int64
	for _, r := range records {
		size += int64(len(r.Data))
	}
	if sizeLimit > 0 && size > sizeLimit {
		return nil // 0 means no limit, as in ZKDatabase.getProposalsFromTxnLog.
	}
	out := make([]*proposal, 0, len(records))
	for _, r := range records {
		out = append(out, newCommittedProposal(db.p.mem, decodeLogRecord(r)))
	}
	return out
}

// txnLogSizeLimit is ZKDatabase.calculateTxnLogSizeLimit: a fraction of the newest snapshot's size.
func (db *zkDatabase) txnLogSizeLimit() int64 {
	snap, ok := db.disk().LatestSnapshot()
	if !ok {
		return 0
	}
	return int64(float64(len(snap.Data)) * db.p.cfg.SnapshotSizeFactor)
}

func (db *zkDatabase) txnLogSyncEnabled() bool { return db.p.cfg.SnapshotSizeFactor >= 0 }

// truncateRecords is the truncation itself, the storage effect effectTruncate. It reports false if
// 3.8.0's truncation (legacy) fails, having noted why.
func (db *zkDatabase) truncateRecords(zxid int64, legacy bool) bool {
	if legacy {
		if err := db.disk().Truncate(zxid); err != nil {
			db.p.note("sync", "truncate to %s failed: %v", FormatZxid(zxid), err)
			return false
		}
	} else {
		db.disk().TruncateAfter(zxid)
	}
	if db.disk().Len() == 0 {
		db.p.observe(Event{Kind: EventLogDeleted})
	} else {
		db.p.observe(Event{Kind: EventTruncate, Zxid: db.disk().LastZxid()})
	}
	return true
}
