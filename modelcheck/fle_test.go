package modelcheck

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func checkFLE(t *testing.T, cfg FLEConfig, opts Options) Result {
	t.Helper()
	m, err := NewFLE(cfg)
	require.NoError(t, err)
	r, err := Check(context.Background(), m, opts)
	require.NoError(t, err)
	return r
}

// TestFLEThreeServersComplete explores three servers without faults completely: the bounded check
// of the test suite.
func TestFLEThreeServersComplete(t *testing.T) {
	r := checkFLE(t, FLEConfig{Servers: 3, Timeouts: 0, Abandons: 0}, Options{MaxStates: 2000000})
	t.Logf("%+v", r.Stats)
	assert.Nil(t, r.Violation)
	assert.True(t, r.Complete)
	assert.Greater(t, r.Distinct, int64(1000))
}
