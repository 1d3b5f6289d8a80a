package checkers

import (
	"errors"
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// ErrInvalidHistory is wrapped by every error about a malformed history: the runner filled it in a
// way the checkers cannot judge. It is an error in the harness, never a verdict about ZooKeeper.
var ErrInvalidHistory = errors.New("checkers: invalid history")

// Bounds on what one history may hold. A run that records more has run past its budget; checking
// it would take longer than the run itself.
const (
	MaxOperations = 1 << 22
	MaxArrivals   = 1 << 23
	MaxCommitted  = 1 << 23
	MaxClients    = 1 << 12
	MaxMultiOps   = 1 << 10
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidHistory, fmt.Sprintf(format, args...))
}

// Validate checks that a history is well formed: supported operation kinds, valid paths, set
// outcomes, ordered times, arrivals that name real replies, a committed log in strictly increasing
// zxid order, session facts consistent with that log, and forced expiries in time order that agree
// with the session facts. Every checker validates its input; call Validate directly to catch a
// runner's mistake early.
func Validate(h *History) error {
	if h == nil {
		return invalid("nil history")
	}
	if len(h.Clients) > MaxClients {
		return invalid("%d clients, more than %d", len(h.Clients), MaxClients)
	}
	if err := validateClients(h); err != nil {
		return err
	}
	if err := validateCommitted(h); err != nil {
		return err
	}
	if err := validateSessions(h); err != nil {
		return err
	}
	if err := validateForcedExpiries(h); err != nil {
		return err
	}
	if l := h.Liveness; l != nil && (l.HealTime > h.End || l.HealTime < 0) {
		return invalid("liveness heal time %s outside the run [0, %s]", timeString(l.HealTime), timeString(h.End))
	}
	return nil
}

func validateClients(h *History) error {
	names := make(map[string]bool, len(h.Clients))
	total, arrivals := 0, 0
	for ci := range h.Clients {
		c := &h.Clients[ci]
		if c.Name == "" {
			return invalid("client %d has no name", ci)
		}
		if names[c.Name] {
			return invalid("two clients are named %q", c.Name)
		}
		names[c.Name] = true
		total += len(c.Ops)
		arrivals += len(c.Arrivals)
		if total > MaxOperations || arrivals > MaxArrivals {
			return invalid("more than %d operations or %d arrivals", MaxOperations, MaxArrivals)
		}
		for i := range c.Ops {
			if err := validateOperation(h, &c.Ops[i]); err != nil {
				return fmt.Errorf("client %q op %d: %w", c.Name, i, err)
			}
		}
		if err := validateArrivals(h, c); err != nil {
			return fmt.Errorf("client %q: %w", c.Name, err)
		}
	}
	return nil
}

func validateOperation(h *History, op *Operation) error {
	switch op.Outcome {
	case OutcomeReplied, OutcomeNotApplied, OutcomeUnknown:
		if op.Return < op.Call {
			return invalid("returned at %s before it was called at %s", timeString(op.Return), timeString(op.Call))
		}
		if op.Return > h.End {
			return invalid("returned at %s after the run ended at %s", timeString(op.Return), timeString(h.End))
		}
	case OutcomePending:
	default:
		return invalid("outcome not set")
	}
	if op.Call < 0 || op.Call > h.End {
		return invalid("called at %s, outside the run [0, %s]", timeString(op.Call), timeString(h.End))
	}
	if op.Outcome == OutcomeReplied && op.Zxid < 0 {
		return invalid("replied with negative zxid %d", op.Zxid)
	}
	switch op.Kind {
	case proto.OpCreate, proto.OpCreate2:
		return validateCreate(op.Path, op.Mode, true)
	case proto.OpDelete, proto.OpSetData, proto.OpCheck, proto.OpGetData, proto.OpExists,
		proto.OpGetChildren, proto.OpGetChildren2, proto.OpSync, proto.OpAddWatch,
		proto.OpGetACL, proto.OpSetACL:
		if err := validatePath(op.Path); err != nil {
			return invalid("%v on path %q: %v", op.Kind, op.Path, err)
		}
		return nil
	case proto.OpCloseSession:
		return nil
	case proto.OpMulti:
		return validateMulti(op)
	default:
		return invalid("unsupported operation kind %v", op.Kind)
	}
}

// validatePath is proto.ValidatePath, answered without decoding runes for the paths histories
// almost always hold (see plainPath): validation runs once per operation and per event, and in a
// million-operation history the rune-by-rune rules cost more than the rest of validation.
func validatePath(path string) error {
	if plainPath(path) {
		return nil
	}
	return proto.ValidatePath(path)
}

// plainPath reports whether path is absolute, has at least one segment, and holds only printable
// ASCII other than '.', with no empty segment and no trailing '/'. Such a path breaks none of
// proto.ValidatePath's rules (which are about empty or relative segments, '.' and '..', control
// and non-ASCII characters); any other path is left to proto.ValidatePath, which also gives the
// reason.
func plainPath(path string) bool {
	if len(path) < 2 || path[0] != '/' || path[len(path)-1] == '/' {
		return false
	}
	previous := byte('/')
	for i := 1; i < len(path); i++ {
		c := path[i]
		if c < 0x20 || c > 0x7e || c == '.' || (c == '/' && previous == '/') {
			return false
		}
		previous = c
	}
	return true
}

// validateCreate checks a create's path and mode. A container (the parents Curator's recipes make)
// is supported as a create of its own, not inside a multi, where the checkers would have to map
// the sub-operation to a createContainer sub-transaction; TTL nodes are not supported.
func validateCreate(path string, mode proto.CreateMode, containerAllowed bool) error {
	if _, err := proto.CreateModeFromFlag(int32(mode)); err != nil {
		return invalid("create mode: %v", err)
	}
	if mode.IsTTL() || (mode.IsContainer() && !containerAllowed) {
		return invalid("create mode %v is not supported by the checkers here", mode)
	}
	check := validatePath
	if mode.IsSequential() {
		check = proto.ValidateSequentialPath
	}
	if err := check(path); err != nil {
		return invalid("create on path %q: %v", path, err)
	}
	return nil
}

func validateMulti(op *Operation) error {
	if len(op.Multi) == 0 || len(op.Multi) > MaxMultiOps {
		return invalid("multi with %d sub-operations (want 1 to %d)", len(op.Multi), MaxMultiOps)
	}
	if op.MultiResults != nil && len(op.MultiResults) != len(op.Multi) {
		return invalid("multi with %d sub-operations has %d results", len(op.Multi), len(op.MultiResults))
	}
	for i := range op.Multi {
		sub := &op.Multi[i]
		switch sub.Kind {
		case proto.OpCreate, proto.OpCreate2:
			if err := validateCreate(sub.Path, sub.Mode, false); err != nil {
				return fmt.Errorf("multi sub-operation %d: %w", i, err)
			}
		case proto.OpDelete, proto.OpSetData, proto.OpCheck:
			if err := validatePath(sub.Path); err != nil {
				return invalid("multi sub-operation %d on path %q: %v", i, sub.Path, err)
			}
		default:
			return invalid("multi sub-operation %d has unsupported kind %v", i, sub.Kind)
		}
	}
	return nil
}

// validateArrivals checks that arrivals are in time order and that each replied operation is
// answered exactly once, by a reply delivered when the operation returned.
func validateArrivals(h *History, c *ClientHistory) error {
	if len(c.Arrivals) == 0 {
		return nil
	}
	seen := make([]bool, len(c.Ops))
	var last int64 = -1
	for i := range c.Arrivals {
		a := &c.Arrivals[i]
		if int64(a.Time) < last || a.Time > h.End {
			return invalid("arrival %d at %s is out of order or after the end", i, timeString(a.Time))
		}
		last = int64(a.Time)
		switch a.Kind {
		case ArrivalReply:
			if a.Op < 0 || a.Op >= len(c.Ops) {
				return invalid("arrival %d answers op %d, which does not exist", i, a.Op)
			}
			op := &c.Ops[a.Op]
			if op.Outcome != OutcomeReplied || seen[a.Op] || op.Return != a.Time {
				return invalid("arrival %d answers op %d, which is %v, already answered, or returned at another time",
					i, a.Op, op.Outcome)
			}
			seen[a.Op] = true
		case ArrivalEvent:
			if err := validatePath(a.Path); err != nil {
				return invalid("arrival %d: event on path %q: %v", i, a.Path, err)
			}
		case ArrivalState:
		default:
			return invalid("arrival %d has no kind", i)
		}
	}
	for i := range c.Ops {
		if c.Ops[i].Outcome == OutcomeReplied && !seen[i] {
			return invalid("op %d was replied to but its reply is not among the arrivals", i)
		}
	}
	return nil
}

func validateCommitted(h *History) error {
	if len(h.Committed) > MaxCommitted {
		return invalid("%d committed transactions, more than %d", len(h.Committed), MaxCommitted)
	}
	var last int64
	for i := range h.Committed {
		t := &h.Committed[i]
		z := t.Entry.Header.Zxid
		if z <= last {
			return invalid("committed txn %d has zxid %s, not above the previous %s", i, hexID(z), hexID(last))
		}
		last = z
		if t.Entry.Txn == nil && t.Entry.Header.Type != proto.OpCloseSession {
			return invalid("committed txn %s (%v) has no body", hexID(z), t.Entry.Header.Type)
		}
		if t.Time < 0 || t.Time > h.End {
			return invalid("committed txn %s at %s, outside the run", hexID(z), timeString(t.Time))
		}
	}
	return nil
}

func validateSessions(h *History) error {
	seen := make(map[int64]bool, len(h.Sessions))
	for i := range h.Sessions {
		s := &h.Sessions[i]
		if seen[s.Session] {
			return invalid("two session facts for session %s", hexID(s.Session))
		}
		seen[s.Session] = true
		var last int64 = -1
		for _, iv := range s.Healthy {
			if iv.To < iv.From || int64(iv.From) < last {
				return invalid("session %s healthy intervals are not sorted and disjoint", hexID(s.Session))
			}
			last = int64(iv.To)
		}
		if s.End == nil {
			continue
		}
		idx := committedIndex(h.Committed, s.End.Zxid)
		if idx < 0 {
			return invalid("session %s ended at zxid %s, which is not in the committed log", hexID(s.Session), hexID(s.End.Zxid))
		}
		hdr := h.Committed[idx].Entry.Header
		if hdr.Type != proto.OpCloseSession || hdr.ClientID != s.Session {
			return invalid("session %s ended at zxid %s, but that txn is %v of session %s",
				hexID(s.Session), hexID(s.End.Zxid), hdr.Type, hexID(hdr.ClientID))
		}
	}
	return nil
}

// validateForcedExpiries checks that the forced expiries name sessions, fall inside the run in
// time order, and agree with the session facts about who owned each session.
func validateForcedExpiries(h *History) error {
	if len(h.ForcedExpiries) > MaxCommitted {
		return invalid("%d forced expiries, more than %d", len(h.ForcedExpiries), MaxCommitted)
	}
	owners := make(map[int64]string, len(h.Sessions))
	for i := range h.Sessions {
		owners[h.Sessions[i].Session] = h.Sessions[i].Client
	}
	var last clock.Time
	for i := range h.ForcedExpiries {
		e := &h.ForcedExpiries[i]
		if e.Session == 0 {
			return invalid("forced expiry %d names no session", i)
		}
		if e.Time < last || e.Time > h.End {
			return invalid("forced expiry %d of session %s at %s is out of order or outside the run [0, %s]",
				i, hexID(e.Session), timeString(e.Time), timeString(h.End))
		}
		last = e.Time
		if owner := owners[e.Session]; owner != "" && e.Client != "" && owner != e.Client {
			return invalid("forced expiry %d says session %s belonged to %q, but its session facts name %q", i, hexID(e.Session), e.Client, owner)
		}
	}
	return nil
}

// committedIndex returns the index of the committed txn with this zxid, or -1.
func committedIndex(log []CommittedTxn, zxid int64) int {
	i := committedSearch(log, zxid)
	if i < len(log) && log[i].Entry.Header.Zxid == zxid {
		return i
	}
	return -1
}

// committedSearch returns the index of the first committed txn whose zxid is at least zxid.
func committedSearch(log []CommittedTxn, zxid int64) int {
	lo, hi := 0, len(log)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if log[mid].Entry.Header.Zxid < zxid {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
