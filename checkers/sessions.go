package checkers

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// DefaultExpiryGrace is the margin by which a session must have been healthy beyond its timeout
// before its expiry counts as wrongful: one default tickTime, which covers the leader's expiry
// buckets (rounded up to a tick) and the half-tick pings that carry session touches from
// followers to the leader. A runner with another tickTime should pass its own.
const DefaultExpiryGrace = 2 * clock.Second

// SessionOptions configure the session checker.
type SessionOptions struct {
	// ExpiryGrace is added to the session timeout by the wrongful-expiry rule; 0 means
	// DefaultExpiryGrace.
	ExpiryGrace clock.Duration
}

// CheckSessions checks what ZooKeeper promises about sessions:
//   - ephemeral-after-close: once a session's closeSession commits, no later committed
//     transaction creates an ephemeral node it owns;
//   - ephemeral-visible-after-close: no reply at a zxid at or after that closeSession shows a
//     node the session owns;
//   - wrongful-expiry: a session is never expired while it was healthy (its client connected to
//     a serving server connected to the established leader, and not paused) for its whole
//     timeout, plus a grace, before the expiry committed. The rule judges the leader's expiries,
//     and also closeSessions that no recorded client issued: a session closed by force (see
//     ForcedExpiry) is exempt, from the time its killer sent the close, since its client was
//     meant to be heartbeating when it lost the session.
//
// The ephemeral rules apply to every committed closeSession, whoever sent it: a session closed by
// force loses its ephemeral nodes like any other.
func CheckSessions(h *History, opts SessionOptions) (Result, error) {
	if err := Validate(h); err != nil {
		return Result{}, err
	}
	return checkSessions(h, opts), nil
}

func checkSessions(h *History, opts SessionOptions) Result {
	col := newCollector(CheckerSessions)
	closed, timeouts := sessionsInLog(h)
	checkEphemeralCreates(h, closed, col)
	checkEphemeralReplies(h, closed, col)
	grace := opts.ExpiryGrace
	if grace <= 0 {
		grace = DefaultExpiryGrace
	}
	checkExpiries(h, timeouts, grace, col)
	return col.result(len(h.Sessions)+len(closed), fmt.Sprintf("%d closed sessions, %d session facts and %d forced expiries judged",
		len(closed), len(h.Sessions), len(h.ForcedExpiries)))
}

// sessionsInLog returns, per session, the zxid of its first committed closeSession and its
// negotiated timeout from its createSession.
func sessionsInLog(h *History) (closed map[int64]int64, timeouts map[int64]clock.Duration) {
	closed, timeouts = map[int64]int64{}, map[int64]clock.Duration{}
	for i := range h.Committed {
		e := &h.Committed[i].Entry
		switch e.Header.Type {
		case proto.OpCloseSession:
			if _, seen := closed[e.Header.ClientID]; !seen {
				closed[e.Header.ClientID] = e.Header.Zxid
			}
		case proto.OpCreateSession:
			if txn, ok := e.Txn.(*proto.CreateSessionTxn); ok {
				timeouts[e.Header.ClientID] = clock.Duration(txn.TimeoutMilliseconds) * clock.Millisecond
			}
		}
	}
	return closed, timeouts
}

// ephemeralCreates returns the paths of the ephemeral nodes a committed txn creates.
func ephemeralCreates(e *proto.TxnEntry) []string {
	switch txn := e.Txn.(type) {
	case *proto.CreateTxn:
		if txn.Ephemeral {
			return []string{txn.Path}
		}
	case *proto.MultiTxn:
		var out []string
		for i := range txn.Txns {
			if txn.Txns[i].Type != proto.OpCreate && txn.Txns[i].Type != proto.OpCreate2 {
				continue
			}
			body, err := txn.Txns[i].Body()
			if create, ok := body.(*proto.CreateTxn); err == nil && ok && create.Ephemeral {
				out = append(out, create.Path)
			}
		}
		return out
	}
	return nil
}

func checkEphemeralCreates(h *History, closed map[int64]int64, col *collector) {
	for i := range h.Committed {
		e := &h.Committed[i].Entry
		closedAt, isClosed := closed[e.Header.ClientID]
		if !isClosed || e.Header.Zxid <= closedAt {
			continue
		}
		for _, path := range ephemeralCreates(e) {
			col.add(Finding{
				Rule: "ephemeral-after-close",
				Message: fmt.Sprintf("the committed transaction %s creates the ephemeral node %s for session %s, whose closeSession committed earlier at zxid %s: the node outlives its session",
					hexID(e.Header.Zxid), path, hexID(e.Header.ClientID), hexID(closedAt)),
				Sessions: []int64{e.Header.ClientID},
				Zxids:    []int64{closedAt, e.Header.Zxid},
				Times:    []clock.Time{h.Committed[i].Time},
			})
		}
	}
}

// checkEphemeralReplies looks at every stat clients received: a node owned by a session must not
// appear in a reply at or after that session's closeSession.
func checkEphemeralReplies(h *History, closed map[int64]int64, col *collector) {
	for ci := range h.Clients {
		c := &h.Clients[ci]
		for oi := range c.Ops {
			op := &c.Ops[oi]
			if op.Outcome != OutcomeReplied || op.Stat == nil || op.Stat.EphemeralOwner == 0 {
				continue
			}
			owner := op.Stat.EphemeralOwner
			closedAt, isClosed := closed[owner]
			if !isClosed || op.Zxid < closedAt {
				continue
			}
			ref := OpRef{Client: c.Name, Index: oi}
			col.add(Finding{
				Rule: "ephemeral-visible-after-close",
				Message: fmt.Sprintf("%s shows an ephemeral node of session %s at zxid %s, at or after that session's closeSession at zxid %s",
					describeOperation(ref, op), hexID(owner), hexID(op.Zxid), hexID(closedAt)),
				Clients: []string{c.Name}, Sessions: []int64{op.Session, owner}, Ops: []OpRef{ref},
				Zxids: []int64{closedAt, op.Zxid}, Times: []clock.Time{op.Return},
			})
		}
	}
}

// checkExpiries applies the wrongful-expiry rule to every session end the session's client did not
// ask for: an expiry by the leader, or a closeSession that no recorded client issued and no
// recorded forced expiry sent.
func checkExpiries(h *History, timeouts map[int64]clock.Duration, grace clock.Duration, col *collector) {
	requested, forced := requestedCloses(h), forcedExpiryTimes(h)
	for i := range h.Sessions {
		s := &h.Sessions[i]
		how, judged := unaskedEnd(s, requested, forced)
		if !judged {
			continue
		}
		timeout := s.Timeout
		if timeout <= 0 {
			timeout = timeouts[s.Session]
		}
		if timeout <= 0 {
			col.note("session %s ended at %s, but its timeout is unknown: the wrongful-expiry rule could not judge it",
				hexID(s.Session), timeString(s.End.Time))
			continue
		}
		from := s.End.Time.Add(-(timeout + grace))
		if from < 0 || !covered(s.Healthy, from, s.End.Time) {
			continue
		}
		col.add(Finding{
			Rule: "wrongful-expiry",
			Message: fmt.Sprintf("session %s of %s was %s the closeSession committed at %s (zxid %s), yet it was healthy throughout [%s, %s), its whole %v timeout plus %v of grace",
				hexID(s.Session), s.Client, how, timeString(s.End.Time), hexID(s.End.Zxid), timeString(from), timeString(s.End.Time), timeout, grace),
			Clients:  []string{s.Client},
			Sessions: []int64{s.Session},
			Zxids:    []int64{s.End.Zxid},
			Times:    []clock.Time{from, s.End.Time},
		})
	}
}

// unaskedEnd says whether a session's end is one the wrongful-expiry rule judges, and how to word
// it. A leader's expiry is always judged: a forced expiry sends its own closeSession, with the
// killer's cxid, and never explains one the leader's session tracker submitted. A client's
// closeSession is judged only if no recorded client issued one for the session and no forced
// expiry of the session was sent before it committed: then some process ended a session whose
// client never let go of it.
func unaskedEnd(s *SessionFacts, requested map[int64]bool, forced map[int64]clock.Time) (how string, judged bool) {
	switch {
	case s.End == nil:
		return "", false
	case s.End.Expired:
		return "expired by", true
	case requested[s.Session]:
		return "", false
	}
	if at, ok := forced[s.Session]; ok && at <= s.End.Time {
		return "", false
	}
	return "closed, though neither its client nor a recorded forced expiry asked for it, by", true
}

// requestedCloses returns the sessions for which some recorded client issued closeSession.
func requestedCloses(h *History) map[int64]bool {
	out := map[int64]bool{}
	for ci := range h.Clients {
		for oi := range h.Clients[ci].Ops {
			if op := &h.Clients[ci].Ops[oi]; op.Kind == proto.OpCloseSession && op.Session != 0 {
				out[op.Session] = true
			}
		}
	}
	return out
}

// forcedExpiryTimes returns, per session, when the first forced expiry of it was sent.
func forcedExpiryTimes(h *History) map[int64]clock.Time {
	out := map[int64]clock.Time{}
	for _, e := range h.ForcedExpiries {
		if _, seen := out[e.Session]; !seen {
			out[e.Session] = e.Time
		}
	}
	return out
}

// covered reports whether the sorted, disjoint half-open intervals cover [from, to): the session
// was healthy at every instant from `from` up to the expiry.
func covered(intervals []Interval, from, to clock.Time) bool {
	reach := from
	for _, iv := range intervals {
		if iv.To <= reach {
			continue
		}
		if iv.From > reach {
			return false
		}
		reach = iv.To
		if reach >= to {
			return true
		}
	}
	return false
}
