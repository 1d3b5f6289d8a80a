package datatree

import (
	"encoding/binary"
	"math"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// This file reproduces the few java.lang behaviours that decide outcomes in
// the code modelled here: String.hashCode (which fixes HashMap and
// ConcurrentHashMap iteration orders), String.split (which drops trailing
// empty strings), String.trim, Integer.parseInt and Long.parseLong (which
// accept a sign and any Unicode decimal digit), and new String(bytes, UTF_8).

// javaStringHash returns String.hashCode: s as UTF-16 code units, folded as
// h = 31*h + unit with int overflow.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r > 0xffff {
			high, low := utf16.EncodeRune(r)
			h = 31*h + int32(high)
			h = 31*h + int32(low)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// javaSplit is String.split(sep) with limit 0 for a separator that is a
// single literal character: every part, then trailing empty parts removed. A
// string without the separator yields itself, so "" yields [""].
func javaSplit(s string, sep string) []string {
	if !strings.Contains(s, sep) {
		return []string{s}
	}
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// javaSplitLimit is String.split(sep, limit) for limit != 0: at most limit
// parts when limit > 0, all parts when limit < 0, and empty parts kept.
func javaSplitLimit(s string, sep string, limit int) []string {
	if limit > 0 {
		return strings.SplitN(s, sep, limit)
	}
	return strings.Split(s, sep)
}

// javaTrim is String.trim: it removes leading and trailing code units at or
// below U+0020.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// javaCompare is String.compareTo: lexicographic over UTF-16 code units,
// which orders characters above U+FFFF (surrogates, 0xD800-0xDFFF) before
// U+E000-U+FFFF, unlike a byte comparison of UTF-8.
func javaCompare(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

// javaDigit is Character.digit(c, 10): the value of an ASCII or other Unicode
// decimal digit (category Nd) in the Basic Multilingual Plane, or -1. Java
// parses UTF-16 code units, so a digit above U+FFFF arrives as two
// surrogates, neither of which is a digit. Unicode allocates every Nd digit
// in a run of ten starting at zero, so the value is the offset within its run.
func javaDigit(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r > 0xffff || !unicode.Is(unicode.Nd, r) {
		return -1
	}
	for _, rng := range unicode.Nd.R16 {
		if rune(rng.Lo) <= r && r <= rune(rng.Hi) && rng.Stride == 1 {
			return int(r-rune(rng.Lo)) % 10
		}
	}
	return -1
}

// parseJavaInteger is Integer.parseInt (bits 32) or Long.parseLong (bits 64)
// in radix 10: an optional '+' or '-', then at least one decimal digit, with
// overflow an error. ok is false where Java throws NumberFormatException.
func parseJavaInteger(s string, bits int) (value int64, ok bool) {
	maxValue := int64(math.MaxInt64)
	if bits == 32 {
		maxValue = math.MaxInt32
	}
	runes := []rune(s)
	if len(runes) == 0 {
		return 0, false
	}
	negative, start := false, 0
	if runes[0] == '-' || runes[0] == '+' {
		negative, start = runes[0] == '-', 1
		if len(runes) == 1 {
			return 0, false
		}
	}
	// Like Java, accumulate negatively so that the minimum value parses.
	limit := -maxValue
	if negative {
		limit = -maxValue - 1
	}
	multiplyMinimum := limit / 10
	var result int64
	for _, r := range runes[start:] {
		d := int64(javaDigit(r))
		if d < 0 || result < multiplyMinimum {
			return 0, false
		}
		result *= 10
		if result < limit+d {
			return 0, false
		}
		result -= d
	}
	if negative {
		return result, true
	}
	return -result, true
}

// javaDecodeUTF8 is new String(bytes, UTF_8): valid UTF-8 unchanged, each
// malformed sequence replaced by U+FFFD exactly as Java's decoder does. It
// borrows the jute decoder, which implements that replacement.
func javaDecodeUTF8(b []byte) string {
	framed := make([]byte, 4, 4+len(b))
	binary.BigEndian.PutUint32(framed, uint32(len(b)))
	d := proto.NewDecoder(append(framed, b...))
	d.SetFieldLimit(math.MaxInt32)
	return d.ReadString()
}

// decodeRuneAt decodes the rune at byte i of s.
func decodeRuneAt(s string, i int) (rune, int) {
	return utf8.DecodeRuneInString(s[i:])
}
