package lockmodel

import (
	"errors"
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Errors with which an acquisition or a release ends.
var (
	// ErrLost: the session was lost (it expired or the client was closed), and with it every lock
	// node it owned; Curator's ConnectionState.LOST.
	ErrLost = errors.New("lockmodel: the session was lost")
	// ErrNotFirst: a leader's node is no longer first in the election (or is gone), and it gave up
	// leadership (LeaderLatch.checkLeadership, CURATOR-653).
	ErrNotFirst = errors.New("lockmodel: the leader's node is no longer first in the election")
	// ErrInterrupted: the acquisition was interrupted, as LeaderSelector interrupts its election
	// thread on SUSPENDED and LOST (cancelElection); its node was deleted.
	ErrInterrupted = errors.New("lockmodel: the acquisition was interrupted")
	// ErrNotHeld: Release of a lock this recipe does not hold (Curator's
	// IllegalMonitorStateException).
	ErrNotHeld = errors.New("lockmodel: the lock is not held")
	// ErrBusy: an acquisition is already in progress on this recipe object. Curator would block the
	// second thread; a simulated application runs one acquisition at a time.
	ErrBusy = errors.New("lockmodel: an acquisition is already in progress")
	// ErrNullPath: the lock node's create returned null without an exception, and
	// LockInternals.internalLockLoop threw a NullPointerException (BugNestedRetryNull).
	ErrNullPath = errors.New("lockmodel: the lock node's create returned no path (NullPointerException)")
	// ErrClosed: the recipe was closed.
	ErrClosed = errors.New("lockmodel: the recipe is closed")
	// ErrInvalidPath: a lock path that ZooKeeper would refuse.
	ErrInvalidPath = errors.New("lockmodel: invalid lock path")
	// ErrCrashed: the application's process crashed; the recipe's memory is gone.
	ErrCrashed = errors.New("lockmodel: the process crashed")
)

// CodeError is an acquisition or release that failed with a ZooKeeper code after the retry policy
// gave up (Curator throws the KeeperException).
type CodeError struct {
	Op   string
	Path string
	Code proto.Code
}

func (e *CodeError) Error() string {
	return "lockmodel: " + e.Op + " " + e.Path + ": " + e.Code.String()
}

// EventKind says what a recipe did, for an Observer.
type EventKind uint8

// The events a recipe reports. The zero value is invalid.
const (
	// EventAcquiring: an acquisition began (not for a reentrant one, which needs no ZooKeeper).
	EventAcquiring EventKind = iota + 1
	// EventCreated: the acquisition's lock node exists: Node, and Token if the create's reply
	// carried the node's stat (0 when the node was found by a protected-mode search).
	EventCreated
	// EventWatching: the acquisition left a watch on Path (on its children if Children), set at the
	// server state Zxid.
	EventWatching
	// EventGranted: the lock (or leadership) was granted: Node, its fencing Token (the node's
	// czxid), and Zxid, the server state in which the recipe saw that it holds it.
	EventGranted
	// EventNotGranted: the acquisition ended without the lock; Err says why (nil: it timed out).
	EventNotGranted
	// EventReleased: the holder let the lock (or leadership) go; Err is set if its node could not be
	// deleted.
	EventReleased
	// EventLost: the holder lost the lock or leadership involuntarily (its session was lost, or a
	// leader was suspended): it must stop using the resource.
	EventLost
	// EventReleasing: the holder began to release the lock (its last hold): from now on it no
	// longer believes it holds it, although its node is deleted only later (EventReleased).
	EventReleasing
	// EventRequeued: the recipe abandoned its node and queued again with a new one, within one
	// acquisition or one stay in an election, with its session alive: a LeaderLatch that did not
	// find its node (reset), an InterProcessMutex whose node was gone ("Sequential path not
	// found"). Node is the node abandoned, if it had one.
	EventRequeued
)

var eventKindNames = [...]string{"invalid", "acquiring", "created", "watching", "granted", "not-granted", "released", "lost", "releasing", "requeued"}

func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "invalid"
}

// Recipe names the kind of recipe in events.
type Recipe string

// The recipes.
const (
	RecipeExclusive Recipe = "exclusive" // one ephemeral node, retried on NODEEXISTS
	RecipeMutex     Recipe = "mutex"     // InterProcessMutex: the fair lock
	RecipeRead      Recipe = "read"      // InterProcessReadWriteLock's read lock
	RecipeWrite     Recipe = "write"     // InterProcessReadWriteLock's write lock
	RecipeLeader    Recipe = "leader"    // LeaderLatch
	RecipeSelector  Recipe = "selector"  // LeaderSelector
)

// Event is one thing a recipe did. Client and Session identify the application; Attempt numbers
// the recipe object's acquisitions (from 1), so that events of one acquisition can be grouped.
type Event struct {
	Kind    EventKind
	Time    clock.Time
	Recipe  Recipe
	Lock    string // the lock's base path
	Client  string
	Session int64
	Attempt int
	Node    string // the acquisition's lock node
	Token   int64  // the lock node's czxid
	Zxid    int64
	Path    string // the watched path
	// Children says the watch is a child watch (getChildren) rather than a data watch.
	Children bool
	// ViaWriteLock marks a read grant that needed no waiting because the same application holds the
	// write lock (lock downgrading).
	ViaWriteLock bool
	Err          error
}

// String renders the event on one line, for traces.
func (e Event) String() string {
	s := fmt.Sprintf("%s %s %s %s#%d", e.Client, e.Kind, e.Recipe, e.Lock, e.Attempt)
	if e.Node != "" {
		s += " node=" + e.Node
	}
	if e.Token != 0 {
		s += fmt.Sprintf(" token=0x%x", e.Token)
	}
	if e.Zxid != 0 {
		s += fmt.Sprintf(" zxid=0x%x", e.Zxid)
	}
	if e.Path != "" {
		s += " watch=" + e.Path
		if e.Children {
			s += "(children)"
		}
	}
	if e.ViaWriteLock {
		s += " via-write-lock"
	}
	if e.Err != nil {
		s += " err=" + e.Err.Error()
	}
	return s
}

// Observer hears every Event of the recipes of a Session, when it happens.
type Observer interface {
	LockEvent(e Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// LockEvent implements Observer.
func (f ObserverFunc) LockEvent(e Event) { f(e) }

// Request is one ZooKeeper request a recipe sends, for a Tracer.
type Request struct {
	Kind    proto.OpCode // create (sent as create2), delete, getData, exists, getChildren (sent as getChildren2) or sync
	Path    string       // for a sequential create, the prefix the server appends to
	Data    []byte
	Mode    proto.CreateMode
	Version int32
	Watch   bool
}

// Reply is what came of a Request: the client library's result, or Local if the client refused
// the request before sending it.
type Reply struct {
	Local    error
	Err      proto.Code
	Zxid     int64
	Xid      int32
	Session  int64
	Path     string // a create's created path
	Stat     *proto.Stat
	Children []string
	Data     []byte
}

// Tracer hears every request a Session's recipes send and every watch event they receive, so that
// a runner can put them in the client-visible history. Request is called before the request is
// issued and returns the function that receives its outcome, exactly once.
type Tracer interface {
	Request(session int64, r Request) func(Reply)
	WatchEvent(session int64, e client.Event)
}
