package zabmodel

import (
	"encoding/binary"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
)

// Effect boundaries: the places where a server is about to change, or has just changed, the world
// outside its memory (a quorum packet written to a socket, a txn appended, an fsync, a snapshot, an
// epoch file). At each one the server asks the scenario's boundary hook whether something happens
// to it there: the hook may crash it (the process dies between the two effects), pause it (a GC
// pause that stops it there), or reset the connection the boundary concerns. This is the harness's
// BUGGIFY (FoundationDB): faults that land exactly in the windows between two effects, which a
// fault drawn at a random instant almost never hits.
//
// The first six names are the crash points between two persistence steps that scenario scripts
// have always named; the rest are generated: before-send:TYPE and after-send:TYPE for every quorum
// packet type (SNAPSHOT is the serialized tree that follows SNAP), and before- and after- an append,
// an fsync, a snapshot (and each step of the snapshot thread's walk), each epoch file's write, a
// TRUNC's truncation of the log, the deletion of the log after a SNAP, and the deletion of
// snapshots above a truncation point.
var boundaryNames = buildBoundaryNames()

// snapshotPayload is the boundary kind of the serialized tree a leader writes after SNAP: not a
// quorum packet, but its own write on the stream.
const snapshotPayload int32 = -1

// sendBoundaries[t] holds the before-send and after-send names of packet type t (index 0 is the
// snapshot payload), made once so that asking the hook allocates nothing.
var sendBoundaries = buildSendBoundaries()

func buildSendBoundaries() [pktInformAndActivate + 1][2]string {
	var out [pktInformAndActivate + 1][2]string
	out[0] = [2]string{"before-send:SNAPSHOT", "after-send:SNAPSHOT"}
	for t, name := range packetNames { // determinism:ok fills an array indexed by t
		if t == pktCommitAndActivate || t == pktInformAndActivate {
			continue // Dynamic reconfiguration, which is not modelled, sends these.
		}
		out[t] = [2]string{"before-send:" + name, "after-send:" + name}
	}
	return out
}

func buildBoundaryNames() []string {
	names := []string{
		"epoch-file-renamed:acceptedEpoch", "epoch-file-renamed:currentEpoch",
		"newleader-appended", "newleader-before-epoch", "log-appended", "fsynced-before-ack",
		"before-append", "after-append", "before-fsync", "after-fsync", "before-snapshot", "after-snapshot",
		"snapshot-serializing",
		"before-epoch-write:acceptedEpoch", "after-epoch-write:acceptedEpoch",
		"before-epoch-write:currentEpoch", "after-epoch-write:currentEpoch",
		"before-truncate", "after-truncate", "before-log-delete", "after-log-delete",
		"before-snapshot-delete", "after-snapshot-delete",
	}
	sends := buildSendBoundaries()
	for t := range sends {
		if sends[t][0] != "" {
			names = append(names, sends[t][0], sends[t][1])
		}
	}
	return names
}

// Boundaries returns the name of every effect boundary a server asks its hook about, in a fixed
// order: the six historical crash points first, then the rest.
func Boundaries() []string { return slices.Clone(boundaryNames) }

// BoundaryHook is asked at each effect boundary of a running server: sid and point name it, and
// conn is the connection the boundary writes to (0 for a persistence step). It returns true to
// crash the server there; a pause or a connection reset it performs itself, through the world and
// the network, and returns false.
type BoundaryHook func(sid int64, point string, conn net.ConnID) bool

// CrashAt implements BoundaryDecider.
func (f BoundaryHook) CrashAt(sid int64, point string, conn net.ConnID) bool {
	return f(sid, point, conn)
}

// BoundaryDecider is a BoundaryHook that is a value with a method rather than a function, which a
// world that must be copied (package modelcheck's deep copies) can hold.
type BoundaryDecider interface {
	CrashAt(sid int64, point string, conn net.ConnID) bool
}

// SetBoundaryHook installs the scenario's hook for every effect boundary (see Boundaries).
func (e *Ensemble) SetBoundaryHook(hook BoundaryHook) {
	if hook == nil {
		e.boundaryHook = nil
		return
	}
	e.boundaryHook = hook
}

// SetBoundaryDecider is SetBoundaryHook for a decider that is a value.
func (e *Ensemble) SetBoundaryDecider(d BoundaryDecider) { e.boundaryHook = d }

// boundary asks the host about one effect boundary: a fault may end the process there, and then
// nothing after the call runs (see host.boundary).
func (p *peer) boundary(name string, conn net.ConnID) { p.h.boundary(name, conn) }

// sendBoundary returns the before-send (0) or after-send (1) name of an encoded quorum packet, or
// of the snapshot payload when kind is snapshotPayload.
func sendBoundary(kind int32, which int) string {
	if kind == snapshotPayload {
		return sendBoundaries[0][which]
	}
	if kind <= 0 || int(kind) >= len(sendBoundaries) {
		return ""
	}
	return sendBoundaries[kind][which]
}

// packetType reads the type of an encoded quorum packet: its first field, a big-endian int32.
func packetType(b []byte) int32 {
	if len(b) < 4 {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// writeCost is how long a sender thread takes to write b to its socket: a few microseconds of
// serialization and system call, plus the bytes at a gigabit per second. It spreads a burst over
// time as the Java sender thread's writes are, so that a pause stops it between two packets.
func writeCost(n int) clock.Duration {
	return 2*clock.Microsecond + clock.Duration(n)*8*clock.Nanosecond
}
