package datatree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

func acl(perms proto.Perm, scheme, id string) proto.ACL {
	return proto.ACL{Perms: perms, ID: proto.ID{Scheme: scheme, ID: id}}
}

func TestCheckACL(t *testing.T) {
	local := []proto.ID{{Scheme: "ip", ID: "127.0.0.1"}}
	alice := append(local, proto.ID{Scheme: "digest", ID: DigestID("alice:secret")})
	cases := []struct {
		name string
		acl  []proto.ACL
		perm proto.Perm
		auth []proto.ID
		ok   bool
	}{
		{"empty ACL allows all", nil, proto.PermAdmin, nil, true},
		{"world anyone", []proto.ACL{acl(proto.PermRead, "world", "anyone")}, proto.PermRead, nil, true},
		{"missing permission", []proto.ACL{acl(proto.PermRead, "world", "anyone")}, proto.PermWrite, nil, false},
		{"world with another id", []proto.ACL{acl(proto.PermAll, "world", "everyone")}, proto.PermRead, nil, false},
		{"super", []proto.ACL{acl(proto.PermRead, "digest", "x:y")}, proto.PermAdmin, []proto.ID{{Scheme: "super"}}, true},
		{"digest match", []proto.ACL{acl(proto.PermAll, "digest", DigestID("alice:secret"))}, proto.PermDelete, alice, true},
		{"digest mismatch", []proto.ACL{acl(proto.PermAll, "digest", DigestID("alice:wrong"))}, proto.PermDelete, alice, false},
		{"ip exact", []proto.ACL{acl(proto.PermRead, "ip", "127.0.0.1")}, proto.PermRead, local, true},
		{"ip /8", []proto.ACL{acl(proto.PermRead, "ip", "127.0.0.0/8")}, proto.PermRead, local, true},
		{"ip /32 other", []proto.ACL{acl(proto.PermRead, "ip", "127.0.0.2/32")}, proto.PermRead, local, false},
		{"ip /31", []proto.ACL{acl(proto.PermRead, "ip", "127.0.0.0/31")}, proto.PermRead, local, true},
		{"ip /0 matches all", []proto.ACL{acl(proto.PermRead, "ip", "10.0.0.0/0")}, proto.PermRead, local, true},
		{"ip bad mask", []proto.ACL{acl(proto.PermRead, "ip", "127.0.0.1/33")}, proto.PermRead, local, false},
		{"ip lenient parse", []proto.ACL{acl(proto.PermRead, "ip", "+127.00.0.1")}, proto.PermRead, local, true},
		{"ip v6 never matches", []proto.ACL{acl(proto.PermRead, "ip", "::1")}, proto.PermRead, []proto.ID{{Scheme: "ip", ID: "::1"}}, false},
		{"unknown scheme", []proto.ACL{acl(proto.PermRead, "x509", "CN=a")}, proto.PermRead, []proto.ID{{Scheme: "x509", ID: "CN=a"}}, false},
	}
	for _, c := range cases {
		err := CheckACL(c.acl, c.perm, c.auth)
		if c.ok {
			assert.NoError(t, err, c.name)
		} else {
			assert.Equal(t, proto.NoAuth, err, c.name)
		}
	}
}

func TestFixupACL(t *testing.T) {
	auth := []proto.ID{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: "bob:h1"}, {Scheme: "super", ID: ""}, {Scheme: "digest", ID: "carol:h2"}}
	got, err := FixupACL(auth, []proto.ACL{acl(proto.PermAll, "auth", "ignored"), acl(proto.PermRead, "world", "anyone"), acl(proto.PermRead, "world", "anyone")})
	require.NoError(t, err)
	assert.Equal(t, []proto.ACL{acl(proto.PermAll, "digest", "bob:h1"), acl(proto.PermAll, "digest", "carol:h2"), acl(proto.PermRead, "world", "anyone")}, got,
		"auth expands to the authenticated ids in order; duplicates go first")
	invalid := [][]proto.ACL{
		nil, {},
		{acl(proto.PermAll, "auth", "")},
		{acl(proto.PermAll, "world", "everyone")},
		{acl(proto.PermAll, "digest", "nocolon")},
		{acl(proto.PermAll, "digest", "user:")},
		{acl(proto.PermAll, "digest", "a:b:c")},
		{acl(proto.PermAll, "ip", "1.2.3")},
		{acl(proto.PermAll, "ip", "1.2.3.4/")},
		{acl(proto.PermAll, "ip", "1.2.3.256")},
		{acl(proto.PermAll, "super", "x")},
	}
	for _, list := range invalid {
		_, err := FixupACL([]proto.ID{{Scheme: "ip", ID: "127.0.0.1"}}, list)
		assert.Equal(t, proto.InvalidACL, err, "%v", list)
	}
	for _, valid := range []proto.ACL{acl(proto.PermAll, "digest", "a:b:"), acl(proto.PermAll, "digest", ":b"), acl(proto.PermAll, "ip", "10.0.0.0/8")} {
		_, err := FixupACL(nil, []proto.ACL{valid})
		assert.NoError(t, err, "%v", valid)
	}
}

func TestDigestIDAndAuthenticate(t *testing.T) {
	// Values the real server produced in the acl golden.
	assert.Equal(t, "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=", DigestID("alice:secret"))
	assert.Equal(t, "bob:fyVmFCwVbTJYrznoSu1koqYEYF0=", DigestID("bob:secret"))
	id, err := Authenticate("digest", []byte("carol:pw"), "127.0.0.1")
	require.NoError(t, err)
	assert.Equal(t, proto.ID{Scheme: "digest", ID: "carol:RffyCdXXV1Js0ywLAoP5/l25yKs="}, id)
	id, err = Authenticate("ip", []byte("10.9.9.9"), "127.0.0.1")
	require.NoError(t, err)
	assert.Equal(t, proto.ID{Scheme: "ip", ID: "127.0.0.1"}, id, "the ip provider ignores the credentials")
	_, err = Authenticate("nosuch", nil, "127.0.0.1")
	assert.Equal(t, proto.AuthFailed, err)
	id, err = Authenticate("digest", []byte{'u', ':', 0xff}, "")
	require.NoError(t, err)
	assert.Equal(t, DigestID("u:\uFFFD"), id.ID, "bytes decode as Java's new String does")
}

func TestAuthInfoOrderMatchesTheGolden(t *testing.T) {
	var a AuthInfo
	assert.True(t, a.Add(proto.ID{Scheme: "ip", ID: "127.0.0.1"}))
	assert.True(t, a.Add(proto.ID{Scheme: "digest", ID: DigestID("alice:wrong")}))
	assert.True(t, a.Add(proto.ID{Scheme: "digest", ID: DigestID("alice:secret")}))
	assert.False(t, a.Add(proto.ID{Scheme: "ip", ID: "127.0.0.1"}))
	got, err := FixupACL(a.IDs(), []proto.ACL{acl(proto.PermAll, "auth", "")})
	require.NoError(t, err)
	// The real server stored the second password's id first (acl golden, op 89).
	assert.Equal(t, []string{"alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=", "alice:9ussi3jBkbd4no1raUvxHSkUEN8="}, []string{got[0].ID.ID, got[1].ID.ID})
	assert.True(t, a.Remove(proto.ID{Scheme: "ip", ID: "127.0.0.1"}))
	assert.False(t, a.Remove(proto.ID{Scheme: "ip", ID: "127.0.0.1"}))
	assert.Equal(t, 2, a.Len())
}

func TestJavaParsing(t *testing.T) {
	for text, want := range map[string]int64{"0": 0, "+5": 5, "-0": 0, "0012": 12, "2147483647": 2147483647, "-2147483648": -2147483648, "\u0663": 3, "\uff11\uff12": 12} {
		got, ok := parseJavaInteger(text, 32)
		assert.True(t, ok, text)
		assert.Equal(t, want, got, text)
	}
	for _, text := range []string{"", "+", "-", "2147483648", "-2147483649", " 1", "1.0", "0x10", "\U0001D7CE"} {
		_, ok := parseJavaInteger(text, 32)
		assert.False(t, ok, text)
	}
	got, ok := parseJavaInteger("-9223372036854775808", 64)
	assert.True(t, ok)
	assert.Equal(t, int64(-9223372036854775808), got)
	_, ok = parseJavaInteger("9223372036854775808", 64)
	assert.False(t, ok)
	assert.Equal(t, []string{"a", "", "b"}, javaSplit("a::b::", ":"))
	assert.Equal(t, []string{""}, javaSplit("", ":"))
	assert.Empty(t, javaSplit("::", ":"))
	assert.Equal(t, int32(0), javaStringHash(""))
	assert.Equal(t, int32(99162322), javaStringHash("hello"))
	assert.Equal(t, int32(31*0xd83d+0xde00), javaStringHash("\U0001F600"), "a supplementary character hashes as its two surrogates")
	assert.Less(t, javaCompare("\U0001F600", "\uE000"), 0, "surrogates sort before U+E000 in Java")
}

func TestStatsTrackParsing(t *testing.T) {
	s, err := parseStatsTrack([]byte("count=4,bytes=14=;countHardLimit=5;byteHardLimit=-1"))
	require.NoError(t, err)
	assert.Equal(t, "count=4,bytes=14=;byteHardLimit=-1;countHardLimit=5", s.String())
	s, err = parseStatsTrack([]byte(",,,"))
	require.NoError(t, err)
	assert.Equal(t, "count=-1,bytes=-1", s.String(), "missing keys read as -1")
	s, err = parseStatsTrack([]byte("count==5"))
	require.NoError(t, err)
	assert.Equal(t, int64(-1), s.get("count"), "an empty value between two '=' is -1")
	for _, bad := range []string{"count=", ",count=1", "count=x", "count"} {
		_, err := parseStatsTrack([]byte(bad))
		assert.ErrorIs(t, err, errJavaRuntime, bad)
	}
	trie := newPathTrie()
	require.NoError(t, trie.addPath("/a/b"))
	require.NoError(t, trie.addPath("/a"))
	assert.Equal(t, "/a/b", trie.findMaxPrefix("/a/b/c"))
	assert.Equal(t, "/a", trie.findMaxPrefix("/a/x"))
	assert.Equal(t, "/", trie.findMaxPrefix("/z"))
	assert.Equal(t, "/a/b", trie.findMaxPrefix("/a/ /b/c"), "blank segments are skipped")
	require.NoError(t, trie.deletePath("/a"))
	assert.Equal(t, "/", trie.findMaxPrefix("/a/x"))
	assert.Equal(t, "/a/b", trie.findMaxPrefix("/a/b"))
	assert.ErrorIs(t, trie.addPath(""), errJavaRuntime)
	assert.ErrorIs(t, trie.deletePath("/"), errJavaRuntime)
}
