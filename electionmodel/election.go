package electionmodel

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/internal/quorum"
)

// Defaults from FastLeaderElection in 3.8.0.
const (
	DefaultFinalizeWait            = 200 * clock.Millisecond
	DefaultMaxNotificationInterval = 60 * clock.Second
)

// Config describes one server's place in the ensemble.
type Config struct {
	// ID is this server's sid.
	ID int64
	// Voters are the sids of the voting members (participants), this server included if it is one.
	Voters []int64
	// Participant is false for an observer, which never proposes itself and decides OBSERVING.
	Participant bool
	// FinalizeWait is how long to wait for a better vote once a quorum agrees (default 200 ms).
	FinalizeWait clock.Duration
	// MinNotificationInterval and MaxNotificationInterval bound the notification timeout, which
	// doubles on every expiry (defaults 200 ms and 60 s).
	MinNotificationInterval, MaxNotificationInterval clock.Duration
}

// Self is what the election reads from its server whenever the Java code would call
// getLastLoggedZxid or getCurrentEpoch: the values can change between calls (a sync processor still
// flushing, for instance), so they are passed in each time rather than captured once.
type Self struct {
	LastLoggedZxid int64
	CurrentEpoch   int64
}

// Outgoing is one notification to send.
type Outgoing struct {
	To           int64
	Notification Notification
}

// TimerRequest tells the driver what to do with the election's single timer.
type TimerRequest struct {
	// Set re-arms the timer to expire After from now (replacing any pending expiry).
	Set   bool
	After clock.Duration
	// Cancel disarms it.
	Cancel bool
}

// Output is everything an input asks the driver to do, in order: send, then handle the timer, then,
// if Decided is set, leave the election for the role it names.
type Output struct {
	Send  []Outgoing
	Timer TimerRequest
	// ConnectAll asks the transport to (re)connect to every voter: nothing had been delivered when the
	// notification timeout expired (QuorumCnxManager.connectAll).
	ConnectAll bool
	// Decided is the vote the round ended with; its State is the role the server takes.
	Decided *Vote
}

type proposal struct {
	leader, zxid, epoch int64
}

// Election is one server's Fast Leader Election.
type Election struct {
	cfg    Config
	voters map[int64]bool

	state        ServerState
	logicalClock int64
	proposal     proposal
	current      Vote // QuorumPeer.currentVote: what the server answers with when not LOOKING
	notTimeout   clock.Duration
	finalizing   bool
	started      bool

	recvset       map[int64]Vote
	outOfElection map[int64]Vote

	// history records every vote this server proposed in the current round, for the NoVoteCircle
	// check (a server never returns to an earlier vote for another server within one round).
	history []proposal
}

// New validates cfg and returns an election in state LOOKING, not yet started.
func New(cfg Config) (*Election, error) {
	if len(cfg.Voters) == 0 {
		return nil, fmt.Errorf("electionmodel: server %d: no voters", cfg.ID)
	}
	voters := map[int64]bool{}
	for _, v := range cfg.Voters {
		if voters[v] {
			return nil, fmt.Errorf("electionmodel: voter %d listed twice", v)
		}
		voters[v] = true
	}
	if cfg.Participant != voters[cfg.ID] {
		return nil, fmt.Errorf("electionmodel: server %d: participant=%v but voter=%v", cfg.ID, cfg.Participant, voters[cfg.ID])
	}
	if cfg.FinalizeWait == 0 {
		cfg.FinalizeWait = DefaultFinalizeWait
	}
	if cfg.MinNotificationInterval == 0 {
		cfg.MinNotificationInterval = cfg.FinalizeWait
	}
	if cfg.MaxNotificationInterval == 0 {
		cfg.MaxNotificationInterval = DefaultMaxNotificationInterval
	}
	if cfg.FinalizeWait < 0 || cfg.MinNotificationInterval < 0 || cfg.MaxNotificationInterval < cfg.MinNotificationInterval {
		return nil, fmt.Errorf("electionmodel: bad intervals %+v", cfg)
	}
	cfg.Voters = slices.Clone(cfg.Voters)
	slices.Sort(cfg.Voters)
	return &Election{cfg: cfg, voters: voters, state: Looking}, nil
}

// State returns the server state the election believes in.
func (e *Election) State() ServerState { return e.state }

// LogicalClock returns the current round.
func (e *Election) LogicalClock() int64 { return e.logicalClock }

// NotificationTimeout returns the notification timeout of the round in progress (it starts at
// MinNotificationInterval and doubles on every timeout, up to MaxNotificationInterval): how long
// the server may wait before it sends its vote again.
func (e *Election) NotificationTimeout() clock.Duration { return e.notTimeout }

// Proposal returns the vote this server currently proposes.
func (e *Election) Proposal() Vote {
	return Vote{Leader: e.proposal.leader, Zxid: e.proposal.zxid, ElectionEpoch: e.logicalClock, PeerEpoch: e.proposal.epoch, State: Looking}
}

// CurrentVote returns QuorumPeer.currentVote.
func (e *Election) CurrentVote() Vote { return e.current }

// Finalizing reports whether a quorum agrees and the election is waiting out finalizeWait.
func (e *Election) Finalizing() bool { return e.finalizing }

// quorum reports whether the voters whose votes equal target are more than half of the voters
// (SyncedLearnerTracker.hasAllQuorums with QuorumMaj, see internal/quorum): FastLeaderElection's
// termPredicate. Votes of observers are not counted, as addAck ignores sids that are not voting
// members.
func (e *Election) quorum(votes map[int64]Vote, target Vote) bool {
	acks := 0
	for sid, v := range votes { // determinism:ok counting is order-independent
		if e.voters[sid] && target.sameAs(v) {
			acks++
		}
	}
	return quorum.Majority(len(e.cfg.Voters)).Contains(acks)
}

// totalOrder is totalOrderPredicate: the new vote wins on a higher peer epoch, then a higher zxid,
// then a higher sid. QuorumMaj gives every server weight 1, so the weight test never excludes a vote
// here; observers never win because no valid vote names them.
func totalOrder(newID, newZxid, newEpoch, curID, curZxid, curEpoch int64) bool {
	return newEpoch > curEpoch ||
		(newEpoch == curEpoch && (newZxid > curZxid || (newZxid == curZxid && newID > curID)))
}

func (e *Election) initID() int64 {
	if e.voters[e.cfg.ID] {
		return e.cfg.ID
	}
	return NoServer
}

func (e *Election) initZxid(self Self) int64 {
	if e.cfg.Participant {
		return self.LastLoggedZxid
	}
	return NoZxid
}

func (e *Election) initEpoch(self Self) int64 {
	if e.cfg.Participant {
		return self.CurrentEpoch
	}
	return NoZxid
}

func (e *Election) updateProposal(leader, zxid, epoch int64) {
	e.proposal = proposal{leader, zxid, epoch}
	e.history = append(e.history, e.proposal)
}

// Start begins a new round, as QuorumPeer does on entering LOOKING: the current vote is reset to
// this server (startLeaderElection), the logical clock advances, the server votes for itself and
// notifies every voter.
func (e *Election) Start(self Self) Output {
	e.state = Looking
	e.started = true
	e.finalizing = false
	e.current = Vote{Leader: e.cfg.ID, Zxid: self.LastLoggedZxid, ElectionEpoch: -1, PeerEpoch: self.CurrentEpoch, State: Looking}
	e.recvset = map[int64]Vote{}
	e.outOfElection = map[int64]Vote{}
	e.notTimeout = e.cfg.MinNotificationInterval
	e.logicalClock++
	e.history = e.history[:0]
	e.updateProposal(e.initID(), e.initZxid(self), e.initEpoch(self))
	var out Output
	e.sendNotifications(&out)
	out.Timer = TimerRequest{Set: true, After: e.notTimeout}
	return out
}

func (e *Election) sendNotifications(out *Output) {
	for _, sid := range e.cfg.Voters {
		out.Send = append(out.Send, Outgoing{To: sid, Notification: Notification{
			Sender: e.cfg.ID, State: Looking, Leader: e.proposal.leader, Zxid: e.proposal.zxid,
			ElectionEpoch: e.logicalClock, PeerEpoch: e.proposal.epoch,
		}})
	}
}

func (e *Election) reply(out *Output, to int64, v Vote, round int64) {
	out.Send = append(out.Send, Outgoing{To: to, Notification: Notification{
		Sender: e.cfg.ID, State: e.state, Leader: v.Leader, Zxid: v.Zxid, ElectionEpoch: round, PeerEpoch: v.PeerEpoch,
	}})
}

// Receive handles one notification: first what WorkerReceiver does on arrival, then, while the round
// is running, what lookForLeader does with it.
func (e *Election) Receive(n Notification, self Self) Output {
	var out Output
	if !e.voters[n.Sender] {
		// A non-voter (an observer) is answered at once with the current vote and never queued.
		e.reply(&out, n.Sender, e.current, e.logicalClock)
		return out
	}
	// Before the first Start there is no round and no current vote to answer with; servers call Start
	// the moment they enter LOOKING, so nothing else arrives in that state unstarted.
	if e.state != Looking || !e.started {
		if n.State == Looking && e.started {
			// Out of election: tell a looking peer what this server believes the leader is.
			e.reply(&out, n.Sender, e.current, e.current.ElectionEpoch)
		}
		return out
	}
	if n.State == Looking && n.ElectionEpoch < e.logicalClock {
		// The peer is in an older round: send it this round's proposal straight away.
		e.reply(&out, n.Sender, e.Proposal(), e.logicalClock)
	}
	e.process(&out, n, self)
	return out
}

// process is the body of lookForLeader's loop for one dequeued notification.
func (e *Election) process(out *Output, n Notification, self Self) {
	if e.finalizing {
		if !totalOrder(n.Leader, n.Zxid, n.PeerEpoch, e.proposal.leader, e.proposal.zxid, e.proposal.epoch) {
			// Drained and dropped: it cannot change the outcome. Poll again for finalizeWait.
			out.Timer = TimerRequest{Set: true, After: e.cfg.FinalizeWait}
			return
		}
		// A better vote: it goes back on the queue and the loop goes on with it.
		e.finalizing = false
	}
	defer func() {
		if out.Decided == nil && !e.finalizing {
			out.Timer = TimerRequest{Set: true, After: e.notTimeout}
		}
	}()
	if !e.voters[n.Leader] {
		return // A vote for a non-voter is ignored.
	}
	switch n.State {
	case Looking:
		e.processLooking(out, n, self)
	case Following, Leading:
		// With a majority quorum verifier no oracle is consulted, so LEADING is handled as FOLLOWING.
		e.processOutOfElection(out, n)
	case Observing:
		// Observers do not vote.
	}
}

func (e *Election) processLooking(out *Output, n Notification, self Self) {
	if e.initZxid(self) == -1 || n.Zxid == -1 {
		return
	}
	switch {
	case n.ElectionEpoch > e.logicalClock:
		e.logicalClock = n.ElectionEpoch
		clear(e.recvset)
		e.history = e.history[:0] // A new round: NoVoteCircle speaks of one round at a time.
		if totalOrder(n.Leader, n.Zxid, n.PeerEpoch, e.initID(), e.initZxid(self), e.initEpoch(self)) {
			e.updateProposal(n.Leader, n.Zxid, n.PeerEpoch)
		} else {
			e.updateProposal(e.initID(), e.initZxid(self), e.initEpoch(self))
		}
		e.sendNotifications(out)
	case n.ElectionEpoch < e.logicalClock:
		return
	case totalOrder(n.Leader, n.Zxid, n.PeerEpoch, e.proposal.leader, e.proposal.zxid, e.proposal.epoch):
		e.updateProposal(n.Leader, n.Zxid, n.PeerEpoch)
		e.sendNotifications(out)
	}
	e.recvset[n.Sender] = Vote{Leader: n.Leader, Zxid: n.Zxid, ElectionEpoch: n.ElectionEpoch, PeerEpoch: n.PeerEpoch, State: Looking}
	if e.quorum(e.recvset, e.Proposal()) {
		e.finalizing = true
		out.Timer = TimerRequest{Set: true, After: e.cfg.FinalizeWait}
	}
}

// processOutOfElection is receivedFollowingNotification.
func (e *Election) processOutOfElection(out *Output, n Notification) {
	asVote := Vote{Leader: n.Leader, Zxid: n.Zxid, ElectionEpoch: n.ElectionEpoch, PeerEpoch: n.PeerEpoch, State: n.State, Version: wireVersion}
	if n.ElectionEpoch == e.logicalClock {
		e.recvset[n.Sender] = Vote{Leader: n.Leader, Zxid: n.Zxid, ElectionEpoch: n.ElectionEpoch, PeerEpoch: n.PeerEpoch, State: n.State}
		if e.quorum(e.recvset, asVote) && e.checkLeader(e.recvset, n.Leader, n.ElectionEpoch) {
			e.decide(out, n.Leader, n.Zxid, n.ElectionEpoch, n.PeerEpoch)
			return
		}
	}
	// Before joining an established ensemble, make sure a quorum follows the same leader
	// (outofelection also holds votes of the current round, ZOOKEEPER-1732).
	e.outOfElection[n.Sender] = asVote
	if e.quorum(e.outOfElection, asVote) && e.checkLeader(e.outOfElection, n.Leader, n.ElectionEpoch) {
		e.logicalClock = n.ElectionEpoch
		e.decide(out, n.Leader, n.Zxid, n.ElectionEpoch, n.PeerEpoch)
	}
}

// checkLeader: if the leader is someone else, it must itself have said it is LEADING; if it is this
// server, the round must be this server's round.
func (e *Election) checkLeader(votes map[int64]Vote, leader, electionEpoch int64) bool {
	if leader != e.cfg.ID {
		v, ok := votes[leader]
		return ok && v.State == Leading
	}
	return e.logicalClock == electionEpoch
}

// decide ends the round (setPeerState, leaveInstance) and records the end vote as the current vote.
func (e *Election) decide(out *Output, leader, zxid, round, epoch int64) {
	switch {
	case leader == e.cfg.ID:
		e.state = Leading
	case e.cfg.Participant:
		e.state = Following
	default:
		e.state = Observing
	}
	e.finalizing = false
	e.current = Vote{Leader: leader, Zxid: zxid, ElectionEpoch: round, PeerEpoch: epoch, State: Looking}
	end := e.current
	end.State = e.state
	out.Decided = &end
	out.Timer = TimerRequest{Cancel: true}
}

// Timeout handles the expiry of the timer the election asked for. haveDelivered is the transport's
// QuorumCnxManager.haveDelivered: whether any queued notification got out.
func (e *Election) Timeout(haveDelivered bool, self Self) Output {
	var out Output
	if e.state != Looking || !e.started {
		return out
	}
	if e.finalizing {
		e.decide(&out, e.proposal.leader, e.proposal.zxid, e.logicalClock, e.proposal.epoch)
		return out
	}
	if haveDelivered {
		e.sendNotifications(&out)
	} else {
		out.ConnectAll = true
	}
	e.notTimeout = min(e.notTimeout*2, e.cfg.MaxNotificationInterval)
	out.Timer = TimerRequest{Set: true, After: e.notTimeout}
	return out
}

// UpdateElectionVote is QuorumPeer.updateElectionVote: after synchronizing with a leader of epoch
// newEpoch, the server answers LOOKING peers with that peer epoch, so that servers joining later see
// consistent votes (ZOOKEEPER-1732).
func (e *Election) UpdateElectionVote(newEpoch int64) {
	e.current.PeerEpoch = newEpoch
}

// Leave marks the end of the server's role: QuorumPeer goes back to LOOKING. The next round starts
// with Start.
func (e *Election) Leave() { e.state = Looking; e.started = false; e.finalizing = false }

// VoteCircle reports a violation of NoVoteCircle in the current round, if any: a server that moved
// its vote away from some other server and later came back to it. It returns the repeated vote.
func (e *Election) VoteCircle() (Vote, bool) {
	for i, p := range e.history {
		if p.leader == e.cfg.ID {
			continue
		}
		for j := i + 1; j < len(e.history); j++ {
			if e.history[j] != p {
				for k := j + 1; k < len(e.history); k++ {
					if e.history[k] == p {
						return Vote{Leader: p.leader, Zxid: p.zxid, PeerEpoch: p.epoch, ElectionEpoch: e.logicalClock}, true
					}
				}
				break
			}
		}
	}
	return Vote{}, false
}
