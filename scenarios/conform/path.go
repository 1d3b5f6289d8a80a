package conform

import (
	"unicode/utf16"
	"unicode/utf8"
)

// ClientRejectsPath reports whether go-zookeeper v1.0.4 refuses the path
// locally, before sending anything; a runner then reports INVALIDPATH. The
// library checks the path of create (with sequential telling whether the
// create is sequential), delete, exists, get, set, children, getacl, setacl
// and sync, but not the paths inside a multi, which always reach the server.
//
// The rules, in go-zookeeper's terms (it walks the UTF-8 string rune by
// rune):
//   - the path is empty, or does not start with '/';
//   - it ends with '/' and is not "/" (allowed for a sequential create,
//     whose server-side name gets the counter appended);
//   - it contains NUL, an empty segment ("//"), or a segment "." or ".."
//     (except a "." first segment followed by more: a slip in
//     go-zookeeper's check lets "/./x" through, and the server answers it
//     with NONODE, its parent "/." not existing);
//   - it contains a rune in U+0001..U+001F, U+007F..U+009F, U+F000..U+F8FF
//     or U+FFF0..U+FFFE (an invalid UTF-8 byte decodes to U+FFFD and so is
//     rejected too).
//
// Java's client (PathUtils) differs: it rejects U+D800..U+EFFF as well, and
// any character outside the Basic Multilingual Plane (Java sees its UTF-16
// surrogates), and U+FFFF. Such paths pass go-zookeeper and reach the
// server, which answers create, set, setacl and check with BADARGUMENTS (see
// PathUtilsRejects) and reads and delete with NONODE.
func ClientRejectsPath(path string, sequential bool) bool {
	if path == "" || path[0] != '/' {
		return true
	}
	if path == "/" {
		return false
	}
	if !sequential && path[len(path)-1] == '/' {
		return true
	}
	previous, beforePrevious := '/', rune(-1)
	for i := 1; i < len(path); {
		r, width := utf8.DecodeRuneInString(path[i:])
		var next rune = -1
		if i+width < len(path) {
			next, _ = utf8.DecodeRuneInString(path[i+width:])
		}
		switch {
		case r == 0:
			return true
		case r == '/' && previous == '/':
			return true
		case r == '.':
			// A "." or ".." segment: the dot run starts right after a '/'
			// and the segment ends here. For a dot right after the leading
			// '/', go-zookeeper looks at the dot itself instead of the rune
			// after it, so only "/." is caught there: "/./x" passes.
			segmentStart := previous == '/' || (previous == '.' && beforePrevious == '/')
			if segmentStart && (next == -1 || (next == '/' && i > 1)) {
				return true
			}
		case r <= 0x1f, r >= 0x7f && r <= 0x9f, r >= 0xf000 && r <= 0xf8ff, r >= 0xfff0 && r <= 0xfffe:
			return true
		}
		beforePrevious, previous = previous, r
		i += width
	}
	return false
}

// PathUtilsRejects reports whether ZooKeeper's PathUtils.validatePath (used
// by the Java client and, on the server, by create, set, setacl and check,
// which answer BADARGUMENTS) rejects the path. It works on UTF-16 code
// units, as Java does; invalid UTF-8 reaches the server as U+FFFD.
func PathUtilsRejects(path string) bool {
	units := utf16.Encode([]rune(path))
	if len(units) == 0 || units[0] != '/' {
		return true
	}
	if len(units) == 1 {
		return false
	}
	if units[len(units)-1] == '/' {
		return true
	}
	for i := 1; i < len(units); i++ {
		c, last := units[i], units[i-1]
		endsSegment := i+1 == len(units) || units[i+1] == '/'
		switch {
		case c == 0:
			return true
		case c == '/' && last == '/':
			return true
		case c == '.' && last == '.':
			if units[i-2] == '/' && endsSegment {
				return true
			}
		case c == '.':
			if last == '/' && endsSegment {
				return true
			}
		case c <= 0x1f, c >= 0x7f && c <= 0x9f, c >= 0xd800 && c <= 0xf8ff, c >= 0xfff0:
			return true
		}
	}
	return false
}
