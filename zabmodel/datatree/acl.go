package datatree

import (
	"crypto/sha1"
	"encoding/base64"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The authentication schemes a 3.8.0 server registers by default
// (ProviderRegistry: IPAuthenticationProvider and
// DigestAuthenticationProvider). "world" and "auth" are handled by name in
// checkACL and fixupACL, and "super" is an identity the server adds, never
// a provider. No other scheme has a provider unless configured through
// zookeeper.authProvider.*, which is not modelled.
const (
	SchemeWorld  = "world"
	SchemeAuth   = "auth"
	SchemeDigest = "digest"
	SchemeIP     = "ip"
	SchemeSuper  = "super"
)

// provider is the part of a ServerAuthenticationProvider that ACL checks use.
type provider interface {
	// isAuthenticated says whether an identity of this scheme may stand in
	// for the "auth" pseudo-scheme when an ACL is set.
	isAuthenticated() bool
	// isValid says whether id may appear in an ACL.
	isValid(id string) bool
	// matches says whether a client identity satisfies an ACL identity.
	matches(id, aclExpression string) bool
}

func providerFor(scheme string) provider {
	switch scheme {
	case SchemeDigest:
		return digestProvider{}
	case SchemeIP:
		return ipProvider{}
	default:
		return nil
	}
}

// digestProvider is DigestAuthenticationProvider.
type digestProvider struct{}

func (digestProvider) isAuthenticated() bool { return true }

// isValid requires exactly two parts around ':' as Java's split counts them,
// so "user:" (one part) is invalid and "user:hash:" (two) is valid.
func (digestProvider) isValid(id string) bool { return len(javaSplit(id, ":")) == 2 }

func (digestProvider) matches(id, aclExpression string) bool { return id == aclExpression }

// ipProvider is IPAuthenticationProvider, which knows IPv4 only: an IPv6
// address never matches and is never a valid ACL id.
type ipProvider struct{}

func (ipProvider) isAuthenticated() bool { return false }

func (ipProvider) isValid(id string) bool {
	parts := javaSplitLimit(id, "/", 2)
	address := ipv4Bytes(parts[0])
	if address == nil {
		return false
	}
	if len(parts) == 2 {
		bits, ok := parseJavaInteger(parts[1], 32)
		if !ok || bits < 0 || bits > int64(len(address)*8) {
			return false
		}
	}
	return true
}

func (ipProvider) matches(id, aclExpression string) bool {
	parts := javaSplitLimit(aclExpression, "/", 2)
	aclAddress := ipv4Bytes(parts[0])
	if aclAddress == nil {
		return false
	}
	bits := int64(len(aclAddress) * 8)
	if len(parts) == 2 {
		var ok bool
		bits, ok = parseJavaInteger(parts[1], 32)
		if !ok || bits < 0 || bits > int64(len(aclAddress)*8) {
			return false
		}
	}
	maskAddress(aclAddress, int(bits))
	remote := ipv4Bytes(id)
	if remote == nil {
		return false
	}
	maskAddress(remote, int(bits))
	return slices.Equal(remote, aclAddress)
}

// ipv4Bytes is IPAuthenticationProvider.v4addr2Bytes: four dot-separated
// parts (empty parts count), each an Integer.parseInt result in [0, 255].
// Because parseInt is lenient, "+1.2.3.4" and "01.2.3.4" are valid.
func ipv4Bytes(address string) []byte {
	parts := javaSplitLimit(address, ".", -1)
	if len(parts) != 4 {
		return nil
	}
	out := make([]byte, 4)
	for i, part := range parts {
		v, ok := parseJavaInteger(part, 32)
		if !ok || v < 0 || v > 255 {
			return nil
		}
		out[i] = byte(v)
	}
	return out
}

// maskAddress keeps the first bits bits of b, as IPAuthenticationProvider.mask.
func maskAddress(b []byte, bits int) {
	start := bits / 8
	startMask := ^((1 << (8 - bits%8)) - 1)
	for ; start < len(b); start++ {
		b[start] &= byte(startMask)
		startMask = 0
	}
}

// CheckACL is ZooKeeperServer.checkACL: it returns nil if the identities in
// auth grant perm under acl, and proto.NoAuth otherwise. An empty ACL allows
// everything, a "super" identity in auth allows everything, world:anyone
// allows everyone, and a digest or ip entry allows a matching identity of its
// scheme (ip entries may be CIDR ranges such as 10.0.0.0/8). The connection's
// own address is an identity like any other, {Scheme: "ip", ID: "127.0.0.1"},
// which the server must include in auth (Java adds it when the connection is
// made). zookeeper.skipACL is not modelled.
func CheckACL(acl []proto.ACL, perm proto.Perm, auth []proto.ID) error {
	if len(acl) == 0 {
		return nil
	}
	for _, id := range auth {
		if id.Scheme == SchemeSuper {
			return nil
		}
	}
	for _, entry := range acl {
		if entry.Perms&perm == 0 {
			continue
		}
		if entry.ID.Scheme == SchemeWorld && entry.ID.ID == "anyone" {
			return nil
		}
		p := providerFor(entry.ID.Scheme)
		if p == nil {
			continue
		}
		for _, id := range auth {
			if id.Scheme == entry.ID.Scheme && p.matches(id.ID, entry.ID.ID) {
				return nil
			}
		}
	}
	return proto.NoAuth
}

// FixupACL is PrepRequestProcessor.fixupACL, which checks and expands the ACL
// of a create or setACL: duplicates are removed (first occurrence kept), an
// empty list is invalid, world:anyone passes, the "auth" pseudo-scheme is
// replaced by every identity in auth whose scheme authenticates (digest; ip
// does not), with the entry's permissions, and fails if there is none; any
// other entry must name a registered scheme (digest or ip) and an id that
// scheme considers valid. Errors are proto.InvalidACL.
func FixupACL(auth []proto.ID, acl []proto.ACL) ([]proto.ACL, error) {
	unique := removeDuplicateACLs(acl)
	if len(unique) == 0 {
		return nil, proto.InvalidACL
	}
	var out []proto.ACL
	for _, entry := range unique {
		id := entry.ID
		switch {
		case id.Scheme == SchemeWorld && id.ID == "anyone":
			out = append(out, entry)
		case id.Scheme == SchemeAuth:
			expanded := false
			for _, clientID := range auth {
				if p := providerFor(clientID.Scheme); p != nil && p.isAuthenticated() {
					expanded = true
					out = append(out, proto.ACL{Perms: entry.Perms, ID: clientID})
				}
			}
			if !expanded {
				return nil, proto.InvalidACL
			}
		default:
			p := providerFor(id.Scheme)
			if p == nil || !p.isValid(id.ID) {
				return nil, proto.InvalidACL
			}
			out = append(out, entry)
		}
	}
	return out, nil
}

func removeDuplicateACLs(acl []proto.ACL) []proto.ACL {
	out := make([]proto.ACL, 0, len(acl))
	for _, entry := range acl {
		if !slices.Contains(out, entry) {
			out = append(out, entry)
		}
	}
	return out
}

// DigestID returns the digest identity that "user:password" authenticates
// as, DigestAuthenticationProvider.generateDigest: the text up to the first
// colon, a colon, and the base64 SHA-1 of the whole string's UTF-8 bytes.
func DigestID(userPassword string) string {
	user, _, _ := strings.Cut(userPassword, ":")
	sum := sha1.Sum([]byte(userPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// Authenticate is what an auth packet (AuthPacket) adds to a connection's
// identities in a stock 3.8.0 server, handleAuthentication of the registered
// providers: for "digest" the DigestID of the credentials (decoded as Java's
// new String(bytes) does), for "ip" the connection's own address whatever the
// credentials say, and for any other scheme nothing, with proto.AuthFailed.
// (zookeeper.DigestAuthenticationProvider.superDigest is unset by default, so
// no credentials yield the "super" identity.)
func Authenticate(scheme string, credentials []byte, remoteAddress string) (proto.ID, error) {
	switch scheme {
	case SchemeDigest:
		return proto.ID{Scheme: SchemeDigest, ID: DigestID(javaDecodeUTF8(credentials))}, nil
	case SchemeIP:
		return proto.ID{Scheme: SchemeIP, ID: remoteAddress}, nil
	default:
		return proto.ID{}, proto.AuthFailed
	}
}

// maskDigestACL returns the ACL as getACL shows it to a client without ADMIN
// permission: each digest id rewritten by replaceAll(":.*", ":x"), which
// replaces every colon and the rest of its line (Java's '.' stops at line
// terminators) with ":x".
func maskDigestACL(acl []proto.ACL) []proto.ACL {
	out := make([]proto.ACL, len(acl))
	for i, entry := range acl {
		out[i] = entry
		if entry.ID.Scheme == SchemeDigest {
			out[i].ID.ID = maskColonRuns(entry.ID.ID)
		}
	}
	return out
}

func maskColonRuns(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != ':' {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(":x")
		i++
		for i < len(s) {
			r, size := decodeRuneAt(s, i)
			if isJavaLineTerminator(r) {
				break
			}
			i += size
		}
	}
	return b.String()
}

func isJavaLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029
}
