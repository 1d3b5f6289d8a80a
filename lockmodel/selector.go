package lockmodel

import (
	"fmt"
)

// LeaderSelector is Curator's LeaderSelector (5.x, as of CURATOR-671 in 5.5.0): leader election on
// an InterProcessMutex at the election's path. An election task (doWork) acquires the mutex, then
// hands leadership to the application (LeaderSelectorListener.takeLeadership) until it gives it
// back (calls the done function it was given, as takeLeadership returns); the task's end
// (taskDone) releases the mutex and, with AutoRequeue, queues a new task at once.
//
// The listener is LeaderSelectorListenerAdapter's: on SUSPENDED and LOST (the default error
// policy) it throws CancelLeadershipException, and the selector interrupts its task
// (cancelElection): a leader loses leadership (OnInterrupted) and its node is deleted; a
// participant still acquiring gives up its place in the queue (the lock loop deletes its node). With
// AutoRequeue the task is queued again and acquires once the connection is back (RetryLoop waits
// for it). A lost session ends the recipe's work: the application makes a new Session.
type LeaderSelector struct {
	s     *Session
	m     *Mutex
	path  string
	state LatchState
	// AutoRequeue is autoRequeue(): queue a new election task whenever one ends.
	AutoRequeue bool
	// TakeLeadership is takeLeadership: the participant leads until it calls done. It must be set
	// before Start.
	TakeLeadership func(g Grant, done func())
	// OnInterrupted, if set, hears that leadership was taken away (the leader's thread interrupted).
	OnInterrupted func()

	task       bool // ourTask != nil: a task acquires or leads
	leading    bool // hasLeadership
	generation int  // numbers the tasks, so that an ended task's callbacks are ignored
	listenerID int
}

// NewLeaderSelector returns a selector for the election at path; id is stored in its node.
func NewLeaderSelector(s *Session, path string, id string) (*LeaderSelector, error) {
	m, err := newMutex(s, RecipeSelector, path, MutexLockName, standardDriver{lockName: MutexLockName, maxLeases: 1}, []byte(id))
	if err != nil {
		return nil, err
	}
	return &LeaderSelector{s: s, m: m, path: path}, nil
}

// HasLeadership reports whether the participant leads.
func (l *LeaderSelector) HasLeadership() bool { return l.state == LatchStarted && l.leading }

// Start joins the election (start(), then requeue()).
func (l *LeaderSelector) Start() error {
	switch {
	case l.state != LatchLatent:
		return fmt.Errorf("lockmodel: a leader selector cannot be started more than once")
	case l.TakeLeadership == nil:
		return fmt.Errorf("lockmodel: a leader selector needs TakeLeadership")
	case !l.s.alive():
		return ErrCrashed
	}
	l.state = LatchStarted
	l.listenerID = l.s.addListener(l.stateChanged)
	l.requeue()
	return nil
}

// requeue is internalRequeue: a new task unless one runs.
func (l *LeaderSelector) requeue() {
	if l.task || l.state != LatchStarted || l.s.state == StateLost {
		return
	}
	l.task = true
	l.generation++
	g := l.generation
	l.s.later(0, func() { l.doWork(g) })
}

// doWork acquires the mutex and leads.
func (l *LeaderSelector) doWork(g int) {
	if g != l.generation || !l.task {
		return
	}
	err := l.m.Acquire(0, func(grant Grant) {
		if g != l.generation || !l.task || l.state != LatchStarted {
			if grant.Held {
				_ = l.m.Release(func(error) {})
			}
			return
		}
		if !grant.Held {
			l.taskDone(g)
			return
		}
		l.leading = true
		l.TakeLeadership(grant, func() {
			if g == l.generation && l.leading {
				l.taskDone(g)
			}
		})
	})
	if err != nil {
		l.taskDone(g)
	}
}

// taskDone ends the task: leadership ends, AutoRequeue queues the next task, and the mutex is
// released (in that order, as LeaderSelector.taskDone and doWork's finally do it).
func (l *LeaderSelector) taskDone(g int) {
	if g != l.generation || !l.task {
		return
	}
	l.task = false
	led := l.leading
	l.leading = false
	if l.AutoRequeue {
		l.requeue()
	}
	if led && l.m.Held() {
		_ = l.m.Release(func(error) {})
	}
}

// stateChanged is LeaderSelectorListenerAdapter.stateChanged with the selector's
// cancelElection: SUSPENDED and LOST interrupt the task, leading or acquiring.
func (l *LeaderSelector) stateChanged(st ConnectionState) {
	if l.state != LatchStarted || (st != StateSuspended && st != StateLost) || !l.task {
		return
	}
	g := l.generation
	if l.leading {
		// takeLeadership is interrupted: the application must stop leading now.
		if l.OnInterrupted != nil {
			l.OnInterrupted()
		}
		l.taskDone(g)
		return
	}
	// The thread blocked in acquire is interrupted; the acquisition ends with ErrInterrupted and
	// its callback ends the task.
	l.m.interrupt()
}

// Close leaves the election: a task acquiring is interrupted, a leader releases.
func (l *LeaderSelector) Close() error {
	if l.state != LatchStarted {
		return fmt.Errorf("lockmodel: leader selector already closed or not started")
	}
	l.state = LatchClosed
	l.TakeLeadership, l.OnInterrupted = nil, nil
	l.s.removeListener(l.listenerID)
	l.task, l.leading = false, false
	l.generation++
	if l.m.Acquiring() {
		l.m.interrupt()
	}
	if l.m.Held() {
		_ = l.m.Release(func(error) {})
	}
	return nil
}
