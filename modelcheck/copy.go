package modelcheck

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/zabsim/zabsim/internal/deepcopy"
	"github.com/zabsim/zabsim/internal/slab"
	"github.com/zabsim/zabsim/net"
)

// Copies of worlds (ZABConfig.NoCopy switches them off). A zabWorld, with the simulated world, the
// ensemble, the client, the storage and the judges inside it, is copied by package deepcopy: the
// whole object graph, aliasing kept. It holds no closure in this model's configurations (the
// world's hooks into the driver are values with methods: zabListener, zabObserver,
// zabBoundaries, clientWatcher, createDone, readDone; the servers post typed timers), so the copy
// is exact, and a copy stepped along a path reaches the state, fingerprint and trace hash a
// re-execution of the path reaches (TestZABCopyMatchesReplay). Copies replace re-execution where
// it cost most:
//
//   - The world after the warm-up is copied once (ZABModel.base); every later build copies it
//     instead of building a world and firing the warm-up again.
//   - A state about to take its first step in its live world, with more steps planned
//     (stepPlanner), first keeps a copy of it (zabState.snap); every later step of the state
//     copies that copy, and the last one takes it. A depth-first search thus keeps one copy per
//     frame of its stack that still has successors to take, and never re-executes a path.
//   - A breadth-first search drops the worlds of the states it queues (a level of them would not
//     fit in memory) and re-executes their paths from the copied warm-up.
//
// A configuration whose world holds something the copier refuses (a func value: the lock
// recipes' continuations, with Lockers) falls back to re-execution, and CopyStatus says why.

// copyFieldsShared are fields set once when a world is built that hold no state, shared between
// a world and its copies rather than copied: the network's payload describers are stateless
// functions (zabmodel.describePacket).
var copyFieldsShared = []struct {
	typ  reflect.Type
	name string
}{
	{reflect.TypeFor[net.Network](), "describers"},
}

// slabChunk reports package slab's chunks: the room past a chunk's length is free space only its
// slab hands out, and a slab whose chunk has no room left takes a new one, so a copy need not
// allocate that room (deepcopy.TrimSpare). Handed-out pieces all lie within the length.
func slabChunk(owner reflect.Type, field reflect.StructField) bool {
	return owner.PkgPath() == slabPackage && field.Name == "chunk"
}

var slabPackage = reflect.TypeFor[slab.Bytes]().PkgPath()

// copier hands out a deepcopy.Copier configured for this model's worlds (a Copier keeps per-type
// plans and its tables between copies, and is not safe for concurrent use). They are kept in a
// free list rather than a sync.Pool, which would drop them, and their plans, at every collection.
func (m *ZABModel) copier() *deepcopy.Copier {
	m.copiersMu.Lock()
	if n := len(m.copiers); n > 0 {
		c := m.copiers[n-1]
		m.copiers = m.copiers[:n-1]
		m.copiersMu.Unlock()
		return c
	}
	m.copiersMu.Unlock()
	c := deepcopy.New()
	c.Share(m)
	for _, f := range copyFieldsShared {
		c.ShareField(f.typ, f.name)
	}
	c.TrimSpare(slabChunk)
	return c
}

// copying reports whether this model uses copies.
func (m *ZABModel) copying() bool {
	return !m.cfg.NoCopy && !m.cfg.NoReuse && !m.copyOff.Load()
}

// copyWorld returns a copy of zw, which must not be stepped meanwhile (reading it from several
// goroutines at once is safe). A refusal switches copies off for the model: every world of one
// configuration holds the same kinds of values.
func (m *ZABModel) copyWorld(zw *zabWorld) (*zabWorld, error) {
	c := m.copier()
	cp, err := deepcopy.Copy(c, zw)
	m.putCopier(c)
	if err != nil {
		m.noteRefusal(err)
		return nil, fmt.Errorf("modelcheck: copying a world: %w", err)
	}
	m.copies.Add(1)
	return cp, nil
}

// noteRefusal switches copies off for the model when err is the copier's refusal: every world of
// one configuration holds the same kinds of values, so the next copy would be refused too.
func (m *ZABModel) noteRefusal(err error) {
	if errors.Is(err, deepcopy.ErrUncopyable) {
		m.copyOffOnce.Do(func() {
			m.copyOffReason = err.Error()
			m.copyOff.Store(true)
		})
	}
}

// copyWorldFrozen returns a copy of zw, frozen for repeated copies: it must never be stepped.
func (m *ZABModel) copyWorldFrozen(zw *zabWorld) (*zabWorld, *deepcopy.Frozen[zabWorld], error) {
	c := m.copier()
	cp, f, err := deepcopy.CopyFrozen(c, zw)
	m.putCopier(c)
	if err != nil {
		m.noteRefusal(err)
		return nil, nil, fmt.Errorf("modelcheck: copying a world: %w", err)
	}
	m.copies.Add(1)
	return cp, f, nil
}

// freeze keeps zw's memory layout for repeated copies (deepcopy.Frozen); zw must never be
// stepped again.
func (m *ZABModel) freeze(zw *zabWorld) (*deepcopy.Frozen[zabWorld], error) {
	c := m.copier()
	f, err := deepcopy.Freeze(c, zw)
	m.putCopier(c)
	if err != nil {
		return nil, fmt.Errorf("modelcheck: freezing a world: %w", err)
	}
	return f, nil
}

// copyFrozen returns a copy of a frozen world.
func (m *ZABModel) copyFrozen(f *deepcopy.Frozen[zabWorld]) *zabWorld {
	c := m.copier()
	cp := f.Copy(c)
	m.putCopier(c)
	m.copies.Add(1)
	return cp
}

func (m *ZABModel) putCopier(c *deepcopy.Copier) {
	m.copiersMu.Lock()
	m.copiers = append(m.copiers, c)
	m.copiersMu.Unlock()
}

// CopyStatus says whether the search copies worlds or re-executes paths, and why not.
func (m *ZABModel) CopyStatus() string {
	switch {
	case m.cfg.NoReuse:
		return "off (--no-reuse): every state is re-executed from scratch"
	case m.cfg.NoCopy:
		return "off (--copy=false): states are re-executed"
	case m.copyOff.Load():
		return "off, falling back to re-execution: the world cannot be copied: " + m.copyOffReason
	}
	return fmt.Sprintf("on (%d copies)", m.copies.Load())
}

// stepPlanner is implemented by states that want to know how many steps a search will take from
// them, before the first: the ZAB model keeps a copy of its live world only while steps remain.
type stepPlanner interface {
	PlanSteps(n int)
}

// copyState is the copy bookkeeping of one zabState.
type copyState struct {
	mu        sync.Mutex
	snap      *zabWorld                  // a copy of the state's world, never stepped
	frozen    *deepcopy.Frozen[zabWorld] // snap's layout, once it was copied
	remaining int                        // steps the search still plans to take; -1: not told
}
