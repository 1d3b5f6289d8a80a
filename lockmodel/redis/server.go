package redis

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
)

// DefaultPort is the port a simulated Redis listens on.
const DefaultPort net.Port = 6379

// Persistence is how a server keeps its keyspace across a restart.
type Persistence uint8

// The persistence modes.
const (
	// PersistenceNone: a restart starts empty (save "" and appendonly no).
	PersistenceNone Persistence = iota
	// PersistenceAOFEverySec: every write is appended to the AOF and fsynced once a second
	// (appendonly yes, appendfsync everysec); a crash loses what was not fsynced.
	PersistenceAOFEverySec
)

func (p Persistence) String() string {
	if p == PersistenceAOFEverySec {
		return "aof-everysec"
	}
	return "none"
}

// Timing of the server's own cycles, on its monotonic clock.
const (
	// activeExpirePeriod is serverCron's active expiry cycle at the default hz 10.
	activeExpirePeriod = 100 * clock.Millisecond
	// fsyncPeriod is appendfsync everysec.
	fsyncPeriod = clock.Second
	// replicaRetry is how soon a replica dials its master again after losing the link
	// (replicationCron runs once a second).
	replicaRetry = clock.Second
	// dialTimeout bounds a replica's connection attempt (repl-timeout is 60 s; the link is on a LAN).
	dialTimeout = 5 * clock.Second
)

// Config configures one server.
type Config struct {
	// Name is the server's node name.
	Name string
	// Port is its port (default DefaultPort).
	Port        net.Port
	Persistence Persistence
	// ReplicaOf, if set, makes the server start as that server's replica.
	ReplicaOf *Server
}

// Server is one simulated redis-server: a process on its own node whose commands run one at a
// time, in the order they arrive (Redis's single-threaded event loop), against its DB, with
// expiry on its own wall clock (sim.World.WallMillis: drift and wall-clock steps apply).
//
// A master streams every write, in absolute form, to its replicas asynchronously: it answers the
// client first, and a replica applies the stream when the network delivers it, so a master that
// dies loses what was still on the way. A replica makes a full resynchronisation on every (re)connection
// (the model keeps no backlog for a partial one). With PersistenceAOFEverySec the server appends
// every write to its AOF and fsyncs it once a second; a crash (of the machine, as zabsim's crashes
// are) loses the writes after the last fsync, and a restart replays the rest.
type Server struct {
	w    *sim.World
	nw   *net.Network
	node sim.NodeID
	cfg  Config
	db   *DB

	master     *Server // the master it replicates, nil for a master
	masterConn net.ConnID
	replicas   []net.ConnID // the replication links this master feeds

	aofDurable [][]string // fsynced
	aofPending [][]string // written, not fsynced

	commands int64 // commands executed, for the trace
}

// NewServer registers the server's node and starts it.
func NewServer(w *sim.World, nw *net.Network, cfg Config) (*Server, error) {
	if w == nil || nw == nil {
		return nil, errors.New("redis: a server needs a world and a network")
	}
	if cfg.Name == "" {
		return nil, errors.New("redis: a server needs a name")
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultPort
	}
	if _, taken := w.Lookup(cfg.Name); taken {
		return nil, fmt.Errorf("redis: node name %q is taken", cfg.Name)
	}
	s := &Server{w: w, nw: nw, cfg: cfg, master: cfg.ReplicaOf, db: NewDB()}
	s.node = w.AddNode(cfg.Name, s)
	if !nw.Describes(cfg.Port) {
		nw.Describe(cfg.Port, describeMessage)
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// Node returns the server's node.
func (s *Server) Node() sim.NodeID { return s.node }

// Port returns its port.
func (s *Server) Port() net.Port { return s.cfg.Port }

// Name returns its node name.
func (s *Server) Name() string { return s.cfg.Name }

// IsMaster reports whether the server is a master now.
func (s *Server) IsMaster() bool { return s.master == nil }

// Keys returns the number of keys it holds, expired or not (for tests).
func (s *Server) Keys() int { return s.db.Len() }

// Get returns key's value as a GET would now, without side effects (for tests and checks).
func (s *Server) Get(key string) (string, bool) {
	e, ok := s.db.keys[key]
	if !ok || expired(e, s.now()) {
		return "", false
	}
	return e.value, true
}

func (s *Server) now() int64 { return s.w.WallMillis(s.node) }

// start brings the process up: its keyspace from the AOF, its listener, its cycles and, for a
// replica, its link.
func (s *Server) start() error {
	s.db = NewDB()
	s.db.replica = s.master != nil
	for _, cmd := range s.aofDurable {
		s.db.Apply(cmd)
	}
	s.replicas, s.masterConn = nil, 0
	if err := s.nw.Listen(s.node, s.cfg.Port, s); err != nil {
		return fmt.Errorf("redis: %s cannot listen: %w", s.cfg.Name, err)
	}
	s.w.AfterFunc(s.node, activeExpirePeriod, s.activeExpire)
	if s.cfg.Persistence == PersistenceAOFEverySec {
		s.w.AfterFunc(s.node, fsyncPeriod, s.fsync)
	}
	if s.master != nil {
		s.dialMaster()
	}
	return nil
}

// Crash implements sim.Process: memory and the unsynced AOF tail are gone; connections die with
// the process.
func (s *Server) Crash() {
	s.aofPending = nil
	s.db = NewDB()
}

// Restart implements sim.Process.
func (s *Server) Restart() {
	if err := s.start(); err != nil {
		s.w.Fail(err)
	}
}

func (s *Server) activeExpire() {
	s.propagate(s.db.ExpireDue(s.now()))
	s.w.AfterFunc(s.node, activeExpirePeriod, s.activeExpire)
}

func (s *Server) fsync() {
	s.aofDurable = append(s.aofDurable, s.aofPending...)
	s.aofPending = nil
	s.w.AfterFunc(s.node, fsyncPeriod, s.fsync)
}

// propagate appends writes to the AOF and sends them down every replication link.
func (s *Server) propagate(cmds [][]string) {
	for _, cmd := range cmds {
		if s.cfg.Persistence == PersistenceAOFEverySec {
			s.aofPending = append(s.aofPending, cmd)
		}
		msg := AppendCommand(nil, cmd...)
		for _, c := range s.replicas {
			_ = s.nw.Send(s.node, c, msg)
		}
	}
}

// Accept implements net.Listener.
func (s *Server) Accept(c net.ConnID, from sim.NodeID) net.Handler { return serverConn{s: s} }

type serverConn struct{ s *Server }

func (h serverConn) Connected(net.ConnID) {}

func (h serverConn) Closed(c net.ConnID, _ error) {
	h.s.replicas = slices.DeleteFunc(h.s.replicas, func(r net.ConnID) bool { return r == c })
}

// Received runs one command. PSYNC turns the connection into a replication link: the master
// sends its keyspace and then every write.
func (h serverConn) Received(c net.ConnID, payload []byte) {
	s := h.s
	args, err := decodeCommand(payload)
	if err != nil {
		s.w.Note(s.node, "redis", "bad command on conn %d: %v", c, err)
		s.nw.Close(s.node, c)
		return
	}
	s.commands++
	if strings.EqualFold(args[0], "PSYNC") {
		if s.master != nil {
			_ = s.nw.Send(s.node, c, AppendReply(nil, errorReply("ERR the simulated Redis does not chain replicas")))
			return
		}
		s.replicas = append(s.replicas, c)
		_ = s.nw.Send(s.node, c, AppendCommand(nil, "FULLRESYNC"))
		for _, cmd := range s.db.Snapshot() {
			_ = s.nw.Send(s.node, c, AppendCommand(nil, cmd...))
		}
		return
	}
	rep, prop := s.db.Exec(args, s.now())
	s.propagate(prop)
	// Notes feed the trace hash, so this one is written whether or not the trace is rendered.
	s.w.Note(s.node, "redis", "%s -> %s", describeArgs(args), rep)
	_ = s.nw.Send(s.node, c, AppendReply(nil, rep))
}

// dialMaster opens the replication link.
func (s *Server) dialMaster() {
	if s.master == nil || s.masterConn != 0 {
		return
	}
	c, err := s.nw.Dial(s.node, s.master.node, s.master.cfg.Port, dialTimeout, masterLink{s: s})
	if err != nil {
		s.w.AfterFunc(s.node, replicaRetry, s.dialMaster)
		return
	}
	s.masterConn = c
	_ = s.nw.Send(s.node, c, AppendCommand(nil, "PSYNC", "?", "-1"))
}

// masterLink is a replica's end of its replication link.
type masterLink struct{ s *Server }

func (m masterLink) Connected(net.ConnID) {}

func (m masterLink) Received(c net.ConnID, payload []byte) {
	s := m.s
	if c != s.masterConn {
		return
	}
	args, err := decodeCommand(payload)
	if err != nil {
		s.nw.Close(s.node, c)
		m.Closed(c, err)
		return
	}
	if args[0] == "FULLRESYNC" {
		s.db.Reset()
		s.propagateLocal([]string{"FLUSHALL"})
		return
	}
	s.db.Apply(args)
	s.propagateLocal(args)
}

// propagateLocal keeps a replica's own AOF, as a replica with appendonly does.
func (s *Server) propagateLocal(cmd []string) {
	if s.cfg.Persistence == PersistenceAOFEverySec {
		s.aofPending = append(s.aofPending, cmd)
	}
}

func (m masterLink) Closed(c net.ConnID, _ error) {
	s := m.s
	if c != s.masterConn {
		return
	}
	s.masterConn = 0
	if s.master != nil {
		s.w.AfterFunc(s.node, replicaRetry, s.dialMaster)
	}
}

// Promote makes a replica a master (REPLICAOF NO ONE): it keeps what it has, stops replicating
// and expires keys by its own clock from now on.
func (s *Server) Promote() {
	if s.master == nil {
		return
	}
	s.master = nil
	s.db.replica = false
	if s.masterConn != 0 {
		c := s.masterConn
		s.masterConn = 0
		s.nw.Close(s.node, c)
	}
	s.w.Note(s.node, "redis", "%s promoted to master", s.cfg.Name)
}

// Follow makes the server a replica of master (REPLICAOF host port): the full resynchronisation
// replaces its keyspace.
func (s *Server) Follow(master *Server) {
	if s.master == master || master == s {
		return
	}
	s.master = master
	s.db.replica = true
	for _, c := range s.replicas {
		s.nw.Close(s.node, c)
	}
	s.replicas = nil
	s.w.Note(s.node, "redis", "%s now replicates %s", s.cfg.Name, master.cfg.Name)
	if s.w.IsUp(s.node) {
		s.dialMaster()
	}
}

func describeArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i == 1 && (strings.EqualFold(args[0], "EVAL")):
			out[i] = scriptName(ScriptSHA(a))
		case i == 1 && strings.EqualFold(args[0], "EVALSHA"):
			out[i] = scriptName(a)
		default:
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

func scriptName(sha string) string {
	switch sha {
	case shaCompareAndDelete:
		return "<compare-and-delete>"
	case shaCompareAndExtend:
		return "<compare-and-extend>"
	}
	return "<script " + sha + ">"
}

// describeMessage renders the protocol in traces.
func describeMessage(b []byte) string {
	if args, err := decodeCommand(b); err == nil {
		return describeArgs(args)
	}
	if r, err := decodeReply(b); err == nil {
		return r.String()
	}
	return fmt.Sprintf("redis message of %d bytes", len(b))
}
