package realzk

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSkipNoticeSaysWhatWasSkippedAndWhy: the line shown once per test binary names the cause and
// how to make the skip a failure.
func TestSkipNoticeSaysWhatWasSkippedAndWhy(t *testing.T) {
	notice := skipNotice(errors.New("missing /x/zookeeper.jar"))
	assert.Contains(t, notice, "SKIPPED")
	assert.Contains(t, notice, "missing /x/zookeeper.jar")
	assert.Contains(t, notice, EnvRequire+"=1")
}
