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

// An interning Decoder returns the strings a plain one does (Java's replacement of malformed
// UTF-8 included), and one string for equal bytes, up to its limit.
func TestDecoderInternsStrings(t *testing.T) {
	inputs := []string{"/registers/k1", "", "/registers/k1", "bad\xff\xfe", "/b", "/c", "/registers/k1"}
	var e Encoder
	for _, s := range inputs {
		e.WriteBuffer([]byte(s))
	}
	e.WriteInt32(-1) // a null string
	plain := NewDecoder(e.Bytes())
	var interning Decoder
	interning.InternStrings(2)
	interning.Reset(e.Bytes())
	for i := range len(inputs) + 1 {
		assert.Equal(t, plain.ReadString(), interning.ReadString(), "string %d", i)
	}
	require.NoError(t, plain.Finish())
	require.NoError(t, interning.Finish())
	assert.Len(t, interning.interned, 2, "no more strings kept than the limit")
}
