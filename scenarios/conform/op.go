package conform

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// OpKind names an operation of the format. The values are the strings of the
// "op" field.
type OpKind string

// The operations of the format. OpCheck exists only inside a multi.
const (
	OpCreate   OpKind = "create"
	OpDelete   OpKind = "delete"
	OpExists   OpKind = "exists"
	OpGet      OpKind = "get"
	OpSet      OpKind = "set"
	OpChildren OpKind = "children"
	OpMulti    OpKind = "multi"
	OpSync     OpKind = "sync"
	OpGetACL   OpKind = "getacl"
	OpSetACL   OpKind = "setacl"
	OpAddAuth  OpKind = "addauth"
	OpClose    OpKind = "close"
	OpExpire   OpKind = "expire"
	OpCheck    OpKind = "check"
)

// TopLevelOps lists, in documentation order, the operations allowed on a line.
var TopLevelOps = []OpKind{
	OpCreate, OpDelete, OpExists, OpGet, OpSet, OpChildren, OpMulti,
	OpSync, OpGetACL, OpSetACL, OpAddAuth, OpClose, OpExpire,
}

// MultiOps lists the operations allowed inside a multi.
var MultiOps = []OpKind{OpCreate, OpDelete, OpSet, OpCheck}

// DefaultSessionTimeoutMs is the session timeout a session asks for when the
// op that opens it carries no timeout_ms. Servers clamp the requested value
// to [2, 20] ticks, so the negotiated timeout depends on the server's
// tickTime; no result ever shows it.
const DefaultSessionTimeoutMs = 4000

// MaxSessionTimeoutMs bounds timeout_ms so that a typo cannot make a run
// wait for hours.
const MaxSessionTimeoutMs = 60_000

// MaxDataBytes bounds the payload of one create or set. It lies a little
// above the server's default jute.maxbuffer (1 MiB - 1 byte) so that cases
// can step over that limit, and below go-zookeeper's fixed 1.5 MiB send
// buffer, whose overflow would be a purely local client failure.
const MaxDataBytes = 1<<20 + 64<<10

// Perms is a ZooKeeper permission bit set with the server's bit values. In
// JSON it is a string of letters from "cdrwa".
type Perms int32

// The ZooKeeper permission bits (ZooDefs.Perms).
const (
	PermRead   Perms = 1
	PermWrite  Perms = 2
	PermCreate Perms = 4
	PermDelete Perms = 8
	PermAdmin  Perms = 16
	PermAll    Perms = 31
)

// permLetters is the canonical letter order of Perms.String: the order the
// ZooKeeper documentation and zkCli use.
var permLetters = []struct {
	letter byte
	perm   Perms
}{{'c', PermCreate}, {'d', PermDelete}, {'r', PermRead}, {'w', PermWrite}, {'a', PermAdmin}}

// String renders the permissions as letters in the order c, d, r, w, a. Bits
// outside PermAll, which no server produces, are appended as "+0x..".
func (p Perms) String() string {
	var b strings.Builder
	for _, l := range permLetters {
		if p&l.perm != 0 {
			b.WriteByte(l.letter)
		}
	}
	if extra := p &^ PermAll; extra != 0 {
		fmt.Fprintf(&b, "+0x%x", int32(extra))
	}
	return b.String()
}

// ParsePerms parses a string of permission letters. Every letter must be one
// of c, d, r, w, a and appear at most once; the empty string means no
// permission at all, which the server accepts.
func ParsePerms(s string) (Perms, error) {
	var p Perms
	for i := 0; i < len(s); i++ {
		found := false
		for _, l := range permLetters {
			if s[i] != l.letter {
				continue
			}
			if p&l.perm != 0 {
				return 0, fmt.Errorf("permission letter %q repeated in %q", s[i], s)
			}
			p |= l.perm
			found = true
		}
		if !found {
			return 0, fmt.Errorf("unknown permission letter %q in %q (want letters from cdrwa)", s[i], s)
		}
	}
	return p, nil
}

// MarshalJSON renders the permissions as a letter string.
func (p Perms) MarshalJSON() ([]byte, error) {
	return json.Marshal(p.String())
}

// UnmarshalJSON accepts a letter string, as ParsePerms does.
func (p *Perms) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("perms must be a string of letters from cdrwa: %w", err)
	}
	parsed, err := ParsePerms(s)
	if err != nil {
		return err
	}
	*p = parsed
	return nil
}

// ACL is one access control entry: permissions granted to an identity
// (scheme, id). Schemes the server knows are world (id "anyone"), auth (id
// ignored, expanded to the session's authenticated identities), digest (id
// "user:base64(sha1(user:password))") and ip (id an address or CIDR).
type ACL struct {
	Perms  Perms  `json:"perms"`
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
}

// String renders the entry as scheme:id:perms, the zkCli form.
func (a ACL) String() string { return a.Scheme + ":" + a.ID + ":" + a.Perms.String() }

// DigestID returns the digest-scheme id that addauth with "user:password"
// authenticates as: the user, a colon, and the base64 SHA-1 of the whole
// "user:password" string (DigestAuthenticationProvider.generateDigest). Use
// it to write digest ACLs.
func DigestID(userPassword string) string {
	user, _, _ := strings.Cut(userPassword, ":")
	sum := sha1.Sum([]byte(userPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// DefaultACL is the ACL of a create without an "acl" field: everyone may do
// everything (ZooDefs.Ids.OPEN_ACL_UNSAFE).
func DefaultACL() []ACL {
	return []ACL{{Perms: PermAll, Scheme: "world", ID: "anyone"}}
}

// Flags is the creation mode of a create. The valid combinations are the
// modes ZooKeeper defines (CreateMode): none (persistent), ephemeral,
// sequential, ephemeral+sequential, container, ttl and ttl+sequential.
type Flags struct {
	Ephemeral  bool
	Sequential bool
	Container  bool
	TTL        bool
}

// The flag names of the format.
const (
	FlagEphemeral  = "ephemeral"
	FlagSequential = "sequential"
	FlagContainer  = "container"
	FlagTTL        = "ttl"
)

// Names returns the set flags in canonical order; nil when none is set.
func (f Flags) Names() []string {
	var names []string
	if f.Ephemeral {
		names = append(names, FlagEphemeral)
	}
	if f.Sequential {
		names = append(names, FlagSequential)
	}
	if f.Container {
		names = append(names, FlagContainer)
	}
	if f.TTL {
		names = append(names, FlagTTL)
	}
	return names
}

// check rejects combinations that are no ZooKeeper create mode.
func (f Flags) check() error {
	switch {
	case f.Container && (f.Ephemeral || f.Sequential || f.TTL):
		return fmt.Errorf("flag container cannot be combined with other flags")
	case f.TTL && f.Ephemeral:
		return fmt.Errorf("flags ttl and ephemeral cannot be combined")
	}
	return nil
}

// parseFlags converts the "flags" list, rejecting unknown and repeated names.
func parseFlags(names []string) (Flags, error) {
	var f Flags
	for _, name := range names {
		var target *bool
		switch name {
		case FlagEphemeral:
			target = &f.Ephemeral
		case FlagSequential:
			target = &f.Sequential
		case FlagContainer:
			target = &f.Container
		case FlagTTL:
			target = &f.TTL
		default:
			return Flags{}, fmt.Errorf("unknown flag %q (want ephemeral, sequential, container or ttl)", name)
		}
		if *target {
			return Flags{}, fmt.Errorf("flag %q repeated", name)
		}
		*target = true
	}
	return f, f.check()
}

// Op is one operation of a sequence, with defaults applied. Parse produces
// it from a JSON line; generators and tests may build it directly and check
// it with Validate. MarshalJSON writes the canonical line back.
type Op struct {
	// Line is the 1-based input line the op came from, 0 when it was built
	// in code. It only serves error messages.
	Line int
	// Session names the client session; empty inside a multi.
	Session string
	Kind    OpKind
	// Path is the znode path of every op except addauth, close, expire and
	// multi. It is sent as written, even when empty or invalid.
	Path string
	// Data is the payload of create and set, unless DataLen > 0.
	Data string
	// DataLen > 0 means a payload of DataLen bytes 'x' instead of Data.
	DataLen int
	Flags   Flags
	// TTLMs is the time to live of a ttl create.
	TTLMs int64
	// Version is the expected version of delete, set, setacl and check; -1
	// matches any.
	Version int32
	// Watch asks exists, get and children to leave a watch.
	Watch bool
	// ACL is the ACL of create and setacl. Parse gives a create without
	// "acl" DefaultACL; an explicit empty list stays empty and non-nil (the
	// server rejects it with INVALIDACL). A nil ACL on a create built in code
	// also means DefaultACL: see EffectiveACL.
	ACL []ACL
	// Scheme and Auth are the credentials of addauth.
	Scheme string
	Auth   string
	// TimeoutMs is the session timeout requested by the op that opens its
	// session; 0 means DefaultSessionTimeoutMs.
	TimeoutMs int
	// Ops are the operations of a multi.
	Ops []Op
}

// Payload returns the bytes of a create or set: Data, or DataLen bytes 'x'.
func (o Op) Payload() []byte {
	if o.DataLen > 0 {
		return []byte(strings.Repeat("x", o.DataLen))
	}
	return []byte(o.Data)
}

// EffectiveACL returns the ACL to send: for a create, nil means DefaultACL.
func (o Op) EffectiveACL() []ACL {
	if o.ACL == nil && o.Kind == OpCreate {
		return DefaultACL()
	}
	if o.ACL == nil {
		return []ACL{}
	}
	return o.ACL
}

// PayloadLen is len(o.Payload()) without building the payload.
func (o Op) PayloadLen() int {
	if o.DataLen > 0 {
		return o.DataLen
	}
	return len(o.Data)
}

// String renders the op as its canonical JSON line, for messages.
func (o Op) String() string {
	b, err := json.Marshal(o)
	if err != nil {
		return fmt.Sprintf("%s %s (unprintable: %v)", o.Kind, o.Path, err)
	}
	return string(b)
}

// where describes an op's position for error messages.
func (o Op) where(index int) string {
	if o.Line > 0 {
		return fmt.Sprintf("line %d", o.Line)
	}
	return fmt.Sprintf("op %d", index)
}

// hasPath reports whether the kind takes a path.
func (k OpKind) hasPath() bool {
	switch k {
	case OpAddAuth, OpClose, OpExpire, OpMulti:
		return false
	}
	return true
}

// hasData reports whether the kind takes a payload.
func (k OpKind) hasData() bool { return k == OpCreate || k == OpSet }

// hasVersion reports whether the kind takes an expected version.
func (k OpKind) hasVersion() bool {
	switch k {
	case OpDelete, OpSet, OpSetACL, OpCheck:
		return true
	}
	return false
}

// hasWatch reports whether the kind can leave a watch.
func (k OpKind) hasWatch() bool { return k == OpExists || k == OpGet || k == OpChildren }

// opJSON is the canonical JSON shape of an Op: only the fields that matter
// for its kind, defaults left out.
type opJSON struct {
	Session   string   `json:"session,omitempty"`
	Op        OpKind   `json:"op"`
	Path      *string  `json:"path,omitempty"`
	Data      *string  `json:"data,omitempty"`
	DataLen   int      `json:"data_len,omitempty"`
	Flags     []string `json:"flags,omitempty"`
	TTLMs     int64    `json:"ttl_ms,omitempty"`
	Version   *int32   `json:"version,omitempty"`
	Watch     bool     `json:"watch,omitempty"`
	ACL       *[]ACL   `json:"acl,omitempty"`
	Scheme    *string  `json:"scheme,omitempty"`
	Auth      *string  `json:"auth,omitempty"`
	TimeoutMs int      `json:"timeout_ms,omitempty"`
	Ops       *[]Op    `json:"ops,omitempty"`
}

// MarshalJSON writes the canonical line of the op. Parsing it yields an
// equal Op (apart from Line).
func (o Op) MarshalJSON() ([]byte, error) {
	w := opJSON{Session: o.Session, Op: o.Kind, Flags: o.Flags.Names(), TimeoutMs: o.TimeoutMs}
	if o.Kind.hasPath() {
		w.Path = &o.Path
	}
	if o.Kind.hasData() {
		if o.DataLen > 0 {
			w.DataLen = o.DataLen
		} else if o.Data != "" {
			w.Data = &o.Data
		}
	}
	if o.Flags.TTL {
		w.TTLMs = o.TTLMs
	}
	if o.Kind.hasVersion() && o.Version != -1 {
		w.Version = &o.Version
	}
	w.Watch = o.Watch
	if o.Kind == OpSetACL || (o.Kind == OpCreate && o.ACL != nil && !equalACLs(o.ACL, DefaultACL())) {
		acl := o.ACL
		if acl == nil {
			acl = []ACL{}
		}
		w.ACL = &acl
	}
	if o.Kind == OpAddAuth {
		w.Scheme, w.Auth = &o.Scheme, &o.Auth
	}
	if o.Kind == OpMulti {
		ops := o.Ops
		if ops == nil {
			ops = []Op{}
		}
		w.Ops = &ops
	}
	return json.Marshal(w)
}

// equalACLs compares two ACL lists entry by entry.
func equalACLs(a, b []ACL) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
