package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/electionmodel"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// peer is one incarnation of a server process: QuorumPeer and everything it owns in memory.
type peer struct {
	cfg *Config
	h   host
	mem *memory
	sid int64
	// nodes is every server's node, by sid: where a learner finds its leader.
	nodes map[int64]sim.NodeID

	db *zkDatabase

	// peerCore is QuorumPeer's role loop and load: the election, the role, the vote, the epochs
	// (peercore.go).
	peerCore
	cnx           *cnxManager
	electionTimer sim.TimerID

	leader  *leader
	learner *learner
	zk      *zkServer // the ZooKeeperServer of the current role, nil while LOOKING
	serving bool
	clients *clientListener

	// syncMode is QuorumPeer.syncMode: how the last synchronization with a leader began, until its
	// NEWLEADER. It outlives the role, as the QuorumPeer field does.
	syncMode syncMode
}

// syncMode is QuorumPeer.SyncMode.
type syncMode uint8

const (
	syncModeNone syncMode = iota
	syncModeDiff
	syncModeSnap
	syncModeTrunc
)

var syncModeNames = [...]string{syncModeNone: "none", syncModeDiff: "diff", syncModeSnap: "snap", syncModeTrunc: "trunc"}

func (m syncMode) String() string {
	if int(m) < len(syncModeNames) {
		return syncModeNames[m]
	}
	return fmt.Sprintf("syncMode(%d)", m)
}

// txnHash returns TxnHash(entry), computed once per transaction object (memory.txnHash).
func (p *peer) txnHash(entry *proto.TxnEntry) uint64 { return p.mem.txnHash(entry) }

// newPeer makes a new incarnation of server sid of an ensemble configured by cfg, whose servers'
// nodes are nodes, acting through h.
func newPeer(cfg *Config, sid int64, h host, mem *memory, nodes map[int64]sim.NodeID) *peer {
	p := &peer{cfg: cfg, sid: sid, h: h, mem: mem, nodes: nodes, peerCore: peerCore{cfg: cfg}}
	election, err := electionmodel.New(electionmodel.Config{
		ID: sid, Voters: cfg.VoterSids(), Participant: cfg.IsVoter(sid),
	})
	if err != nil {
		panic(err) // The ensemble's configuration was validated: this is a bug.
	}
	p.election = election
	p.cnx = newCnxManager(p.h, sid, nodes, p)
	p.db = newZKDatabase(p)
	p.clients = newClientListener(p)
	return p
}

func (p *peer) observe(ev Event) {
	ev.Server = p.sid
	if ev.Role == 0 {
		ev.Role = p.role
	}
	p.h.observe(ev)
}

func (p *peer) note(kind, format string, args ...any) { p.h.note(kind, format, args...) }

// start is QuorumPeer.start: load the database and the epochs, open the ports, start electing.
func (p *peer) start() {
	if !p.loadDataBase() {
		return
	}
	if err := p.cnx.listen(); err != nil { // The port is the process's own: a bug.
		panic(err)
	}
	p.clients.listen()
	p.note("peer", "started: lastZxid=%s acceptedEpoch=%d currentEpoch=%d", FormatZxid(p.db.lastProcessedZxid()), p.acceptedEpoch, p.currentEpoch)
	if p.cfg.Voters == 1 {
		p.runStandalone()
		return
	}
	p.startElection()
}

// runStandalone is ZooKeeperServerMain: a single server with no election and no ZAB. It counts as
// the leader of its current epoch, and each txn it logs and fsyncs is committed.
func (p *peer) runStandalone() {
	p.role = Leading
	p.roleGeneration++
	zk := newZKServer(p, kindStandalone)
	p.zk = zk
	zk.hzxid = zk.loadData()
	// The standalone server's history is what it loaded: its tree, or its log where that reaches
	// further (see heldHistory).
	held := heldHistory{applied: p.db.lastProcessedZxid(), logged: p.db.disk().LastZxid()}
	p.observe(Event{Kind: EventEstablished, Epoch: p.currentEpoch, Zxid: zk.hzxid, Through: held.through()})
	zk.startup()
	zk.startContainerManager() // ZooKeeperServerMain starts it after the server
	p.startServing()
}

// loadDataBase is QuorumPeer.loadDataBase: the tree from the latest snapshot and the txn log, then
// the epoch files with their startup checks (peerCore.stepLoad). It reports false if a check
// failed, and the process stopped.
func (p *peer) loadDataBase() bool {
	in := peerInput{kind: peerLoadStart}
	for {
		out := p.peerCore.stepLoad(in, p.h.disk())
		resume := out.resume
		in = peerInput{kind: peerLoadContinue}
		for i := range out.effects {
			e := &out.effects[i]
			if p.applyReport(out, e) {
				continue
			}
			switch e.kind {
			case effectLoadDatabase:
				p.db.loadDataBase(SourceStartup)
				in.zxid = p.db.lastProcessedZxid()
			case effectEpochFile:
				p.writeEpochFile(e.label, e.zxid)
			case effectSetEpoch:
				p.setCurrentEpoch(e.zxid)
			default:
				panic("zabmodel: QuorumPeer's load asked for " + e.kind.String())
			}
		}
		p.peerCore.done(out)
		if !resume {
			return !p.load.failed
		}
	}
}

// writeEpochFile is QuorumPeer.writeLongToFile through AtomicFileOutputStream: the value goes to a
// temporary file that is then renamed over the real one. A crash point sits between the two steps;
// a crash there leaves the temporary file behind, which is what ZOOKEEPER-1653's startup check reads.
func (p *peer) writeEpochFile(name string, v int64) {
	p.applyStorageEffect(effect{kind: effectEpochFile, label: name, zxid: v})
}

// epochFilePoints are the boundaries of each epoch file's write: before it, between the temporary
// file and the rename, and after it.
var epochFilePoints = map[string][3]string{
	storage.AcceptedEpochFile: {"before-epoch-write:" + storage.AcceptedEpochFile, "epoch-file-renamed:" + storage.AcceptedEpochFile, "after-epoch-write:" + storage.AcceptedEpochFile},
	storage.CurrentEpochFile:  {"before-epoch-write:" + storage.CurrentEpochFile, "epoch-file-renamed:" + storage.CurrentEpochFile, "after-epoch-write:" + storage.CurrentEpochFile},
}

func (p *peer) setCurrentEpoch(e int64) {
	p.writeEpochFile(storage.CurrentEpochFile, e)
	p.currentEpoch = e
	p.observe(Event{Kind: EventCurrentEpoch, Epoch: e})
}

func (p *peer) setAcceptedEpoch(e int64) {
	p.writeEpochFile(storage.AcceptedEpochFile, e)
	p.acceptedEpoch = e
	p.observe(Event{Kind: EventAcceptedEpoch, Epoch: e})
}

// crashPoint is a boundary between two persistence steps (see boundary).
func (p *peer) crashPoint(name string) { p.boundary(name, 0) }

// --- Election -------------------------------------------------------------------------------------

func (p *peer) self() electionmodel.Self {
	return electionmodel.Self{LastLoggedZxid: p.lastLoggedZxid(), CurrentEpoch: p.currentEpoch}
}

// lastLoggedZxid is QuorumPeer.getLastLoggedZxid: a database that a role's full shutdown cleared
// (a learner that left between SNAP and NEWLEADER) is loaded from disk again first, epoch files
// and their checks included (QuorumPeer.loadDataBase). The process stops if they fail, as at
// startup; in Java the RuntimeException would leave the peer looping in LOOKING, no more useful.
func (p *peer) lastLoggedZxid() int64 {
	if !p.db.initialized {
		p.note("peer", "the database was cleared: loading it from disk")
		if !p.loadDataBase() {
			return 0
		}
	}
	return p.db.lastProcessedZxid()
}

// startElection enters LOOKING and starts a round (QuorumPeer's loop reaching lookForLeader).
func (p *peer) startElection() { p.runPeer(peerInput{kind: peerLook}) }

func (p *peer) onNotification(from int64, payload []byte) {
	n, err := electionmodel.Decode(from, payload)
	if err != nil {
		p.note("election", "dropped a notification: %v", err)
		return
	}
	p.runPeer(peerInput{kind: peerNotification, notification: n, self: p.self()})
}

func (p *peer) onElectionTimer() {
	p.electionTimer = 0
	p.runPeer(peerInput{kind: peerElectionTimeout, delivered: p.cnx.haveDelivered(), self: p.self()})
}

// endRole is what QuorumPeer's loop does when lead() or followLeader() returns: shut the role down
// and go back to LOOKING. The new round starts as its own event, as the Java loop iterates.
func (p *peer) endRole(reason string) { p.runPeer(peerInput{kind: peerRoleEnd, reason: reason}) }

// runPeer is the driver of QuorumPeer's core: it steps the core with in, applies the ready, and
// steps it again while the ready asks to resume, with the answer of its effectAskSelf.
func (p *peer) runPeer(in peerInput) {
	for {
		out := p.peerCore.step(in)
		resume := out.resume
		self := p.applyPeerEffects(out)
		if !resume {
			return
		}
		in = peerInput{kind: peerContinue, self: self}
	}
}

// applyPeerEffects applies a ready of QuorumPeer's core in order, gives it back, and returns the
// answer of its effectAskSelf, if it held one.
func (p *peer) applyPeerEffects(out *ready) electionmodel.Self {
	var self electionmodel.Self
	for i := range out.effects {
		e := &out.effects[i]
		if p.applyReport(out, e) {
			continue
		}
		switch e.kind {
		case effectNotify:
			p.cnx.toSend(e.zxid, e.packet)
		case effectConnectAll:
			p.cnx.connectAll()
		case effectElectionTimer:
			p.h.cancel(p.electionTimer)
			p.electionTimer = 0
			if e.valid {
				p.electionTimer = p.h.setTimer(clock.Duration(e.zxid), (*electionTimer)(p))
			}
		case effectLead:
			p.lead()
		case effectFollow:
			p.follow(e.zxid)
		case effectRoleShutdown:
			if p.leader != nil {
				p.leader.shutdown()
				p.leader = nil
			}
			if p.learner != nil {
				p.learner.shutdown()
				p.learner = nil
			}
			p.shutdownServer()
		case effectPost:
			p.h.setTimer(0, &electionStartTimer{p: p, generation: uint64(e.zxid)}) // A post: a step of its own.
		case effectAskSelf:
			self = p.self()
		default:
			panic("zabmodel: QuorumPeer's core asked for " + e.kind.String())
		}
	}
	p.peerCore.done(out)
	return self
}

// shutdownServer stops the role's ZooKeeperServer (ZooKeeperServer.shutdown(false)) and closes every
// client connection (QuorumPeer.closeAllConnections).
func (p *peer) shutdownServer() {
	if p.serving {
		p.serving = false
		p.observe(Event{Kind: EventStopServing})
	}
	p.clients.closeAll()
	if p.zk != nil {
		p.zk.shutdown()
		p.zk = nil
	}
}

// startServing marks the role's server as serving clients.
func (p *peer) startServing() {
	p.serving = true
	p.observe(Event{Kind: EventServing, Epoch: p.currentEpoch})
	p.note("peer", "serving as %s in epoch %d", p.role, p.currentEpoch)
}

// exit is ServiceUtils.requestSystemExit: the JVM stops.
func (p *peer) exit(format string, args ...any) {
	p.h.halt(fmt.Sprintf(format, args...))
}

// sendRecords sends the concatenated encoding of records, encoded in the scratch encoder: the host
// copies the payload, so the message costs one allocation of its exact size.
func (p *peer) sendRecords(c net.ConnID, records ...proto.Record) {
	p.h.send(c, p.mem.encodeScratch(records...))
}
