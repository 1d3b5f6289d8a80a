package proto_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// pathCases holds every case of PathUtilsTest in 3.8.0 (marked Java) and
// cases for each rule of PathUtils.validatePath, its order and its UTF-16
// indexes. The implementation was also compared with PathUtils itself on
// 100,000 random paths while it was written.
var pathCases = []struct {
	path  string
	rule  error // nil when valid
	index int
}{
	{"/this is / a valid/path", nil, 0},                     // Java
	{"", proto.ErrPathEmpty, -1},                            // Java (null has no Go counterpart)
	{"not/valid", proto.ErrPathNotAbsolute, -1},             // Java
	{"/ends/with/slash/", proto.ErrPathTrailingSlash, -1},   // Java
	{"/test\u0000", proto.ErrPathNullCharacter, 5},          // Java
	{"/double//slash", proto.ErrPathEmptySegment, 8},        // Java
	{"/single/./period", proto.ErrPathRelative, 8},          // Java
	{"/double/../period", proto.ErrPathRelative, 9},         // Java
	{"/name/with.period.", nil, 0},                          // Java
	{"/test\u0001", proto.ErrPathInvalidCharacter, 5},       // Java
	{"/test\u001F", proto.ErrPathInvalidCharacter, 5},       // Java
	{"/test\u0020", nil, 0},                                 // Java: the first allowed character
	{"/test\u007e", nil, 0},                                 // Java: the last allowed ASCII
	{"/test\u007f", proto.ErrPathInvalidCharacter, 5},       // Java
	{"/test\u009f", proto.ErrPathInvalidCharacter, 5},       // Java
	{"/test\xed\xa0\x80", proto.ErrPathInvalidCharacter, 5}, // Java \ud800, which Go cannot hold as a rune
	{"/test\uf8ff", proto.ErrPathInvalidCharacter, 5},       // Java
	{"/test\uffef", nil, 0},                                 // Java: the highest allowed character
	{"/test\ufff0", proto.ErrPathInvalidCharacter, 5},       // Java

	// The root, and the checks made before the scan, in Java's order.
	{"/", nil, 0},
	{"//", proto.ErrPathTrailingSlash, -1},
	{"/a\x00/", proto.ErrPathTrailingSlash, -1},
	{"a", proto.ErrPathNotAbsolute, -1},
	{"\x00", proto.ErrPathNotAbsolute, -1},
	{"//a", proto.ErrPathEmptySegment, 1},
	{"/\x00", proto.ErrPathNullCharacter, 1},
	{"/zookeeper/quota", nil, 0},

	// "." and ".." only as whole segments.
	{"/.", proto.ErrPathRelative, 1},
	{"/..", proto.ErrPathRelative, 2},
	{"/a/.", proto.ErrPathRelative, 3},
	{"/a/..", proto.ErrPathRelative, 4},
	{"/a/../b", proto.ErrPathRelative, 4},
	{"/./a", proto.ErrPathRelative, 1},
	{"/...", nil, 0},
	{"/.a", nil, 0},
	{"/a.", nil, 0},
	{"/..a", nil, 0},
	{"/a..", nil, 0},
	{"/a/.../b", nil, 0},

	// The character ranges, at their edges.
	{"/\u00a0", nil, 0},
	{"/\u0080", proto.ErrPathInvalidCharacter, 1},
	{"/\ud7ff", nil, 0},
	{"/\ue000", proto.ErrPathInvalidCharacter, 1},
	{"/\uf900", nil, 0},
	{"/\ufffd", proto.ErrPathInvalidCharacter, 1},
	{"/\uffff", proto.ErrPathInvalidCharacter, 1},
	{"/é中", nil, 0},

	// Indexes count UTF-16 units: é and 中 are one unit each, a
	// supplementary character fails as its high surrogate.
	{"/é\x01", proto.ErrPathInvalidCharacter, 2},
	{"/ab中\x01", proto.ErrPathInvalidCharacter, 4},
	{"/\U0001F600", proto.ErrPathInvalidCharacter, 1},
	{"/中/\U00010000", proto.ErrPathInvalidCharacter, 3},
	{"/é//x", proto.ErrPathEmptySegment, 3},
	{"/中/..", proto.ErrPathRelative, 4},

	// Bytes that are not UTF-8 fail as the U+FFFD the server's decoder
	// turns them into.
	{"/a\xff", proto.ErrPathInvalidCharacter, 2},
	{"/a\xe2\x82", proto.ErrPathInvalidCharacter, 2},
}

func TestValidatePath(t *testing.T) {
	for _, c := range pathCases {
		err := proto.ValidatePath(c.path)
		if c.rule == nil {
			assert.NoError(t, err, "%q", c.path)
			continue
		}
		var pe *proto.PathError
		if assert.ErrorAs(t, err, &pe, "%q", c.path) {
			assert.ErrorIs(t, err, c.rule, "%q", c.path)
			assert.Equal(t, c.index, pe.Index, "%q", c.path)
			assert.Equal(t, c.path, pe.Path)
		}
	}
}

// TestValidatePathMessages checks Java's IllegalArgumentException texts.
func TestValidatePathMessages(t *testing.T) {
	assert.EqualError(t, proto.ValidatePath(""), "Path length must be > 0")
	assert.EqualError(t, proto.ValidatePath("a"), "Path must start with / character")
	assert.EqualError(t, proto.ValidatePath("/a/"), "Path must not end with / character")
	assert.EqualError(t, proto.ValidatePath("/double//slash"),
		`Invalid path string "/double//slash" caused by empty node name specified @8`)
	assert.EqualError(t, proto.ValidatePath("/a/.."),
		`Invalid path string "/a/.." caused by relative paths not allowed @4`)
}

// TestValidateSequentialPath follows validatePath(path, true), which
// validates path + "1" and reports that string.
func TestValidateSequentialPath(t *testing.T) {
	require.NoError(t, proto.ValidateSequentialPath("/queue/"))
	require.NoError(t, proto.ValidateSequentialPath("/queue/item-"))
	require.NoError(t, proto.ValidateSequentialPath("/a/."), `"/a/.1" is a valid name`)
	require.ErrorIs(t, proto.ValidateSequentialPath(""), proto.ErrPathNotAbsolute, `"1" is not absolute`)
	err := proto.ValidateSequentialPath("/a//")
	require.ErrorIs(t, err, proto.ErrPathEmptySegment)
	assert.EqualError(t, err, `Invalid path string "/a//1" caused by empty node name specified @3`)
	require.ErrorIs(t, proto.ValidatePath("/queue/"), proto.ErrPathTrailingSlash)
}

func TestPathHelpers(t *testing.T) {
	cases := []struct{ path, parent, base string }{
		{"/", "", ""},
		{"/a", "/", "a"},
		{"/a/b", "/a", "b"},
		{"/a/b/c-0000000001", "/a/b", "c-0000000001"},
	}
	for _, c := range cases {
		assert.Equal(t, c.parent, proto.ParentPath(c.path), "parent of %q", c.path)
		assert.Equal(t, c.base, proto.BaseName(c.path), "base of %q", c.path)
		if c.path != "/" {
			assert.Equal(t, c.path, proto.JoinPath(c.parent, c.base))
		}
	}
}
