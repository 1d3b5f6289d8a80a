package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
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

	boundaryHook  BoundaryDecider
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

// SetCrashHook installs the scenario's crash points: hook is asked, at each effect boundary of a
// server (see Boundaries), whether the server crashes there. Points are named like
// "epoch-file-renamed:currentEpoch", "newleader-appended" and "after-send:SNAP".
func (e *Ensemble) SetCrashHook(hook func(sid int64, point string) bool) {
	e.boundaryHook = BoundaryHook(func(sid int64, point string, _ net.ConnID) bool { return hook(sid, point) })
}

// SetClientAddress decides the IP address a server sees for a client node (for "ip" ACLs and auth).
// The default gives node n the address 10.0.(n/256).(n%256); it is no function value, so that an
// ensemble without SetClientAddress holds no closure and can be copied (package modelcheck).
func (e *Ensemble) SetClientAddress(fn func(sim.NodeID) string) { e.clientAddress = fn }

// address is the IP address a server sees for client node n.
func (e *Ensemble) address(n sim.NodeID) string {
	if e.clientAddress != nil {
		return e.clientAddress(n)
	}
	return fmt.Sprintf("10.0.%d.%d", n/256, n%256)
}

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
	// stallUntil is when a stall of the machine's disk ends (StallDisk), in the world's time. It
	// belongs to the device, not to the process, so it outlives a crash. diskWaiters are the
	// timed writes waiting for it (simHost.waitForDisk), which EndDiskStall lets complete at once.
	stallUntil  clock.Time
	diskWaiters []diskWaiter

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
	// ElectionTimeout is, while LOOKING, the notification timeout of the election round: how long
	// the server may wait before it sends its vote again.
	ElectionTimeout clock.Duration
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
	if p.role == Looking {
		st.ElectionTimeout = p.election.NotificationTimeout()
	}
	return st
}

// start runs the process for the first time or after a crash (sim.Process.Restart).
func (s *Server) start() {
	s.exit = ""
	e := s.ens
	h := newSimHost(s)
	p := newPeer(&e.cfg, s.sid, h, newMemory(&e.scratch, &e.decoder), e.nodes)
	s.p = p
	h.step(p.start)
}

// Crash implements sim.Process: the incarnation's memory is gone; of the txn log's unsynced tail,
// the operating system may have written some records (chosen by the world) and lost the rest.
func (s *Server) Crash() {
	if s.p != nil {
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

// StallDisk stalls the server's disk for d from now, as a saturated device, a virtualised disk's
// hiccup or a file system's journal commit does (the SyncThread's "fsync-ing the write ahead log
// took N ms" that ZooKeeper warns about). The timed disk writes that are in progress, or start,
// before the stall ends complete only when it ends, or later if their own latency reaches
// further: the txn log's group fsync (and with it the sync processor, whose thread appends and
// fsyncs in turn, as Java's SyncThread does) and a learner's currentEpoch write at NEWLEADER when
// it is timed. The network and the server's other threads go on, so a leader keeps proposing and
// forwarding while nothing it logs becomes durable, and its learners' acknowledgements count
// while its own waits. The writes the model makes inside one step are not held (see the README's
// Known gaps). It reports whether the stall changed anything: one that ends no later than the
// stall in place does not.
func (s *Server) StallDisk(d clock.Duration) bool {
	until := s.ens.w.Now() + clock.Time(d)
	if d <= 0 || until <= s.stallUntil {
		return false
	}
	s.stallUntil = until
	s.ens.w.Note(s.node, "disk", "stalled for %v", d)
	return true
}

// EndDiskStall ends a stall of the server's disk now: the writes waiting for it complete at once
// (as steps of their own, at this instant). The liveness phase calls it when it heals every fault.
func (s *Server) EndDiskStall() {
	now := s.ens.w.Now()
	if s.stallUntil <= now {
		return
	}
	s.stallUntil = now
	s.ens.w.Note(s.node, "disk", "stall ended")
	for _, w := range s.diskWaiters {
		if w.until > now && w.h.alive() {
			w.h.cancel(w.id)
			w.h.setTimer(0, w.t)
		}
	}
	s.diskWaiters = nil
}

// diskWaiter is a timed disk write of a process waiting for its disk's stall to end.
type diskWaiter struct {
	h     *simHost
	t     timer
	id    sim.TimerID
	until clock.Time
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
