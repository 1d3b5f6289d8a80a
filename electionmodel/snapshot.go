package electionmodel

import (
	"encoding/binary"
	"maps"
	"slices"
)

// Clone returns an independent copy of the election: the model checker (package modelcheck) keeps
// many states alive at once and steps each copy on its own. The configuration is shared, because
// nothing ever changes it after New.
func (e *Election) Clone() *Election {
	c := *e
	c.recvset = maps.Clone(e.recvset)
	c.outOfElection = maps.Clone(e.outOfElection)
	c.history = slices.Clone(e.history)
	return &c
}

// AppendState appends a canonical encoding of everything the election will act on to b: two
// elections with equal encodings answer every future input alike. Maps are written in sid order,
// so the encoding does not depend on the order in which votes arrived. The model checker hashes
// it into its state fingerprint.
func (e *Election) AppendState(b []byte) []byte {
	b = binary.AppendVarint(b, e.cfg.ID)
	b = binary.AppendVarint(b, int64(e.state))
	b = binary.AppendVarint(b, e.logicalClock)
	b = appendProposal(b, e.proposal)
	b = appendVote(b, e.current)
	b = binary.AppendVarint(b, int64(e.notTimeout))
	flags := int64(0)
	if e.finalizing {
		flags |= 1
	}
	if e.started {
		flags |= 2
	}
	b = binary.AppendVarint(b, flags)
	b = appendVotes(b, e.recvset)
	b = appendVotes(b, e.outOfElection)
	b = binary.AppendUvarint(b, uint64(len(e.history)))
	for _, p := range e.history {
		b = appendProposal(b, p)
	}
	return b
}

func appendProposal(b []byte, p proposal) []byte {
	b = binary.AppendVarint(b, p.leader)
	b = binary.AppendVarint(b, p.zxid)
	return binary.AppendVarint(b, p.epoch)
}

func appendVote(b []byte, v Vote) []byte {
	b = binary.AppendVarint(b, v.Leader)
	b = binary.AppendVarint(b, v.Zxid)
	b = binary.AppendVarint(b, v.ElectionEpoch)
	b = binary.AppendVarint(b, v.PeerEpoch)
	b = binary.AppendVarint(b, int64(v.State))
	return binary.AppendVarint(b, int64(v.Version))
}

// appendVotes writes a vote map in sid order, with its size first so that two maps never run
// into each other.
func appendVotes(b []byte, votes map[int64]Vote) []byte {
	b = binary.AppendUvarint(b, uint64(len(votes)))
	if len(votes) == 0 {
		return b
	}
	var small [8]int64
	sids := small[:0]
	for sid := range votes { // determinism:ok sorted below
		sids = append(sids, sid)
	}
	slices.Sort(sids)
	for _, sid := range sids {
		b = binary.AppendVarint(b, sid)
		b = appendVote(b, votes[sid])
	}
	return b
}
