package switches

import (
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
