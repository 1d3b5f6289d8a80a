package scenarios

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// opSpec is one operation a workload asks an application to issue.
type opSpec struct {
	kind    proto.OpCode
	path    string
	data    []byte
	version int32
	mode    proto.CreateMode
	watch   bool
	multi   []checkers.SubOperation
	barrier bool // the liveness phase's final sync, not a workload operation
}

// workload generates what one kind of application does, and says how to check it.
type workload interface {
	// next draws the next operation of app a. It may look at what a observed (a.last).
	next(w *sim.World, a *app) opSpec
	// observe lets the workload learn from a reply (the versions it saw, the children it listed).
	observe(a *app, op opSpec, res result)
	// checks are the linearizability checks that suit the workload.
	checks() []checkers.LinearizabilityOptions
}

// workloadMakers lists the workloads by name.
var workloadMakers = map[string]func(w *sim.World) workload{
	"registers": newRegisters,
}

// Workloads returns the workload names, sorted.
func Workloads() []string {
	names := make([]string, 0, len(workloadMakers))
	for name := range workloadMakers { // determinism:ok the names are sorted before use
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// result is what an application saw of one operation.
type result struct {
	err      proto.Code
	zxid     int64
	xid      int32 // the xid and session the request was written with, 0 if never written
	session  int64
	path     string
	data     []byte
	stat     *proto.Stat
	children []string
	multi    []client.OpResult
}

// --- registers ------------------------------------------------------------------------------------

// registers is the Jepsen-style register workload: a few znodes under /r, created, read, written
// blindly and with compare-and-set on the version, and deleted.
type registers struct {
	keys int
}

func newRegisters(w *sim.World) workload { return &registers{keys: 2 + w.Choose(4)} }

func (r *registers) key(w *sim.World) string { return fmt.Sprintf("/r%d", w.Choose(r.keys)) }

func (r *registers) next(w *sim.World, a *app) opSpec {
	path := r.key(w)
	value := a.uniqueValue()
	switch roll := w.Choose(100); {
	case roll < 25:
		return opSpec{kind: proto.OpGetData, path: path, watch: w.Chance(1, 4)}
	case roll < 35:
		return opSpec{kind: proto.OpExists, path: path, watch: w.Chance(1, 4)}
	case roll < 55:
		return opSpec{kind: proto.OpSetData, path: path, data: value, version: -1}
	case roll < 70:
		return opSpec{kind: proto.OpSetData, path: path, data: value, version: a.knownVersion(path, w)}
	case roll < 82:
		return opSpec{kind: proto.OpCreate, path: path, data: value, mode: proto.Persistent}
	case roll < 92:
		version := int32(-1)
		if w.Chance(1, 2) {
			version = a.knownVersion(path, w)
		}
		return opSpec{kind: proto.OpDelete, path: path, version: version}
	default:
		return opSpec{kind: proto.OpSync, path: path}
	}
}

func (r *registers) observe(a *app, op opSpec, res result) {
	if res.err == proto.OK && res.stat != nil {
		a.versions[op.path] = res.stat.Version
	}
}

func (r *registers) checks() []checkers.LinearizabilityOptions {
	return []checkers.LinearizabilityOptions{{Model: checkers.RegisterModel, Prefix: "/"}}
}
