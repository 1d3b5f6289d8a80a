package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The learner handler's sync decision as a core (see ready.go): LearnerHandler.syncFollower decides
// DIFF, TRUNC or SNAP from the leader's committed log and txn log, which it reads (syncSource) and
// never writes, and returns a ready: the notes and the EventLearnerSync of the decision, the
// packets queued for the learner (DIFF or TRUNC, then a PROPOSAL and a COMMIT per txn to send), and
// Leader.startForwarding from the point the queued packets reach (effectForward). The learner
// handler's core (handlercore.go) takes it into its own ready, which the handler (learnerhandler.go)
// applies.
//
// Ordering contract: the packets are queued in the order the learner must receive them, before
// effectForward, whose packets (what the leader committed or proposed after that point) follow
// them; the sender has not started yet, so none of them is written before the handler's NEWLEADER
// (or the SNAP's snapshot) is queued behind them.

// syncSource is what the sync decision reads of the leader's database: the committed log window,
// the last processed zxid, and the txn log (for a DIFF from it).
type syncSource interface {
	committedLog() []*proposal
	lastProcessedZxid() int64
	maxCommittedLog() int64
	minCommittedLog() int64
	txnLogSyncEnabled() bool
	txnLogSizeLimit() int64
	proposalsFromLog(peerZxid int64, sizeLimit int64) []*proposal
}

// syncDecision is one run of syncFollower for handler h (whose identity tags the effects; the
// decision reads only its sid and whether it is an observer).
type syncDecision struct {
	src          syncSource
	mem          *memory
	h            *learnerHandler
	out          *ready
	needOpPacket bool
}

func (d *syncDecision) note(format string, args ...any) {
	d.out.note("sync", fmt.Sprintf(format, args...))
}

func (d *syncDecision) queueOp(t int32, zxid int64) {
	d.queue(d.mem.encodePacket(&proto.QuorumPacket{Type: t, Zxid: zxid}))
}

func (d *syncDecision) queue(packet []byte) {
	d.out.add(effect{kind: effectQueuePacket, handler: d.h, packet: packet})
}

// dropQueued takes back the packets queued since effect index from: the txn-log DIFF that turned
// out not to reach the committed log.
func (d *syncDecision) dropQueued(from int) {
	kept := d.out.effects[:from]
	for _, e := range d.out.effects[from:] {
		if e.kind != effectQueuePacket {
			kept = append(kept, e)
		}
	}
	clear(d.out.effects[len(kept):])
	d.out.effects = kept
}

// decideSync is LearnerHandler.syncFollower: DIFF, TRUNC or SNAP for a learner at peerLastZxid.
// Its effects go to out; it returns whether a snapshot is needed.
func decideSync(src syncSource, mem *memory, h *learnerHandler, peerLastZxid int64, out *ready) bool {
	d := &syncDecision{src: src, mem: mem, h: h, out: out}
	isPeerNewEpochZxid := CounterOf(peerLastZxid) == 0
	currentZxid := peerLastZxid
	needSnap := true
	d.needOpPacket = true
	maxCommitted, minCommitted := src.maxCommittedLog(), src.minCommittedLog()
	lastProcessed := src.lastProcessedZxid()
	committed := src.committedLog()
	if len(committed) == 0 {
		minCommitted, maxCommitted = lastProcessed, lastProcessed
	}
	d.note("synchronizing with learner %d: maxCommittedLog=%s minCommittedLog=%s lastProcessedZxid=%s peerLastZxid=%s",
		h.sid, FormatZxid(maxCommitted), FormatZxid(minCommitted), FormatZxid(lastProcessed), FormatZxid(peerLastZxid))
	out.observe(Event{Kind: EventLearnerSync, Learner: h.sid, Zxid: lastProcessed})
	switch {
	case lastProcessed == peerLastZxid:
		d.queueOp(pktDiff, peerLastZxid)
		d.needOpPacket, needSnap = false, false
	case peerLastZxid > maxCommitted && !isPeerNewEpochZxid:
		d.queueOp(pktTrunc, maxCommitted)
		currentZxid = maxCommitted
		d.needOpPacket, needSnap = false, false
	case maxCommitted >= peerLastZxid && minCommitted <= peerLastZxid:
		currentZxid = d.queueCommittedProposals(committed, peerLastZxid, 0, false, maxCommitted)
		needSnap = false
	case peerLastZxid < minCommitted && src.txnLogSyncEnabled():
		fromLog := src.proposalsFromLog(peerLastZxid, src.txnLogSizeLimit())
		if len(fromLog) > 0 {
			mark := len(out.effects)
			currentZxid = d.queueCommittedProposals(fromLog, peerLastZxid, minCommitted, true, maxCommitted)
			if currentZxid < minCommitted {
				currentZxid = peerLastZxid
				d.dropQueued(mark)
				d.needOpPacket = true
			} else {
				currentZxid = d.queueCommittedProposals(committed, currentZxid, 0, false, maxCommitted)
				needSnap = false
			}
		}
	default:
		d.note("unhandled scenario for peer %d: peer at %s, committed log [%s, %s], last processed %s",
			h.sid, FormatZxid(peerLastZxid), FormatZxid(minCommitted), FormatZxid(maxCommitted), FormatZxid(lastProcessed))
	}
	if needSnap {
		currentZxid = src.lastProcessedZxid()
	}
	out.add(effect{kind: effectForward, handler: h, zxid: currentZxid})
	if d.needOpPacket && !needSnap {
		d.note("unhandled scenario for peer %d: falling back to a snapshot", h.sid)
		needSnap = true
	}
	return needSnap
}

// queueCommittedProposals is LearnerHandler.queueCommittedProposals: it decides DIFF or TRUNC on the
// way and queues a PROPOSAL and a COMMIT for everything after the peer's point.
func (d *syncDecision) queueCommittedProposals(log []*proposal, peerLastZxid, maxZxid int64, hasMax bool, lastCommitted int64) int64 {
	isPeerNewEpochZxid := CounterOf(peerLastZxid) == 0
	queuedZxid := peerLastZxid
	prevProposalZxid := int64(-1)
	for _, pr := range log {
		if hasMax && pr.zxid > maxZxid {
			break
		}
		if pr.zxid < peerLastZxid {
			prevProposalZxid = pr.zxid
			continue
		}
		if d.needOpPacket {
			if pr.zxid == peerLastZxid {
				d.queueOp(pktDiff, lastCommitted)
				d.needOpPacket = false
				continue
			}
			if isPeerNewEpochZxid {
				d.queueOp(pktDiff, lastCommitted)
				d.needOpPacket = false
			} else if pr.zxid > peerLastZxid {
				if EpochOf(pr.zxid) != EpochOf(peerLastZxid) {
					d.note("cannot send TRUNC to %d: peer zxid %s is from a different epoch", d.h.sid, FormatZxid(peerLastZxid))
					return queuedZxid
				}
				d.queueOp(pktTrunc, prevProposalZxid)
				d.needOpPacket = false
			}
		}
		if pr.zxid <= queuedZxid {
			continue
		}
		d.queue(d.mem.encodePacket(&proto.QuorumPacket{Type: pktProposal, Zxid: pr.zxid, Data: pr.encoded(d.mem)}))
		d.queueOp(pktCommit, pr.zxid)
		queuedZxid = pr.zxid
	}
	if d.needOpPacket && isPeerNewEpochZxid {
		d.queueOp(pktDiff, lastCommitted)
		d.needOpPacket = false
	}
	return queuedZxid
}

func (db *zkDatabase) committedLog() []*proposal { return db.committed }
