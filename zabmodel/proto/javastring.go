package proto

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Jute strings are Java strings on both ends, and the two archive classes
// disagree about how to put one into bytes:
//
//   - BinaryOutputArchive.stringToByteBuffer encodes each UTF-16 unit by
//     itself, so a supplementary character becomes two 3-byte surrogate
//     encodings (CESU-8) instead of one 4-byte UTF-8 sequence;
//   - BinaryInputArchive.readString decodes with the standard UTF-8 decoder,
//     which rejects surrogate encodings and replaces them with U+FFFD.
//
// A Java server therefore cannot read back a supplementary character it wrote
// itself. This file mirrors both halves, treating a Go string as the UTF-8 form
// of the Java string it stands for.

// javaEncodedLength returns the number of bytes appendJavaString writes for s.
func javaEncodedLength(s string) int {
	n := len(s)
	if !mayHoldSupplementary(s) {
		return n
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 4 && r != utf8.RuneError {
			n += 2 // 4 bytes become 2 x 3 bytes.
		}
		i += size
	}
	return n
}

// mayHoldSupplementary reports whether s contains a byte that can start a
// 4-byte UTF-8 sequence, the only input that needs rewriting.
func mayHoldSupplementary(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xf0 {
			return true
		}
	}
	return false
}

// appendJavaString appends s as BinaryOutputArchive writes the Java string it
// stands for. Bytes that are not valid UTF-8 have no Java counterpart and are
// copied unchanged, which also makes a lone surrogate already in CESU-8 form
// come out as Java would write it.
func appendJavaString(dst []byte, s string) []byte {
	if !mayHoldSupplementary(s) {
		return append(dst, s...)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if size != 4 || r == utf8.RuneError {
			dst = append(dst, s[i:i+size]...)
			i += size
			continue
		}
		high, low := utf16.EncodeRune(r)
		dst = appendSurrogate(dst, high)
		dst = appendSurrogate(dst, low)
		i += size
	}
	return dst
}

func appendSurrogate(dst []byte, c rune) []byte {
	return append(dst, byte(0xe0|c>>12), byte(0x80|(c>>6)&0x3f), byte(0x80|c&0x3f))
}

// decodeJavaString converts bytes to a string as new String(b, UTF_8) does in
// the JDK: well-formed UTF-8 is kept and each malformed sequence becomes one
// U+FFFD, with the JDK's choice of how many bytes a malformed sequence spans
// (which differs from Go's one-byte-at-a-time rule). Truncated sequences at the
// end produce a single U+FFFD and, as in the JDK, a dangling continuation byte
// after a truncated 4-byte lead is dropped.
func decodeJavaString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	out.Grow(len(b) + 8)
	for i := 0; i < len(b); {
		n, r, stop := decodeJavaRune(b[i:])
		out.WriteRune(r)
		if stop {
			break
		}
		i += n
	}
	return out.String()
}

func isContinuation(b byte) bool { return b&0xc0 == 0x80 }

// decodeJavaRune decodes one character or malformed sequence from the front
// of b (len(b) > 0), following java.lang.String.decodeUTF8_UTF16 in JDK 17. It
// returns the bytes consumed, the rune (utf8.RuneError for a replacement), and
// whether decoding stops here because the input ended inside a sequence.
func decodeJavaRune(b []byte) (n int, r rune, stop bool) {
	b1 := b[0]
	switch {
	case b1 < 0x80:
		return 1, rune(b1), false
	case b1 >= 0xc2 && b1 <= 0xdf:
		if len(b) < 2 {
			return 1, utf8.RuneError, true
		}
		if !isContinuation(b[1]) {
			return 1, utf8.RuneError, false
		}
		return 2, rune(b1&0x1f)<<6 | rune(b[1]&0x3f), false
	case b1 >= 0xe0 && b1 <= 0xef:
		return decodeJavaRune3(b)
	case b1 >= 0xf0 && b1 <= 0xf7:
		return decodeJavaRune4(b)
	default:
		return 1, utf8.RuneError, false
	}
}

func decodeJavaRune3(b []byte) (n int, r rune, stop bool) {
	b1 := b[0]
	overlong := func(b2 byte) bool { return b1 == 0xe0 && b2&0xe0 == 0x80 }
	if len(b) < 3 {
		if len(b) == 2 && (overlong(b[1]) || !isContinuation(b[1])) {
			return 1, utf8.RuneError, false
		}
		return len(b), utf8.RuneError, true
	}
	b2, b3 := b[1], b[2]
	if overlong(b2) || !isContinuation(b2) || !isContinuation(b3) {
		if overlong(b2) || !isContinuation(b2) {
			return 1, utf8.RuneError, false
		}
		return 2, utf8.RuneError, false
	}
	r = rune(b1&0x0f)<<12 | rune(b2&0x3f)<<6 | rune(b3&0x3f)
	if r >= 0xd800 && r <= 0xdfff {
		return 3, utf8.RuneError, false
	}
	return 3, r, false
}

func decodeJavaRune4(b []byte) (n int, r rune, stop bool) {
	b1 := b[0]
	badSecond := func(b2 byte) bool {
		return b1 > 0xf4 ||
			(b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) ||
			(b1 == 0xf4 && b2&0xf0 != 0x80) ||
			!isContinuation(b2)
	}
	if len(b) < 4 {
		if b1 > 0xf4 || (len(b) >= 2 && badSecond(b[1])) {
			return 1, utf8.RuneError, false
		}
		// The JDK consumes the second byte, emits one replacement, and goes
		// on only if the third byte cannot continue the sequence.
		if len(b) >= 3 && !isContinuation(b[2]) {
			return 2, utf8.RuneError, false
		}
		return len(b), utf8.RuneError, true
	}
	b2, b3, b4 := b[1], b[2], b[3]
	r = rune(b1&0x07)<<18 | rune(b2&0x3f)<<12 | rune(b3&0x3f)<<6 | rune(b4&0x3f)
	if !isContinuation(b2) || !isContinuation(b3) || !isContinuation(b4) || r < 0x10000 || r > 0x10ffff {
		switch {
		case badSecond(b2):
			return 1, utf8.RuneError, false
		case !isContinuation(b3):
			return 2, utf8.RuneError, false
		default:
			return 3, utf8.RuneError, false
		}
	}
	return 4, r, false
}
