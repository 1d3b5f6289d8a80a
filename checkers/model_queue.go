package checkers

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// queueState is the sequential queue workload's znode as the queue model sees it: the parent's
// sequence counter (its persisted cversion, which every child create advances) and the items
// present, sorted by sequence number, each with the session owning it if it is ephemeral.
//
// Producers create sequential children; a consumer lists the children and deletes the lowest it
// can. Because sequence numbers only grow, the lowest item a consumer manages to delete is the
// lowest present at that moment even if its listing was stale, so in strict mode every successful
// delete must remove the queue's head.
type queueState struct {
	counter int32
	items   []queueItem
}

type queueItem struct {
	seq   int32
	owner int64
}

// sequenceOf parses the 10-digit sequence suffix of a child name.
func sequenceOf(name string) (int32, bool) {
	if len(name) < 10 {
		return 0, false
	}
	v, err := strconv.ParseInt(name[len(name)-10:], 10, 32)
	if err != nil || v < 0 {
		return 0, false
	}
	return int32(v), true
}

func (s queueState) find(seq int32) (int, bool) {
	return slices.BinarySearchFunc(s.items, seq, func(it queueItem, v int32) int { return int(it.seq) - int(v) })
}

// queueStep computes what ZooKeeper returns for in on state s, and the state after. strict says a
// delete may remove only the head: a successful delete of any other item is impossible.
func queueStep(s queueState, in *modelInput, strict bool) (code proto.Code, path string, next queueState, possible bool) {
	switch in.kind {
	case proto.OpCreate, proto.OpCreate2:
		owner := int64(0)
		if in.mode.IsEphemeral() {
			owner = in.session
		}
		next := queueState{counter: s.counter + 1, items: append(slices.Clone(s.items), queueItem{seq: s.counter, owner: owner})}
		return proto.OK, in.path + fmt.Sprintf("%010d", s.counter), next, true
	case proto.OpDelete:
		seq, _ := sequenceOf(proto.BaseName(in.path))
		i, present := s.find(seq)
		switch {
		case !present:
			return proto.NoNode, "", s, true
		case in.version != -1 && in.version != 0:
			return proto.BadVersion, "", s, true
		}
		next := queueState{counter: s.counter, items: slices.Delete(slices.Clone(s.items), i, i+1)}
		return proto.OK, "", next, !strict || i == 0
	case proto.OpCloseSession:
		next := queueState{counter: s.counter}
		for _, it := range s.items {
			if it.owner != in.session {
				next.items = append(next.items, it)
			}
		}
		return proto.OK, "", next, true
	default:
		panic(fmt.Sprintf("checkers: queue model given %v, which scoping should have rejected", in.kind))
	}
}

func queueModelStep(strict bool) func(state, input, output any) (bool, any) {
	return func(state, input, output any) (bool, any) {
		s := state.(queueState)
		in := input.(*modelInput)
		out := output.(*modelOutput)
		if in.kind == proto.OpGetChildren || in.kind == proto.OpGetChildren2 {
			return queueRead(s, out), s
		}
		code, path, next, possible := queueStep(s, in, strict)
		switch {
		case out.unknown || in.kind == proto.OpCloseSession:
			// An unknown delete of an item that is not the head cannot happen here; porcupine
			// can still place it later, or nowhere.
			if !possible {
				return true, s
			}
			return true, next
		case !queueJudged(in.kind, out.err):
			return true, s
		case code != out.err || !possible:
			return false, s
		case code == proto.OK && out.path != "" && out.path != path:
			return false, s
		}
		return true, next
	}
}

func queueJudged(kind proto.OpCode, code proto.Code) bool {
	if kind == proto.OpDelete {
		return judged(kind, code, proto.NoNode, proto.BadVersion)
	}
	return code == proto.OK
}

// queueRead judges a listing of the queue against the items present.
func queueRead(s queueState, out *modelOutput) bool {
	if out.err != proto.OK {
		return true
	}
	if len(out.children) != len(s.items) {
		return false
	}
	seqs := make([]int32, 0, len(out.children))
	for _, name := range out.children {
		seq, ok := sequenceOf(name)
		if !ok {
			return false
		}
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	for i, it := range s.items {
		if seqs[i] != it.seq {
			return false
		}
	}
	return true
}

func queueEqual(a, b any) bool {
	x, y := a.(queueState), b.(queueState)
	return x.counter == y.counter && slices.Equal(x.items, y.items)
}

func hashQueueState(state any) uint64 {
	s := state.(queueState)
	h := fnv.New64a()
	fmt.Fprintf(h, "%d;", s.counter)
	for _, it := range s.items {
		fmt.Fprintf(h, "%d/%d;", it.seq, it.owner)
	}
	return h.Sum64()
}

func describeQueueState(state any) string {
	s := state.(queueState)
	parts := make([]string, len(s.items))
	for i, it := range s.items {
		parts[i] = fmt.Sprintf("%010d", it.seq)
	}
	return fmt.Sprintf("next=%d items=[%s]", s.counter, strings.Join(parts, " "))
}
