package checkers

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStatusOfFindings(t *testing.T) {
	known := Finding{Checker: "c", Rule: "r", Known: "k", Message: "m"}
	plain := Finding{Checker: "c", Rule: "r", Message: "m"}
	assert.Equal(t, Pass, StatusOf(nil))
	assert.Equal(t, Known, StatusOf([]Finding{known, known}))
	assert.Equal(t, Violation, StatusOf([]Finding{known, plain}), "one unknown-class finding makes a violation")
	assert.Equal(t, Violation, StatusOf([]Finding{plain}))
	assert.Equal(t, []string{"k"}, KnownClasses([]Finding{known, plain, known}))

	res := Result{Checker: "c", Status: Known, Findings: []Finding{known}}
	assert.False(t, res.Failed(), "a known finding does not fail a run by itself")
	assert.Equal(t, "c: KNOWN\n  - [r, known: k] m", res.String())
	assert.Equal(t, "c [r, known: k]: m", known.String())
}
