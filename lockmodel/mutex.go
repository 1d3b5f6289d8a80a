package lockmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Grant is the outcome of an acquisition. Held says the lock is held; otherwise Err says why not,
// and a nil Err means the acquisition timed out (Curator's acquire returning false).
type Grant struct {
	Held bool
	// Node is the lock node, Token its czxid (the fencing token), and Zxid the server state in
	// which the recipe saw that it holds the lock.
	Node  string
	Token int64
	Zxid  int64
	// Reentrant says the lock was already held by this recipe object and only its count went up.
	Reentrant bool
	Err       error
}

// driver is Curator's LockInternalsDriver: how a recipe orders the lock's children and decides from
// them whether it holds the lock, and which node it must watch if not.
type driver interface {
	sortKey(name string) string
	// getsTheLock returns found false if ours is not among the children.
	getsTheLock(sorted []string, ours string) (gets bool, watch string, found bool)
}

// standardDriver is StandardLockInternalsDriver with maxLeases: the first maxLeases nodes hold the
// lock; any other node watches the node maxLeases places before it.
type standardDriver struct {
	lockName  string
	maxLeases int
}

func (d standardDriver) sortKey(name string) string { return fixForSorting(name, d.lockName) }

func (d standardDriver) getsTheLock(sorted []string, ours string) (bool, string, bool) {
	i := indexOf(sorted, ours)
	if i < 0 {
		return false, "", false
	}
	if i < d.maxLeases {
		return true, "", true
	}
	return false, sorted[i-d.maxLeases], true
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// Mutex is Curator's InterProcessMutex with its LockInternals: a fair, reentrant lock. Acquiring
// creates a protected ephemeral-sequential node under the lock's path; the lowest node holds the
// lock; every other waiter watches only its predecessor (with getData, as Curator does, so that no
// watch is left behind on a missing node) and lists the children again after every notification.
// The read and write locks of ReadWriteLock are Mutexes with other drivers.
type Mutex struct {
	s      *Session
	recipe Recipe
	base   string
	path   string // base plus the lock name: what the protected create appends to
	driver driver
	data   []byte

	held     *heldLock
	acq      *acquisition
	attempts int
	// downgradeFrom, for a read lock, is the write lock whose holder may take the read lock at once.
	downgradeFrom *Mutex
}

type heldLock struct {
	node  string
	token int64
	count int
}

// acquisition is one attemptLock in progress.
type acquisition struct {
	id            int
	node          string
	stat          *proto.Stat
	waiting       bool
	noNodeRetries int
	deadline      clock.Time // on the node's monotonic clock; 0 means no timeout
	timer         sim.TimerID
	done          func(Grant)
	ended         bool
	// interrupted: the acquisition ended because it was interrupted (interrupt); a node its
	// create makes after that is deleted.
	interrupted bool
}

// NewMutex returns an InterProcessMutex on base. data is stored in each lock node.
func NewMutex(s *Session, base string, data []byte) (*Mutex, error) {
	return newMutex(s, RecipeMutex, base, MutexLockName, standardDriver{lockName: MutexLockName, maxLeases: 1}, data)
}

func newMutex(s *Session, recipe Recipe, base, lockName string, d driver, data []byte) (*Mutex, error) {
	if s == nil {
		return nil, fmt.Errorf("lockmodel: a %s lock needs a session", recipe)
	}
	if err := proto.ValidatePath(base); err != nil || base == "/" {
		return nil, fmt.Errorf("%w: %q", ErrInvalidPath, base)
	}
	m := &Mutex{s: s, recipe: recipe, base: base, path: joinPath(base, lockName), driver: d, data: data}
	s.addListener(m.connectionChanged)
	return m, nil
}

// Held reports whether this recipe object holds the lock.
func (m *Mutex) Held() bool { return m.held != nil }

// Token returns the held lock's fencing token (its node's czxid), or 0.
func (m *Mutex) Token() int64 {
	if m.held == nil {
		return 0
	}
	return m.held.token
}

// Node returns the held lock's node, or "".
func (m *Mutex) Node() string {
	if m.held == nil {
		return ""
	}
	return m.held.node
}

// Acquiring reports whether an acquisition is in progress.
func (m *Mutex) Acquiring() bool { return m.acq != nil }

// Acquire acquires the lock, waiting at most timeout for it (0: as long as it takes), and calls
// done with the outcome, never from inside this call. If the lock is held already, the hold count
// goes up (reentrancy). It refuses (returning an error, with no callback) while another acquisition
// is in progress or after the process crashed.
func (m *Mutex) Acquire(timeout clock.Duration, done func(Grant)) error {
	switch {
	case !m.s.alive():
		return ErrCrashed
	case timeout < 0:
		return fmt.Errorf("lockmodel: negative acquire timeout %v", timeout)
	case m.held != nil:
		m.held.count++
		h := *m.held
		m.s.later(0, func() { done(Grant{Held: true, Node: h.node, Token: h.token, Reentrant: true}) })
		return nil
	case m.acq != nil:
		return ErrBusy
	}
	m.attempts++
	a := &acquisition{id: m.attempts, done: done}
	if timeout > 0 {
		a.deadline = m.s.w.Elapsed(m.s.node).Add(timeout)
	}
	m.acq = a
	m.emit(Event{Kind: EventAcquiring, Attempt: a.id})
	m.attemptLock(a)
	return nil
}

func (m *Mutex) emit(e Event) {
	e.Recipe, e.Lock = m.recipe, m.base
	m.s.emit(e)
}

func (m *Mutex) createMode() proto.CreateMode {
	if m.s.cfg.Bugs.Has(BugPersistentNode) {
		return proto.PersistentSequential
	}
	return proto.EphemeralSequential
}

// attemptLock creates the acquisition's node (StandardLockInternalsDriver.createsTheLock), then runs
// the lock loop. A create that ends in NONODE found no parent even after making it: the container
// manager deleted the empty container between mkdirs and the create. attemptLock catches that
// NoNodeException like the lock loop's, and starts over after the retry policy's sleep.
//
// A read lock whose holder holds the write lock (a downgrade) does as Curator 5.5.0's read lock
// does (CURATOR-621, InterProcessReadWriteLock.ReadLock's getSortingSequence and
// StandardLockInternalsDriver.createsTheLock): its node is not sequential but takes the write
// node's sequence number, so that it sorts where the write node is. A new sequential node would
// sort after the writers already waiting, and the first of them would take the write lock as soon
// as the downgrading holder released it, while that holder still read.
func (m *Mutex) attemptLock(a *acquisition) {
	path, mode := m.path, m.createMode()
	if seq := m.sortingSequence(); seq != "" {
		path += seq
		mode = proto.Ephemeral
		if m.s.cfg.Bugs.Has(BugPersistentNode) {
			mode = proto.Persistent
		}
	}
	m.s.createLockNode(path, m.data, mode, false, func(r created) {
		if a.ended {
			if a.interrupted && r.code == proto.OK && r.path != "" {
				// The create of an acquisition interrupted meanwhile made the node after
				// all: protectedPathInForeground's FindAndDeleteProtectedNodeInBackground
				// deletes it (a background guaranteed delete).
				m.s.deleteGuaranteedInBackground(r.path, nil)
			}
			return
		}
		if r.null {
			// BugNestedRetryNull: createsTheLock returned null. internalLockLoop lists the
			// children, then throws a NullPointerException on ourPath.substring; its quiet
			// delete of a null path fails, and attemptLock does not catch the exception.
			m.s.getChildrenRetrying(m.base, nil, func(client.ChildrenResult) {
				if !a.ended {
					m.fail(a, ErrNullPath)
				}
			})
			return
		}
		if r.code == proto.NoNode {
			m.noNode(a)
			return
		}
		if r.code != proto.OK {
			m.fail(a, &CodeError{Op: "create", Path: m.path, Code: r.code})
			return
		}
		a.node, a.stat = r.path, r.stat
		e := Event{Kind: EventCreated, Attempt: a.id, Node: a.node}
		if r.stat != nil {
			e.Token = r.stat.Czxid
		}
		m.emit(e)
		m.loop(a)
	})
}

// loop is one turn of internalLockLoop: list and sort the children, and either hold the lock or
// watch the node the driver names. With BugHerd the listing itself leaves a watch on the children,
// and the waiter waits for any change among them. A parent that is gone (a container the manager
// deleted once it was empty, which means our node is gone too) lists as no children
// (getSortedChildren ignores NoNodeException), so our node is not found: "Sequential path not
// found", a NoNodeException that starts the attempt over.
func (m *Mutex) loop(a *acquisition) {
	var target watchTarget
	if m.s.cfg.Bugs.Has(BugHerd) {
		target = m
	}
	m.s.getChildrenRetrying(m.base, target, func(r client.ChildrenResult) {
		if a.ended {
			return
		}
		switch r.Err {
		case proto.OK:
		case proto.NoNode:
			r.Children = nil
		default:
			m.failDeleting(a, &CodeError{Op: "getChildren", Path: m.base, Code: r.Err})
			return
		}
		if target != nil && r.Err == proto.OK {
			m.emit(Event{Kind: EventWatching, Attempt: a.id, Node: a.node, Path: m.base, Children: true, Zxid: r.Zxid})
		}
		sorted := sortChildren(r.Children, m.driver.sortKey)
		gets, watch, found := m.driverFor(sorted, nodeName(a.node))
		switch {
		case !found:
			m.noNode(a)
		case gets:
			m.granted(a, r.Zxid, m.downgradeFrom != nil && m.downgradeFrom.held != nil)
		case target != nil:
			m.wait(a)
		default:
			m.watchPredecessor(a, joinPath(m.base, watch))
		}
	})
}

// sortingSequence is the read lock's getSortingSequence: the sequence of the write node this
// session holds, or "" (also for every other lock).
func (m *Mutex) sortingSequence() string {
	if m.downgradeFrom == nil || m.downgradeFrom.held == nil || m.s.cfg.Bugs.Has(BugDowngradeNewNode) {
		return ""
	}
	return fixForSorting(nodeName(m.downgradeFrom.held.node), WriteLockName)
}

// driverFor applies the driver, except that a read lock is granted at once to the holder of the
// write lock (the read lock's predicate in InterProcessReadWriteLock).
func (m *Mutex) driverFor(sorted []string, ours string) (bool, string, bool) {
	if m.downgradeFrom != nil && m.downgradeFrom.held != nil {
		return true, "", true
	}
	return m.driver.getsTheLock(sorted, ours)
}

// watchPredecessor sets a watch on the node to wait for, and waits; a node gone already means the
// loop runs again at once.
func (m *Mutex) watchPredecessor(a *acquisition, path string) {
	m.s.getDataRetrying(path, m, func(r client.DataResult) {
		if a.ended {
			return
		}
		switch r.Err {
		case proto.OK:
			m.emit(Event{Kind: EventWatching, Attempt: a.id, Node: a.node, Path: path, Zxid: r.Zxid})
			m.wait(a)
		case proto.NoNode:
			m.loop(a)
		default:
			m.failDeleting(a, &CodeError{Op: "getData", Path: path, Code: r.Err})
		}
	})
}

// wait waits for a notification, or gives up at the acquisition's deadline (deleting its node).
func (m *Mutex) wait(a *acquisition) {
	if a.deadline == 0 {
		a.waiting = true
		return
	}
	left := a.deadline.Sub(m.s.w.Elapsed(m.s.node))
	if left <= 0 {
		m.timedOut(a)
		return
	}
	a.waiting = true
	inc := m.s.inc
	a.timer = m.s.w.AfterFunc(m.s.node, left, func() {
		if m.s.w.Incarnation(m.s.node) == inc && a.waiting && !a.ended {
			a.waiting = false
			m.timedOut(a)
		}
	})
}

// watchEvent is LockInternals' watcher: any event wakes the waiting acquisition, which lists the
// children again.
func (m *Mutex) watchEvent(client.Event) {
	a := m.acq
	if a == nil || !a.waiting {
		return
	}
	a.waiting = false
	m.s.w.CancelTimer(a.timer)
	m.loop(a)
}

// granted completes an acquisition. A node found by a protected-mode search came without its stat,
// so its czxid, the fencing token, is read first.
func (m *Mutex) granted(a *acquisition, zxid int64, viaWriteLock bool) {
	if a.stat != nil {
		m.finish(a, a.stat.Czxid, zxid, viaWriteLock)
		return
	}
	m.s.existsRetrying(a.node, nil, func(r client.StatResult) {
		if a.ended {
			return
		}
		switch r.Err {
		case proto.OK:
			stat := r.Stat
			a.stat = &stat
			m.finish(a, stat.Czxid, zxid, viaWriteLock)
		case proto.NoNode:
			m.noNode(a)
		default:
			m.failDeleting(a, &CodeError{Op: "exists", Path: a.node, Code: r.Err})
		}
	})
}

func (m *Mutex) finish(a *acquisition, token, zxid int64, viaWriteLock bool) {
	a.ended = true
	m.acq = nil
	m.held = &heldLock{node: a.node, token: token, count: 1}
	m.emit(Event{Kind: EventGranted, Attempt: a.id, Node: a.node, Token: token, Zxid: zxid, ViaWriteLock: viaWriteLock})
	a.done(Grant{Held: true, Node: a.node, Token: token, Zxid: zxid})
}

// noNode handles "Sequential path not found": the node is deleted (in case it exists after all),
// and after the policy's sleep the whole attempt starts over with a new node, as attemptLock does on
// a NoNodeException; once the policy gives up the acquisition fails. A delete that fails does not
// end the acquisition: internalLockLoop deletes the node with deleteOurPathQuietly, which adds
// the delete's exception to the NoNodeException as a suppressed one, and attemptLock catches the
// NoNodeException and starts over all the same (the guaranteed delete goes on in the background).
func (m *Mutex) noNode(a *acquisition) {
	m.deleteNode(a, func(proto.Code) {
		d, ok := m.s.cfg.Retry.sleep(m.s.w, a.noNodeRetries)
		if !ok {
			path := a.node
			if path == "" {
				path = m.path // The create itself found no parent.
			}
			m.fail(a, &CodeError{Op: "lock", Path: path, Code: proto.NoNode})
			return
		}
		a.noNodeRetries++
		m.emit(Event{Kind: EventRequeued, Attempt: a.id, Node: a.node})
		m.s.later(d, func() {
			if !a.ended {
				a.node, a.stat = "", nil
				m.attemptLock(a)
			}
		})
	})
}

// interrupt interrupts the acquisition in progress, as LeaderSelector.cancelElection interrupts
// the thread blocked in InterProcessMutex.acquire. A Java thread notices at once wherever it
// blocks: in wait() for a notification, in a ZooKeeper call (ClientCnxn.submitRequest's
// packet.wait), in the retry policy's sleep, or in the wait for a connection
// (internalBlockUntilConnectedOrTimedOut), so the acquisition fails with ErrInterrupted now.
// Its node, if it has one, is deleted in the background: the lock loop's deleteOurPathQuietly
// runs with the interrupt flag set again (ThreadUtils.checkInterrupted), its guaranteed delete
// is interrupted too, and DeleteBuilderImpl hands the path to the FailedDeleteManager. A node
// that an interrupted create makes after all is deleted the same way (attemptLock), as
// protectedPathInForeground's FindAndDeleteProtectedNodeInBackground deletes it.
func (m *Mutex) interrupt() {
	a := m.acq
	if a == nil || a.ended || a.interrupted {
		return
	}
	a.interrupted = true
	a.waiting = false
	m.s.w.CancelTimer(a.timer)
	if a.node != "" {
		m.s.deleteGuaranteedInBackground(a.node, nil)
	}
	m.fail(a, ErrInterrupted)
}

// failDeleting ends the acquisition with err after deleting its node (the lock loop's finally).
func (m *Mutex) failDeleting(a *acquisition, err error) {
	m.deleteNode(a, func(proto.Code) { m.fail(a, err) })
}

// timedOut gives up at the deadline: internalLockLoop breaks out of its loop and deletes the node
// with deleteOurPath, which, unlike the quiet delete of its catch block, throws: a guaranteed
// delete that fails (its retries used up; FailedDeleteManager goes on in the background) makes
// acquire throw that exception instead of returning false.
func (m *Mutex) timedOut(a *acquisition) {
	m.deleteNode(a, func(code proto.Code) {
		if code != proto.OK {
			m.fail(a, &CodeError{Op: "delete", Path: a.node, Code: code})
			return
		}
		m.fail(a, nil)
	})
}

func (m *Mutex) deleteNode(a *acquisition, done func(proto.Code)) {
	if a.node == "" {
		done(proto.OK)
		return
	}
	m.s.deleteGuaranteed(a.node, func(code proto.Code) {
		if !a.ended {
			done(code)
		}
	})
}

func (m *Mutex) fail(a *acquisition, err error) {
	if a.ended {
		return
	}
	a.ended, a.waiting = true, false
	m.s.w.CancelTimer(a.timer)
	if m.acq == a {
		m.acq = nil
	}
	m.emit(Event{Kind: EventNotGranted, Attempt: a.id, Node: a.node, Err: err})
	a.done(Grant{Err: err})
}

// connectionChanged reports a held lock as lost when the session is lost. (InterProcessMutex itself
// does not listen; an application must, and the observer hears what it would learn.)
func (m *Mutex) connectionChanged(st ConnectionState) {
	if st == StateLost && m.held != nil {
		m.emit(Event{Kind: EventLost, Node: m.held.node, Token: m.held.token, Err: ErrLost})
	}
}

// Release releases one hold of the lock; the last one deletes the lock node (guaranteed) and calls
// done with the outcome, never from inside this call.
func (m *Mutex) Release(done func(error)) error {
	if m.held == nil {
		return ErrNotHeld
	}
	if !m.s.alive() {
		return ErrCrashed
	}
	m.held.count--
	if m.held.count > 0 {
		m.s.later(0, func() { done(nil) })
		return nil
	}
	h := *m.held
	m.held = nil
	// InterProcessMutex.release (Curator 5.x): the last release removes the thread's lock data in
	// a finally block whatever the delete does (LockInternals.releaseLock, a guaranteed delete):
	// from here on the holder no longer believes it holds the lock.
	m.emit(Event{Kind: EventReleasing, Node: h.node, Token: h.token})
	m.s.deleteGuaranteed(h.node, func(code proto.Code) {
		var err error
		switch {
		case code == proto.OK:
		case m.s.state == StateLost || code == proto.SessionExpired:
			err = ErrLost
		default:
			err = &CodeError{Op: "delete", Path: h.node, Code: code}
		}
		m.emit(Event{Kind: EventReleased, Node: h.node, Token: h.token, Err: err})
		done(err)
	})
	return nil
}
