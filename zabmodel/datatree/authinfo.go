package datatree

import (
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// AuthInfo is the set of identities of one client connection, in the order a
// 3.8.0 server iterates them. Java keeps them in
// Collections.newSetFromMap(new ConcurrentHashMap<Id, Boolean>()) and hands
// out a copy in the map's iteration order, which decides the order in which
// FixupACL expands an "auth" entry (and so the order of the stored ACL a
// getACL shows). AuthInfo reproduces that order by emulating the map: Id's
// jute hashCode, ConcurrentHashMap's spread function, its power-of-two table
// starting at 16 buckets, appending to a bucket's list, and resizing at three
// quarters full (or when a bucket reaches the treeify threshold in a small
// table), with the list split of ConcurrentHashMap.transfer. A bucket that
// Java would turn into a red-black tree (9 colliding identities in a table
// of at least 64 buckets) keeps list order here, which may differ from
// Java's.
//
// The zero value is an empty set. A server creates one per connection, adds
// the connection's {ip, address} identity first as NIOServerCnxn does, then
// each identity Authenticate yields, and passes IDs() to the Preparer and
// CheckACL.
type AuthInfo struct {
	bins        [][]authEntry
	size        int
	sizeControl int
}

type authEntry struct {
	hash int32
	id   proto.ID
}

// MaxAuthIDs bounds the identities of one connection.
const MaxAuthIDs = 1 << 16

// The ConcurrentHashMap constants that shape its layout.
const (
	authInitialBins     = 16
	authTreeifyCount    = 8
	authMinTreeifyBins  = 64
	authMaxBins         = 1 << 30
	authHashBitsNonSign = 0x7fffffff
)

// idHash is the jute-generated Id.hashCode: 17, then 37*result + the
// String.hashCode of each field.
func idHash(id proto.ID) int32 {
	result := int32(17)
	result = 37*result + javaStringHash(id.Scheme)
	result = 37*result + javaStringHash(id.ID)
	return result
}

// spread is ConcurrentHashMap.spread.
func spread(h int32) int32 {
	return (h ^ int32(uint32(h)>>16)) & authHashBitsNonSign
}

// Add inserts id unless present and reports whether it was added. A set
// holds at most MaxAuthIDs identities (Java has no bound); Add refuses more.
func (a *AuthInfo) Add(id proto.ID) bool {
	if a.bins == nil {
		a.bins = make([][]authEntry, authInitialBins)
		a.sizeControl = authInitialBins - authInitialBins/4
	}
	h := spread(idHash(id))
	index := int(h) & (len(a.bins) - 1)
	existing := len(a.bins[index])
	for _, e := range a.bins[index] {
		if e.hash == h && e.id == id {
			return false
		}
	}
	if a.size >= MaxAuthIDs {
		return false
	}
	a.bins[index] = append(a.bins[index], authEntry{hash: h, id: id})
	if existing >= authTreeifyCount && len(a.bins) < authMinTreeifyBins {
		a.presize(len(a.bins) << 1)
	}
	a.size++
	for a.size >= a.sizeControl && len(a.bins) < authMaxBins {
		a.transfer()
	}
	return true
}

// Remove deletes id and reports whether it was present.
func (a *AuthInfo) Remove(id proto.ID) bool {
	if a.bins == nil {
		return false
	}
	index := int(spread(idHash(id))) & (len(a.bins) - 1)
	for i, e := range a.bins[index] {
		if e.id == id {
			a.bins[index] = append(a.bins[index][:i:i], a.bins[index][i+1:]...)
			a.size--
			return true
		}
	}
	return false
}

// Len returns the number of identities.
func (a *AuthInfo) Len() int { return a.size }

// IDs returns the identities in Java's iteration order, as a new slice.
func (a *AuthInfo) IDs() []proto.ID {
	out := make([]proto.ID, 0, a.size)
	for _, bin := range a.bins {
		for _, e := range bin {
			out = append(out, e.id)
		}
	}
	return out
}

// presize is ConcurrentHashMap.tryPresize(size) on an initialised table:
// double until the size control reaches tableSizeFor(1.5*size + 1).
func (a *AuthInfo) presize(size int) {
	target := tableSizeFor(size + size>>1 + 1)
	for target > a.sizeControl && len(a.bins) < authMaxBins {
		a.transfer()
	}
}

func tableSizeFor(c int) int {
	n := 1
	for n < c && n < authMaxBins {
		n <<= 1
	}
	return n
}

// transfer doubles the table as ConcurrentHashMap.transfer does: each bucket
// splits on the new hash bit; the longest tail whose entries share that bit
// moves as is, and the entries before it are pushed in front one by one,
// which reverses them.
func (a *AuthInfo) transfer() {
	n := len(a.bins)
	next := make([][]authEntry, 2*n)
	for i, bin := range a.bins {
		if len(bin) == 0 {
			continue
		}
		lastRun := len(bin) - 1
		for lastRun > 0 && bin[lastRun-1].hash&int32(n) == bin[len(bin)-1].hash&int32(n) {
			lastRun--
		}
		var low, high []authEntry
		if bin[lastRun].hash&int32(n) == 0 {
			low = append(low, bin[lastRun:]...)
		} else {
			high = append(high, bin[lastRun:]...)
		}
		for _, e := range bin[:lastRun] {
			if e.hash&int32(n) == 0 {
				low = append([]authEntry{e}, low...)
			} else {
				high = append([]authEntry{e}, high...)
			}
		}
		next[i], next[i+n] = low, high
	}
	a.bins = next
	a.sizeControl = (n << 1) - (n >> 1)
}
