package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Role is a server's place in the ensemble at a moment, as QuorumPeer.ServerState names it.
type Role uint8

// Roles.
const (
	Looking Role = iota
	Following
	Leading
	Observing
)

var roleNames = [...]string{Looking: "LOOKING", Following: "FOLLOWING", Leading: "LEADING", Observing: "OBSERVING"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("role(%d)", r)
}

// A zxid is epoch << 32 | counter (ZxidUtils).

// MakeZxid builds a zxid from an epoch and a counter.
func MakeZxid(epoch, counter int64) int64 { return epoch<<32 | counter&0xffffffff }

// EpochOf returns a zxid's epoch.
func EpochOf(zxid int64) int64 { return zxid >> 32 }

// CounterOf returns a zxid's counter.
func CounterOf(zxid int64) int64 { return zxid & 0xffffffff }

// FormatZxid renders a zxid as epoch:counter in hex, for traces and reports.
func FormatZxid(zxid int64) string { return fmt.Sprintf("%#x:%#x", EpochOf(zxid), CounterOf(zxid)) }

// TxnHash is a transaction's identity for the checkers: a 64-bit FNV-1a hash of its header and body
// as logged, without the digest (which a follower's own tree need not reproduce to hold the same
// transaction). Two transactions with the same zxid and different hashes are different
// transactions, which is what Agreement and Integrity look for.
//
// A failed multi is hashed with every sub-txn typed error: DataTree.processTxn rewrites the types
// of the sub-txns before the failing one in place, so the same transaction is logged, kept in the
// committed log and sent in a DIFF either way, depending on whether it was applied first. Its sub-txn
// data is never rewritten, so the hash still tells two different failed multis apart.
func TxnHash(entry *proto.TxnEntry) uint64 {
	var scratch proto.Encoder
	return txnHashWith(&scratch, entry)
}

// txnHashWith is TxnHash encoding into scratch, whose earlier contents it discards: a caller that
// hashes every transaction several times keeps one scratch encoder and allocates nothing.
func txnHashWith(scratch *proto.Encoder, entry *proto.TxnEntry) uint64 {
	plain := proto.TxnEntry{Header: entry.Header, Txn: entry.Txn}
	if m, ok := entry.Txn.(*proto.MultiTxn); ok && failedMulti(m) {
		canonical := &proto.MultiTxn{Txns: make([]proto.Txn, len(m.Txns))}
		for i, t := range m.Txns {
			canonical.Txns[i] = proto.Txn{Type: proto.OpError, Data: t.Data}
		}
		plain.Txn = canonical
	}
	scratch.Reset()
	plain.Encode(scratch)
	return fnv64a(scratch.Bytes())
}

// FNV-1a's 64-bit parameters, as hash/fnv has them.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// fnv64a is hash/fnv's New64a over b, written out so that hashing allocates no hasher.
func fnv64a(b []byte) uint64 {
	h := uint64(fnvOffset64)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	return h
}

func failedMulti(m *proto.MultiTxn) bool {
	for _, t := range m.Txns {
		if t.Type == proto.OpError {
			return true
		}
	}
	return false
}
