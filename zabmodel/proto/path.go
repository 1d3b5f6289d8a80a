package proto

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The rules of PathUtils.validatePath. A *PathError wraps exactly one of them,
// so callers can test errors.Is(err, proto.ErrPathRelative). The texts are
// Java's. The server turns any of them into BadArguments
// (PrepRequestProcessor.validatePath); the Java client throws
// IllegalArgumentException before sending.
var (
	ErrPathEmpty            = errors.New("Path length must be > 0")
	ErrPathNotAbsolute      = errors.New("Path must start with / character")
	ErrPathTrailingSlash    = errors.New("Path must not end with / character")
	ErrPathNullCharacter    = errors.New("null character not allowed")
	ErrPathEmptySegment     = errors.New("empty node name specified")
	ErrPathRelative         = errors.New("relative paths not allowed")
	ErrPathInvalidCharacter = errors.New("invalid character")
)

// PathError reports a path that PathUtils.validatePath rejects.
type PathError struct {
	// Path is the string validated. ValidateSequentialPath validates the path
	// with "1" appended, as Java does, and reports that string.
	Path string
	// Rule is the ErrPath value for the broken rule.
	Rule error
	// Index is the position of the offending character counted in UTF-16
	// code units, as Java's message gives it, or -1 for the rules checked
	// before the character scan (empty, not absolute, trailing slash).
	Index int
}

// Error returns Java's IllegalArgumentException message.
func (e *PathError) Error() string {
	if e.Index < 0 {
		return e.Rule.Error()
	}
	return `Invalid path string "` + e.Path + `" caused by ` + e.Rule.Error() + " @" + strconv.Itoa(e.Index)
}

// Unwrap returns Rule.
func (e *PathError) Unwrap() error { return e.Rule }

// ValidatePath checks a znode path as PathUtils.validatePath(String) does in
// 3.8.0, rule by rule and in the same order: not empty, starting with '/', the
// root is valid, no trailing '/'; then, scanning from index 1, the first of: a
// null character, an empty segment ("//"), a "." or ".." segment, or a
// character in U+0001-U+001F, U+007F-U+009F, U+D800-U+F8FF or U+FFF0-U+FFFF.
//
// Java scans UTF-16 code units, so a supplementary character fails as its
// high surrogate (U+D800-U+DBFF) and Index counts UTF-16 units, not bytes. A
// byte that is not valid UTF-8 fails as the U+FFFD the server's decoder would
// have put in its place (see Decoder.ReadString).
func ValidatePath(path string) error {
	switch {
	case path == "":
		return &PathError{Path: path, Rule: ErrPathEmpty, Index: -1}
	case path[0] != '/':
		return &PathError{Path: path, Rule: ErrPathNotAbsolute, Index: -1}
	case path == "/":
		return nil
	case path[len(path)-1] == '/':
		return &PathError{Path: path, Rule: ErrPathTrailingSlash, Index: -1}
	}
	last := rune('/')
	unit := 1 // UTF-16 index of the rune at byte i.
	for i := 1; i < len(path); {
		r, size := utf8.DecodeRuneInString(path[i:])
		if rule := pathRuneRule(path, i, r, last); rule != nil {
			return &PathError{Path: path, Rule: rule, Index: unit}
		}
		last = r
		i += size
		unit += utf16Length(r)
	}
	return nil
}

// pathRuneRule returns the rule the rune r at byte i breaks, or nil. '/' and
// '.' are ASCII, so the neighbours Java inspects by UTF-16 index can be
// inspected by byte: a multi-byte character never contains either byte.
func pathRuneRule(path string, i int, r, last rune) error {
	segmentEndsAfter := func(j int) bool { return j+1 == len(path) || path[j+1] == '/' }
	switch {
	case r == 0:
		return ErrPathNullCharacter
	case r == '/' && last == '/':
		return ErrPathEmptySegment
	case r == '.' && last == '.':
		if path[i-2] == '/' && segmentEndsAfter(i) {
			return ErrPathRelative
		}
	case r == '.':
		if path[i-1] == '/' && segmentEndsAfter(i) {
			return ErrPathRelative
		}
	case r <= 0x1f, r >= 0x7f && r <= 0x9f, r >= 0xd800 && r <= 0xf8ff, r >= 0xfff0:
		// Supplementary characters (r > 0xffff) land here as Java's high
		// surrogate would, and so does utf8.RuneError for invalid bytes.
		return ErrPathInvalidCharacter
	}
	return nil
}

func utf16Length(r rune) int {
	if r > 0xffff {
		return 2
	}
	return 1
}

// ValidateSequentialPath checks the path given to a sequential create, as
// PathUtils.validatePath(path, true) does: by validating path + "1", so that a
// trailing '/' (a sequential child with an empty prefix, such as "/queue/")
// is allowed.
func ValidateSequentialPath(path string) error {
	return ValidatePath(path + "1")
}

// ParentPath returns the parent of a valid path: "/a" for "/a/b" and "/" for
// "/a". The root has no parent and yields "". (Java's
// path.substring(0, lastSlash) yields "" for "/a"; DataTree stores the root
// under both "" and "/" to absorb that.)
func ParentPath(path string) string {
	i := strings.LastIndexByte(path, '/')
	switch {
	case path == "/" || i < 0:
		return ""
	case i == 0:
		return "/"
	default:
		return path[:i]
	}
}

// BaseName returns the last segment of a valid path: "b" for "/a/b" and ""
// for the root.
func BaseName(path string) string {
	return path[strings.LastIndexByte(path, '/')+1:]
}

// JoinPath returns the path of the child name under parent.
func JoinPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}
