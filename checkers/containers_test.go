package checkers

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// containerBase: c1 (session 2) creates the container /locks and the node /locks/n in it, sets a
// child watch on /locks, and deletes /locks/n (the watch fires); then it sets the child watch
// again on the empty container. Its last zxid is 0x100000007.
func containerBase(t *testing.T) *fixture {
	f := newFixture(t)
	f.session("c1", 2, ms(1))
	f.write("c1", 2, createMode("/locks", "", proto.Container), ms(2), ms(3), ms(4), proto.OK, 0)
	f.write("c1", 2, createMode("/locks/n", "x", proto.Ephemeral), ms(5), ms(6), ms(7), proto.OK, 0)
	f.read("c1", 2, Operation{Kind: proto.OpGetChildren, Path: "/locks", Watch: true}, ms(8), ms(9), Reply{Children: []string{"n"}})
	del := deleteOp("/locks/n", -1)
	del.Session, del.Xid = 2, f.nextXid(2)
	ref := f.r.Call("c1", ms(10), del)
	zxid := f.commit(2, del.Xid, proto.OpDelete, &proto.DeleteTxn{Path: "/locks/n"}, ms(11))
	f.r.Event("c1", 2, ms(12), proto.EventNodeChildrenChanged, "/locks", -1)
	require.NoError(t, f.r.Reply(ref, ms(13), Reply{Zxid: zxid}))
	f.read("c1", 2, Operation{Kind: proto.OpGetChildren, Path: "/locks", Watch: true}, ms(14), ms(15), Reply{Children: []string{}})
	return f
}

// reap commits the container manager's deleteContainer of path: a transaction of no session.
func (f *fixture) reap(path string, at clock.Time) int64 {
	return f.commit(0, 0, proto.OpDeleteContainer, &proto.DeleteTxn{Path: path}, at)
}

func TestContainerCreateIsJudgedAgainstItsCreateContainerTxn(t *testing.T) {
	f := containerBase(t)
	h := converged(f, ms(100))
	res, err := CheckReads(h, ReadOptions{})
	require.NoError(t, err)
	assert.Equal(t, Pass, res[0].Status, res[0].String())

	// The same create answered OK, but committed as a plain create: not what the client sent.
	g := newFixture(t)
	g.session("c1", 2, ms(1))
	op := createMode("/locks", "", proto.Container)
	op.Session, op.Xid = 2, g.nextXid(2)
	ref := g.r.Call("c1", ms(2), op)
	zxid := g.commit(2, op.Xid, proto.OpCreate, &proto.CreateTxn{Path: "/locks", ACL: proto.OpenACLUnsafe, ParentCVersion: -1}, ms(3))
	require.NoError(t, g.r.Reply(ref, ms(4), Reply{Zxid: zxid, CreatedPath: "/locks"}))
	res, err = CheckReads(g.finish(ms(100)), ReadOptions{})
	require.NoError(t, err)
	require.Equal(t, Violation, res[0].Status, res[0].String())
	assert.Equal(t, []string{"write-committed"}, rulesOf(res[0]))
}

func TestContainerCreateInsideAMultiIsNotSupported(t *testing.T) {
	f := newFixture(t)
	f.session("c1", 2, ms(1))
	f.r.Call("c1", ms(2), Operation{Session: 2, Xid: 1, Kind: proto.OpMulti,
		Multi: []SubOperation{{Kind: proto.OpCreate, Path: "/locks", Mode: proto.Container}}})
	assert.ErrorIs(t, Validate(f.r.Finish(ms(100), nil)), ErrInvalidHistory)
}

// TestServerDeletedContainerIsARealChange: the container manager's deleteContainer is a committed
// change that no client issued. The watch it fires is real, reads must see it, and a watch it
// should have fired but did not is missed.
func TestServerDeletedContainerIsARealChange(t *testing.T) {
	f := containerBase(t)
	reaped := f.reap("/locks", ms(20))
	f.r.Event("c1", 2, ms(20), proto.EventNodeDeleted, "/locks", -1)
	f.read("c1", 2, Operation{Kind: proto.OpExists, Path: "/locks"}, ms(21), ms(22), Reply{Err: proto.NoNode, Zxid: reaped})
	h := converged(f, ms(100))
	reads, err := CheckReads(h, ReadOptions{})
	require.NoError(t, err)
	assert.Equal(t, Pass, reads[0].Status, reads[0].String())
	assert.Equal(t, Pass, checkWatchesOf(t, h).Status)
	sessions, err := CheckSessions(h, SessionOptions{})
	require.NoError(t, err)
	assert.Equal(t, Pass, sessions.Status, sessions.String())
}

func TestReadThatMissesAServerDeletedContainerIsReported(t *testing.T) {
	f := containerBase(t)
	reaped := f.reap("/locks", ms(20))
	f.r.Event("c1", 2, ms(20), proto.EventNodeDeleted, "/locks", -1)
	f.read("c1", 2, Operation{Kind: proto.OpGetChildren, Path: "/locks"}, ms(21), ms(22), Reply{Children: []string{}, Zxid: reaped})
	reads, err := CheckReads(converged(f, ms(100)), ReadOptions{})
	require.NoError(t, err)
	require.Equal(t, Violation, reads[0].Status, reads[0].String())
	assert.Equal(t, []string{"read-state"}, rulesOf(reads[0]))
	assert.Contains(t, reads[0].Findings[0].Message, "/locks absent")
}

func TestWatchThatAServerDeletedContainerShouldHaveFiredIsMissed(t *testing.T) {
	f := containerBase(t)
	f.reap("/locks", ms(20))
	res := checkWatchesOf(t, converged(f, ms(100)))
	require.Equal(t, Violation, res.Status, res.String())
	assert.Equal(t, []string{"watch-missed"}, rulesOf(res))
}

func TestLinearizabilityModelsRefuseContainers(t *testing.T) {
	f := containerBase(t)
	_, err := CheckLinearizability(converged(f, ms(100)), LinearizabilityOptions{Model: TreeModel, Prefix: "/"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrOutsideModel), err.Error())
	assert.Contains(t, err.Error(), "container")
}
