package zabmodel

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zabsim/zabsim/zabmodel/datatree"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestSnapshotThreadCore drives the snapshot thread's walk (snapshotThread.step) one input at a
// time over a real tree, with no world, and prints each ready. The script is the driver: it
// applies nothing but the walk's end (the thread is then no longer the database's), so the draw of
// how many nodes a step writes is an input it gives with continue, and a transaction applied
// between steps (apply) lands in the tree the walk reads. Rewrite with
//
//	go test ./zabmodel -run TestSnapshotThreadCore -rewrite
//
// The commands:
//
//	new nodes=N          a tree of N nodes /a000.../aN-1, applied at zxids 1:1...1:N, and a thread
//	                     starting to walk it at 1:N
//	start                the thread's start
//	step                 the walk's next step (the timer of walk-next)
//	continue draw=K      the answer to the draw: the step writes K+1 nodes
//	apply path=P         a create of P at the next zxid, while the walk runs
//	replace-tree         ZKDatabase.clear replaced the tree the thread walks
//	stop                 the database stopped the thread (another thread, or none, runs)
func TestSnapshotThreadCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "snapshot"), func(t *testing.T, path string) {
		var env snapshotCoreEnv
		datadriven.RunTest(t, path, env.handle)
	})
}

type snapshotCoreEnv struct {
	st         *snapshotThread
	tree       *tree // the database's tree
	registered bool
	next       int64
}

func (env *snapshotCoreEnv) walking(st *snapshotThread) bool          { return env.registered && st == env.st }
func (env *snapshotCoreEnv) walksCurrentTree(st *snapshotThread) bool { return env.tree == st.tree }

func (env *snapshotCoreEnv) create(t *testing.T, d *datadriven.TestData, path string) {
	env.next++
	res := env.tree.apply(&proto.TxnEntry{
		Header: proto.TxnHeader{Zxid: MakeZxid(1, env.next), Type: proto.OpCreate},
		Txn:    &proto.CreateTxn{Path: path, ACL: proto.OpenACLUnsafe, ParentCVersion: int32(env.next)},
	})
	if res.res.Err != 0 {
		d.Fatalf(t, "create %s: %v", path, res.res.Err)
	}
}

func (env *snapshotCoreEnv) handle(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && env.st == nil {
		d.Fatalf(t, "new first")
	}
	kind, draw := snapshotInputKind(0), 0
	switch d.Cmd {
	case "new":
		var n int
		d.ScanArgs(t, "nodes", &n)
		env.tree, env.next = newTree(&Config{}), 0
		for i := range n {
			env.create(t, d, fmt.Sprintf("/a%03d", i))
		}
		env.st = &snapshotThread{tree: env.tree, zxid: env.tree.lastProcessedZxid()}
		env.st.writer = env.tree.t.NewSnapshotWriter(nil, true)
		env.registered = true
		return "ok\n"
	case "start":
		kind = snapshotStart
	case "step":
		kind = snapshotStep
	case "continue":
		kind = snapshotContinue
		d.ScanArgs(t, "draw", &draw)
	case "apply":
		var path string
		d.ScanArgs(t, "path", &path)
		env.create(t, d, path)
		return "ok\n"
	case "replace-tree":
		env.tree = newTree(&Config{})
		return "ok\n"
	case "stop":
		env.registered = false
		return "ok\n"
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	out := env.st.step(kind, draw, env)
	text := out.String()
	for _, e := range out.effects {
		if e.kind == effectWalkEnd {
			env.registered = false
		}
		if e.kind == effectSnapshotFile {
			stored, ok := datatree.StoredDigest(e.packet)
			if !ok {
				d.Fatalf(t, "the file holds no digest")
			}
			text += fmt.Sprintf("the file reflects the tree up to %s\n", FormatZxid(stored.Zxid))
		}
	}
	env.st.done(out)
	if text == "" {
		return "ok\n"
	}
	return text
}
