package locklog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers/lock"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

func ev(kind lockmodel.EventKind, client string, attempt int, at clock.Duration) lockmodel.Event {
	return lockmodel.Event{Kind: kind, Time: clock.Time(at), Recipe: lockmodel.RecipeMutex, Lock: "/locks/a",
		Client: client, Session: 0x10, Attempt: attempt}
}

// TestGrantedAndReleased: an acquisition that is granted ends Granted, and its span of belief runs
// from the grant to the release; Fill hands the records to a history.
func TestGrantedAndReleased(t *testing.T) {
	l := New()
	l.LockEvent(ev(lockmodel.EventAcquiring, "c1", 1, 1*clock.Second))
	created := ev(lockmodel.EventCreated, "c1", 1, 2*clock.Second)
	created.Node = "/locks/a/_c_x-lock-0000000001"
	l.LockEvent(created)
	granted := ev(lockmodel.EventGranted, "c1", 1, 3*clock.Second)
	granted.Node, granted.Token = created.Node, 0x100000005
	l.LockEvent(granted)
	released := ev(lockmodel.EventReleased, "c1", 1, 5*clock.Second)
	released.Token = granted.Token
	l.LockEvent(released)

	var h lock.History
	l.Fill(&h, clock.Time(9*clock.Second))
	require.Len(t, h.Attempts, 1)
	assert.Equal(t, lock.Granted, h.Attempts[0].Outcome)
	assert.Equal(t, created.Node, h.Attempts[0].Node)
	assert.Equal(t, clock.Time(3*clock.Second), h.Attempts[0].End)
	require.Len(t, h.Grants, 1)
	assert.Equal(t, granted.Token, h.Grants[0].Token)
	assert.Equal(t, lock.ModeExclusive, h.Grants[0].Mode)
	require.Len(t, h.Holds, 1)
	assert.False(t, h.Holds[0].Open)
	assert.Equal(t, clock.Time(5*clock.Second), h.Holds[0].End)
	assert.Equal(t, clock.Time(5*clock.Second), l.Released[granted.Token])
}

// TestOpenHoldEndsAtTheEnd: a grant never released is a span still open, which Holds ends at the
// end it is given without closing it in the log, so that a later release still ends it.
func TestOpenHoldEndsAtTheEnd(t *testing.T) {
	l := New()
	l.LockEvent(ev(lockmodel.EventAcquiring, "c1", 1, 1*clock.Second))
	granted := ev(lockmodel.EventGranted, "c1", 1, 2*clock.Second)
	granted.Token = 7
	l.LockEvent(granted)
	holds := l.Holds(clock.Time(4 * clock.Second))
	require.Len(t, holds, 1)
	assert.True(t, holds[0].Open)
	assert.Equal(t, clock.Time(4*clock.Second), holds[0].End)

	lost := ev(lockmodel.EventLost, "c1", 1, 6*clock.Second)
	lost.Token, lost.Err = 7, lockmodel.ErrNotFirst
	l.LockEvent(lost)
	holds = l.Holds(clock.Time(9 * clock.Second))
	assert.False(t, holds[0].Open)
	assert.Equal(t, clock.Time(6*clock.Second), holds[0].End)
	assert.True(t, holds[0].EndedByCheck, "a latch that found its node no longer first ended its belief on its own check")
}

// TestNotGrantedOutcomes: an acquisition its session could not finish (lost, closed, expired) is
// abandoned; any other refusal is NotGranted.
func TestNotGrantedOutcomes(t *testing.T) {
	cases := []struct {
		err  error
		want lock.Outcome
	}{
		{lockmodel.ErrLost, lock.Abandoned},
		{lockmodel.ErrClosed, lock.Abandoned},
		{&lockmodel.CodeError{Op: "create", Path: "/locks/a", Code: proto.SessionExpired}, lock.Abandoned},
		{&lockmodel.CodeError{Op: "create", Path: "/locks/a", Code: proto.NoAuth}, lock.NotGranted},
	}
	for _, c := range cases {
		l := New()
		l.LockEvent(ev(lockmodel.EventAcquiring, "c1", 1, 1*clock.Second))
		refused := ev(lockmodel.EventNotGranted, "c1", 1, 2*clock.Second)
		refused.Err = c.err
		l.LockEvent(refused)
		require.Len(t, l.Attempts, 1)
		assert.Equal(t, c.want, l.Attempts[0].Outcome, "%v", c.err)
	}
}

// TestAbandonEndsAClientsRecords: a crashed client's waiting acquisitions are abandoned and its
// spans of belief end at the crash; another client's are untouched.
func TestAbandonEndsAClientsRecords(t *testing.T) {
	l := New()
	l.LockEvent(ev(lockmodel.EventAcquiring, "c1", 1, 1*clock.Second))
	granted := ev(lockmodel.EventGranted, "c1", 1, 2*clock.Second)
	granted.Token = 9
	l.LockEvent(granted)
	l.LockEvent(ev(lockmodel.EventAcquiring, "c1", 2, 3*clock.Second))
	l.LockEvent(ev(lockmodel.EventAcquiring, "c2", 1, 3*clock.Second))
	l.Abandon("c1", clock.Time(4*clock.Second))

	assert.Equal(t, lock.Granted, l.Attempts[0].Outcome)
	assert.Equal(t, lock.Abandoned, l.Attempts[1].Outcome)
	assert.Equal(t, lock.Waiting, l.Attempts[2].Outcome)
	holds := l.Holds(clock.Time(9 * clock.Second))
	require.Len(t, holds, 1)
	assert.False(t, holds[0].Open)
	assert.Equal(t, clock.Time(4*clock.Second), holds[0].End)
	assert.False(t, l.isHeld(holdKey(granted)), "a release after the crash has no span left to end")
}
