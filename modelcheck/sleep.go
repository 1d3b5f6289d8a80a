package modelcheck

import "slices"

// Sleep sets (Godefroid, "Partial-Order Methods for the Verification of Concurrent Systems",
// 1996, chapter 5, with state caching) are the search's partial-order reduction. When a state's
// actions a1, a2, ... are explored in order and a1 commutes with a2 (independent: taking either
// leaves the other enabled and the same, and both orders reach the same state), the path a2 a1
// from there reaches the state a1 a2 already reached; so a1 is put to sleep in the successor by
// a2 and not taken there, until an action that does not commute with it is taken. Every
// reachable state is still reached, and so judged (the reduction saves transitions, not states:
// "generated" goes down, "distinct" does not, which a test checks); what it saves is the
// successors that would be duplicates, which in the ZAB model are each a re-execution.
//
// With a visited set, a state reached again with a smaller sleep set than the one it was
// expanded with must take the actions that were asleep then and are not now: such a state is
// queued again with only those actions (the "missing" ones), and its recorded sleep set becomes
// the intersection. A pending state reached again just has its sleep set intersected.
//
// A model opts in by implementing ActionKeyer. Independence is by owner: two keyed actions with
// different owners are independent. That is the model's claim, and each model says why it holds
// (FLEModel: deliveries and finalize timers of different processes; ZABModel: due events of
// different nodes).

// ActionKeyer is implemented by states whose actions can be put to sleep.
type ActionKeyer interface {
	// ActionKey names action a of this state so that the same transition has the same key in
	// every state where it is enabled (the same channel's head message, the same timer), and
	// says which process owns it. ok is false for an action that does not commute with any
	// other (a fault, a timer that moves the clock): it is never put to sleep.
	ActionKey(a Action) (key SleepKey, ok bool)
}

// SleepKey names a keyed action: its owner (a process) and the transition.
type SleepKey struct {
	Owner uint32
	Key   uint64
}

// sleepSet is a set of keys, kept sorted.
type sleepSet []SleepKey

func compareKeys(a, b SleepKey) int {
	switch {
	case a.Owner != b.Owner:
		if a.Owner < b.Owner {
			return -1
		}
		return 1
	case a.Key < b.Key:
		return -1
	case a.Key > b.Key:
		return 1
	}
	return 0
}

func (s sleepSet) has(k SleepKey) bool {
	_, found := slices.BinarySearchFunc(s, k, compareKeys)
	return found
}

func (s sleepSet) add(k SleepKey) sleepSet {
	i, found := slices.BinarySearchFunc(s, k, compareKeys)
	if found {
		return s
	}
	return slices.Insert(slices.Clip(s), i, k)
}

// intersect returns the keys in both sets, as a new set.
func (s sleepSet) intersect(t sleepSet) sleepSet {
	var out sleepSet
	for _, k := range s {
		if t.has(k) {
			out = append(out, k)
		}
	}
	return out
}

// minus returns the keys of s that are not in t, as a new set.
func (s sleepSet) minus(t sleepSet) sleepSet {
	var out sleepSet
	for _, k := range s {
		if !t.has(k) {
			out = append(out, k)
		}
	}
	return out
}

// union returns the keys in either set, as a new set.
func (s sleepSet) union(t sleepSet) sleepSet {
	out := slices.Clone(s)
	for _, k := range t {
		out = out.add(k)
	}
	return out
}

// independentOf returns the keys of s whose owner is not owner, as a new set: what stays asleep
// after an action of owner.
func (s sleepSet) independentOf(owner uint32) sleepSet {
	var out sleepSet
	for _, k := range s {
		if k.Owner != owner {
			out = append(out, k)
		}
	}
	return out
}

// sleepPlan is how one state is expanded under sleep sets: which of its actions to take, and the
// sleep set each successor gets.
type sleepPlan struct {
	take  []Action
	sleep []sleepSet
}

// planSleep decides which of actions to take from st with sleep set z; only, if not nil,
// restricts them to those keys (a state reached again, see above). keyer is st as an
// ActionKeyer, or nil when sleep sets are off: then every action is taken and every sleep set is
// empty.
func planSleep(keyer ActionKeyer, actions []Action, z, only sleepSet) sleepPlan {
	var p sleepPlan
	if keyer == nil {
		p.take = actions
		p.sleep = make([]sleepSet, len(actions))
		return p
	}
	done := z
	for _, a := range actions {
		k, keyed := keyer.ActionKey(a)
		switch {
		case only != nil && (!keyed || !only.has(k)):
			continue
		case only == nil && keyed && z.has(k):
			continue
		}
		p.take = append(p.take, a)
		if !keyed {
			p.sleep = append(p.sleep, nil)
			continue
		}
		p.sleep = append(p.sleep, done.independentOf(k.Owner))
		done = done.add(k)
	}
	return p
}

// sleepRecord is what the search remembers of a state's sleep set: the keys it was (or will be)
// expanded with, and its queued entry while it waits to be expanded.
type sleepRecord struct {
	keys    sleepSet
	pending *sleepEntry
}

// sleepEntry is a queued expansion: the sleep set to expand with and, for a state reached again
// after its expansion, the only keys to take.
type sleepEntry struct {
	sleep sleepSet
	only  sleepSet
}

// revisit handles a state reached again with sleep set z. It returns the keys to take in a new
// expansion, or nil when nothing is missing (the pending entry, if any, was updated in place).
// queue says the new expansion waits in a queue (breadth-first), where a later revisit may
// still update it; a depth-first search expands it at once.
func (r *sleepRecord) revisit(z sleepSet, queue bool) (missing sleepSet, entry *sleepEntry) {
	lost := r.keys.minus(z)
	if len(lost) == 0 {
		return nil, nil
	}
	r.keys = r.keys.intersect(z)
	if e := r.pending; e != nil {
		e.sleep = r.keys
		if e.only != nil {
			e.only = e.only.union(lost)
		}
		return nil, nil
	}
	e := &sleepEntry{sleep: r.keys, only: lost}
	if queue {
		r.pending = e
	}
	return lost, e
}
