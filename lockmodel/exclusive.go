package lockmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// ExclusiveLock is the simplest ZooKeeper lock: whoever creates the ephemeral node at the lock's
// path holds the lock. A create that finds the node (NODEEXISTS) sets a watch on it with exists and
// creates again once it changes. It is not fair, and every release wakes every waiter (the herd
// effect the sequential recipes avoid).
//
// Curator has no such recipe; this one is written as a Curator 5 application would write it, with
// create().creatingParentContainersIfNeeded().withMode(EPHEMERAL): a missing parent is made as a
// container, which the server deletes once it is empty again. A create that still finds no
// parent (the container manager deleted the new container before the create reached it) starts
// over after the retry policy's sleep, as LockInternals.attemptLock does for the fair lock.
//
// After a connection loss the outcome of a create is unknown, and the retried create may find the
// node its own lost reply made: the recipe recognises its own node by the node's ephemeral owner,
// and also checks the owner before retrying a delete whose reply was lost, so that it never deletes
// a node another holder created meanwhile. A release whose delete the retry policy gives up on
// goes on deleting in the background, as delete().guaranteed() does, and so does the cleanup of
// a create whose outcome was unknown. With BugUnprotectedCreate it
// does not look at the owner when it finds the node, and waits for its own node to go away.
type ExclusiveLock struct {
	s        *Session
	path     string
	data     []byte
	held     *heldLock
	acq      *exclusiveAcquisition
	attempts int
	// deleting is the czxid of a released node whose delete goes on in the background, or 0:
	// an acquisition that finds it does not take it for a node of its own lost create.
	deleting int64
}

type exclusiveAcquisition struct {
	id            int
	noNodeRetries int
	waiting       bool
	deadline      clock.Time
	timer         sim.TimerID
	done          func(Grant)
	ended         bool
}

// NewExclusiveLock returns the lock whose node is path.
func NewExclusiveLock(s *Session, path string, data []byte) (*ExclusiveLock, error) {
	if s == nil {
		return nil, fmt.Errorf("lockmodel: an exclusive lock needs a session")
	}
	if err := proto.ValidatePath(path); err != nil || path == "/" {
		return nil, fmt.Errorf("%w: %q", ErrInvalidPath, path)
	}
	l := &ExclusiveLock{s: s, path: path, data: data}
	s.addListener(l.connectionChanged)
	return l, nil
}

// Held reports whether this recipe object holds the lock.
func (l *ExclusiveLock) Held() bool { return l.held != nil }

// Token returns the held lock's fencing token, or 0.
func (l *ExclusiveLock) Token() int64 {
	if l.held == nil {
		return 0
	}
	return l.held.token
}

// Acquiring reports whether an acquisition is in progress.
func (l *ExclusiveLock) Acquiring() bool { return l.acq != nil }

func (l *ExclusiveLock) emit(e Event) {
	e.Recipe, e.Lock = RecipeExclusive, l.path
	l.s.emit(e)
}

// Acquire acquires the lock, as Mutex.Acquire does.
func (l *ExclusiveLock) Acquire(timeout clock.Duration, done func(Grant)) error {
	switch {
	case !l.s.alive():
		return ErrCrashed
	case timeout < 0:
		return fmt.Errorf("lockmodel: negative acquire timeout %v", timeout)
	case l.held != nil:
		l.held.count++
		h := *l.held
		l.s.later(0, func() { done(Grant{Held: true, Node: h.node, Token: h.token, Reentrant: true}) })
		return nil
	case l.acq != nil:
		return ErrBusy
	}
	l.attempts++
	a := &exclusiveAcquisition{id: l.attempts, done: done}
	if timeout > 0 {
		a.deadline = l.s.w.Elapsed(l.s.node).Add(timeout)
	}
	l.acq = a
	l.emit(Event{Kind: EventAcquiring, Attempt: a.id})
	l.tryCreate(a)
	return nil
}

func (l *ExclusiveLock) createMode() proto.CreateMode {
	if l.s.cfg.Bugs.Has(BugPersistentNode) {
		return proto.Persistent
	}
	return proto.Ephemeral
}

func (l *ExclusiveLock) tryCreate(a *exclusiveAcquisition) {
	retrying(l.s, codeOfCreated, func(_ int, cb func(created)) {
		l.s.createWithParents(l.path, l.data, l.createMode(), cb)
	}, func(r created) {
		if a.ended {
			return
		}
		switch r.code {
		case proto.OK:
			l.emit(Event{Kind: EventCreated, Attempt: a.id, Node: l.path, Token: r.stat.Czxid})
			l.finish(a, r.stat.Czxid, r.stat.Czxid)
		case proto.NodeExists:
			l.check(a)
		case proto.NoNode:
			l.noParent(a)
		default:
			err := &CodeError{Op: "create", Path: l.path, Code: r.code}
			if retryable(r.code) {
				l.failCleaningUp(a, err)
				return
			}
			l.fail(a, err)
		}
	})
}

// failCleaningUp ends an acquisition whose create the retry policy gave up on while its outcome
// was unknown (a connection loss): the create may have made the node, which would then block the
// lock for as long as this session lives with no one holding it, as Curator's protected creates
// guard against with FindAndDeleteProtectedNodeInBackground. Before reporting the failure (so that
// no new acquisition can adopt the node meanwhile), it deletes the node if this session owns it.
// With BugUnprotectedCreate it does not look at the owner, and the node stays.
//
// The look syncs first, as the protected-mode search does (see createLockNode): the lost create
// may still wait for a quorum at the leader, and a read answered by a server that has not applied
// it finds no node, after which the create commits and the node is an orphan that blocks every
// later acquisition (exclusive lock, seed 6090109: c4's create was proposed by a leader that had
// lost its quorum; c4 reconnected to a follower, found no node and gave up; the create committed
// later and c1 waited for the rest of the run). With BugUnsyncedSearch it looks without a sync.
func (l *ExclusiveLock) failCleaningUp(a *exclusiveAcquisition, err error) {
	if l.s.cfg.Bugs.Has(BugUnprotectedCreate) {
		l.fail(a, err)
		return
	}
	if l.s.cfg.Bugs.Has(BugUnsyncedSearch) {
		l.lookAndCleanUp(a, err)
		return
	}
	// If the policy gives up on the sync as well, the unsynced look is still the best the recipe
	// can do before it reports the failure.
	l.s.syncRetrying(l.path, func(proto.Code) {
		if !a.ended {
			l.lookAndCleanUp(a, err)
		}
	})
}

// lookAndCleanUp deletes the lock node if this session owns it, and fails the acquisition. A
// delete the retry policy gives up on goes on in the background (deleteInBackground).
func (l *ExclusiveLock) lookAndCleanUp(a *exclusiveAcquisition, err error) {
	l.s.existsRetrying(l.path, nil, func(r client.StatResult) {
		if a.ended {
			return
		}
		if r.Err != proto.OK || r.Stat.EphemeralOwner != l.s.SessionID() || r.Stat.EphemeralOwner == 0 {
			l.fail(a, err)
			return
		}
		czxid := r.Stat.Czxid
		l.deleteOurs(czxid, func(d client.Result) {
			if retryable(d.Err) && l.s.state != StateLost {
				// The policy gave up on the delete too: go on in the background, as a release
				// does (lock seed 7024069: the cleanup's delete was proposed by a leader that
				// lost its quorum, every retry met a connection loss, and c4's node, in a session
				// that stayed open, blocked the lock for the rest of the run).
				l.deleteInBackground(czxid, 0)
			}
			l.fail(a, err)
		})
	})
}

// deleteOurs deletes the lock node this session made (czxid), with the retry policy; a retry
// first checks that the node is still that one, since a lost reply may have deleted it already
// and another client may have made the next. The check syncs first: the delete whose reply was
// lost may still be on its way to commit (sent through the server the session left), and a
// check answered before it commits would find our node, after which the retried delete would
// remove the next holder's (lock seed 7106: c1's retried delete deleted c3's node while c3 held
// the lock). A leader answers the sync only after every proposal it had when the sync came, and
// the old server's request, if it reaches the leader later, is refused (SESSIONMOVED), as for
// the protected-mode search (see createLockNode).
func (l *ExclusiveLock) deleteOurs(czxid int64, done func(client.Result)) {
	retrying(l.s, codeOfResult, func(count int, cb func(client.Result)) {
		if count == 0 {
			l.s.delete(l.path, cb)
			return
		}
		l.s.sync(l.path, func(r client.Result) {
			if r.Err != proto.OK && r.Err != proto.NoNode {
				cb(client.Result{Err: r.Err})
				return
			}
			l.checkAndDelete(czxid, cb)
		})
	}, done)
}

// checkAndDelete deletes the lock node if it is still the one with czxid.
func (l *ExclusiveLock) checkAndDelete(czxid int64, cb func(client.Result)) {
	l.s.exists(l.path, nil, func(r client.StatResult) {
		switch {
		case r.Err == proto.OK && r.Stat.Czxid == czxid:
			l.s.delete(l.path, cb)
		case r.Err == proto.OK || r.Err == proto.NoNode:
			cb(client.Result{Err: proto.OK}) // Our node is gone: the lost reply deleted it.
		default:
			cb(client.Result{Err: r.Err})
		}
	})
}

// noParent creates again after the retry policy's sleep, or fails once the policy gives up.
func (l *ExclusiveLock) noParent(a *exclusiveAcquisition) {
	d, ok := l.s.cfg.Retry.sleep(l.s.w, a.noNodeRetries)
	if !ok {
		l.fail(a, &CodeError{Op: "create", Path: l.path, Code: proto.NoNode})
		return
	}
	a.noNodeRetries++
	l.s.later(d, func() {
		if !a.ended {
			l.tryCreate(a)
		}
	})
}

// check looks at the existing node, leaving a watch: the node may be ours (a create whose reply was
// lost), someone else's (wait for it to change), or gone already (create again).
func (l *ExclusiveLock) check(a *exclusiveAcquisition) {
	l.s.existsRetrying(l.path, l, func(r client.StatResult) {
		if a.ended {
			return
		}
		switch r.Err {
		case proto.OK:
			if !l.s.cfg.Bugs.Has(BugUnprotectedCreate) && r.Stat.EphemeralOwner == l.s.SessionID() && r.Stat.EphemeralOwner != 0 && r.Stat.Czxid != l.deleting {
				l.emit(Event{Kind: EventCreated, Attempt: a.id, Node: l.path, Token: r.Stat.Czxid})
				l.finish(a, r.Stat.Czxid, r.Zxid)
				return
			}
			l.emit(Event{Kind: EventWatching, Attempt: a.id, Path: l.path, Zxid: r.Zxid})
			l.wait(a)
		case proto.NoNode:
			l.tryCreate(a)
		default:
			l.fail(a, &CodeError{Op: "exists", Path: l.path, Code: r.Err})
		}
	})
}

func (l *ExclusiveLock) wait(a *exclusiveAcquisition) {
	if a.deadline == 0 {
		a.waiting = true
		return
	}
	left := a.deadline.Sub(l.s.w.Elapsed(l.s.node))
	if left <= 0 {
		l.fail(a, nil)
		return
	}
	a.waiting = true
	inc := l.s.inc
	a.timer = l.s.w.AfterFunc(l.s.node, left, func() {
		if l.s.w.Incarnation(l.s.node) == inc && a.waiting && !a.ended {
			l.fail(a, nil)
		}
	})
}

// watchEvent wakes the waiting acquisition, which creates again.
func (l *ExclusiveLock) watchEvent(client.Event) {
	a := l.acq
	if a == nil || !a.waiting {
		return
	}
	a.waiting = false
	l.s.w.CancelTimer(a.timer)
	l.tryCreate(a)
}

func (l *ExclusiveLock) finish(a *exclusiveAcquisition, token, zxid int64) {
	a.ended = true
	l.acq = nil
	l.held = &heldLock{node: l.path, token: token, count: 1}
	l.emit(Event{Kind: EventGranted, Attempt: a.id, Node: l.path, Token: token, Zxid: zxid})
	a.done(Grant{Held: true, Node: l.path, Token: token, Zxid: zxid})
}

func (l *ExclusiveLock) fail(a *exclusiveAcquisition, err error) {
	if a.ended {
		return
	}
	a.ended, a.waiting = true, false
	l.s.w.CancelTimer(a.timer)
	if l.acq == a {
		l.acq = nil
	}
	l.emit(Event{Kind: EventNotGranted, Attempt: a.id, Err: err})
	a.done(Grant{Err: err})
}

func (l *ExclusiveLock) connectionChanged(st ConnectionState) {
	if st == StateLost && l.held != nil {
		l.emit(Event{Kind: EventLost, Node: l.path, Token: l.held.token, Err: ErrLost})
	}
}

// Release releases one hold; the last one deletes the node. A delete whose reply was lost is
// retried only while the node is still the one this holder created (same czxid).
func (l *ExclusiveLock) Release(done func(error)) error {
	if l.held == nil {
		return ErrNotHeld
	}
	if !l.s.alive() {
		return ErrCrashed
	}
	l.held.count--
	if l.held.count > 0 {
		l.s.later(0, func() { done(nil) })
		return nil
	}
	h := *l.held
	l.held = nil
	l.emit(Event{Kind: EventReleasing, Node: l.path, Token: h.token})
	l.deleteOurs(h.token, func(r client.Result) {
		var err error
		switch {
		case r.Err == proto.OK || r.Err == proto.NoNode:
		case l.s.state == StateLost || r.Err == proto.SessionExpired:
			err = ErrLost
		default:
			err = &CodeError{Op: "delete", Path: l.path, Code: r.Err}
		}
		l.emit(Event{Kind: EventReleased, Node: l.path, Token: h.token, Err: err})
		if retryable(r.Err) && l.s.state != StateLost {
			l.deleteInBackground(h.token, 0)
		}
		done(err)
	})
	return nil
}

// deleteInBackground goes on deleting the released node (czxid) after the retry policy gave up
// on a connection loss, as a Curator 5 application's delete().guaranteed() does (the DeleteBuilder
// javadoc: the caller still gets the exception, and the framework records the failed deletion and
// retries it in the background until it succeeds; DeleteBuilderImpl.pathInForeground hands the
// path to FailedDeleteManager.addFailedOperation). The rounds end when the session is lost, since
// its ephemeral node is gone then, or after maxBackgroundRuns, as deleteGuaranteed's do. Without it the node stays for as long as the session lives, and no one
// holds the lock while every waiter waits for it (lock seed 1005265: c5's release ran out of
// retries while partitioned, and c2 waited for c5's node to the end of the run). Each round
// syncs and checks the node's czxid first, as deleteOurs's retries do, so that it never deletes
// the next holder's node.
func (l *ExclusiveLock) deleteInBackground(czxid int64, round int) {
	if round >= maxBackgroundRuns {
		l.deleting = 0
		return
	}
	l.deleting = czxid
	l.s.later(l.s.cfg.Retry.BaseSleep, func() {
		retrying(l.s, codeOfResult, func(_ int, cb func(client.Result)) {
			l.s.sync(l.path, func(r client.Result) {
				if r.Err != proto.OK && r.Err != proto.NoNode {
					cb(client.Result{Err: r.Err})
					return
				}
				l.checkAndDelete(czxid, cb)
			})
		}, func(r client.Result) {
			if r.Err == proto.OK || r.Err == proto.NoNode || !retryable(r.Err) || l.s.state == StateLost {
				if l.deleting == czxid {
					l.deleting = 0
				}
				return
			}
			l.deleteInBackground(czxid, round+1)
		})
	})
}
