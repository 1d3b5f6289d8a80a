package lockmodel

import (
	"github.com/zabsim/zabsim/internal/switches"
)

// Bug names a recipe bug of the bug zoo (shared/BUGS.md) that the recipes can re-introduce. A switch
// changes the recipe exactly where the bug is and nothing else: no hint to a checker, no special
// fault.
type Bug uint32

// The recipe bugs. Each is off unless switched on.
const (
	// BugNoFencing: the protected resource accepts every access from a client that believes it
	// holds the lock, whatever its fencing token.
	BugNoFencing Bug = 1 << iota
	// BugPersistentNode: lock nodes are created persistent instead of ephemeral, so that a holder
	// that dies never releases its lock.
	BugPersistentNode
	// BugHerd: a waiter watches the lock's children instead of its predecessor, so that every change
	// to the queue wakes every waiter.
	BugHerd
	// BugUnprotectedCreate: after a connection loss during the create of a lock node, the create is
	// retried without looking for the node the lost reply may have created (no protected mode), and
	// the exclusive lock does not recognise its own node.
	BugUnprotectedCreate
	// BugWriterSkipsReaders: in the read-write lock, a writer waits only for earlier write nodes
	// instead of every earlier node.
	BugWriterSkipsReaders
	// BugUnsyncedSearch: the protected-mode search after a connection loss lists the parent's
	// children without a sync first, exactly as Curator does. The server may not have applied the
	// lost create yet (it was still waiting for a quorum at the leader), so the search misses it,
	// the retry creates a second node, and the first, committed later, is an orphan of a live
	// session that blocks the queue. zabsim found this; it is not in BUGS.md's table.
	BugUnsyncedSearch
	// BugDowngradeNewNode: a downgrading read lock creates a new sequential node, as Curator did
	// before 5.5.0 (CURATOR-621), instead of taking the write node's sequence: the node sorts
	// after the writers already waiting, and the first of them takes the write lock as soon as
	// the downgrading holder releases it, while that holder still reads.
	BugDowngradeNewNode
	// BugNestedRetryNull: Curator 5's own protected create in the foreground (as InterProcessMutex
	// makes its nodes). Its protected-mode search runs on the create's retry loop
	// (ThreadLocalRetryLoop, CURATOR-559) and marks that loop complete when it returns; if the
	// create that follows the search then fails with a retryable code, the loop takes the
	// exception, sleeps, and ends, and the create returns null without an exception. So no
	// background search deletes the node (protectedPathInForeground schedules it only for an
	// exception), and LockInternals.internalLockLoop throws a NullPointerException: a create that
	// committed although its reply was lost leaves an orphan of the live session, first in the
	// queue or ahead of later waiters, that nobody will delete while the session lives. zabsim's
	// audit found this in Curator's code; it is not in BUGS.md's table.
	BugNestedRetryNull
)

var bugTable = switches.NewTable("recipe bug",
	switches.Switch[Bug]{Bit: BugNoFencing, Name: "lock-no-fencing", Description: "the protected resource accepts any client that believes it holds the lock"},
	switches.Switch[Bug]{Bit: BugPersistentNode, Name: "lock-persistent-node", Description: "lock nodes are persistent, so a crashed holder never releases"},
	switches.Switch[Bug]{Bit: BugHerd, Name: "lock-herd", Description: "waiters watch the lock's children instead of their predecessor"},
	switches.Switch[Bug]{Bit: BugUnprotectedCreate, Name: "lock-unprotected-create", Description: "a lock node create is retried without looking for the node a lost reply created"},
	switches.Switch[Bug]{Bit: BugWriterSkipsReaders, Name: "rwlock-writer-skips-readers", Description: "a writer waits only for earlier writers, not for earlier readers"},
	switches.Switch[Bug]{Bit: BugUnsyncedSearch, Name: "curator-unsynced-search", Description: "the protected-mode search lists children without a sync first (Curator's own code)"},
	switches.Switch[Bug]{Bit: BugDowngradeNewNode, Name: "rwlock-downgrade-new-node", Description: "a downgrading read lock queues a new node behind waiting writers (Curator before 5.5.0, CURATOR-621)"},
	switches.Switch[Bug]{Bit: BugNestedRetryNull, Name: "curator-nested-retry-null", Description: "a protected create retried after a protected-mode search returns null on a connection loss, orphaning its node (Curator 5's own code)"},
)

// Table returns the recipe bugs' table, which names the switches of a Bugs set.
func (Bug) Table() *switches.Table[Bug] { return &bugTable }

// Bugs is a set of recipe bug switches (Has, With, Union, Empty, Names, String, Validate); the
// zero value switches nothing on.
type Bugs = switches.Set[Bug]

// BugInfo describes one switch for listings (simrun bugs): its Bit, Name and Description.
type BugInfo = switches.Switch[Bug]

// BugList returns the recipe bugs in zoo order.
func BugList() []BugInfo { return bugTable.List() }

// ParseBugs parses a comma-separated list of recipe bug names ("lock-herd,lock-no-fencing"); "" and
// "none" are the empty set. An unknown name is an error that lists the known ones.
func ParseBugs(list string) (Bugs, error) { return switches.ParseSet[Bug](list) }
