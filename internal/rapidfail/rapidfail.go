package rapidfail

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// strict is the test as rapid sees it, except that rapid's notes about a fail file it ignores
// fail the test.
type strict struct {
	*testing.T
}

// Logf passes rapid's notes on, failing the test on those that say a fail file was not replayed.
func (s strict) Logf(format string, args ...any) {
	s.T.Helper()
	message := fmt.Sprintf(format, args...)
	s.T.Log(message)
	if strings.Contains(message, "ignoring fail file") || strings.Contains(message, "is no longer valid") {
		s.T.Errorf("a committed fail file did not replay (%s): it is no regression any more; reproduce the "+
			"failure it recorded with the property as it is now and save that file, or delete it", message)
	}
}

// Check is rapid.Check, with every committed fail file of the test required to replay.
func Check(t *testing.T, property func(*rapid.T)) {
	t.Helper()
	rapid.Check(strict{T: t}, property)
}

// Files returns the fail files committed for the running test (rapid's naming:
// testdata/rapid/<Test>/<Test>-*.fail, relative to the package directory).
func Files(t *testing.T) []string {
	t.Helper()
	name := strings.NewReplacer("/", "_", "\\", "_").Replace(t.Name())
	matches, err := filepath.Glob(filepath.Join("testdata", "rapid", name, name+"-*.fail"))
	if err != nil {
		t.Fatalf("rapidfail: %v", err)
	}
	return matches
}
