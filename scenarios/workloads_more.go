package scenarios

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// setupper is implemented by workloads that need znodes before the applications start (a queue's
// parent, a registry's directory); the runner creates them first, outside the recorded history.
type setupper interface {
	setup() []string // persistent paths to create, parents first
}

func init() {
	workloadMakers["queue"] = func(*sim.World) workload { return &queue{} }
	workloadMakers["config"] = func(w *sim.World) workload { return &config{writers: 1 + w.Choose(2)} }
	workloadMakers["registry"] = func(w *sim.World) workload { return &registry{services: 2 + w.Choose(3)} }
	workloadMakers["multi"] = func(*sim.World) workload { return &multi{} }
}

// --- sequential queue -------------------------------------------------------------------------------

// queue: producers append sequential nodes under /q; consumers list the children and take the
// lowest, then the next lowest if someone else took it first (the recipe of ZooKeeper's queue).
type queue struct{}

const queuePath = "/q"

func (q *queue) setup() []string { return []string{queuePath} }

func (q *queue) thinkTimeMax() clock.Duration { return clock.Second }

func (q *queue) next(w *sim.World, a *app) opSpec {
	producer := a.index%2 == 1
	if producer || w.Chance(1, 5) {
		return opSpec{kind: proto.OpCreate, path: queuePath + "/item-", data: a.uniqueValue(), mode: proto.PersistentSequential}
	}
	if len(a.queue) == 0 {
		return opSpec{kind: proto.OpGetChildren, path: queuePath}
	}
	return opSpec{kind: proto.OpDelete, path: queuePath + "/" + a.queue[0], version: -1}
}

func (q *queue) observe(a *app, op opSpec, res result) {
	switch op.kind {
	case proto.OpGetChildren:
		if res.err == proto.OK {
			a.queue = slices.Sorted(slices.Values(res.children))
		}
	case proto.OpDelete:
		// Taken, by us or by someone else: either way the consumer moves to the next item.
		if len(a.queue) > 0 && (res.err == proto.OK || res.err == proto.NoNode) {
			a.queue = a.queue[1:]
		}
	}
}

func (q *queue) checks() []checkers.LinearizabilityOptions {
	return []checkers.LinearizabilityOptions{{Model: checkers.QueueModel, Prefix: queuePath}}
}

// --- configuration watch ------------------------------------------------------------------------------

// config: a few writers change /config; every other application keeps a watch set on it and
// re-reads it, as a configuration consumer does.
type config struct{ writers int }

const configPath = "/config"

func (c *config) setup() []string { return []string{configPath} }

func (c *config) thinkTimeMax() clock.Duration { return 500 * clock.Millisecond }

func (c *config) next(w *sim.World, a *app) opSpec {
	if a.index <= c.writers {
		if w.Chance(1, 4) {
			return opSpec{kind: proto.OpSetData, path: configPath, data: a.uniqueValue(), version: a.knownVersion(configPath, w)}
		}
		return opSpec{kind: proto.OpSetData, path: configPath, data: a.uniqueValue(), version: -1}
	}
	if w.Chance(1, 10) {
		return opSpec{kind: proto.OpSync, path: configPath}
	}
	return opSpec{kind: proto.OpGetData, path: configPath, watch: true}
}

func (c *config) observe(a *app, op opSpec, res result) {
	if res.err == proto.OK && res.stat != nil {
		a.versions[op.path] = res.stat.Version
	}
}

func (c *config) checks() []checkers.LinearizabilityOptions {
	return []checkers.LinearizabilityOptions{{Model: checkers.RegisterModel, Prefix: "/"}}
}

// --- service registry -------------------------------------------------------------------------------

// registry: services register an ephemeral node each under /svc and sometimes deregister; consumers
// watch the directory's children.
type registry struct{ services int }

const registryPath = "/svc"

func (g *registry) setup() []string { return []string{registryPath} }

func (g *registry) next(w *sim.World, a *app) opSpec {
	if a.index <= g.services {
		path := fmt.Sprintf("%s/%s", registryPath, a.name)
		switch w.Choose(3) {
		case 0:
			return opSpec{kind: proto.OpCreate, path: path, data: a.uniqueValue(), mode: proto.Ephemeral}
		case 1:
			return opSpec{kind: proto.OpDelete, path: path, version: -1}
		default:
			return opSpec{kind: proto.OpExists, path: path}
		}
	}
	return opSpec{kind: proto.OpGetChildren, path: registryPath, watch: true}
}

func (g *registry) observe(*app, opSpec, result) {}

func (g *registry) checks() []checkers.LinearizabilityOptions {
	return []checkers.LinearizabilityOptions{{Model: checkers.RegisterModel, Prefix: registryPath}}
}

// --- multi-op transactions ----------------------------------------------------------------------------

// multi: transactions across /m/a, /m/b and /m/c: check-and-set pairs, moves (create one, delete
// another), and blind writes, judged together against a whole-tree model.
type multi struct{}

const multiPath = "/m"

var multiKeys = []string{multiPath + "/a", multiPath + "/b", multiPath + "/c"}

func (m *multi) setup() []string { return []string{multiPath} }

func (m *multi) thinkTimeMax() clock.Duration { return clock.Second }

func (m *multi) next(w *sim.World, a *app) opSpec {
	x, y := multiKeys[w.Choose(3)], multiKeys[w.Choose(3)]
	switch w.Choose(5) {
	case 0:
		return opSpec{kind: proto.OpGetData, path: x}
	case 1:
		return opSpec{kind: proto.OpCreate, path: x, data: a.uniqueValue(), mode: proto.Persistent}
	case 2:
		return opSpec{kind: proto.OpMulti, multi: []checkers.SubOperation{
			{Kind: proto.OpCheck, Path: x, Version: a.knownVersion(x, w)},
			{Kind: proto.OpSetData, Path: y, Data: a.uniqueValue(), Version: -1},
		}}
	case 3:
		return opSpec{kind: proto.OpMulti, multi: []checkers.SubOperation{
			{Kind: proto.OpCreate, Path: x, Data: a.uniqueValue(), Mode: proto.Persistent},
			{Kind: proto.OpDelete, Path: y, Version: -1},
		}}
	default:
		return opSpec{kind: proto.OpMulti, multi: []checkers.SubOperation{
			{Kind: proto.OpSetData, Path: x, Data: a.uniqueValue(), Version: -1},
			{Kind: proto.OpSetData, Path: y, Data: a.uniqueValue(), Version: -1},
		}}
	}
}

func (m *multi) observe(a *app, op opSpec, res result) {
	if res.err == proto.OK && res.stat != nil {
		a.versions[op.path] = res.stat.Version
	}
}

func (m *multi) checks() []checkers.LinearizabilityOptions {
	return []checkers.LinearizabilityOptions{{Model: checkers.TreeModel, Prefix: multiPath}}
}
