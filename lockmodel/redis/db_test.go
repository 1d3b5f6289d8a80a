package redis

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const t0 = int64(1_767_225_600_000)

// TestReplicaNeverExpiresItself: a replica answers as if an expired key were gone, keeps it until
// the master's DEL, and refuses writes; promoted, it expires by its own clock.
func TestReplicaNeverExpiresItself(t *testing.T) {
	master, replica := NewDB(), NewDB()
	replica.replica = true
	rep, prop := master.Exec([]string{"SET", "k", "v", "PX", "100"}, t0)
	require.True(t, rep.IsOK())
	require.Equal(t, [][]string{{"SET", "k", "v", "PXAT", "1767225600100"}}, prop, "propagated with an absolute expiry")
	for _, cmd := range prop {
		replica.Apply(cmd)
	}
	rep, _ = replica.Exec([]string{"GET", "k"}, t0+50)
	assert.Equal(t, "$v", rep.String())
	rep, prop = replica.Exec([]string{"GET", "k"}, t0+101)
	assert.Equal(t, "$nil", rep.String(), "expired for readers")
	assert.Empty(t, prop)
	assert.Equal(t, 1, replica.Len(), "but still there")
	rep, _ = replica.Exec([]string{"SET", "x", "1"}, t0)
	assert.Equal(t, "-"+errReadOnly, rep.String())

	_, prop = master.Exec([]string{"GET", "k"}, t0+101)
	assert.Equal(t, [][]string{{"DEL", "k"}}, prop, "the master deletes and propagates")
	for _, cmd := range prop {
		replica.Apply(cmd)
	}
	assert.Zero(t, replica.Len())

	replica.Apply([]string{"SET", "j", "w", "PXAT", "1767225600200"})
	replica.replica = false // promoted
	assert.Equal(t, [][]string{{"DEL", "j"}}, replica.ExpireDue(t0+201))
}

// TestExpiryIsStrict: a key expires when now is past its expiry, not at it (keyIsExpired: now > when).
func TestExpiryIsStrict(t *testing.T) {
	db := NewDB()
	db.Exec([]string{"SET", "k", "v", "PX", "100"}, t0)
	rep, _ := db.Exec([]string{"PTTL", "k"}, t0+100)
	assert.Equal(t, ":0", rep.String())
	rep, _ = db.Exec([]string{"GET", "k"}, t0+100)
	assert.Equal(t, "$v", rep.String())
	rep, _ = db.Exec([]string{"GET", "k"}, t0+101)
	assert.Equal(t, "$nil", rep.String())
}

func TestUnknownScriptsAndCommandsAreErrors(t *testing.T) {
	db := NewDB()
	rep, _ := db.Exec([]string{"EVAL", "return 1", "0"}, t0)
	assert.True(t, rep.IsError())
	rep, _ = db.Exec([]string{"HSET", "h", "f", "v"}, t0)
	assert.Equal(t, "-ERR unknown command 'HSET'", rep.String())
}
