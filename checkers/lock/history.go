package lock

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Kind says which recipe guards a lock, which decides the rules that apply to it.
type Kind uint8

// The lock kinds. The zero value is invalid.
const (
	// KindExclusive: one node at the lock's path (create, and on NODEEXISTS watch and retry). Not
	// fair, and every release wakes every waiter by design, so fairness and the herd rule do not
	// apply.
	KindExclusive Kind = iota + 1
	// KindFair: a queue of sequential nodes under the lock's path, the lowest holding the lock
	// (InterProcessMutex).
	KindFair
	// KindReadWrite: the read-write lock's shared queue (InterProcessReadWriteLock).
	KindReadWrite
	// KindElection: leader election on a queue (LeaderLatch); the leader holds the "lock".
	KindElection
)

func (k Kind) String() string {
	switch k {
	case KindExclusive:
		return "exclusive"
	case KindFair:
		return "fair"
	case KindReadWrite:
		return "read-write"
	case KindElection:
		return "election"
	}
	return "invalid-kind"
}

// queued reports whether the kind's nodes are sequential children of the lock's path.
func (k Kind) queued() bool { return k == KindFair || k == KindReadWrite || k == KindElection }

// Mode is how a grant holds its lock.
type Mode uint8

// The modes. The zero value is invalid.
const (
	ModeExclusive Mode = iota + 1 // the lock of an exclusive, fair or election kind, or a write lock
	ModeRead                      // a read lock, shared with other readers
	ModeWrite                     // a write lock
)

func (m Mode) String() string {
	switch m {
	case ModeExclusive:
		return "exclusive"
	case ModeRead:
		return "read"
	case ModeWrite:
		return "write"
	}
	return "invalid-mode"
}

// Lock is one lock of a run: its path (the node of an exclusive lock, the queue's parent
// otherwise) and its kind.
type Lock struct {
	Path string
	Kind Kind
}

// Grant is one grant of a lock (or leadership), as the holder learned it.
type Grant struct {
	Lock    string
	Client  string
	Session int64
	// Node is the holder's lock node and Token its czxid, the fencing token it presents.
	Node  string
	Token int64
	Mode  Mode
	// Zxid is the server state in which the holder saw that it holds the lock (the reply zxid of
	// the listing, or of the create, that decided it); 0 if unknown.
	Zxid int64
	Time clock.Time
	// ViaWriteLock marks a read grant given at once because the holder holds the write lock.
	ViaWriteLock bool
}

// Outcome is how an acquisition ended.
type Outcome uint8

// The outcomes. The zero value is invalid.
const (
	Granted    Outcome = iota + 1
	NotGranted         // it failed or timed out, and left the queue
	Abandoned          // its session was lost or its process crashed
	Waiting            // it was still waiting when the run ended
)

func (o Outcome) String() string {
	switch o {
	case Granted:
		return "granted"
	case NotGranted:
		return "not-granted"
	case Abandoned:
		return "abandoned"
	case Waiting:
		return "waiting"
	}
	return "invalid-outcome"
}

// Attempt is one acquisition (or one wait for leadership).
type Attempt struct {
	Lock    string
	Client  string
	Session int64
	Mode    Mode
	// Node is the acquisition's lock node, if it had one.
	Node       string
	Start, End clock.Time // End is ignored while Waiting
	Outcome    Outcome
}

// Watch is one watch an acquisition set while it waited, as the server registered it.
type Watch struct {
	Lock    string
	Client  string
	Session int64
	Mode    Mode
	// Attempt is the index in History.Attempts of the acquisition that set the watch.
	Attempt int
	// Node is the waiter's own lock node when it set the watch.
	Node string
	// Path is the watched node; Children says it is a child watch (on the lock's path) rather than
	// a data watch.
	Path     string
	Children bool
	// Zxid is the reply zxid of the request that set the watch: changes after it fire it.
	Zxid int64
	Time clock.Time
}

// Access is one access the protected resource received, in the order it received them.
type Access struct {
	Lock     string // the lock whose holder the accessor claims to be
	Client   string
	Session  int64
	Token    int64
	Write    bool
	Accepted bool
	// Newest is the token the resource's fencing rule compared against.
	Newest int64
	Time   clock.Time
}

// History is what the lock checkers judge: the locks, what the recipes reported (attempts, grants,
// watches), what the resource received, and the committed log as the simulator's global view
// knows it.
type History struct {
	Locks    []Lock
	Grants   []Grant
	Attempts []Attempt
	Watches  []Watch
	Accesses []Access
	// Holds are the spans during which each recipe believed it held its lock, and Requeues the
	// times a participant abandoned its node and queued again (both optional: a history without
	// them passes the belief and churn checks vacuously).
	Holds    []Hold
	Requeues []Requeue
	// Committed is every committed transaction, in zxid order (checkers.History.Committed).
	Committed []checkers.CommittedTxn
	// Fencing says the resource checked fencing tokens.
	Fencing bool
	// Liveness holds the liveness-phase facts, or nil if the run had none.
	Liveness *checkers.LivenessFacts
	// End is when the run ended.
	End clock.Time
}

// Bounds on a history's size, beyond which checking would take longer than the run.
const (
	MaxLocks   = 1 << 10
	MaxRecords = 1 << 21
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: lock history: %s", checkers.ErrInvalidHistory, fmt.Sprintf(format, args...))
}

// Validate checks that a history is well formed.
func Validate(h *History) error {
	if h == nil {
		return invalid("nil history")
	}
	if len(h.Locks) > MaxLocks || len(h.Grants)+len(h.Attempts)+len(h.Watches)+len(h.Accesses)+len(h.Holds)+len(h.Requeues) > MaxRecords {
		return invalid("more than %d locks or %d records", MaxLocks, MaxRecords)
	}
	if err := validateLocks(h.Locks); err != nil {
		return err
	}
	if err := validateRecords(h); err != nil {
		return err
	}
	for i := 1; i < len(h.Committed); i++ {
		if h.Committed[i].Entry.Header.Zxid <= h.Committed[i-1].Entry.Header.Zxid {
			return invalid("committed log not in increasing zxid order at %d", i)
		}
	}
	for i := 1; i < len(h.Accesses); i++ {
		if h.Accesses[i].Time < h.Accesses[i-1].Time {
			return invalid("access %d received before access %d", i, i-1)
		}
	}
	return nil
}

func validateLocks(locks []Lock) error {
	var paths []string
	for _, l := range locks {
		if err := proto.ValidatePath(l.Path); err != nil || l.Path == "/" {
			return invalid("lock path %q", l.Path)
		}
		if l.Kind < KindExclusive || l.Kind > KindElection {
			return invalid("lock %s has kind %d", l.Path, l.Kind)
		}
		if slices.Contains(paths, l.Path) {
			return invalid("lock %s listed twice", l.Path)
		}
		paths = append(paths, l.Path)
	}
	return nil
}

func validateRecords(h *History) error {
	known := func(lock string) bool {
		return slices.ContainsFunc(h.Locks, func(l Lock) bool { return l.Path == lock })
	}
	bad := func(what string, i int, lock string, mode Mode, t clock.Time) error {
		switch {
		case !known(lock):
			return invalid("%s %d names unknown lock %q", what, i, lock)
		case mode < ModeExclusive || mode > ModeWrite:
			return invalid("%s %d has mode %d", what, i, mode)
		case t < 0 || t > h.End:
			return invalid("%s %d at %s, outside the run", what, i, t)
		}
		return nil
	}
	for i, g := range h.Grants {
		if err := bad("grant", i, g.Lock, g.Mode, g.Time); err != nil {
			return err
		}
	}
	for i, a := range h.Attempts {
		if err := bad("attempt", i, a.Lock, a.Mode, a.Start); err != nil {
			return err
		}
		if a.Outcome < Granted || a.Outcome > Waiting || (a.Outcome != Waiting && (a.End < a.Start || a.End > h.End)) {
			return invalid("attempt %d has outcome %d ending at %s", i, a.Outcome, a.End)
		}
	}
	for i, w := range h.Watches {
		if err := bad("watch", i, w.Lock, w.Mode, w.Time); err != nil {
			return err
		}
		if w.Attempt < 0 || w.Attempt >= len(h.Attempts) {
			return invalid("watch %d names attempt %d of %d", i, w.Attempt, len(h.Attempts))
		}
	}
	for i, a := range h.Accesses {
		if err := bad("access", i, a.Lock, ModeExclusive, a.Time); err != nil {
			return err
		}
	}
	for i, x := range h.Holds {
		if err := bad("hold", i, x.Lock, x.Mode, x.Start); err != nil {
			return err
		}
		if x.End < x.Start || x.End > h.End {
			return invalid("hold %d ends at %s, before its start %s or after the run", i, x.End, x.Start)
		}
	}
	for i, r := range h.Requeues {
		if err := bad("requeue", i, r.Lock, ModeExclusive, r.Time); err != nil {
			return err
		}
	}
	return nil
}

// lockOf returns the lock with path.
func (h *History) lockOf(path string) Lock {
	for _, l := range h.Locks {
		if l.Path == path {
			return l
		}
	}
	panic("lock: no lock " + path + " (Validate lets no such history through)")
}
