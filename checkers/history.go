package checkers

import (
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// History is everything the checkers judge about one run: what each simulated client asked and
// observed, the committed transactions as the simulator's global view knows them, and a few facts
// the runner records about sessions and the liveness phase. The Recorder fills one as a run goes.
type History struct {
	// Clients holds one entry per simulated application (a client process), which may go through
	// several sessions in a run (a new ZooKeeper handle after an expiry).
	Clients []ClientHistory
	// Committed is every transaction any server committed during the run, in zxid order, including
	// createSession, closeSession and error transactions. It must be complete: the read, watch and
	// session checkers compute the state at a zxid from it, and the linearizability checker treats
	// an unknown-outcome write that is missing from it as one that did not happen.
	Committed []CommittedTxn
	// Sessions holds the runner's facts about sessions, one entry per session it knows of.
	Sessions []SessionFacts
	// ForcedExpiries holds, in time order, the sessions the runner set out to close by force while
	// their own clients still held them (see ForcedExpiry). A closeSession that no recorded client
	// issued is explained only by one of these.
	ForcedExpiries []ForcedExpiry
	// Liveness holds the liveness-phase facts, or nil if the run had no liveness phase.
	Liveness *LivenessFacts
	// End is the virtual time at which the run ended. Every recorded time is at most End.
	End clock.Time
}

// ClientHistory is what one simulated client did and saw.
type ClientHistory struct {
	// Name identifies the client in explanations, such as "c3".
	Name string
	// Ops holds the client's operations in the order it issued them.
	Ops []Operation
	// Arrivals is the ordered stream of what reached the client: replies, watch events and
	// connection state changes, in the order the client library delivered them. If it is empty, the
	// checkers that need reply order derive it from the operations' return times, and the watch
	// checker has nothing to judge for this client.
	Arrivals []Arrival
	// Stopped says the client process crashed or was stopped before the end of the run, so that
	// events it never received cannot count as missed.
	Stopped bool
}

// Outcome says what is known about whether an operation took effect.
type Outcome uint8

// The outcomes. The zero value is invalid so that a history that forgets to set one is rejected.
const (
	// OutcomeReplied: the server replied. Err and Zxid are the reply header's, and the result
	// fields hold the reply body.
	OutcomeReplied Outcome = iota + 1
	// OutcomeNotApplied: the client knows the operation had no effect, because it was rejected
	// locally (an invalid path, a closed client) or never left the client.
	OutcomeNotApplied
	// OutcomeUnknown: the client gave up without a reply (CONNECTIONLOSS, SESSIONEXPIRED while in
	// flight, a timeout). The operation may or may not have taken effect. Err holds the code the
	// client reported and Return the time it reported it.
	OutcomeUnknown
	// OutcomePending: there was no result by the end of the run. The operation may or may not have
	// taken effect; Return is ignored.
	OutcomePending
)

// String names the outcome for explanations.
func (o Outcome) String() string {
	switch o {
	case OutcomeReplied:
		return "replied"
	case OutcomeNotApplied:
		return "not-applied"
	case OutcomeUnknown:
		return "unknown"
	case OutcomePending:
		return "pending"
	default:
		return "invalid-outcome"
	}
}

// Indeterminate reports whether the operation may or may not have taken effect.
func (o Outcome) Indeterminate() bool { return o == OutcomeUnknown || o == OutcomePending }

// Operation is one call a client made and what came of it.
//
// Kind is the ZooKeeper op code of the call: create (create2 when the reply carries a stat),
// delete, setData, check, getData, exists, getChildren (getChildren2 with a stat), multi, sync,
// closeSession, addWatch, getACL and setACL (whose ACLs no checker judges, though their replies'
// zxids and stats are). The input fields that apply to the kind are filled; the others are left
// zero. The create of a container (sent as createContainer) is a create with Mode
// proto.Container; the committed log then holds its createContainer transaction, and the
// deleteContainer transactions of the leader's container manager, which no client issued, are
// changes like any other: reads, watches and stats must reflect them. Containers inside a multi,
// TTL nodes, removeWatches and reconfig are not supported, nor are containers by the
// linearizability models, which cannot represent the server's own deletes.
type Operation struct {
	// Session is the session id the request was sent on, or 0 if the client had none yet.
	Session int64
	// Xid is the request's xid, used to find an unknown-outcome write in the committed log by
	// (session, xid). 0 means the request was never numbered.
	Xid  int32
	Kind proto.OpCode

	// Path is the znode path; for a sequential create it is the prefix the server appends to.
	Path string
	// Data is the data of a create or setData.
	Data []byte
	// Version is the expected version of a delete, setData or check (-1 for any).
	Version int32
	// Mode is the create mode of a create.
	Mode proto.CreateMode
	// Watch says a getData, exists or getChildren left a watch.
	Watch bool
	// WatchMode is the mode of an addWatch.
	WatchMode proto.AddWatchMode
	// Multi holds the sub-operations of a multi, in order.
	Multi []SubOperation

	// Call is when the client issued the operation, Return when its result reached the client.
	Call, Return clock.Time
	Outcome      Outcome
	// Err is the result code: the reply header's for a replied operation (for a multi, the first
	// failing sub-operation's code, as the Java client raises it), the client's local code
	// otherwise.
	Err proto.Code
	// Zxid is the reply header's zxid: for a write, the zxid of its transaction; for a read, the
	// zxid of the server state the read saw (FinalRequestProcessor replies with the server's
	// lastProcessedZxid). It is meaningful only for a replied operation.
	Zxid int64

	// CreatedPath is the path a create made (with the sequential suffix).
	CreatedPath string
	// ResultData is the data getData returned.
	ResultData []byte
	// Stat is the stat in the reply (create2, setData, check, getData, exists, getChildren2), or
	// nil if the reply carried none.
	Stat *proto.Stat
	// Children is the list getChildren returned, in any order.
	Children []string
	// MultiResults holds a multi's per-operation results, in order; nil if not recorded.
	MultiResults []SubResult

	// SyncLeaderZxid is, for a sync, the established leader's last committed zxid when the sync
	// was called, as the runner's global view knew it; 0 when there was no leader or it is unknown.
	SyncLeaderZxid int64
}

// SubOperation is one operation inside a multi: create, delete, setData or check.
type SubOperation struct {
	Kind    proto.OpCode
	Path    string
	Data    []byte
	Version int32
	Mode    proto.CreateMode
}

// SubResult is one sub-operation's result in a multi reply.
type SubResult struct {
	Err  proto.Code
	Path string      // the created path of a create
	Stat *proto.Stat // the stat of a setData (or create2), if any
}

// ArrivalKind says what reached a client.
type ArrivalKind uint8

// The arrival kinds. The zero value is invalid.
const (
	// ArrivalReply: the reply to the operation Op.
	ArrivalReply ArrivalKind = iota + 1
	// ArrivalEvent: a watch notification (xid -1).
	ArrivalEvent
	// ArrivalState: a connection state change the client library reported (Disconnected,
	// SyncConnected, Expired, Closed, AuthFailed).
	ArrivalState
)

// Arrival is one thing that reached a client, in the order the client library delivered it.
type Arrival struct {
	Kind ArrivalKind
	Time clock.Time
	// Session is the client's session when it arrived. For a reply it may be left 0: the
	// operation's session is used.
	Session int64
	// Op is the index into the client's Ops of the operation a reply answers.
	Op int
	// Event, Path and Zxid describe a watch notification. Zxid is the zxid of the change that
	// triggered it if the runner knows it, or -1 as ZooKeeper 3.8.0 sends it on the wire.
	Event proto.EventType
	Path  string
	Zxid  int64
	// State is the new connection state of a state change.
	State proto.KeeperState
}

// CommittedTxn is one committed transaction.
type CommittedTxn struct {
	Entry proto.TxnEntry
	// Time is when the leader committed it, or 0 if the runner did not record it. (Nothing can
	// commit at time 0: a leader must be elected first.)
	Time clock.Time
}

// Interval is the half-open span of virtual time [From, To).
type Interval struct {
	From, To clock.Time
}

// SessionFacts is what the runner knows about one session.
type SessionFacts struct {
	Session int64
	// Client is the name of the client that owned the session.
	Client string
	// Timeout is the negotiated session timeout. If 0, the createSession transaction in the
	// committed log supplies it.
	Timeout clock.Duration
	// Healthy holds the sorted, disjoint intervals during which the session's client was
	// connected to a serving server that was connected to the established leader, and the client
	// process was not paused: the times at which expiring it would be wrong.
	Healthy []Interval
	// End is how the session ended, or nil if it was still alive when the run ended.
	End *SessionEnd
}

// SessionEnd records the committed closeSession of a session.
type SessionEnd struct {
	// Zxid is the zxid of the committed closeSession transaction.
	Zxid int64
	// Time is when the leader committed it.
	Time clock.Time
	// Expired says the leader expired the session (a closeSession with cxid 0, which only the
	// leader's session tracker submits); false means a client's closeSession request closed it:
	// the session's own client, or another process that resumed the session with its id and
	// password (a forced expiry, recorded in History.ForcedExpiries).
	Expired bool
}

// ForcedExpiry records that the runner forced a session to expire the way ZooKeeper's own tests
// and Curator's KillSession do: a separate "killer" client process connected to the ensemble with
// the session's id and password and, once connected, sent closeSession at Time, while the
// session's own client was still alive and may have been heartbeating. The committed log says
// whether the close took effect: a closeSession of Session with a non-zero cxid committed at or
// after Time. The killer is not a client of the history; its closeSession is not an operation.
type ForcedExpiry struct {
	// Session is the session closed by force.
	Session int64
	// Client names the client that owned the session (the victim), such as "c3".
	Client string
	// Killer names the process that sent the closeSession, for explanations.
	Killer string
	// Time is when the killer sent its closeSession request.
	Time clock.Time
}

// LivenessFacts describe the liveness phase at the end of a run: faults stop, a quorum can talk,
// and the system must converge.
type LivenessFacts struct {
	// HealTime is when the last fault was healed.
	HealTime clock.Time
	// LeaderTime is when a leader was established after HealTime, or clock.Never if none was.
	LeaderTime clock.Time
	// Completed says the run went through its whole liveness phase, so that the end state is
	// converged: every live client is connected and every server has applied the committed log.
	Completed bool
}
