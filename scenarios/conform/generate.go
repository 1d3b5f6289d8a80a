package conform

import (
	"fmt"

	"pgregory.net/rapid"
)

// GenOptions shapes random sequences.
type GenOptions struct {
	// MinOps and MaxOps bound the sequence length.
	MinOps, MaxOps int
	// Sessions is the number of sessions, named s1, s2, ...
	Sessions int
	// Expire allows expire ops. Each one costs a session timeout of wall
	// time against a real server, so SessionTimeoutMs should be small.
	Expire bool
	// SessionTimeoutMs, when not 0, is set as timeout_ms on every op that
	// opens a session.
	SessionTimeoutMs int
}

// DefaultGenOptions are the options of Sequence: 10 to 40 ops over three
// sessions, no expire.
func DefaultGenOptions() GenOptions {
	return GenOptions{MinOps: 10, MaxOps: 40, Sessions: 3}
}

// Sequence generates random valid sequences with DefaultGenOptions.
func Sequence() *rapid.Generator[[]Op] { return SequenceWith(DefaultGenOptions()) }

// The path alphabet of random sequences: few enough names that creates
// collide (NODEEXISTS), parents go missing (NONODE), deletes meet children
// (NOTEMPTY) and watches see changes. Sequential children get names from
// the parent's cversion, so the generator guesses a few likely ones.
var (
	genPaths         = []string{"/a", "/a/b", "/a/c", "/a/b/e", "/c", "/c/d"}
	genSequentialDir = []string{"/a/s-", "/c/s-"}
	genDatas         = []string{"", "x", "y", "hello"}
	genUsers         = []string{"alice:secret", "bob:secret"}
	// genACLs are the ACLs random creates and setacls use: open, read-only,
	// no read, digest-only (ids are sha1 digests of genUsers), "auth"
	// (INVALIDACL without addauth) and empty (always INVALIDACL).
	genACLs = [][]ACL{
		DefaultACL(),
		{{Perms: PermRead, Scheme: "world", ID: "anyone"}},
		{{Perms: PermAll &^ PermRead, Scheme: "world", ID: "anyone"}},
		{{Perms: PermAll, Scheme: "digest", ID: DigestID("alice:secret")}},
		{{Perms: PermAll, Scheme: "auth", ID: ""}},
		{},
	}
)

// SequenceWith generates random valid sequences whose outcome on a
// ZooKeeper server does not depend on timing. It leaves out what could
// race: TTL and container expiry (never reached within a run, see the
// package documentation), addauth with an unknown scheme and payloads over
// the size limit (both make the server drop the connection, and a client
// that reconnects re-registers its watches concurrently with later ops),
// and, unless opts.Expire, expire.
func SequenceWith(opts GenOptions) *rapid.Generator[[]Op] {
	return rapid.Custom(func(t *rapid.T) []Op {
		length := rapid.IntRange(opts.MinOps, opts.MaxOps).Draw(t, "length")
		open := map[string]bool{}
		ops := make([]Op, 0, length)
		for len(ops) < length {
			op := drawOp(t, opts)
			if !open[op.Session] {
				op.TimeoutMs = opts.SessionTimeoutMs
			}
			open[op.Session] = op.Kind != OpClose && op.Kind != OpExpire
			ops = append(ops, op)
		}
		return ops
	})
}

// drawOp draws one top-level op; the weights favour writes and watches.
func drawOp(t *rapid.T, opts GenOptions) Op {
	sessions := max(opts.Sessions, 1)
	session := fmt.Sprintf("s%d", rapid.IntRange(1, sessions).Draw(t, "session"))
	weight := rapid.IntRange(0, 99).Draw(t, "kind")
	var op Op
	switch {
	case weight < 25:
		op = drawCreate(t, false)
	case weight < 35:
		op = Op{Kind: OpDelete, Path: drawPath(t), Version: drawVersion(t)}
	case weight < 47:
		op = Op{Kind: OpSet, Path: drawPath(t), Data: drawData(t), Version: drawVersion(t)}
	case weight < 55:
		op = Op{Kind: OpExists, Path: drawPath(t), Watch: rapid.IntRange(0, 9).Draw(t, "watch") < 7}
	case weight < 63:
		op = Op{Kind: OpGet, Path: drawPath(t), Watch: rapid.IntRange(0, 9).Draw(t, "watch") < 7}
	case weight < 71:
		op = Op{Kind: OpChildren, Path: drawParent(t), Watch: rapid.IntRange(0, 9).Draw(t, "watch") < 7}
	case weight < 79:
		op = drawMulti(t)
	case weight < 82:
		op = Op{Kind: OpGetACL, Path: drawPath(t)}
	case weight < 86:
		op = Op{Kind: OpSetACL, Path: drawPath(t), ACL: drawACL(t), Version: drawVersion(t)}
	case weight < 89:
		op = Op{Kind: OpAddAuth, Scheme: "digest", Auth: rapid.SampledFrom(genUsers).Draw(t, "user")}
	case weight < 91:
		op = Op{Kind: OpSync, Path: drawPath(t)}
	case weight < 95 || !opts.Expire:
		op = Op{Kind: OpClose}
	default:
		op = Op{Kind: OpExpire}
	}
	op.Session = session
	return op
}

func drawCreate(t *rapid.T, inMulti bool) Op {
	op := Op{Kind: OpCreate, Data: drawData(t), ACL: DefaultACL()}
	mode := rapid.IntRange(0, 99).Draw(t, "mode")
	switch {
	case mode < 45:
	case mode < 65:
		op.Flags.Ephemeral = true
	case mode < 80:
		op.Flags.Sequential = true
	case mode < 90:
		op.Flags.Ephemeral, op.Flags.Sequential = true, true
	case mode < 96 || inMulti:
		op.Flags.Container = !inMulti
	default:
		op.Flags.TTL, op.TTLMs = true, int64(rapid.IntRange(0, 2).Draw(t, "ttl"))*1000
	}
	if op.Flags.Sequential {
		op.Path = rapid.SampledFrom(genSequentialDir).Draw(t, "sequential")
	} else {
		op.Path = drawPath(t)
	}
	if rapid.IntRange(0, 9).Draw(t, "custom acl") == 0 {
		op.ACL = drawACL(t)
	}
	return op
}

func drawMulti(t *rapid.T) Op {
	count := rapid.IntRange(0, 3).Draw(t, "multi length")
	op := Op{Kind: OpMulti, Ops: make([]Op, 0, count)}
	for range count {
		var sub Op
		switch rapid.IntRange(0, 3).Draw(t, "multi kind") {
		case 0:
			sub = drawCreate(t, true)
		case 1:
			sub = Op{Kind: OpDelete, Path: drawPath(t), Version: drawVersion(t)}
		case 2:
			sub = Op{Kind: OpSet, Path: drawPath(t), Data: drawData(t), Version: drawVersion(t)}
		default:
			sub = Op{Kind: OpCheck, Path: drawPath(t), Version: drawVersion(t)}
		}
		op.Ops = append(op.Ops, sub)
	}
	return op
}

// drawPath mostly picks a fixed path, sometimes a likely sequential name.
func drawPath(t *rapid.T) string {
	if rapid.IntRange(0, 9).Draw(t, "sequential name") == 0 {
		dir := rapid.SampledFrom(genSequentialDir).Draw(t, "dir")
		return fmt.Sprintf("%s%010d", dir, rapid.IntRange(0, 5).Draw(t, "counter"))
	}
	return rapid.SampledFrom(genPaths).Draw(t, "path")
}

// drawParent picks a path that may have children, including the root.
func drawParent(t *rapid.T) string {
	return rapid.SampledFrom([]string{"/", "/a", "/a/b", "/c"}).Draw(t, "parent")
}

func drawVersion(t *rapid.T) int32 {
	if rapid.Bool().Draw(t, "any version") {
		return -1
	}
	return int32(rapid.IntRange(0, 2).Draw(t, "version"))
}

func drawData(t *rapid.T) string { return rapid.SampledFrom(genDatas).Draw(t, "data") }

func drawACL(t *rapid.T) []ACL {
	acl := rapid.SampledFrom(genACLs).Draw(t, "acl")
	return append([]ACL{}, acl...)
}
