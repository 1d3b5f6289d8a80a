package modelcheck

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/zabsim/zabsim/electionmodel"
	"github.com/zabsim/zabsim/internal/quorum"
)

// FLEConfig bounds an exploration of Fast Leader Election (package electionmodel, the code every
// simulated server runs) among Servers voters and Observers observers.
type FLEConfig struct {
	Servers   int
	Observers int
	// Crashes and Restarts bound the fault actions of a path.
	Crashes, Restarts int
	// Timeouts bounds the notification-timeout expiries of a path (in the asynchronous model a
	// timer may expire at any moment, and each expiry sends every vote again, so without a bound
	// the channels grow without end). The finalize wait is never bounded: its expiry is how a
	// round ends.
	Timeouts int
	// Abandons bounds how often a decided server gives up on its role (a follower whose leader
	// does not lead, a leader without a quorum of followers: ZAB's initLimit and syncLimit
	// timeouts) and starts a new round.
	Abandons int
	// LastZxids and CurrentEpochs are each server's durable state as the election reads it
	// (getLastLoggedZxid, getCurrentEpoch); empty means zero for every server.
	LastZxids, CurrentEpochs []int64
	// NeverAbandon is a self-test of the checker, not an FLE behaviour: a decided server never
	// gives up its role, as if ZAB had no initLimit and syncLimit timeouts. A follower of a server
	// that does not lead then waits for ever, and the liveness judge must say so.
	NeverAbandon bool
}

// Limits on FLEConfig, which keep actions encodable and runs small.
const (
	maxFLEServers = 9
)

// Validate rejects bounds that make no sense.
func (c FLEConfig) Validate() error {
	switch {
	case c.Servers < 1 || c.Servers > maxFLEServers:
		return fmt.Errorf("%w: servers %d: must be 1 to %d", errBadOptions, c.Servers, maxFLEServers)
	case c.Observers < 0 || c.Servers+c.Observers > maxFLEServers:
		return fmt.Errorf("%w: observers %d: must be 0 to %d with %d servers", errBadOptions, c.Observers, maxFLEServers-c.Servers, c.Servers)
	case c.Crashes < 0 || c.Restarts < 0 || c.Timeouts < 0 || c.Abandons < 0:
		return fmt.Errorf("%w: negative bound in %+v", errBadOptions, c)
	case c.Restarts > c.Crashes:
		return fmt.Errorf("%w: %d restarts need at least as many crashes (%d)", errBadOptions, c.Restarts, c.Crashes)
	case len(c.LastZxids) != 0 && len(c.LastZxids) != c.Servers+c.Observers:
		return fmt.Errorf("%w: %d zxids for %d processes", errBadOptions, len(c.LastZxids), c.Servers+c.Observers)
	case len(c.CurrentEpochs) != 0 && len(c.CurrentEpochs) != c.Servers+c.Observers:
		return fmt.Errorf("%w: %d epochs for %d processes", errBadOptions, len(c.CurrentEpochs), c.Servers+c.Observers)
	}
	return nil
}

// FLEModel explores Fast Leader Election. Its state is every process's electionmodel.Election,
// its timer (armed or not), whether it is up, the notifications in flight on each ordered pair of
// processes (FIFO, as a TCP connection keeps them; a process's notifications to itself form a
// channel of their own, as QuorumCnxManager's local queue does), and the bounds used so far.
//
// What is abstracted, and why it is sound for the election: time. A timer is armed or not, and
// any armed timer may expire at any step (the asynchronous model; an early timeout is never a
// false alarm), so the durations the election asks for (the finalize wait, the doubling
// notification timeout) matter only through the election's own state, which the fingerprint
// covers. The election transport's connection management (one connection per pair, the
// single-message send slot) is abstracted to reliable FIFO channels between live processes:
// what a crash loses is every message towards the crashed process, while its own sent messages
// are still delivered (the kernel sends the data before the FIN). Nothing is drawn at random.
type FLEModel struct {
	cfg    FLEConfig
	voters []int64
}

// NewFLE validates cfg and returns the model.
func NewFLE(cfg FLEConfig) (*FLEModel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &FLEModel{cfg: cfg}
	for i := range cfg.Servers {
		m.voters = append(m.voters, int64(i+1))
	}
	return m, nil
}

// Name implements Model.
func (m *FLEModel) Name() string { return "fle" }

// Config returns the model's bounds.
func (m *FLEModel) Config() FLEConfig { return m.cfg }

func (m *FLEModel) processes() int { return m.cfg.Servers + m.cfg.Observers }

func (m *FLEModel) self(i int) electionmodel.Self {
	var s electionmodel.Self
	if len(m.cfg.LastZxids) > 0 {
		s.LastLoggedZxid = m.cfg.LastZxids[i]
	}
	if len(m.cfg.CurrentEpochs) > 0 {
		s.CurrentEpoch = m.cfg.CurrentEpochs[i]
	}
	return s
}

// Action kinds of the FLE model.
const (
	fleDeliver uint32 = iota + 1
	fleTimer
	fleAbandon
	fleCrash
	fleRestart
)

func fleAction(kind uint32, a, b int) Action { return Action(kind<<16 | uint32(a)<<8 | uint32(b)) }

func (a Action) kind() uint32 { return uint32(a) >> 16 }
func (a Action) first() int   { return int(uint32(a) >> 8 & 0xff) }
func (a Action) second() int  { return int(uint32(a) & 0xff) }

// fleProcess is one process of the FLE model. A crashed process has no election.
type fleProcess struct {
	up       bool
	timer    bool
	election *electionmodel.Election
}

// fleState is a global state. It is never modified once built; Step copies what changes.
type fleState struct {
	m         *FLEModel
	processes []fleProcess
	// channels[from*n+to] are the notifications in flight from one process to another.
	channels [][]electionmodel.Notification
	// latest[from*n+to] is the last notification from queued for to (QuorumCnxManager's send
	// slot, or lastMessageSent once sent): when to starts again and the two connect, it is sent
	// (again), because the old connection may have lost it.
	latest                                []*electionmodel.Notification
	crashes, restarts, timeouts, abandons int
	fp                                    Fingerprint
}

// Init implements Model: every process starts its first round.
func (m *FLEModel) Init() (State, error) {
	n := m.processes()
	s := &fleState{m: m, processes: make([]fleProcess, n), channels: make([][]electionmodel.Notification, n*n),
		latest: make([]*electionmodel.Notification, n*n)}
	// Every process is up before any sends, as servers started together would connect to each
	// other whatever their order.
	for i := range n {
		s.processes[i].up = true
	}
	for i := range n {
		if err := s.start(i); err != nil {
			return nil, err
		}
	}
	s.fp = s.fingerprint()
	return s, nil
}

// start boots process i's election and starts its first round.
func (s *fleState) start(i int) error {
	e, err := electionmodel.New(electionmodel.Config{ID: int64(i + 1), Voters: s.m.voters, Participant: i < s.m.cfg.Servers})
	if err != nil {
		return fmt.Errorf("modelcheck: process %d: %w", i+1, err)
	}
	s.processes[i] = fleProcess{up: true, election: e}
	s.apply(i, e.Start(s.m.self(i)))
	return nil
}

// apply carries out an election's output for process i: the notifications join their channels
// (dropped towards a crashed process, whose connection refuses them), the timer is armed or not.
func (s *fleState) apply(i int, out electionmodel.Output) {
	n := len(s.processes)
	for _, o := range out.Send {
		to := int(o.To - 1)
		if to < 0 || to >= n {
			continue
		}
		k := i*n + to
		if to != i {
			nt := o.Notification
			s.latest[k] = &nt
		}
		if !s.processes[to].up {
			continue // The connection is refused; the send slot keeps it (latest).
		}
		ch := make([]electionmodel.Notification, len(s.channels[k]), len(s.channels[k])+1)
		copy(ch, s.channels[k])
		s.channels[k] = append(ch, o.Notification)
	}
	switch {
	case out.Timer.Set:
		s.processes[i].timer = true
	case out.Timer.Cancel:
		s.processes[i].timer = false
	}
}

func (s *fleState) clone() *fleState {
	c := *s
	c.processes = append([]fleProcess(nil), s.processes...)
	c.channels = append([][]electionmodel.Notification(nil), s.channels...)
	c.latest = append([]*electionmodel.Notification(nil), s.latest...)
	return &c
}

// mutable returns process i with an election of its own, safe to step.
func (s *fleState) mutable(i int) *fleProcess {
	p := &s.processes[i]
	if p.election != nil {
		p.election = p.election.Clone()
	}
	return p
}

// Actions implements State.
func (s *fleState) Actions(buf []Action) ([]Action, bool) {
	n := len(s.processes)
	cut := false
	for k, ch := range s.channels {
		if len(ch) > 0 {
			buf = append(buf, fleAction(fleDeliver, k/n, k%n))
		}
	}
	for i, p := range s.processes {
		if !p.up || !p.timer {
			continue
		}
		if p.election.Finalizing() || s.timeouts < s.m.cfg.Timeouts {
			buf = append(buf, fleAction(fleTimer, i, 0))
		} else {
			cut = true
		}
	}
	for i := range s.processes {
		if s.canAbandon(i) {
			if s.abandons < s.m.cfg.Abandons {
				buf = append(buf, fleAction(fleAbandon, i, 0))
			} else {
				cut = true
			}
		}
	}
	for i, p := range s.processes {
		if p.up && s.crashes < s.m.cfg.Crashes {
			buf = append(buf, fleAction(fleCrash, i, 0))
		}
		if !p.up && s.restarts < s.m.cfg.Restarts {
			buf = append(buf, fleAction(fleRestart, i, 0))
		}
	}
	return buf, cut
}

// established reports whether voter i leads with a quorum of voters (itself included) that
// decided to follow it: the point at which ZAB's discovery could complete.
func (s *fleState) established(i int) bool {
	p := s.processes[i]
	if i >= s.m.cfg.Servers || !p.up || p.election.State() != electionmodel.Leading {
		return false
	}
	followers := 0
	for j := range s.m.cfg.Servers {
		q := s.processes[j]
		if !q.up {
			continue
		}
		st := q.election.State()
		if (st == electionmodel.Following || st == electionmodel.Leading) && q.election.CurrentVote().Leader == int64(i+1) {
			followers++
		}
	}
	return quorum.Majority(s.m.cfg.Servers).Contains(followers)
}

// canAbandon reports whether process i has decided on a role that cannot be established: a
// follower or observer whose leader is not leading, or a leader that is not established.
func (s *fleState) canAbandon(i int) bool {
	p := s.processes[i]
	if !p.up || s.m.cfg.NeverAbandon {
		return false
	}
	switch p.election.State() {
	case electionmodel.Leading:
		return !s.established(i)
	case electionmodel.Following, electionmodel.Observing:
		leader := int(p.election.CurrentVote().Leader - 1)
		if leader < 0 || leader >= s.m.cfg.Servers {
			return true
		}
		return !s.established(leader)
	}
	return false
}

// Step implements State.
func (s *fleState) Step(a Action) (State, error) {
	n := len(s.processes)
	next := s.clone()
	i, j := a.first(), a.second()
	if i >= n || j >= n {
		return nil, fmt.Errorf("modelcheck: action %#x names an unknown process", uint32(a))
	}
	switch a.kind() {
	case fleDeliver:
		k := i*n + j
		ch := s.channels[k]
		if len(ch) == 0 {
			return nil, fmt.Errorf("modelcheck: deliver zk%d->zk%d: nothing in flight", i+1, j+1)
		}
		next.channels[k] = ch[1:len(ch):len(ch)]
		if len(ch) == 1 {
			next.channels[k] = nil
		}
		p := next.mutable(j)
		next.apply(j, p.election.Receive(ch[0], s.m.self(j)))
	case fleTimer:
		if !s.processes[i].up || !s.processes[i].timer {
			return nil, fmt.Errorf("modelcheck: timer zk%d: not armed", i+1)
		}
		p := next.mutable(i)
		if !p.election.Finalizing() {
			next.timeouts++
		}
		p.timer = false
		next.apply(i, p.election.Timeout(next.haveDelivered(i), s.m.self(i)))
	case fleAbandon:
		if !s.canAbandon(i) {
			return nil, fmt.Errorf("modelcheck: abandon zk%d: its role can be established", i+1)
		}
		next.abandons++
		p := next.mutable(i)
		p.election.Leave()
		next.apply(i, p.election.Start(s.m.self(i)))
	case fleCrash:
		if !s.processes[i].up {
			return nil, fmt.Errorf("modelcheck: crash zk%d: already down", i+1)
		}
		next.crashes++
		next.processes[i] = fleProcess{}
		for other := range n {
			next.channels[other*n+i] = nil // Lost with the connections.
			next.latest[i*n+other] = nil   // The process's memory.
		}
	case fleRestart:
		if s.processes[i].up {
			return nil, fmt.Errorf("modelcheck: restart zk%d: already up", i+1)
		}
		next.restarts++
		// The peers connect to the restarted process and send what their send slots hold, or
		// their last message again, before its own first notifications reach them.
		for from := range n {
			if nt := next.latest[from*n+i]; nt != nil && next.processes[from].up {
				k := from*n + i
				next.channels[k] = append(append([]electionmodel.Notification(nil), next.channels[k]...), *nt)
			}
		}
		if err := next.start(i); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("modelcheck: unknown action %#x", uint32(a))
	}
	next.fp = next.fingerprint()
	return next, nil
}

// haveDelivered is QuorumCnxManager.haveDelivered under the model's transport: some peer's send
// slot is empty, which holds while any other process is up to take the notification.
func (s *fleState) haveDelivered(i int) bool {
	for j, p := range s.processes {
		if j != i && p.up {
			return true
		}
	}
	return false
}

// Fingerprint implements State.
func (s *fleState) Fingerprint() Fingerprint { return s.fp }

// ActionKey implements ActionKeyer. A delivery is owned by its receiver and a finalize-wait
// expiry by its process; two such actions of different processes commute: each changes only its
// own process's election, timer and send slots, pops only a channel towards itself and appends
// only to channels from itself (a pop at the head and an append at the tail of one non-empty
// channel commute), and neither changes what enables the other (a process's up state, which
// only faults change; a finalize expiry does not count against Timeouts). Every other action is
// dependent on all: a notification timeout spends the shared Timeouts bound, an abandon reads
// the other processes' roles, a crash or a restart changes the channels of every process.
func (s *fleState) ActionKey(a Action) (SleepKey, bool) {
	switch a.kind() {
	case fleDeliver:
		return SleepKey{Owner: uint32(a.second()), Key: uint64(a)}, true
	case fleTimer:
		if p := s.processes[a.first()]; p.up && p.election.Finalizing() {
			return SleepKey{Owner: uint32(a.first()), Key: uint64(a)}, true
		}
	}
	return SleepKey{}, false
}

// encode writes the canonical encoding the fingerprint hashes.
func (s *fleState) encode(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(s.crashes))
	b = binary.AppendUvarint(b, uint64(s.restarts))
	b = binary.AppendUvarint(b, uint64(s.timeouts))
	b = binary.AppendUvarint(b, uint64(s.abandons))
	for _, p := range s.processes {
		switch {
		case !p.up:
			b = append(b, 0)
		case p.timer:
			b = append(b, 2)
			b = p.election.AppendState(b)
		default:
			b = append(b, 1)
			b = p.election.AppendState(b)
		}
	}
	for _, nt := range s.latest {
		if nt == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = appendNotification(b, *nt)
	}
	for _, ch := range s.channels {
		b = binary.AppendUvarint(b, uint64(len(ch)))
		for _, nt := range ch {
			b = appendNotification(b, nt)
		}
	}
	return b
}

func appendNotification(b []byte, nt electionmodel.Notification) []byte {
	b = binary.AppendVarint(b, int64(nt.State))
	b = binary.AppendVarint(b, nt.Leader)
	b = binary.AppendVarint(b, nt.Zxid)
	b = binary.AppendVarint(b, nt.ElectionEpoch)
	return binary.AppendVarint(b, nt.PeerEpoch)
}

func (s *fleState) fingerprint() Fingerprint {
	var buf [512]byte
	return hashBytes(s.encode(buf[:0]))
}

// hashBytes is the fingerprint of an encoding: the first 128 bits of its SHA-256. A collision
// would silently merge two states, so the hash is a cryptographic one.
func hashBytes(b []byte) Fingerprint {
	sum := sha256.Sum256(b)
	return Fingerprint{binary.LittleEndian.Uint64(sum[0:]), binary.LittleEndian.Uint64(sum[8:])}
}

// Check implements State: the election's safety judges.
func (s *fleState) Check() *Violation {
	leaders := 0
	for i, p := range s.processes {
		if !p.up {
			continue
		}
		e := p.election
		if v, circle := e.VoteCircle(); circle {
			return &Violation{Invariant: "NoVoteCircle", Explanation: fmt.Sprintf("zk%d returned to its earlier vote %v within round %#x", i+1, v, e.LogicalClock())}
		}
		switch e.State() {
		case electionmodel.Leading:
			if leader := e.CurrentVote().Leader; leader != int64(i+1) {
				return &Violation{Invariant: "Leadership", Explanation: fmt.Sprintf("zk%d leads but its vote names zk%d", i+1, leader)}
			}
		case electionmodel.Following:
			if leader := e.CurrentVote().Leader; leader == int64(i+1) || leader < 1 || leader > int64(s.m.cfg.Servers) {
				return &Violation{Invariant: "Leadership", Explanation: fmt.Sprintf("zk%d follows zk%d, which is itself or no voter", i+1, leader)}
			}
		}
		if s.established(i) {
			leaders++
		}
	}
	if leaders > 1 {
		return &Violation{Invariant: "Leadership", Explanation: fmt.Sprintf("%d leaders are established at once", leaders)}
	}
	return nil
}

// CheckTerminal implements State: a path that ends without a crash, and not because a bound
// stopped it, must end with one established leader that every live process follows.
func (s *fleState) CheckTerminal(cut bool) *Violation {
	if cut || s.crashes > 0 {
		return nil
	}
	leader := -1
	for i := range s.m.cfg.Servers {
		if s.established(i) {
			leader = i
		}
	}
	if leader < 0 {
		return &Violation{Invariant: "ElectionLiveness", Explanation: "a fault-free path ends with no established leader: " + s.summary()}
	}
	for i, p := range s.processes {
		if p.up && p.election.CurrentVote().Leader != int64(leader+1) {
			return &Violation{Invariant: "ElectionLiveness", Explanation: fmt.Sprintf("a fault-free path ends with zk%d not following the leader zk%d: %s", i+1, leader+1, s.summary())}
		}
	}
	return nil
}

// summary renders each process's role and vote, for explanations and replays.
func (s *fleState) summary() string {
	var parts []string
	for i, p := range s.processes {
		if !p.up {
			parts = append(parts, fmt.Sprintf("zk%d down", i+1))
			continue
		}
		e := p.election
		part := fmt.Sprintf("zk%d %s round=%d", i+1, e.State(), e.LogicalClock())
		if e.State() == electionmodel.Looking {
			part += fmt.Sprintf(" vote=%d", e.Proposal().Leader)
		} else {
			part += fmt.Sprintf(" leader=%d", e.CurrentVote().Leader)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// Summary renders the state in one line.
func (s *fleState) Summary() string { return s.summary() }

// Describe implements Model.
func (m *FLEModel) Describe(st State, a Action) (string, string) {
	i, j := a.first(), a.second()
	s, _ := st.(*fleState)
	switch a.kind() {
	case fleDeliver:
		detail := ""
		if s != nil {
			if ch := s.channels[i*len(s.processes)+j]; len(ch) > 0 {
				nt := ch[0]
				detail = fmt.Sprintf("%s leader=%d zxid=%#x round=%#x peerEpoch=%#x", nt.State, nt.Leader, nt.Zxid, nt.ElectionEpoch, nt.PeerEpoch)
			}
		}
		return fmt.Sprintf("deliver zk%d->zk%d", i+1, j+1), detail
	case fleTimer:
		detail := "notification timeout"
		if s != nil && s.processes[i].up && s.processes[i].election.Finalizing() {
			detail = "finalize wait"
		}
		return fmt.Sprintf("timer zk%d", i+1), detail
	case fleAbandon:
		return fmt.Sprintf("abandon zk%d", i+1), "gives up its role and starts a new round"
	case fleCrash:
		return fmt.Sprintf("crash zk%d", i+1), ""
	case fleRestart:
		return fmt.Sprintf("restart zk%d", i+1), ""
	}
	return fmt.Sprintf("unknown %#x", uint32(a)), ""
}

// ParseAction implements Model.
func (m *FLEModel) ParseAction(line string) (Action, error) {
	fields := strings.Fields(line)
	if len(fields) != 2 {
		return 0, fmt.Errorf("modelcheck: %q: want an action and its processes", line)
	}
	n := m.processes()
	proc := func(name string) (int, error) {
		id, err := strconv.Atoi(strings.TrimPrefix(name, "zk"))
		if err != nil || !strings.HasPrefix(name, "zk") || id < 1 || id > n {
			return 0, fmt.Errorf("modelcheck: %q: no process %q (zk1 to zk%d)", line, name, n)
		}
		return id - 1, nil
	}
	kinds := map[string]uint32{"timer": fleTimer, "abandon": fleAbandon, "crash": fleCrash, "restart": fleRestart}
	if fields[0] == "deliver" {
		from, to, ok := strings.Cut(fields[1], "->")
		if !ok {
			return 0, fmt.Errorf("modelcheck: %q: want deliver zkI->zkJ", line)
		}
		i, err := proc(from)
		if err != nil {
			return 0, err
		}
		j, err := proc(to)
		if err != nil {
			return 0, err
		}
		return fleAction(fleDeliver, i, j), nil
	}
	kind, ok := kinds[fields[0]]
	if !ok {
		return 0, fmt.Errorf("modelcheck: %q: unknown action %q", line, fields[0])
	}
	i, err := proc(fields[1])
	if err != nil {
		return 0, err
	}
	return fleAction(kind, i, 0), nil
}
