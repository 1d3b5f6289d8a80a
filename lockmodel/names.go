package lockmodel

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zabsim/zabsim/sim"
)

// The node names of Curator's recipes. A protected node's name is ProtectedPrefix, a 36-character
// id, a dash, then the recipe's lock name, to which the server appends a 10-digit sequence number:
// "_c_0f3c1a52-9d4e-4b7a-8e21-5c6d7e8f9a0b-lock-0000000007".
const (
	// ProtectedPrefix starts every protected node's name (ProtectedUtils.PROTECTED_PREFIX).
	ProtectedPrefix = "_c_"
	// MutexLockName is InterProcessMutex's LOCK_NAME.
	MutexLockName = "lock-"
	// ReadLockName and WriteLockName are InterProcessReadWriteLock's names; Curator requires them to
	// have the same length.
	ReadLockName  = "__READ__"
	WriteLockName = "__WRIT__"
	// LatchLockName is LeaderLatch's LOCK_NAME.
	LatchLockName = "latch-"
	// sequenceDigits is the width of the counter a sequential create appends.
	sequenceDigits = 10
)

// newProtectedID makes a UUID of version 4, the kind UUID.randomUUID makes. Its random bits come from
// the world's Chooser, so that the run stays a function of its seed, but its last seven bytes are
// the world's Serial: Curator relies on 122 random bits never repeating, and a degenerate choice
// stream (a fuzzer's zeros) would otherwise give two clients the same ID, so that each finds the
// other's node in a protected-mode search, which cannot happen in practice.
func newProtectedID(w *sim.World) string {
	var b [16]byte
	for i := range 8 {
		b[i] = byte(w.Choose(256))
	}
	binary.BigEndian.PutUint64(b[8:], w.Serial()) // below 2^56, so byte 8 is 0 before the variant
	b[6] = b[6]&0x0f | 0x40                       // version 4
	b[8] = b[8]&0x3f | 0x80                       // the IETF variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// protectedPrefix is ProtectedUtils.getProtectedPrefix: what a protected node's name starts with.
func protectedPrefix(id string) string { return ProtectedPrefix + id + "-" }

// fixForSorting is StandardLockInternalsDriver.standardFixForSorting: the part of a node's name
// after the last occurrence of the lock name, which is the sequence number for the recipes' nodes,
// so that protected prefixes do not disturb the order.
func fixForSorting(name, lockName string) string {
	i := strings.LastIndex(name, lockName)
	if i < 0 {
		return name
	}
	return name[i+len(lockName):]
}

// sortChildren is LockInternals.getSortedChildren: the children ordered by key.
func sortChildren(children []string, key func(string) string) []string {
	sorted := slices.Clone(children)
	slices.SortStableFunc(sorted, func(a, b string) int { return strings.Compare(key(a), key(b)) })
	return sorted
}

// Sequence returns the sequence number a sequential create appended to a node's name, and whether
// the name ends in one.
func Sequence(name string) (int64, bool) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if len(name) < sequenceDigits {
		return 0, false
	}
	digits := name[len(name)-sequenceDigits:]
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 || digits[0] == '-' || digits[0] == '+' {
		return 0, false
	}
	return n, true
}

// nodeName returns the last element of a path (ZKPaths.getNodeFromPath).
func nodeName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// joinPath is ZKPaths.makePath for a parent and a child name.
func joinPath(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

// parentOf returns a path's parent.
func parentOf(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "/"
	}
	return path[:i]
}
