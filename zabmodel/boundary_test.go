package zabmodel

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEveryBoundaryIsDerivedFromAnEffect checks that the boundary names scripts use
// (Boundaries) are exactly those the drivers derive from an effect: from its kind
// (effectBoundaries, refusedBoundaries), from the epoch file it writes (epochFilePoints) or from
// the type of the packet it sends (sendBoundaries). A name in one list and not the other is
// either a boundary no driver asks (a script naming it would never fire) or one asked by hand.
func TestEveryBoundaryIsDerivedFromAnEffect(t *testing.T) {
	var derived []string
	add := func(names ...string) {
		for _, name := range names {
			if name != "" && !slices.Contains(derived, name) {
				derived = append(derived, name)
			}
		}
	}
	for k := range effectBoundaries {
		add(effectBoundaries[k][0]...)
		add(effectBoundaries[k][1]...)
		add(refusedBoundaries[k]...)
	}
	for _, file := range sortedKeys(epochFilePoints) {
		points := epochFilePoints[file]
		add(points[:]...)
	}
	for _, pair := range sendBoundaries {
		add(pair[:]...)
	}
	want := Boundaries()
	slices.Sort(want)
	slices.Sort(derived)
	assert.Equal(t, want, derived)
	// The four names that were once asked by hand now come from an effect's kind.
	assert.Equal(t, []string{"after-append", "newleader-appended"}, effectBoundaries[effectNewLeaderAppend][1])
	assert.Equal(t, []string{"newleader-before-epoch"}, effectBoundaries[effectAskSyncBusy][0])
	assert.Equal(t, []string{"before-snapshot"}, effectBoundaries[effectSnapshotOpen][0])
	assert.Equal(t, []string{"snapshot-serializing"}, effectBoundaries[effectSerializeStep][0])
}
