package checkers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// validatePath answers plain paths itself; it must agree with proto.ValidatePath on every path,
// plain or not. The alphabet is weighted towards the characters the rules are about.
func TestPropertyValidatePathAgreesWithProto(t *testing.T) {
	alphabet := []rune{'/', '/', '.', 'a', 'z', 'Z', '0', ' ', '-', '~', 0, 0x1f, 0x7f, 0x9f, 'é', 0xd7ff, 0xe000, 0xfff0, 0x1f600}
	rapid.Check(t, func(t *rapid.T) {
		path := string(rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 12).Draw(t, "path"))
		want := proto.ValidatePath(path)
		got := validatePath(path)
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("validatePath(%q) = %v, proto.ValidatePath says %v", path, got, want)
		}
		if plainPath(path) && want != nil {
			t.Fatalf("plainPath accepts %q, which proto.ValidatePath rejects: %v", path, want)
		}
	})
}

func TestPlainPathTakesOrdinaryPathsAndLeavesTheRest(t *testing.T) {
	for _, path := range []string{"/a", "/r/k17", "/queue/item-0000000012", "/a b/~x"} {
		assert.True(t, plainPath(path), path)
	}
	for _, path := range []string{"", "/", "a", "/a/", "//a", "/a//b", "/.", "/a/..", "/a.b", "/é", "/a\x00", "/a\x7f"} {
		assert.False(t, plainPath(path), path)
	}
}
