package zab

import (
	"slices"
)

// txn is a transaction's identity: its zxid and the hash of its content (zabmodel.TxnHash).
type txn struct {
	zxid int64
	hash uint64
}

// Sequences of txns kept by the checker (logs, applied histories, snapshot contents) are sorted by
// strictly increasing zxid: the handlers refuse to record anything that would break the order, and
// report it instead. Applied histories and snapshot contents are shared between owners without
// copying (a SNAP copies the leader's history, a snapshot covers a prefix of the applied history),
// which is safe because nothing ever writes below the length of a slice it shares: histories only
// grow by append, a shared slice is handed out with its capacity clipped to its length, and a
// reset replaces the slice instead of reusing it.

// searchZxid returns the index of the first element of a sorted sequence whose zxid is at least
// zxid, and whether that element has exactly this zxid.
func searchZxid(sequence []txn, zxid int64) (int, bool) {
	// Most queries are about the newest transactions, at the end: answer those without a search.
	n := len(sequence)
	if n == 0 || sequence[n-1].zxid < zxid {
		return n, false
	} else if sequence[n-1].zxid == zxid {
		return n - 1, true
	}
	// An epoch's zxids are consecutive, so a zxid of the last epoch is usually as many places
	// before the end as it is below the last zxid.
	if back := sequence[n-1].zxid - zxid; back < int64(n) {
		if i := n - 1 - int(back); sequence[i].zxid == zxid {
			return i, true
		}
	}
	return slices.BinarySearchFunc(sequence, zxid, func(t txn, target int64) int {
		switch {
		case t.zxid < target:
			return -1
		case t.zxid > target:
			return 1
		}
		return 0
	})
}

// countUpTo returns how many elements of a sorted sequence have a zxid at most zxid.
func countUpTo(sequence []txn, zxid int64) int {
	i, found := searchZxid(sequence, zxid)
	if found {
		return i + 1
	}
	return i
}

// contains reports whether a sorted sequence holds t exactly (same zxid and hash).
func contains(sequence []txn, t txn) bool {
	i, found := searchZxid(sequence, t.zxid)
	return found && sequence[i].hash == t.hash
}

// clip returns a prefix that can be shared: appending to it always copies.
func clip(sequence []txn, length int) []txn { return sequence[:length:length] }

// historyView is a server's history without copying it: its applied history followed by the
// records of its txn log with a higher zxid than the last applied one.
type historyView struct {
	applied []txn
	tail    []txn
}

func (h historyView) length() int { return len(h.applied) + len(h.tail) }

func (h historyView) at(i int) txn {
	if i < len(h.applied) {
		return h.applied[i]
	}
	return h.tail[i-len(h.applied)]
}

// through returns the prefix of the history whose zxids are at most zxid.
func (h historyView) through(zxid int64) historyView {
	return historyView{applied: h.applied[:countUpTo(h.applied, zxid)], tail: h.tail[:countUpTo(h.tail, zxid)]}
}

// contains reports whether the history holds t exactly.
func (h historyView) contains(t txn) bool { return contains(h.applied, t) || contains(h.tail, t) }

// prefixMismatch compares h with other: it returns -1 if h is a prefix of other, else the index of
// the first position where h has a transaction that other does not have there. It compares the
// two views segment by segment (each is two slices) rather than position by position.
func (h historyView) prefixMismatch(other historyView) int {
	mine := [2][]txn{h.applied, h.tail}
	theirs := [2][]txn{other.applied, other.tail}
	done := 0
	for {
		for len(mine[0]) == 0 && len(mine[1]) > 0 {
			mine[0], mine[1] = mine[1], nil
		}
		for len(theirs[0]) == 0 && len(theirs[1]) > 0 {
			theirs[0], theirs[1] = theirs[1], nil
		}
		switch {
		case len(mine[0]) == 0:
			return -1
		case len(theirs[0]) == 0:
			return done
		}
		n := min(len(mine[0]), len(theirs[0]))
		if k := commonPrefix(mine[0][:n], theirs[0][:n]); k < n {
			return done + k
		}
		done += n
		mine[0], theirs[0] = mine[0][n:], theirs[0][n:]
	}
}

// commonPrefix returns how many leading transactions a and b share.
func commonPrefix(a, b []txn) int {
	n := min(len(a), len(b))
	if n > 0 && &a[0] == &b[0] {
		// Shared storage: nothing ever writes below the length of a shared slice, so the
		// overlap is equal without comparing it.
		return n
	}
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// sortedCursor answers "does this sorted sequence hold t?" for queries in increasing zxid order in
// amortised O(1), by walking forward once.
type sortedCursor struct {
	sequence []txn
	next     int
}

func (c *sortedCursor) holds(t txn) bool {
	for c.next < len(c.sequence) && c.sequence[c.next].zxid < t.zxid {
		c.next++
	}
	return c.next < len(c.sequence) && c.sequence[c.next] == t
}
