package zabmodel

import (
	"hash/fnv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel/datatree"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// referenceTxnHash is TxnHash as first written, with hash/fnv over proto.Marshal: the identity the
// checkers and recorded traces depend on, which the allocation-free version must reproduce.
func referenceTxnHash(entry *proto.TxnEntry) uint64 {
	h := fnv.New64a()
	plain := proto.TxnEntry{Header: entry.Header, Txn: entry.Txn}
	if m, ok := entry.Txn.(*proto.MultiTxn); ok && failedMulti(m) {
		canonical := &proto.MultiTxn{Txns: make([]proto.Txn, len(m.Txns))}
		for i, t := range m.Txns {
			canonical.Txns[i] = proto.Txn{Type: proto.OpError, Data: t.Data}
		}
		plain.Txn = canonical
	}
	_, _ = h.Write(proto.Marshal(&plain))
	return h.Sum64()
}

func drawTxnEntry(t *rapid.T) *proto.TxnEntry {
	header := proto.TxnHeader{
		ClientID: rapid.Int64().Draw(t, "client"), Cxid: rapid.Int32().Draw(t, "cxid"),
		Zxid: rapid.Int64().Draw(t, "zxid"), Time: rapid.Int64().Draw(t, "time"),
	}
	path := rapid.StringMatching(`/[a-z\x{e9}\x{1f600}]{0,12}`).Draw(t, "path")
	data := rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "data")
	entry := &proto.TxnEntry{Header: header}
	switch rapid.IntRange(0, 3).Draw(t, "type") {
	case 0:
		entry.Header.Type, entry.Txn = proto.OpSetData, &proto.SetDataTxn{Path: path, Data: data, Version: rapid.Int32().Draw(t, "version")}
	case 1:
		entry.Header.Type, entry.Txn = proto.OpCreate, &proto.CreateTxn{Path: path, Data: data, ACL: proto.OpenACLUnsafe}
	case 2:
		entry.Header.Type, entry.Txn = proto.OpDelete, &proto.DeleteTxn{Path: path}
	default:
		entry.Header.Type = proto.OpMulti
		multi := &proto.MultiTxn{}
		for i := range rapid.IntRange(1, 4).Draw(t, "subs") {
			sub := proto.Txn{Type: proto.OpSetData, Data: proto.Marshal(&proto.SetDataTxn{Path: path, Data: data, Version: int32(i)})}
			if rapid.Bool().Draw(t, "failed") {
				sub = proto.Txn{Type: proto.OpError, Data: proto.Marshal(&proto.ErrorTxn{Err: proto.NoNode})}
			}
			multi.Txns = append(multi.Txns, sub)
		}
		entry.Txn = multi
	}
	if rapid.Bool().Draw(t, "digest") {
		entry.Digest = &proto.TxnDigest{Version: 2, TreeDigest: rapid.Int64().Draw(t, "tree")}
	}
	return entry
}

// newHashingPeer is the part of a peer that txnHash uses.
func newHashingPeer() *peer { return &peer{mem: &memory{scratch: &proto.Encoder{}}} }

func TestTxnHashIsFNVOfTheEncodingWithoutDigest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		entry := drawTxnEntry(t)
		want := referenceTxnHash(entry)
		assert.Equal(t, want, TxnHash(entry))
		p := newHashingPeer()
		assert.Equal(t, want, p.txnHash(entry), "first computation")
		assert.Equal(t, want, p.txnHash(entry), "from the cache")
	})
}

// TestTxnHashCacheKeysOnTheObject: another transaction with the same zxid (an old leader's proposal
// truncated away, and the new leader's) must not be given the first one's hash.
func TestTxnHashCacheKeysOnTheObject(t *testing.T) {
	p := newHashingPeer()
	first := &proto.TxnEntry{Header: proto.TxnHeader{Zxid: MakeZxid(1, 5), Type: proto.OpDelete}, Txn: &proto.DeleteTxn{Path: "/a"}}
	second := &proto.TxnEntry{Header: proto.TxnHeader{Zxid: MakeZxid(1, 5), Type: proto.OpDelete}, Txn: &proto.DeleteTxn{Path: "/b"}}
	require.NotEqual(t, TxnHash(first), TxnHash(second))
	assert.Equal(t, TxnHash(first), p.txnHash(first))
	assert.Equal(t, TxnHash(second), p.txnHash(second))
	assert.Equal(t, TxnHash(first), p.txnHash(first), "evicted by the other object, computed again")
	colliding := &proto.TxnEntry{Header: proto.TxnHeader{Zxid: MakeZxid(1, 5+txnHashCacheSize), Type: proto.OpDelete}, Txn: &proto.DeleteTxn{Path: "/c"}}
	assert.Equal(t, TxnHash(colliding), p.txnHash(colliding), "a zxid in the same slot")
	assert.Equal(t, TxnHash(first), p.txnHash(first))
}

// TestTxnHashOfAFailedMultiSurvivesItsApply: the tree's apply rewrites the sub-txn types of a
// failed multi in place, after the first hash was cached; the cached hash must still be the one a
// fresh computation gives.
func TestTxnHashOfAFailedMultiSurvivesItsApply(t *testing.T) {
	create := proto.Marshal(&proto.CreateTxn{Path: "/x", Data: []byte("v"), ACL: proto.OpenACLUnsafe, ParentCVersion: 1})
	failure := proto.Marshal(&proto.ErrorTxn{Err: proto.NoNode})
	entry := &proto.TxnEntry{
		Header: proto.TxnHeader{ClientID: 1, Zxid: MakeZxid(1, 1), Type: proto.OpMulti},
		Txn:    &proto.MultiTxn{Txns: []proto.Txn{{Type: proto.OpCreate, Data: create}, {Type: proto.OpError, Data: failure}}},
	}
	p := newHashingPeer()
	before, encodedBefore := p.txnHash(entry), proto.Marshal(entry)
	datatree.New(datatree.Config{}).Apply(entry)
	require.NotEqual(t, encodedBefore, proto.Marshal(entry), "the apply rewrote the sub-txn types")
	assert.Equal(t, before, TxnHash(entry), "the rewrite does not change the hash")
	assert.Equal(t, before, p.txnHash(entry))
}
