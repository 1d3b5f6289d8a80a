package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/electionmodel"
	"github.com/zabsim/zabsim/internal/slab"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// internedStringsMax bounds the strings (paths, scheme names, identities) the ensemble's decoder
// keeps to return again: a workload's paths number in the hundreds.
const internedStringsMax = 4096

// Ensemble is a set of simulated ZooKeeper servers sharing one world and one network.
type Ensemble struct {
	w       *sim.World
	nw      *net.Network
	cfg     Config
	servers []*Server
	nodes   map[int64]sim.NodeID // every server's node, by sid: the election transport's peers

	crashHook     func(sid int64, point string) bool
	tap           func(Event)
	clientAddress func(sim.NodeID) string

	// scratch is the encoder of every encoding that does not outlive the call that made it: the
	// bytes hashed by TxnHash, and messages handed to the network, which copies what it is sent.
	// decoder is the decoder of every decoding (decoded records copy what they keep). A world runs
	// on one goroutine and no encoding or decoding calls back into a server, so the servers of an
	// ensemble can share them.
	scratch proto.Encoder
	decoder proto.Decoder
	// decoded holds the decoder's copies of buffers (packet and transaction data), carved from
	// shared chunks: each copy is its own bytes, so servers still share no memory (package slab).
	decoded slab.Bytes
}

// SetCrashHook installs the scenario's crash points: hook is asked, at each named point between two
// persistence steps of a server, whether the server crashes there. Points are named like
// "epoch-file-renamed:currentEpoch" and "newleader-appended".
func (e *Ensemble) SetCrashHook(hook func(sid int64, point string) bool) { e.crashHook = hook }

// SetClientAddress decides the IP address a server sees for a client node (for "ip" ACLs and auth).
// The default gives node n the address 10.0.(n/256).(n%256).
func (e *Ensemble) SetClientAddress(fn func(sim.NodeID) string) { e.clientAddress = fn }

// NewEnsemble validates cfg, registers one node per server ("zk1", "zk2", ...) and returns the
// ensemble, not yet started.
func NewEnsemble(w *sim.World, nw *net.Network, cfg Config) (*Ensemble, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Ensemble{w: w, nw: nw, cfg: cfg, nodes: map[int64]sim.NodeID{}}
	e.decoder.SetCopies(&e.decoded)
	e.decoder.InternStrings(internedStringsMax)
	e.clientAddress = func(n sim.NodeID) string { return fmt.Sprintf("10.0.%d.%d", n/256, n%256) }
	for _, sid := range cfg.Sids() {
		s := &Server{ens: e, sid: sid, disk: storage.New()}
		s.node = w.AddNode(fmt.Sprintf("zk%d", sid), s)
		e.servers = append(e.servers, s)
		e.nodes[sid] = s.node
	}
	nw.Describe(QuorumPort, describePacket)
	return e, nil
}

// Config returns the ensemble's configuration, defaults applied.
func (e *Ensemble) Config() Config { return e.cfg }

// Start starts every server process, in sid order.
func (e *Ensemble) Start() {
	for _, s := range e.servers {
		s.start()
	}
}

// Servers returns the servers in sid order.
func (e *Ensemble) Servers() []*Server { return e.servers }

// Server returns the server with the given sid.
func (e *Ensemble) Server(sid int64) *Server {
	if sid < 1 || int(sid) > len(e.servers) {
		panic(fmt.Sprintf("zabmodel: no server %d", sid))
	}
	return e.servers[sid-1]
}

// Nodes returns every server's node, in sid order: the connect string of a client.
func (e *Ensemble) Nodes() []sim.NodeID {
	out := make([]sim.NodeID, len(e.servers))
	for i, s := range e.servers {
		out[i] = s.node
	}
	return out
}

// Leader returns the sid and epoch of a server that is leading and serving, if any. With a
// partition there may be an old leader that has not noticed yet; Leader returns the one with the
// highest epoch.
func (e *Ensemble) Leader() (sid, epoch int64, ok bool) {
	for _, s := range e.servers {
		if p := s.p; p != nil && p.role == Leading && p.serving && p.currentEpoch >= epoch {
			sid, epoch, ok = s.sid, p.currentEpoch, true
		}
	}
	return sid, epoch, ok
}

func (e *Ensemble) observe(ev Event) {
	ev.Time = e.w.Now()
	if e.tap != nil {
		e.tap(ev)
	}
	if e.cfg.Observer != nil {
		e.cfg.Observer.Observe(ev)
	}
}

// SetEventTap installs a second observer of every event, for debugging and tests.
func (e *Ensemble) SetEventTap(fn func(Event)) { e.tap = fn }

// Server is one ZooKeeper server process (QuorumPeer) in the world. Its disk is durable: it survives
// crashes; everything else lives in the current incarnation and is lost with it.
type Server struct {
	ens  *Ensemble
	sid  int64
	node sim.NodeID
	disk *storage.Disk
	p    *peer // the running incarnation; nil while crashed or halted

	// exit says why the process stopped on its own (a refused start, System.exit), if it did.
	exit string
}

// Sid returns the server's id.
func (s *Server) Sid() int64 { return s.sid }

// Node returns the server's node in the world.
func (s *Server) Node() sim.NodeID { return s.node }

// Disk returns the server's durable storage, for inspection.
func (s *Server) Disk() *storage.Disk { return s.disk }

// Exit says why the process stopped on its own, or "" if it did not.
func (s *Server) Exit() string { return s.exit }

// State is a snapshot of a server's state for reports and tests.
type State struct {
	Sid                 int64
	Up                  bool
	Role                Role
	Serving             bool
	AcceptedEpoch       int64
	CurrentEpoch        int64
	LastProcessedZxid   int64
	LastLoggedZxid      int64
	Digest              int64
	Leader              int64
	ElectionRound       int64
	SessionCount        int
	ClientConnections   int
	OutstandingRequests int
	// LastCommitted is, on an established leader, the zxid of the last txn it committed.
	LastCommitted int64
}

// State returns the server's current state.
func (s *Server) State() State {
	st := State{Sid: s.sid, LastLoggedZxid: s.disk.LastZxid()}
	p := s.p
	if p == nil {
		return st
	}
	st.Up, st.Role, st.Serving = true, p.role, p.serving
	st.AcceptedEpoch, st.CurrentEpoch = p.acceptedEpoch, p.currentEpoch
	st.LastProcessedZxid, st.Digest = p.db.lastProcessedZxid(), p.db.digest()
	st.Leader, st.ElectionRound = p.vote.Leader, p.election.LogicalClock()
	if p.db.tree != nil {
		st.SessionCount = len(p.db.sessions)
	}
	st.ClientConnections = len(p.clients.conns)
	if p.leader != nil && p.leader.established {
		st.LastCommitted = p.leader.lastCommitted
	}
	return st
}

// start runs the process for the first time or after a crash (sim.Process.Restart).
func (s *Server) start() {
	s.exit = ""
	p := newPeer(s)
	s.p = p
	p.start()
}

// Crash implements sim.Process: the incarnation's memory is gone; of the txn log's unsynced tail,
// the operating system may have written some records (chosen by the world) and lost the rest.
func (s *Server) Crash() {
	if s.p != nil {
		s.p.die()
		s.p = nil
	}
	unsynced := s.disk.Unsynced()
	kept := s.ens.w.Choose(unsynced + 1)
	if lost := s.disk.Crash(kept); lost > 0 {
		s.ens.observe(Event{Kind: EventLost, Server: s.sid, Zxid: s.disk.LastZxid(), Count: lost})
	}
	// Snapshot files written without fsync fare with the log's unsynced tail (storage.Disk.Crash).
	if partial, missing := s.disk.CrashedSnapshots(); partial+missing > 0 {
		s.ens.w.Note(s.node, "crash", "unsynced snapshot files lost: %d partly written, %d missing", partial, missing)
	}
	s.ens.observe(Event{Kind: EventCrash, Server: s.sid})
}

// Restart implements sim.Process.
func (s *Server) Restart() {
	s.ens.observe(Event{Kind: EventRestart, Server: s.sid})
	s.start()
}

// halt stops the process on its own, as System.exit or a refused start does: the node is crashed,
// and a supervisor (the scenario) may start it again.
func (s *Server) halt(reason string) {
	s.ens.w.Note(s.node, "exit", "%s", reason)
	s.ens.w.Crash(s.node)
	s.exit = reason
}

// peer is one incarnation of a server process: QuorumPeer and everything it owns in memory.
type peer struct {
	s   *Server
	ens *Ensemble
	cfg *Config
	h   *host
	sid int64

	dead bool

	acceptedEpoch, currentEpoch int64
	db                          *zkDatabase

	election      *electionmodel.Election
	cnx           *cnxManager
	electionTimer sim.TimerID
	lastVote      electionmodel.Vote // the last proposal reported as EventVote

	role    Role
	vote    electionmodel.Vote // QuorumPeer.currentVote once decided
	leader  *leader
	learner *learner
	zk      *zkServer // the ZooKeeperServer of the current role, nil while LOOKING
	serving bool
	clients *clientListener

	// roleGeneration increases with every role change, so that callbacks of an earlier role can
	// tell they are stale.
	roleGeneration uint64

	// syncMode is QuorumPeer.syncMode: how the last synchronization with a leader began, until its
	// NEWLEADER. It outlives the role, as the QuorumPeer field does.
	syncMode syncMode

	// hashes remembers the TxnHash of recent transactions; see txnHash.
	hashes [txnHashCacheSize]cachedTxnHash
}

// syncMode is QuorumPeer.SyncMode.
type syncMode uint8

const (
	syncModeNone syncMode = iota
	syncModeDiff
	syncModeSnap
	syncModeTrunc
)

// txnHashCacheSize is how many transactions' hashes a server remembers, indexed by zxid. A server
// hashes one transaction when it proposes it, logs it, applies it and keeps it in its committed
// log, a few events apart, with at most a few hundred other transactions in between.
const txnHashCacheSize = 256

type cachedTxnHash struct {
	entry *proto.TxnEntry
	hash  uint64
}

// txnHash returns TxnHash(entry), computed once per transaction object. The cache is keyed by the
// object itself, not by its zxid: two servers, or a truncated and a new transaction with one zxid,
// never share an object. An entry is never modified after it is built except by the tree's apply
// of a failed multi, which rewrites sub-txn types in a way that TxnHash ignores by design.
func (p *peer) txnHash(entry *proto.TxnEntry) uint64 {
	slot := &p.hashes[uint64(entry.Header.Zxid)%txnHashCacheSize]
	if slot.entry == entry {
		return slot.hash
	}
	hash := txnHashWith(p.h.scratch, entry)
	slot.entry, slot.hash = entry, hash
	return hash
}

func newPeer(s *Server) *peer {
	e := s.ens
	p := &peer{s: s, ens: e, cfg: &e.cfg, sid: s.sid, h: newHost(e.w, e.nw, s.node, s.disk, &e.scratch, &e.decoder)}
	election, err := electionmodel.New(electionmodel.Config{
		ID: s.sid, Voters: e.cfg.VoterSids(), Participant: e.cfg.IsVoter(s.sid),
	})
	if err != nil {
		panic(err) // The ensemble's configuration was validated: this is a bug.
	}
	p.election = election
	p.cnx = newCnxManager(p.h, s.sid, e.nodes, p.onNotification)
	p.db = newZKDatabase(p)
	p.clients = newClientListener(p)
	return p
}

func (p *peer) alive() bool { return !p.dead && p.h.alive() }

func (p *peer) observe(ev Event) {
	if p.alive() {
		ev.Server = p.sid
		if ev.Role == 0 {
			ev.Role = p.role
		}
		p.ens.observe(ev)
	}
}

func (p *peer) note(kind, format string, args ...any) { p.h.note(kind, format, args...) }

// die marks the incarnation dead. Nothing it still runs has any effect.
func (p *peer) die() { p.dead = true }

// start is QuorumPeer.start: load the database and the epochs, open the ports, start electing.
func (p *peer) start() {
	if err := p.loadDataBase(); err != nil {
		p.s.halt(err.Error())
		return
	}
	if !p.alive() {
		return // A crash point fired while the epoch files were written.
	}
	if err := p.cnx.listen(); err != nil {
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
	p.observe(Event{Kind: EventEstablished, Epoch: p.currentEpoch, Zxid: zk.hzxid})
	zk.startup()
	zk.startContainerManager() // ZooKeeperServerMain starts it after the server
	p.startServing()
}

// loadDataBase is QuorumPeer.loadDataBase: the tree from the latest snapshot and the txn log, then
// the epoch files with their startup checks.
func (p *peer) loadDataBase() error {
	p.db.loadDataBase(SourceStartup)
	epochOfZxid := EpochOf(p.db.lastProcessedZxid())
	current, ok := p.readEpochFile(storage.CurrentEpochFile)
	if !ok {
		current = epochOfZxid
		p.writeEpochFile(storage.CurrentEpochFile, current)
	}
	p.currentEpoch = current
	accepted, acceptedOK := p.readEpochFile(storage.AcceptedEpochFile)
	if epochOfZxid > current {
		tmp, ok := p.readEpochFile(storage.CurrentEpochTmpFile)
		switch {
		case ok && !p.cfg.Bugs.Has(BugZK1653):
			p.note("peer", "%s found: setting the current epoch to %d", storage.CurrentEpochTmpFile, tmp)
			p.setCurrentEpoch(tmp)
		case acceptedOK && accepted >= epochOfZxid && !p.cfg.Bugs.Has(BugEpochRefusal) && !p.cfg.Bugs.Has(BugZK1653):
			// The server crashed at NEWLEADER after persisting the synced txns of the new epoch (a
			// late joiner's DIFF holds them) and before persisting currentEpoch, the order that
			// ZOOKEEPER-4643's fix prescribes. It had accepted that epoch, and every txn of it in its
			// log was committed: the epoch of its last txn is its current epoch.
			p.note("peer", "current epoch %d is older than the last zxid %s of an accepted epoch: setting it to %d",
				current, FormatZxid(p.db.lastProcessedZxid()), epochOfZxid)
			p.setCurrentEpoch(epochOfZxid)
		default:
			return fmt.Errorf("the current epoch, %d, is older than the last zxid, %s", current, FormatZxid(p.db.lastProcessedZxid()))
		}
		if !p.alive() {
			return nil
		}
	}
	if !acceptedOK {
		accepted = epochOfZxid
		p.writeEpochFile(storage.AcceptedEpochFile, accepted)
	}
	p.acceptedEpoch = accepted
	if p.acceptedEpoch < p.currentEpoch {
		return fmt.Errorf("the accepted epoch, %d, is less than the current epoch, %d", p.acceptedEpoch, p.currentEpoch)
	}
	return nil
}

func (p *peer) readEpochFile(name string) (int64, bool) {
	b, ok := p.s.disk.ReadFile(name)
	if !ok {
		return 0, false
	}
	var v int64
	if _, err := fmt.Sscan(string(b), &v); err != nil {
		panic(fmt.Sprintf("zabmodel: corrupt epoch file %s: %q", name, b)) // Corrupting synced data is outside the fault model.
	}
	return v, true
}

// writeEpochFile is QuorumPeer.writeLongToFile through AtomicFileOutputStream: the value goes to a
// temporary file that is then renamed over the real one. A crash point sits between the two steps;
// a crash there leaves the temporary file behind, which is what ZOOKEEPER-1653's startup check reads.
func (p *peer) writeEpochFile(name string, v int64) {
	if !p.alive() {
		return
	}
	tmp := name + ".tmp"
	p.s.disk.WriteFile(tmp, []byte(fmt.Sprint(v)))
	if p.crashPoint("epoch-file-renamed:" + name) {
		return
	}
	p.s.disk.WriteFile(name, []byte(fmt.Sprint(v)))
	p.s.disk.DeleteFile(tmp)
}

func (p *peer) setCurrentEpoch(e int64) {
	p.writeEpochFile(storage.CurrentEpochFile, e)
	if !p.alive() {
		return
	}
	p.currentEpoch = e
	p.observe(Event{Kind: EventCurrentEpoch, Epoch: e})
}

func (p *peer) setAcceptedEpoch(e int64) {
	p.writeEpochFile(storage.AcceptedEpochFile, e)
	if !p.alive() {
		return
	}
	p.acceptedEpoch = e
	p.observe(Event{Kind: EventAcceptedEpoch, Epoch: e})
}

// crashPoint lets the scenario crash the process between two persistence steps. It returns true if
// the process is now dead.
func (p *peer) crashPoint(name string) bool {
	if !p.alive() {
		return true
	}
	if hook := p.ens.crashHook; hook != nil && hook(p.sid, name) {
		p.note("fault", "crash at %s", name)
		p.ens.w.Crash(p.s.node)
	}
	return !p.alive()
}

// --- Election -------------------------------------------------------------------------------------

func (p *peer) self() electionmodel.Self {
	return electionmodel.Self{LastLoggedZxid: p.lastLoggedZxid(), CurrentEpoch: p.currentEpoch}
}

// lastLoggedZxid is QuorumPeer.getLastLoggedZxid: a database that a role's full shutdown cleared
// (a learner that left between SNAP and NEWLEADER) is loaded from disk again first, epoch files
// and their checks included (QuorumPeer.loadDataBase). The process stops if they fail, as at
// startup; in Java the RuntimeException would leave the peer looping in LOOKING, no more useful.
func (p *peer) lastLoggedZxid() int64 {
	if !p.db.initialized && p.alive() {
		p.note("peer", "the database was cleared: loading it from disk")
		if err := p.loadDataBase(); err != nil {
			p.exit("%v", err)
			return 0
		}
	}
	return p.db.lastProcessedZxid()
}

// startElection enters LOOKING and starts a round (QuorumPeer's loop reaching lookForLeader).
func (p *peer) startElection() {
	if !p.alive() {
		return
	}
	p.role = Looking
	p.roleGeneration++
	p.note("peer", "LOOKING")
	p.handleElection(p.election.Start(p.self()))
}

func (p *peer) onNotification(from int64, payload []byte) {
	if !p.alive() {
		return
	}
	n, err := electionmodel.Decode(from, payload)
	if err != nil {
		p.note("election", "dropped a notification: %v", err)
		return
	}
	p.handleElection(p.election.Receive(n, p.self()))
}

func (p *peer) onElectionTimer() {
	p.electionTimer = 0
	p.handleElection(p.election.Timeout(p.cnx.haveDelivered(), p.self()))
}

func (p *peer) handleElection(out electionmodel.Output) {
	if !p.alive() {
		return
	}
	if p.role == Looking {
		if v := p.election.Proposal(); v.Leader != p.lastVote.Leader || v.Zxid != p.lastVote.Zxid ||
			v.PeerEpoch != p.lastVote.PeerEpoch || p.election.LogicalClock() != p.lastVote.ElectionEpoch {
			p.lastVote = v
			p.lastVote.ElectionEpoch = p.election.LogicalClock()
			p.observe(Event{Kind: EventVote, Leader: v.Leader, Zxid: v.Zxid, Epoch: v.PeerEpoch, Round: p.election.LogicalClock()})
		}
	}
	for _, s := range out.Send {
		p.cnx.toSend(s.To, s.Notification.Encode())
	}
	if out.ConnectAll {
		p.cnx.connectAll()
	}
	if out.Timer.Set || out.Timer.Cancel {
		p.h.cancel(p.electionTimer)
		p.electionTimer = 0
	}
	if out.Timer.Set {
		p.electionTimer = p.h.after(out.Timer.After, p.onElectionTimer)
	}
	if out.Decided != nil {
		p.decided(*out.Decided)
	}
}

// decided leaves LOOKING for the role the election chose.
func (p *peer) decided(v electionmodel.Vote) {
	p.vote = v
	p.roleGeneration++
	switch v.State {
	case electionmodel.Leading:
		p.role = Leading
	case electionmodel.Following:
		p.role = Following
	default:
		p.role = Observing
	}
	p.note("peer", "%s (leader %d, round %#x, peerEpoch %d)", p.role, v.Leader, v.ElectionEpoch, v.PeerEpoch)
	p.observe(Event{Kind: EventElected, Leader: v.Leader, Epoch: v.PeerEpoch, Round: v.ElectionEpoch})
	switch p.role {
	case Leading:
		p.lead()
	default:
		p.follow(v.Leader)
	}
}

// endRole is what QuorumPeer's loop does when lead() or followLeader() returns: shut the role down
// and go back to LOOKING. The new round starts as its own event, as the Java loop iterates.
func (p *peer) endRole(reason string) {
	if !p.alive() || p.role == Looking {
		return
	}
	p.note("peer", "leaving %s: %s", p.role, reason)
	if p.leader != nil {
		p.leader.shutdown()
		p.leader = nil
	}
	if p.learner != nil {
		p.learner.shutdown()
		p.learner = nil
	}
	p.shutdownServer()
	p.election.Leave()
	p.role = Looking
	p.roleGeneration++
	generation := p.roleGeneration
	p.h.post(func() {
		if p.alive() && p.role == Looking && p.roleGeneration == generation {
			p.startElection()
		}
	})
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
	if !p.alive() {
		return
	}
	p.s.halt(fmt.Sprintf(format, args...))
}

// TracksSession reports whether the server's session tracker holds the session: on a leader or a
// standalone server, whether the session lives; on a learner, always false.
func (s *Server) TracksSession(id int64) bool {
	p := s.p
	if p == nil || p.zk == nil || p.zk.global == nil {
		return false
	}
	return p.zk.global.isTracking(id)
}

// LastProcessedZxid returns the zxid of the last txn the server applied, 0 while it is down.
func (s *Server) LastProcessedZxid() int64 {
	if s.p == nil {
		return 0
	}
	return s.p.db.lastProcessedZxid()
}

// LoggedTxns returns the transactions in the server's txn log after zxid, decoded, in order. A new
// leader's log beyond the last committed zxid is what its establishment commits.
func (s *Server) LoggedTxns(after int64) []*proto.TxnEntry {
	records := s.disk.Records(after)
	out := make([]*proto.TxnEntry, 0, len(records))
	for _, r := range records {
		out = append(out, decodeLogRecord(r))
	}
	return out
}
