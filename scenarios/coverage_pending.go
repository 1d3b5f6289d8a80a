package scenarios

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Cross-server situations: what the ensemble and its clients lived through around the proposals a
// leader has outstanding. The per-server situations of coverage.go see each server alone; the
// rarest bugs live where a leader's outstanding proposals meet something that happened elsewhere:
//
//   - a learner whose connection ended while the leader still waits to commit proposals it had
//     acknowledged (and what became of it: it came back to the same leader, it truncated below such
//     a proposal, the proposal was committed afterwards), or that left after its NEWLEADER ack
//     before its leader was established, or before its UPTODATE;
//   - a client session whose transaction is outstanding at the leader while the session
//     disconnects, reconnects (to any server), sends another request, and the transaction is
//     committed only after that.
//
// These are the preconditions of the ack-bookkeeping bugs (a leader counting a departed learner's
// ack) and of the recipes' reconnect races (a protected-mode search that runs before the create it
// looks for commits), whether or not a bug switch then turns them into a failure. Each is a
// feature, so an input that reaches one joins the corpus and its mutations aim there; and the
// windows they open are part of every boundary hit's site key (siteWindow), so that site
// injections favour the hits inside such a window, which are rare.

// pendingProposal is a proposal a leader has outstanding: proposed, not yet committed.
type pendingProposal struct {
	zxid    int64
	leader  int64
	session int64
	op      proto.OpCode
	// Bit sets of sids: the learners that acknowledged it, those of them whose connection ended
	// since, and those that truncated their log below it since.
	acked, departed, truncated uint64
	// moved says its session disconnected since it was proposed; requested that the session sent
	// a request after that.
	moved, requested bool
}

// maxPending bounds the outstanding proposals followed: a leader without a quorum keeps proposing
// until it steps down, and past a few hundred they add nothing.
const maxPending = 256

// Site windows: bits of a boundary hit's situation besides its boundary, phase, role and previous
// step (Site.Key).
const (
	// windowAckedPending: the server is a learner holding an acknowledgement of a proposal its
	// leader has not committed yet.
	windowAckedPending uint64 = 1 << iota
	// windowDepartedAck: some outstanding proposal was acknowledged by a learner whose connection
	// ended since.
	windowDepartedAck
	// windowMovedSession: some outstanding proposal belongs to a session that disconnected since
	// it was proposed.
	windowMovedSession
	// windowDepartedNewLeaderAck: some leader not yet established holds the NEWLEADER ack of a
	// learner that left since.
	windowDepartedNewLeaderAck
	// windowTreeAhead and windowSnapshotAhead (coverage_ahead.go) are the next two bits.
	windowCount = 64
)

var windowNames = [...]string{"acked-pending", "departed-ack", "moved-session", "departed-newleader-ack", "tree-ahead", "snapshot-ahead"}

func windowString(w uint64) string {
	out := ""
	for i, name := range windowNames {
		if w&(1<<i) != 0 {
			if out != "" {
				out += ","
			}
			out += name
		}
	}
	if out == "" {
		return "{}"
	}
	return "{" + out + "}"
}

func sidBit(sid int64) uint64 {
	if sid <= 0 || sid >= 64 {
		return 0
	}
	return 1 << uint(sid)
}

// pendingBucket buckets a count of proposals: 1, 2, 3-7, 8 and more.
func pendingBucket(n int) uint64 {
	switch {
	case n <= 2:
		return uint64(n)
	case n < 8:
		return 3
	}
	return 4
}

var pendingBucketNames = [...]string{"0", "1", "2", "3-7", "8+"}

// siteWindow is the window bits of a boundary hit on server sid.
func (c *Coverage) siteWindow(sid int64) uint64 {
	var w uint64
	bit := sidBit(sid)
	for _, p := range c.pending {
		if p.acked&bit != 0 && p.departed&bit == 0 {
			w |= windowAckedPending
		}
		if p.departed != 0 {
			w |= windowDepartedAck
		}
		if p.moved {
			w |= windowMovedSession
		}
	}
	if c.departedNewLeaderAcks > 0 {
		w |= windowDepartedNewLeaderAck
	}
	return w | c.aheadWindow(c.server(sid))
}

// pendingEvent follows the outstanding proposals through an event, once the server's derived
// state has advanced (prevPhase and prevRole are the server's phase and role before it).
func (c *Coverage) pendingEvent(s *serverCoverage, prevPhase phase, prevRole zabmodel.Role, e zabmodel.Event) {
	bit := sidBit(e.Server)
	switch e.Kind {
	case zabmodel.EventPropose:
		if e.Txn == nil {
			return
		}
		if len(c.pending) == maxPending {
			c.pending = append(c.pending[:0], c.pending[1:]...)
		}
		c.pending = append(c.pending, &pendingProposal{zxid: e.Zxid, leader: e.Server, session: e.Txn.Header.ClientID, op: e.Txn.Header.Type})
		if session := e.Txn.Header.ClientID; session != 0 {
			c.sessionWrites[session] = sessionWrite{zxid: e.Zxid, op: e.Txn.Header.Type}
			if name, ok := c.sessionClients[session]; ok && len(c.writes) < maxWriteSites {
				c.writes = append(c.writes, WriteSite{At: e.Time, Leader: e.Server, Client: name, Op: e.Txn.Header.Type})
			}
		}
	case zabmodel.EventAck:
		for _, p := range c.pending {
			if p.zxid == e.Zxid && p.leader != e.Server {
				if p.truncated&bit != 0 {
					c.add(mix(0x25, uint64(p.departed&bit>>uint(e.Server))), e.Time, e.Server, func() string {
						return "ack again of a pending proposal after truncating below it"
					})
				}
				p.acked |= bit
				p.departed &^= bit
				p.truncated &^= bit
			}
		}
	case zabmodel.EventCommit:
		c.committed(e)
	case zabmodel.EventTruncate:
		departed := false
		n := 0
		for _, p := range c.pending {
			if p.acked&bit != 0 && e.Zxid < p.zxid {
				p.truncated |= bit
				departed = departed || p.departed&bit != 0
				n++
			}
		}
		if n > 0 {
			d := boolBit(departed)
			c.add(mix(0x24, d, pendingBucket(n), uint64(e.Role)), e.Time, e.Server, func() string {
				return fmt.Sprintf("truncate below %s pending proposals it acked (departed %v) %s", pendingBucketNames[pendingBucket(n)], departed, e.Role)
			})
		}
	case zabmodel.EventLearnerSync:
		if e.Learner <= 0 {
			return
		}
		learner := c.server(e.Learner)
		lbit := sidBit(e.Learner)
		lowest, n := int64(0), 0
		for _, p := range c.pending {
			if p.leader == e.Server && p.departed&lbit != 0 {
				if n == 0 || p.zxid < lowest {
					lowest = p.zxid
				}
				n++
			}
		}
		if n > 0 {
			rel := relation(learner.lastLogged, lowest)
			c.add(mix(0x23, rel, uint64(learner.history), pendingBucket(n)), e.Time, e.Server, func() string {
				return fmt.Sprintf("learner-sync of a learner back while %s of its acks pending, its log%slowest, after %s",
					pendingBucketNames[pendingBucket(n)], relationNames[rel], historyString(learner.history))
			})
		}
	case zabmodel.EventNewLeaderAck:
		s.newLeaderAckEpoch, s.newLeaderAckTo = e.Epoch, e.Leader
	case zabmodel.EventServing:
		// UPTODATE came: the window between the NEWLEADER ack and it is over.
		s.newLeaderAckEpoch, s.newLeaderAckTo = 0, 0
	case zabmodel.EventEstablished:
		if n := s.departedNewLeaderAckers; n > 0 {
			c.add(mix(0x28, pendingBucket(n)), e.Time, e.Server, func() string {
				return fmt.Sprintf("established holding the NEWLEADER acks of %s departed learners", pendingBucketNames[pendingBucket(n)])
			})
		}
		c.departedNewLeaderAcks -= s.departedNewLeaderAckers
		s.departedNewLeaderAckers, s.establishedEpoch = 0, e.Epoch
	}
	// A server leaves its role: a learner's connection to its leader ends; a leader's outstanding
	// proposals will never be committed by it.
	left := prevPhase >= phaseDiscovery && (s.phase <= phaseLooking || e.Kind == zabmodel.EventElected)
	if !left {
		return
	}
	if prevRole == zabmodel.Leading {
		kept := c.pending[:0]
		for _, p := range c.pending {
			if p.leader != e.Server {
				kept = append(kept, p)
			}
		}
		clear(c.pending[len(kept):])
		c.pending = kept
		c.departedNewLeaderAcks -= s.departedNewLeaderAckers
		s.departedNewLeaderAckers = 0
		return
	}
	n := 0
	for _, p := range c.pending {
		if p.acked&bit != 0 && p.departed&bit == 0 {
			p.departed |= bit
			n++
		}
	}
	if n > 0 {
		c.add(mix(0x20, uint64(e.Kind), uint64(prevPhase), pendingBucket(n), uint64(prevRole)), e.Time, e.Server, func() string {
			return fmt.Sprintf("%s %s leaves %s holding acks of %s pending proposals", prevRole, e.Kind, prevPhase, pendingBucketNames[pendingBucket(n)])
		})
	}
	if s.newLeaderAckEpoch > 0 {
		leader := c.server(s.newLeaderAckTo)
		established := leader.establishedEpoch >= s.newLeaderAckEpoch
		if !established && leader.role == zabmodel.Leading {
			leader.departedNewLeaderAckers++
			c.departedNewLeaderAcks++
		}
		c.add(mix(0x21, uint64(e.Kind), boolBit(established), uint64(prevPhase)), e.Time, e.Server, func() string {
			return fmt.Sprintf("learner %s in %s between its NEWLEADER ack and UPTODATE, leader established %v", e.Kind, prevPhase, established)
		})
		s.newLeaderAckEpoch, s.newLeaderAckTo = 0, 0
	}
}

// committed ends the outstanding proposals a leader's commit covers, with the situations of the
// one it commits.
func (c *Coverage) committed(e zabmodel.Event) {
	kept := c.pending[:0]
	for _, p := range c.pending {
		if p.leader != e.Server || p.zxid > e.Zxid {
			kept = append(kept, p)
			continue
		}
		if p.zxid != e.Zxid {
			continue
		}
		if p.departed != 0 {
			truncated := boolBit(p.truncated&p.departed != 0)
			c.add(mix(0x26, truncated), e.Time, e.Server, func() string {
				return fmt.Sprintf("commit of a proposal acked by a learner that left since (truncated below it: %d)", truncated)
			})
		}
		if p.moved {
			requested := boolBit(p.requested)
			c.add(mix(0x27, uint64(p.op), requested), e.Time, e.Server, func() string {
				return fmt.Sprintf("commit of a %s whose session disconnected since it was proposed (a request since: %d)", p.op, requested)
			})
		}
	}
	clear(c.pending[len(kept):])
	c.pending = kept
}

// clientState takes a client session's connection state change (the runner's applications report
// them).
func (c *Coverage) clientState(session int64, state proto.KeeperState, at clock.Time) {
	if session == 0 {
		return
	}
	if w, ok := c.sessionWrites[session]; ok && state != proto.StateSyncConnected && state != proto.StateConnectedReadOnly {
		w.moved = true
		c.sessionWrites[session] = w
	}
	for _, p := range c.pending {
		if p.session != session {
			continue
		}
		if state != proto.StateSyncConnected && state != proto.StateConnectedReadOnly {
			first := !p.moved
			p.moved = true
			if first {
				c.add(mix(0x29, uint64(state), uint64(p.op)), at, p.leader, func() string {
					return fmt.Sprintf("session %s while its %s is pending at the leader", state, p.op)
				})
			}
		} else if p.moved {
			c.add(mix(0x2a, uint64(state), uint64(p.op)), at, p.leader, func() string {
				return fmt.Sprintf("session %s again while its %s is still pending at the leader", state, p.op)
			})
		}
	}
}

// sessionWrite is a session's last write a leader proposed, and whether the session disconnected
// since.
type sessionWrite struct {
	zxid  int64
	op    proto.OpCode
	moved bool
}

// clientRequest takes a request a client session sends to server (its sid; 0 when not known) (the
// runner's applications and recipes report them). A request after a disconnect, sent to a server
// that has not yet applied the session's own last write, is the situation of a recipe's reconnect
// race: a protected-mode create's search for its node (Curator's findProtectedNodeInForeground
// lists the children without a sync) runs against a server that does not have the create yet,
// whether the create is still pending at the leader or committed and not yet applied there.
func (c *Coverage) clientRequest(session int64, kind proto.OpCode, at clock.Time, server int64) {
	if session == 0 {
		return
	}
	if w, ok := c.sessionWrites[session]; ok && w.moved && server > 0 {
		rel := relation(c.server(server).lastApplied, w.zxid)
		pending := false
		for _, p := range c.pending {
			pending = pending || p.zxid == w.zxid
		}
		// Coarse on purpose: a read or a write, not the operation codes of the request and the write.
		// Every distinct situation is a corpus entry, and the codes' product made a few hundred
		// of them in a 5,000-run campaign, which took the corpus picks from the situations of the
		// server bugs (stale-ack: no failing run in 5,387 against 2 in 5,223 without them).
		read := boolBit(kind == proto.OpGetChildren || kind == proto.OpGetChildren2 || kind == proto.OpGetData || kind == proto.OpExists)
		c.add(mix(0x2c, read, rel, boolBit(pending)), at, server, func() string {
			what := "a write"
			if read == 1 {
				what = "a read"
			}
			return fmt.Sprintf("session sends %s after a disconnect to a server whose applied zxid %s its last write (pending at the leader: %v)",
				what, relationNames[rel], pending)
		})
	}
	for _, p := range c.pending {
		if p.session == session && p.moved {
			p.requested = true
			c.add(mix(0x2b, uint64(kind), uint64(p.op)), at, p.leader, func() string {
				return fmt.Sprintf("session sends %s after a disconnect while its %s is still pending at the leader", kind, p.op)
			})
		}
	}
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// WriteSite is a client's write that a leader proposed: when, by which leader, and whose. A race
// edit (the fuzzer's EditRace) aims there: it holds the leader's quorum back while the write is
// outstanding and cuts the client off, so that the client's retry runs while the write is
// proposed and not committed (the window of a recipe's reconnect race).
type WriteSite struct {
	At     clock.Time
	Leader int64
	Client string
	Op     proto.OpCode
}

// maxWriteSites bounds the writes a run keeps: a lock workload proposes a few hundred in a short
// run, and an entry keeps them as long as it is in the corpus.
const maxWriteSites = 512

// Writes returns the client writes leaders proposed in the run, in order.
func (c *Coverage) Writes() []WriteSite { return c.writes }

// sessionClient names the client application of a session (the runner's applications and
// recipes report it with each request).
func (c *Coverage) sessionClient(session int64, client string) {
	if session != 0 {
		c.sessionClients[session] = client
	}
}
