package switches

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type bit uint32

var table = NewTable("bug",
	Switch[bit]{Bit: 1, Name: "ZK-1", Description: "one"},
	Switch[bit]{Bit: 2, Name: "ZK-2", Description: "two"},
	Switch[bit]{Bit: 4, Name: "lock-x", Description: "four"},
)

func TestParseNamesAndPrintsInTableOrder(t *testing.T) {
	mask, err := table.Parse(" lock-x , zk-1 ")
	require.NoError(t, err)
	assert.Equal(t, bit(5), mask)
	assert.Equal(t, []string{"ZK-1", "lock-x"}, table.Names(mask), "table order, not input order")
	assert.Equal(t, "ZK-1,lock-x", table.String(mask))
	assert.Equal(t, "none", table.String(0))
	for _, empty := range []string{"", "none", "  "} {
		mask, err := table.Parse(empty)
		require.NoError(t, err)
		assert.Zero(t, mask)
	}
	assert.Equal(t, bit(7), table.Known())
	assert.Len(t, table.List(), 3)
}

func TestParseRefusesUnknownNamesAndListsTheKnown(t *testing.T) {
	_, err := table.Parse("ZK-1,ZK-9")
	require.Error(t, err)
	assert.Equal(t, `unknown bug "ZK-9" (known: ZK-1, ZK-2, lock-x)`, err.Error())
	_, err = table.Parse("ZK-1,")
	assert.ErrorContains(t, err, `unknown bug ""`, "an empty name is not silently ignored")
}

func (bit) Table() *Table[bit] { return &table }

type bits = Set[bit]

func TestSetNamesItsSwitchesThroughItsTable(t *testing.T) {
	var empty bits
	assert.True(t, empty.Empty(), "the zero value switches nothing on")
	assert.Equal(t, "none", empty.String())
	s := empty.With(4).With(1)
	assert.True(t, s.Has(1) && s.Has(4))
	assert.False(t, s.Has(2))
	assert.Equal(t, []string{"ZK-1", "lock-x"}, s.Names())
	assert.Equal(t, "ZK-1,lock-x", s.String())
	assert.Equal(t, "ZK-1,ZK-2,lock-x", s.Union(empty.With(2)).String())

	parsed, err := ParseSet[bit]("lock-x, zk-1")
	require.NoError(t, err)
	assert.Equal(t, s, parsed)
	_, err = ParseSet[bit]("ZK-9")
	assert.EqualError(t, err, `unknown bug "ZK-9" (known: ZK-1, ZK-2, lock-x)`)

	errConfig := errors.New("invalid config")
	require.NoError(t, s.Validate(errConfig))
	err = s.With(8).Validate(errConfig)
	assert.ErrorIs(t, err, errConfig)
	assert.EqualError(t, err, "invalid config: unknown bug bits 0x8")
	assert.Equal(t, table.List(), List[bit]())
}
