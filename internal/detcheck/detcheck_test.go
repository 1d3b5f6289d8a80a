package detcheck

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simulatedDirs are the packages whose code runs inside a simulated world. Tools that drive worlds
// from outside (cmd/simrun, internal/realzk, parallel sweeps) may use the host freely.
var simulatedDirs = []string{
	"clock", "sim", "net", "zabmodel", "electionmodel", "lockmodel", "checkers", "scenarios", "internal/quorum",
}

func moduleRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// TestSimulatedPackagesAreDeterministic is the guard: it fails on any wall-clock read, global or
// cryptographic randomness, environment read, goroutine or unmarked map range in simulated code.
func TestSimulatedPackagesAreDeterministic(t *testing.T) {
	findings, err := CheckDirs(moduleRoot(t), simulatedDirs)
	require.NoError(t, err)
	for _, f := range findings {
		t.Errorf("%s", f)
	}
}

func TestCheckerReportsEveryLeak(t *testing.T) {
	findings, err := CheckPackage(filepath.Join("testdata", "bad"))
	require.NoError(t, err)
	var rules []string
	for _, f := range findings {
		rules = append(rules, f.Rule)
	}
	want := []string{
		RuleCryptoRand,  // import crypto/rand
		RuleGlobalRand,  // import math/rand
		RuleWallClock,   // time.Now
		RuleWallClock,   // time.Sleep
		RuleGlobalRand,  // rand.Intn
		RuleGlobalRand,  // randv2.IntN
		RuleCryptoRand,  // crand.Read
		RuleEnvironment, // os.Getenv
		RuleGoroutine,   // go func
		RuleMapRange,    // range m
		RuleMapRange,    // a range whose marker gives no reason, so exempts nothing
		RuleMarker,      // ... and that marker itself
		RuleTraceHash,   // a Note inside if w.Tracing() with no else
		RuleTraceHash,   // a Note inside if w.Tracing() ...
		RuleTraceHash,   // ... and in its else
	}
	assert.Equal(t, want, rules, "findings:\n%s", join(findings))
}

func TestCheckerAcceptsAllowedUsesAndMarkedLines(t *testing.T) {
	findings, err := CheckPackage(filepath.Join("testdata", "good"))
	require.NoError(t, err)
	assert.Empty(t, findings, "findings:\n%s", join(findings))
}

func join(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.String() + "\n")
	}
	return b.String()
}
