package lockmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// LatchState is LeaderLatch.State.
type LatchState uint8

// The latch states.
const (
	LatchLatent LatchState = iota
	LatchStarted
	LatchClosed
)

// LeaderLatch is Curator's LeaderLatch as of 5.8: leader election on the same queue as the fair
// lock. Each participant creates a protected ephemeral-sequential node in the background
// (LeaderLatch.reset); the lowest is the leader; every other participant watches its predecessor
// with getData and lists the children again when that node is deleted (checkLeadership). The
// leadership checks follow Curator's, fix by fix:
//
//   - checkLeadership gives up leadership when the participant's node is no longer first
//     (setLeadership(false) before it watches its predecessor; CURATOR-653, Curator 5.4.0). A
//     participant whose node was replaced while it led (below) stops leading at its next listing.
//   - Before leading, checkLeadership reads its own node (getData) and compares the node's
//     ephemeral owner with the session's id, starting over (reset) if they differ or the node is
//     gone (CURATOR-696, Curator 5.7.0).
//   - handleStateChange: SUSPENDED and LOST end leadership (StandardConnectionStateErrorPolicy);
//     RECONNECTED lists the children again. If the reconnect comes while reset's create is still
//     being retried, the participant has no node yet, so checkLeadership does not find it and
//     resets: a second create starts while the first goes on. Each completes with setNode, which
//     deletes the node before; the first may make the participant leader, and the second then
//     deletes the leader's node and lists the children, and the participant gives up leadership
//     one round trip later (or keeps leading on its new node if that is first), as Curator does.
//     Until that round trip returns it believes it leads on a deleted node, and a waiter that
//     watched that node may be granted meanwhile: Curator's window (the callback of reset's create
//     calls setNode, whose guaranteed delete runs in the background, then getChildren; only
//     checkLeadership's listing sets leadership false). lock/exclusive-belief-fenced reports it
//     as the known class curator-latch-replaced-node (election seed 10452).
//   - A listing that finds the election's parent gone resets (CURATOR-724, Curator 5.8.0).
//
// Close leaves the election.
type LeaderLatch struct {
	s     *Session
	path  string
	id    []byte
	state LatchState

	leader     bool
	ourPath    string
	ourToken   int64
	listenerID int
	// OnLeader and OnNotLeader are LeaderLatchListener's isLeader and notLeader; either may be nil.
	OnLeader    func(Grant)
	OnNotLeader func()

	attempt int  // counts the waits for leadership, for events
	waiting bool // the current attempt has not ended
	resets  int
	// lossErr, if set, says why the next loss of leadership happens (ErrLost otherwise).
	lossErr error
	// ledOn and ledToken are the node and token the participant was made leader on.
	ledOn    string
	ledToken int64
	// othersQueued says the last listing that found the participant first had other nodes too.
	othersQueued bool
}

// maxResets bounds how often a latch starts over with a new node: a latch that cannot keep a node
// is broken, and the bound turns an endless loop into a failed run.
const maxResets = 1 << 12

// NewLeaderLatch returns a latch for the election at path; id is the participant id stored in its
// node.
func NewLeaderLatch(s *Session, path string, id string) (*LeaderLatch, error) {
	if s == nil {
		return nil, fmt.Errorf("lockmodel: a leader latch needs a session")
	}
	if err := proto.ValidatePath(path); err != nil || path == "/" {
		return nil, fmt.Errorf("%w: %q", ErrInvalidPath, path)
	}
	return &LeaderLatch{s: s, path: path, id: []byte(id)}, nil
}

// State returns the latch's state.
func (l *LeaderLatch) State() LatchState { return l.state }

// HasLeadership reports whether this participant leads.
func (l *LeaderLatch) HasLeadership() bool { return l.state == LatchStarted && l.leader }

// Token returns the fencing token of the participant's node (its czxid), or 0.
func (l *LeaderLatch) Token() int64 { return l.ourToken }

// OurPath returns the participant's node, or "".
func (l *LeaderLatch) OurPath() string { return l.ourPath }

func (l *LeaderLatch) emit(e Event) {
	e.Recipe, e.Lock, e.Attempt = RecipeLeader, l.path, l.attempt
	l.s.emit(e)
}

// Start joins the election once the session is connected (AfterConnectionEstablished).
func (l *LeaderLatch) Start() error {
	if l.state != LatchLatent {
		return fmt.Errorf("lockmodel: a leader latch cannot be started more than once")
	}
	if !l.s.alive() {
		return ErrCrashed
	}
	l.state = LatchStarted
	l.beginWaiting()
	if l.s.state.IsConnected() {
		l.s.later(0, l.internalStart)
		return nil
	}
	var id int
	id = l.s.addListener(func(st ConnectionState) {
		if st.IsConnected() {
			l.s.removeListener(id)
			l.internalStart()
		}
	})
	return nil
}

func (l *LeaderLatch) internalStart() {
	if l.state != LatchStarted {
		return
	}
	l.listenerID = l.s.addListener(l.handleStateChange)
	l.reset()
}

// beginWaiting starts a new wait for leadership, for the events.
func (l *LeaderLatch) beginWaiting() {
	if l.waiting {
		return
	}
	l.attempt++
	l.waiting = true
	l.emit(Event{Kind: EventAcquiring})
}

// endWaiting ends the wait without leadership.
func (l *LeaderLatch) endWaiting(err error) {
	if !l.waiting {
		return
	}
	l.waiting = false
	l.emit(Event{Kind: EventNotGranted, Node: l.ourPath, Err: err})
}

func (l *LeaderLatch) createMode() proto.CreateMode {
	if l.s.cfg.Bugs.Has(BugPersistentNode) {
		return proto.PersistentSequential
	}
	return proto.EphemeralSequential
}

// reset gives up leadership and the current node, and creates a new one in the background, making
// the election's parent as a container if it is missing (and again whenever the container
// manager deleted it before the create got there); a failed create is only logged, as Curator
// does (the next RECONNECTED starts over).
func (l *LeaderLatch) reset() {
	l.resets++
	if l.resets > maxResets {
		panic(fmt.Sprintf("lockmodel: %s's leader latch on %s reset %d times", l.s.cfg.Name, l.path, l.resets))
	}
	l.lossErr = ErrNotFirst
	l.setLeadership(false, 0, EventLost)
	if l.resets > 1 && l.s.state != StateLost {
		// Every reset after the first (internalStart's) abandons the participant's place in the
		// queue, or a create still in flight, and queues again.
		l.emit(Event{Kind: EventRequeued, Node: l.ourPath})
	}
	l.setNode("", 0)
	l.s.createLockNode(joinPath(l.path, LatchLockName), l.id, l.createMode(), true, func(r created) {
		if r.code != proto.OK {
			l.s.w.Note(l.s.node, "lock", "%s leader latch %s: create failed: %v", l.s.cfg.Name, l.path, r.code)
			return
		}
		token := int64(0)
		if r.stat != nil {
			token = r.stat.Czxid
		}
		// A node the protected-mode search found came without its stat: its czxid, the fencing
		// token, is read when the participant checks its owner before leading (lead).
		l.nodeCreated(r.path, token)
	})
}

// lead is the branch of checkLeadership for a participant whose node is first (Curator 5.7.0,
// CURATOR-696): it reads its node (getData, in the background, with the retry policy) and leads
// only if the node's ephemeral owner is this session; any other outcome (the node gone, an owner
// that differs, an error the retry policy gave up on, which leaves Curator's event without a stat)
// resets. The node's czxid is the leader's fencing token, which a node found by the protected-mode
// search came without.
//
// Two deviations: a reply that comes after the participant moved to another node is ignored
// (Curator's callback sets leadership for the path it captured, which a later check then corrects;
// ignoring it leaves the decision to that check), and with BugPersistentNode, whose nodes have no
// ephemeral owner, the owner is not compared (the bug models a recipe without ephemeral nodes,
// which has no such check).
func (l *LeaderLatch) lead(zxid int64) {
	path := l.ourPath
	if l.s.cfg.SelfTests.Has(SelfTestLatchKeepsLeadership) || l.s.cfg.SelfTests.Has(SelfTestLatchNoOwnerCheck) {
		l.leadWithoutOwnerCheck(path, zxid)
		return
	}
	l.s.getDataInBackground(path, nil, func(r client.DataResult) {
		if l.state != LatchStarted || l.ourPath != path {
			return
		}
		owned := r.Err == proto.OK && (r.Stat.EphemeralOwner == l.s.SessionID() || l.s.cfg.Bugs.Has(BugPersistentNode))
		if !owned {
			l.reset()
			return
		}
		if l.ourToken == 0 {
			l.ourToken = r.Stat.Czxid
		}
		if l.s.cfg.SelfTests.Has(SelfTestLatchYields) && l.othersQueued {
			// The self-test: yield to the others after one base sleep instead of leading.
			l.s.later(l.s.cfg.Retry.BaseSleep, func() {
				if l.state == LatchStarted && l.ourPath == path {
					l.reset()
				}
			})
			return
		}
		l.setLeadership(true, zxid, 0)
	})
}

// leadWithoutOwnerCheck is checkLeadership before Curator 5.7.0, for the self-tests that restore
// LeaderLatch as it was before 5.4.0 and before 5.7.0: the first participant leads at once, reading its node's
// czxid (its fencing token) first only if it does not know it.
func (l *LeaderLatch) leadWithoutOwnerCheck(path string, zxid int64) {
	if l.ourToken != 0 {
		l.setLeadership(true, zxid, 0)
		return
	}
	l.s.existsInBackground(path, nil, func(r client.StatResult) {
		if l.state != LatchStarted || l.ourPath != path {
			return
		}
		switch r.Err {
		case proto.OK:
			l.ourToken = r.Stat.Czxid
			l.setLeadership(true, zxid, 0)
		case proto.NoNode:
			l.reset()
		}
	})
}

func (l *LeaderLatch) nodeCreated(path string, token int64) {
	l.setNode(path, token)
	l.emit(Event{Kind: EventCreated, Node: path, Token: token})
	if l.state == LatchClosed {
		l.setNode("", 0)
		return
	}
	l.getChildren()
}

// setNode replaces the participant's node, deleting the old one (guaranteed, in the background).
func (l *LeaderLatch) setNode(path string, token int64) {
	old := l.ourPath
	l.ourPath, l.ourToken = path, token
	if old != "" {
		l.s.deleteGuaranteedInBackground(old, nil)
	}
}

// getChildren lists the election's nodes and checks leadership. A missing parent means the
// container manager deleted the election's empty container, so the participant's node is gone
// too: it starts over with a new node (CURATOR-724, Curator 5.8; before it, the latch logged the
// error and waited for the next RECONNECTED).
func (l *LeaderLatch) getChildren() {
	// With BugHerd the listing itself leaves a watch on the children, as the herd-prone recipe
	// does, and the decision is made from that same listing: a second listing to set the watch
	// could miss a change between the two and wait forever, a liveness bug on top of the herd.
	var target watchTarget
	if l.s.cfg.Bugs.Has(BugHerd) {
		target = l
	}
	l.s.getChildrenInBackground(l.path, target, func(r client.ChildrenResult) {
		switch r.Err {
		case proto.OK:
			l.checkLeadership(r.Children, r.Zxid)
		case proto.NoNode:
			if l.state == LatchStarted {
				l.reset()
			}
		}
	})
}

// checkLeadership decides from the children: first leads, missing starts over, others watch their
// predecessor (with BugHerd: the children).
func (l *LeaderLatch) checkLeadership(children []string, zxid int64) {
	if l.state != LatchStarted {
		return
	}
	sorted := sortChildren(children, func(name string) string { return fixForSorting(name, LatchLockName) })
	ours := -1
	if l.ourPath != "" {
		ours = indexOf(sorted, nodeName(l.ourPath))
	}
	switch {
	case ours < 0:
		l.reset()
		return
	case ours == 0:
		l.othersQueued = len(sorted) > 1
		l.lead(zxid)
		return
	}
	// Not first: Curator 5.4.0's checkLeadership gives up leadership here (CURATOR-653), before it
	// watches the predecessor; the self-test restores the older code that kept it.
	if !l.s.cfg.SelfTests.Has(SelfTestLatchKeepsLeadership) {
		l.lossErr = ErrNotFirst
		l.setLeadership(false, 0, EventLost)
	}
	switch {
	case l.s.cfg.Bugs.Has(BugHerd):
		// The listing this decision comes from left the watch on the children.
		l.emit(Event{Kind: EventWatching, Node: l.ourPath, Path: l.path, Children: true, Zxid: zxid})
	default:
		// As Curator's watcher lambda captures the path it was made for, the event names the node
		// whose predecessor this is, even if the participant has moved to a new node since.
		node, watch := l.ourPath, joinPath(l.path, sorted[ours-1])
		l.s.getDataInBackground(watch, l, func(r client.DataResult) {
			switch r.Err {
			case proto.OK:
				l.emit(Event{Kind: EventWatching, Node: node, Path: watch, Zxid: r.Zxid})
			case proto.NoNode:
				l.getChildren()
			}
		})
	}
}

// watchEvent is the watcher on the predecessor: its deletion (with BugHerd, any change among the
// children) makes the participant list the children again.
func (l *LeaderLatch) watchEvent(e client.Event) {
	if l.state != LatchStarted {
		return
	}
	if e.Type == proto.EventNodeDeleted || (e.Type == proto.EventNodeChildrenChanged && l.s.cfg.Bugs.Has(BugHerd)) {
		l.getChildren()
	}
}

// handleStateChange follows the default error policy: SUSPENDED and LOST end leadership;
// RECONNECTED checks the children again.
func (l *LeaderLatch) handleStateChange(st ConnectionState) {
	switch st {
	case StateReconnected:
		l.getChildren()
	case StateSuspended:
		l.setLeadership(false, 0, EventLost)
	case StateLost:
		l.setLeadership(false, 0, EventLost)
		l.endWaiting(ErrLost)
	}
}

// setLeadership changes leadership and tells the listener and the observer; how says whether a
// loss is a release or a loss.
func (l *LeaderLatch) setLeadership(leader bool, zxid int64, how EventKind) {
	defer func() { l.lossErr = nil }()
	old := l.leader
	l.leader = leader
	switch {
	case !old && leader:
		l.waiting = false
		l.ledOn, l.ledToken = l.ourPath, l.ourToken
		l.emit(Event{Kind: EventGranted, Node: l.ourPath, Token: l.ourToken, Zxid: zxid})
		if l.OnLeader != nil {
			l.OnLeader(Grant{Held: true, Node: l.ourPath, Token: l.ourToken, Zxid: zxid})
		}
	case old && !leader:
		// The loss names the node the participant was made leader on, which a create completing
		// meanwhile may have replaced (setNode).
		e := Event{Kind: how, Node: l.ledOn, Token: l.ledToken}
		if how == EventLost {
			e.Err = ErrLost
			if l.lossErr != nil {
				e.Err = l.lossErr
			}
		}
		l.emit(e)
		if l.state == LatchStarted && l.s.state != StateLost {
			l.beginWaiting()
		}
		if l.OnNotLeader != nil {
			l.OnNotLeader()
		}
	}
}

// Close leaves the election: the node is deleted and leadership, if held, released. Listeners are
// not told (CloseMode.SILENT).
func (l *LeaderLatch) Close() error {
	if l.state != LatchStarted {
		return fmt.Errorf("lockmodel: leader latch already closed or not started")
	}
	l.state = LatchClosed
	l.OnLeader, l.OnNotLeader = nil, nil
	l.s.removeListener(l.listenerID)
	l.s.forget(l)
	l.setLeadership(false, 0, EventReleased)
	l.endWaiting(ErrClosed)
	l.setNode("", 0)
	return nil
}
