package checkers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// mapResolver is the resolver's index as it was, one map over every (session, xid) key: the
// reference the per-session index must answer like.
type mapResolver struct {
	log       []CommittedTxn
	txnByKey  map[sessionXid]int
	opsPerKey map[sessionXid]int
}

func newMapResolver(h *History, killers killerCloses) *mapResolver {
	r := &mapResolver{log: h.Committed, txnByKey: map[sessionXid]int{}, opsPerKey: map[sessionXid]int{}}
	for ci := range h.Clients {
		for oi := range h.Clients[ci].Ops {
			op := &h.Clients[ci].Ops[oi]
			if op.Session != 0 && op.Xid != 0 && op.Kind.IsWrite() && (op.Outcome.Indeterminate() || killers.answered(op)) {
				r.opsPerKey[sessionXid{op.Session, op.Xid}] = 0
			}
		}
	}
	for i := range h.Committed {
		hdr := &h.Committed[i].Entry.Header
		key := sessionXid{hdr.ClientID, hdr.Cxid}
		if _, wanted := r.opsPerKey[key]; !wanted {
			continue
		}
		if _, dup := r.txnByKey[key]; dup {
			r.txnByKey[key] = -1
		} else {
			r.txnByKey[key] = i
		}
	}
	for ci := range h.Clients {
		for oi := range h.Clients[ci].Ops {
			op := &h.Clients[ci].Ops[oi]
			key := sessionXid{op.Session, op.Xid}
			if n, wanted := r.opsPerKey[key]; wanted {
				r.opsPerKey[key] = n + 1
			}
		}
	}
	return r
}

func (r *mapResolver) resolve(op *Operation) (verdict, int) {
	if op.Session == 0 || op.Xid == 0 || !op.Kind.IsWrite() {
		return undecided, -1
	}
	key := sessionXid{op.Session, op.Xid}
	if r.opsPerKey[key] != 1 {
		return undecided, -1
	}
	idx, found := r.txnByKey[key]
	switch {
	case !found:
		return didNotHappen, -1
	case idx < 0 || !txnFits(op, r.log[idx].Entry.Header.Type):
		return undecided, -1
	default:
		return happened, idx
	}
}

// TestResolverAnswersLikeAMap draws operations and committed transactions over a few sessions,
// with xids that repeat, cluster or spread apart, and checks that the resolver settles every
// operation as the map-based index did.
func TestResolverAnswersLikeAMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		xid := func(label string) int32 {
			// Clustered (a dense session), spread beyond the dense limit but close enough for a
			// sparse session's filter, or spread too far for one.
			return rapid.OneOf(rapid.Int32Range(-2, 12), rapid.Int32Range(-1, 3*sparseGap), rapid.Int32Range(-1<<30, 1<<30)).Draw(t, label)
		}
		kinds := []proto.OpCode{proto.OpCreate, proto.OpSetData, proto.OpDelete, proto.OpGetData}
		outcomes := []Outcome{OutcomeReplied, OutcomeUnknown, OutcomePending, OutcomeNotApplied}
		h := &History{Clients: []ClientHistory{{Name: "a"}, {Name: "b"}}}
		for range rapid.IntRange(0, 40).Draw(t, "operations") {
			c := &h.Clients[rapid.IntRange(0, 1).Draw(t, "client")]
			c.Ops = append(c.Ops, Operation{
				Session: rapid.Int64Range(0, 3).Draw(t, "session"), Xid: xid("xid"),
				Kind: rapid.SampledFrom(kinds).Draw(t, "kind"), Outcome: rapid.SampledFrom(outcomes).Draw(t, "outcome"),
			})
		}
		for i := range rapid.IntRange(0, 40).Draw(t, "transactions") {
			h.Committed = append(h.Committed, CommittedTxn{Entry: proto.TxnEntry{Header: proto.TxnHeader{
				ClientID: rapid.Int64Range(0, 3).Draw(t, "txn session"), Cxid: xid("cxid"), Zxid: int64(i + 1),
				Type: rapid.SampledFrom([]proto.OpCode{proto.OpCreate, proto.OpSetData, proto.OpError}).Draw(t, "type"),
			}}})
		}
		killers := newKillerCloses(h)
		got, want := newResolver(h, killers), newMapResolver(h, killers)
		for ci := range h.Clients {
			for oi := range h.Clients[ci].Ops {
				op := &h.Clients[ci].Ops[oi]
				wantVerdict, wantIndex := want.resolve(op)
				gotVerdict, gotIndex := got.resolve(op)
				assert.Equal(t, wantVerdict, gotVerdict, "op %d of %s", oi, h.Clients[ci].Name)
				assert.Equal(t, wantIndex, gotIndex, "op %d of %s", oi, h.Clients[ci].Name)
			}
		}
	})
}
