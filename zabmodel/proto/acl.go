package proto

import (
	"fmt"
	"strings"
)

// Perm is a set of ACL permissions, ZooDefs.Perms in Java.
type Perm int32

// The permission bits.
const (
	PermRead   Perm = 1 << 0
	PermWrite  Perm = 1 << 1
	PermCreate Perm = 1 << 2
	PermDelete Perm = 1 << 3
	PermAdmin  Perm = 1 << 4
	PermAll         = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// permLetters is in the order ZKUtil.getPermString prints, "cdrwa".
var permLetters = [...]struct {
	perm   Perm
	letter byte
}{
	{PermCreate, 'c'},
	{PermDelete, 'd'},
	{PermRead, 'r'},
	{PermWrite, 'w'},
	{PermAdmin, 'a'},
}

// String returns the permissions as ZKUtil.getPermString does, such as "cdrwa"
// or "rw"; no permissions print as "". Bits outside PermAll, which Java
// ignores, are appended in hex so that nothing is hidden from a trace.
func (p Perm) String() string {
	var b strings.Builder
	for _, l := range permLetters {
		if p&l.perm != 0 {
			b.WriteByte(l.letter)
		}
	}
	if extra := p &^ PermAll; extra != 0 {
		fmt.Fprintf(&b, "+0x%x", uint32(extra))
	}
	return b.String()
}

// ParsePerms parses permissions in the letters of Perm.String, in any order
// and with repeats, as the CLI's AclParser does. Unlike AclParser, which prints
// a warning and skips an unknown letter, it returns an error.
func ParsePerms(s string) (Perm, error) {
	var p Perm
	for i := 0; i < len(s); i++ {
		found := false
		for _, l := range permLetters {
			if s[i] == l.letter {
				p |= l.perm
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("proto: unknown permission %q at %d in %q", s[i], i, s)
		}
	}
	return p, nil
}

// ID is an authentication identity, the jute record org.apache.zookeeper.data.Id:
// a scheme (world, auth, digest, ip, ...) and an identity within it.
type ID struct {
	Scheme string
	ID     string
}

func (r *ID) fields(c codec) {
	c.ustring(&r.Scheme)
	c.ustring(&r.ID)
}

// Encode implements Record.
func (r *ID) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *ID) Decode(d *Decoder) { r.fields(decoding(d)) }

// String returns "scheme:id".
func (r ID) String() string { return r.Scheme + ":" + r.ID }

// ACL grants permissions to an identity, the jute record
// org.apache.zookeeper.data.ACL.
type ACL struct {
	Perms Perm
	ID    ID
}

func (r *ACL) fields(c codec) {
	intField(c, &r.Perms)
	c.record(&r.ID)
}

// Encode implements Record.
func (r *ACL) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *ACL) Decode(d *Decoder) { r.fields(decoding(d)) }

// String returns "scheme:id:perms", the form of ZKUtil.aclToString and of the
// CLI's ACL arguments.
func (r ACL) String() string { return r.ID.String() + ":" + r.Perms.String() }

// ParseACL parses one "scheme:id:perms" entry the way the CLI's AclParser
// splits it: the scheme ends at the first colon and the permissions start
// after the last, so the id may itself contain colons (as digest ids do).
func ParseACL(s string) (ACL, error) {
	first, last := strings.IndexByte(s, ':'), strings.LastIndexByte(s, ':')
	if first < 0 || first == last {
		return ACL{}, fmt.Errorf("proto: ACL %q does not have the form scheme:id:perm", s)
	}
	perms, err := ParsePerms(s[last+1:])
	if err != nil {
		return ACL{}, fmt.Errorf("proto: ACL %q: %w", s, err)
	}
	return ACL{Perms: perms, ID: ID{Scheme: s[:first], ID: s[first+1 : last]}}, nil
}

// The identities of ZooDefs.Ids.
var (
	// AnyoneID is world:anyone, which every client has.
	AnyoneID = ID{Scheme: "world", ID: "anyone"}
	// AuthIDs is auth:"", usable only when setting ACLs: the server replaces
	// it with every identity the client has authenticated as.
	AuthIDs = ID{Scheme: "auth", ID: ""}
)

// The ACL lists of ZooDefs.Ids. They are shared: treat them as read-only and
// copy them (slices.Clone) before changing one. Their capacity equals their
// length, so append copies rather than writing into them.
var (
	// OpenACLUnsafe gives everyone every permission.
	OpenACLUnsafe = []ACL{{Perms: PermAll, ID: AnyoneID}}
	// CreatorAllACL gives the creator's authenticated identities every
	// permission.
	CreatorAllACL = []ACL{{Perms: PermAll, ID: AuthIDs}}
	// ReadACLUnsafe lets everyone read.
	ReadACLUnsafe = []ACL{{Perms: PermRead, ID: AnyoneID}}
)
