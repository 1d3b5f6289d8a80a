package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestShrinkSizes checks the voter counts a shrink tries: an odd ensemble only the odd counts
// below it, as before even ensembles were allowed, and an even one every count below it.
func TestShrinkSizes(t *testing.T) {
	assert.Empty(t, shrinkSizes(1))
	assert.Equal(t, []int{1}, shrinkSizes(2))
	assert.Equal(t, []int{1}, shrinkSizes(3))
	assert.Equal(t, []int{1, 2, 3}, shrinkSizes(4))
	assert.Equal(t, []int{1, 3}, shrinkSizes(5))
	assert.Equal(t, []int{1, 2, 3, 4, 5}, shrinkSizes(6))
	assert.Equal(t, []int{1, 3, 5}, shrinkSizes(7))
}
