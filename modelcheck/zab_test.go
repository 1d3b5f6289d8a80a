package modelcheck

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestZABProbe(t *testing.T) {
	m, err := NewZAB(ZABConfig{Servers: 3, Writes: 1, Warmup: true})
	require.NoError(t, err)
	r, err := Check(context.Background(), m, Options{MaxDepth: 60, MaxStates: 3000})
	require.NoError(t, err)
	t.Logf("%+v complete=%v cut=%v violation=%v", r.Stats, r.Complete, r.CutBy, r.Violation)
}
