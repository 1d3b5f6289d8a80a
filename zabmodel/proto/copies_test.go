package proto

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/internal/slab"
)

// A Decoder with a slab decodes exactly what one without does, and its buffers are still copies
// that own their bytes: null stays nil, empty stays non-nil, and no buffer aliases the input or
// reaches into its neighbour.
func TestDecoderCopiesIntoSlab(t *testing.T) {
	var e Encoder
	e.WriteBuffer(nil)
	e.WriteBuffer([]byte{})
	e.WriteBuffer([]byte("first"))
	e.WriteBuffer([]byte("second"))
	input := e.Bytes()

	var copies slab.Bytes
	var d Decoder
	d.SetCopies(&copies)
	d.Reset(input)
	null, empty, first, second := d.ReadBuffer(), d.ReadBuffer(), d.ReadBuffer(), d.ReadBuffer()
	require.NoError(t, d.Finish())

	assert.Nil(t, null)
	assert.NotNil(t, empty)
	assert.Empty(t, empty)
	assert.Equal(t, []byte("first"), first)
	assert.Equal(t, len(first), cap(first), "a buffer's capacity ends at its length")
	first = append(first, '!')
	assert.Equal(t, []byte("second"), second, "appending to one buffer leaves the next alone")
	for i := range input {
		input[i] = 0
	}
	assert.Equal(t, []byte("first!"), first, "buffers do not alias the input")
	assert.Equal(t, []byte("second"), second)
}
