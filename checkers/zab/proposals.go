package zab

import (
	"github.com/zabsim/zabsim/zabmodel"
)

// proposalIndex maps every proposed transaction to the epoch of the leader that proposed it, as a
// map[txn]int64 would, but in the layout proposals take: an epoch's leader hands out consecutive
// counters, so each epoch keeps a dense slice indexed by counter, and the epoch looked up last (the
// current one, nearly always) is found without a map access. Every server's log, commit and apply
// of a transaction asks for its proposer (Integrity), which made the map the checker's largest
// cost. What does not fit the layout (a second transaction under one zxid, a counter below the
// epoch's first or far past its last) goes to an overflow map, so the index answers exactly like
// the map it replaces.
type proposalIndex struct {
	epochs map[int64]*epochProposals
	// last is the epoch looked up or added last, and lastEpoch its number.
	last      *epochProposals
	lastEpoch int64
	overflow  map[txn]int64
	count     int
}

// epochProposals holds the proposals of one zxid epoch: slots[i] is the one with counter base+i.
type epochProposals struct {
	base  int64
	slots []proposalSlot
}

type proposalSlot struct {
	hash  uint64
	epoch int64
	set   bool
}

// maxCounterGap bounds how far past an epoch's last slot a counter may land and still get a dense
// slot; a larger jump (a counter that skipped ahead, which LocalPrimaryOrder reports) goes to the
// overflow map instead of growing the slice by the gap.
const maxCounterGap = 1 << 12

func newProposalIndex() proposalIndex {
	return proposalIndex{epochs: map[int64]*epochProposals{}, overflow: map[txn]int64{}}
}

// epoch returns the proposals of a zxid epoch, or nil.
func (p *proposalIndex) epoch(epoch int64) *epochProposals {
	if p.last != nil && p.lastEpoch == epoch {
		return p.last
	}
	e := p.epochs[epoch]
	if e != nil {
		p.last, p.lastEpoch = e, epoch
	}
	return e
}

// get returns the epoch of t's proposer, if t was proposed.
func (p *proposalIndex) get(t txn) (int64, bool) {
	if e := p.epoch(zabmodel.EpochOf(t.zxid)); e != nil {
		if i := zabmodel.CounterOf(t.zxid) - e.base; i >= 0 && i < int64(len(e.slots)) {
			if slot := &e.slots[i]; slot.set && slot.hash == t.hash {
				return slot.epoch, true
			}
		}
	}
	if len(p.overflow) == 0 {
		return 0, false
	}
	epoch, ok := p.overflow[t]
	return epoch, ok
}

// add records that t was proposed by a leader of epoch, unless t was proposed before (the first
// proposer is kept).
func (p *proposalIndex) add(t txn, epoch int64) {
	if _, ok := p.get(t); ok {
		return
	}
	p.count++
	zxidEpoch, counter := zabmodel.EpochOf(t.zxid), zabmodel.CounterOf(t.zxid)
	e := p.epoch(zxidEpoch)
	if e == nil {
		e = &epochProposals{base: counter}
		p.epochs[zxidEpoch] = e
		p.last, p.lastEpoch = e, zxidEpoch
	}
	i := counter - e.base
	switch {
	case i < 0 || i >= int64(len(e.slots))+maxCounterGap:
		p.overflow[t] = epoch
	case i < int64(len(e.slots)):
		if e.slots[i].set {
			p.overflow[t] = epoch // another transaction holds this zxid's slot
			return
		}
		e.slots[i] = proposalSlot{hash: t.hash, epoch: epoch, set: true}
	default:
		for int64(len(e.slots)) < i {
			e.slots = append(e.slots, proposalSlot{})
		}
		e.slots = append(e.slots, proposalSlot{hash: t.hash, epoch: epoch, set: true})
	}
}

// len returns the number of distinct proposed transactions.
func (p *proposalIndex) len() int { return p.count }
