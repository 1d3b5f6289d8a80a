package zab

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel"
)

// TestProposalIndexIsAMap checks the proposal index against the map it replaces, on proposals
// in and out of order, with gaps, far jumps, counters below an epoch's first, and several
// transactions under one zxid.
func TestProposalIndexIsAMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		index := newProposalIndex()
		want := map[txn]int64{}
		for range rapid.IntRange(0, 200).Draw(t, "steps") {
			epoch := rapid.Int64Range(1, 3).Draw(t, "epoch")
			counter := rapid.OneOf(rapid.Int64Range(1, 40), rapid.Int64Range(0, 0xffffffff)).Draw(t, "counter")
			tx := txn{zxid: zabmodel.MakeZxid(epoch, counter), hash: rapid.Uint64Range(1, 3).Draw(t, "hash")}
			if rapid.Bool().Draw(t, "add") {
				proposer := rapid.Int64Range(0, 4).Draw(t, "proposer")
				index.add(tx, proposer)
				if _, ok := want[tx]; !ok {
					want[tx] = proposer
				}
			}
			gotEpoch, gotOK := index.get(tx)
			wantEpoch, wantOK := want[tx]
			assert.Equal(t, wantOK, gotOK, "%s hash %d", zx(tx.zxid), tx.hash)
			assert.Equal(t, wantEpoch, gotEpoch, "%s hash %d", zx(tx.zxid), tx.hash)
		}
		for tx, epoch := range want { // determinism:ok a test's lookups, in any order
			got, ok := index.get(tx)
			assert.True(t, ok)
			assert.Equal(t, epoch, got)
		}
		assert.Equal(t, len(want), index.len())
	})
}

// TestSearchZxidFindsEveryPosition checks the guessed-index shortcut of searchZxid against a
// linear scan, on sequences that span epochs.
func TestSearchZxidFindsEveryPosition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var sequence []txn
		zxid := int64(0)
		for range rapid.IntRange(0, 50).Draw(t, "length") {
			if rapid.Bool().Draw(t, "new epoch") {
				zxid = zabmodel.MakeZxid(zabmodel.EpochOf(zxid)+1, rapid.Int64Range(0, 3).Draw(t, "first"))
			}
			zxid += rapid.Int64Range(1, 2).Draw(t, "step")
			sequence = append(sequence, txn{zxid: zxid})
		}
		query := rapid.Int64Range(0, zxid+2).Draw(t, "query")
		if len(sequence) > 0 && rapid.Bool().Draw(t, "member") {
			query = sequence[rapid.IntRange(0, len(sequence)-1).Draw(t, "at")].zxid
		}
		wantIndex, wantFound := len(sequence), false
		for i, tx := range sequence {
			if tx.zxid >= query {
				wantIndex, wantFound = i, tx.zxid == query
				break
			}
		}
		gotIndex, gotFound := searchZxid(sequence, query)
		assert.Equal(t, wantIndex, gotIndex)
		assert.Equal(t, wantFound, gotFound)
	})
}

// TestPrefixMismatchByPosition checks the segment-wise comparison of two history views against
// the definition, position by position, including views that share storage.
func TestPrefixMismatchByPosition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pool := make([]txn, 12)
		for i := range pool {
			pool[i] = txn{zxid: int64(i + 1), hash: rapid.Uint64Range(1, 2).Draw(t, "hash")}
		}
		other := pool
		if rapid.Bool().Draw(t, "diverge") {
			other = append([]txn(nil), pool...)
			other[rapid.IntRange(0, len(pool)-1).Draw(t, "at")].hash = 3
		}
		view := func(name string, pool []txn) historyView {
			cut := rapid.IntRange(0, len(pool)).Draw(t, name+" cut")
			end := rapid.IntRange(cut, len(pool)).Draw(t, name+" end")
			applied := pool[:cut]
			if rapid.Bool().Draw(t, name+" copied") {
				applied = append([]txn(nil), applied...)
			}
			return historyView{applied: applied, tail: pool[cut:end]}
		}
		mine, theirs := view("mine", pool), view("theirs", other)
		want := -1
		for i := range mine.length() {
			if i >= theirs.length() || mine.at(i) != theirs.at(i) {
				want = i
				break
			}
		}
		assert.Equal(t, want, mine.prefixMismatch(theirs))
	})
}
