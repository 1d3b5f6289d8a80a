package checkers

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// ErrOutsideModel is wrapped by the error a linearizability check returns when an operation in its
// scope is one its model cannot represent (a multi given to the register model, a setData on a
// queue item): the workload and the chosen model do not fit.
var ErrOutsideModel = errors.New("checkers: operation outside the model")

// ModelKind selects a linearizability model.
type ModelKind uint8

// The models.
const (
	// RegisterModel treats every znode under the prefix as an independent register: create,
	// setData and check with or without a version (compare-and-set), delete with a version, and
	// their NODEEXISTS, NONODE and BADVERSION outcomes, as Jepsen's ZooKeeper test did. The
	// history is partitioned by path, so it scales with the number of znodes. Parents are taken to
	// exist; sequential creates and multi are outside this model.
	RegisterModel ModelKind = iota + 1
	// TreeModel judges the whole subtree under the prefix as one state, for workloads with multi:
	// all-or-nothing multi with per-op results, sequential names taken from the parent's
	// cversion, NOTEMPTY and NOCHILDRENFOREPHEMERALS. The prefix node must exist throughout, and
	// its children must be created only by operations in the history.
	TreeModel
	// QueueModel judges the sequential queue workload on the prefix node: producers create
	// sequential children, consumers delete the lowest child they can (see queueState).
	QueueModel
	// WriteOrderModel holds no state: it judges only the order of the writes under the prefix, for
	// workloads no state model fits (the lock recipes, whose container parents the server deletes
	// by itself). Only the zxid-order checker applies it: every write must be acknowledged with its
	// own transaction's zxid, with the result that transaction records, and the zxids must respect
	// real time and each session's order. Porcupine, which needs a state, skips it.
	WriteOrderModel
)

func (m ModelKind) checkerName() string {
	switch m {
	case RegisterModel:
		return CheckerRegister
	case TreeModel:
		return CheckerTree
	case QueueModel:
		return CheckerQueue
	case WriteOrderModel:
		return "linearizability/write-order"
	default:
		return "linearizability/invalid-model"
	}
}

// isStrictDescendant reports whether path lies strictly under prefix.
func isStrictDescendant(path, prefix string) bool {
	if prefix == "/" {
		return path != "/" && !isReserved(path)
	}
	// No prefix+"/" concatenation: this runs once per operation of a history.
	return len(path) > len(prefix) && path[len(prefix)] == '/' && strings.HasPrefix(path, prefix)
}

// scoper decides which operations a model judges.
type scoper struct {
	opts LinearizabilityOptions
}

func outside(ref OpRef, op *Operation, model ModelKind, why string) error {
	return fmt.Errorf("%w: %s: %s is %s", ErrOutsideModel, model.checkerName(), describeOperation(ref, op), why)
}

// inScope reports whether the model judges op, and fails for an operation in its scope that it
// cannot represent. Client closeSession operations are always in scope: they delete ephemerals.
func (s scoper) inScope(ref OpRef, op *Operation) (bool, error) {
	if op.Kind == proto.OpCloseSession {
		return true, nil
	}
	if s.opts.Model == WriteOrderModel {
		// Every write under the prefix, whatever it does: no model has to represent it.
		in := op.Kind.IsWrite() && op.Kind != proto.OpSetACL && isStrictDescendant(op.Path, s.opts.Prefix)
		for i := range op.Multi {
			in = in || isStrictDescendant(op.Multi[i].Path, s.opts.Prefix)
		}
		return in, nil
	}
	if op.Kind == proto.OpMulti {
		return s.multiInScope(ref, op)
	}
	prefix := s.opts.Prefix
	// Writes to the prefix node itself (the workload creating its namespace) are outside every
	// model; reads of it are judged by the models that hold it: the queue's listing, the tree's
	// root.
	atPrefix := op.Path == prefix && isRead(op.Kind) && s.opts.Model != RegisterModel
	if !isStrictDescendant(op.Path, prefix) && !atPrefix {
		return false, nil
	}
	if isRead(op.Kind) && !s.opts.IncludeReads {
		return false, nil
	}
	switch op.Kind {
	case proto.OpSync, proto.OpAddWatch, proto.OpGetACL, proto.OpSetACL:
		// None of the models holds ACLs; a setACL changes nothing they hold.
		return false, nil
	case proto.OpCreate, proto.OpCreate2:
		if op.Mode.IsContainer() {
			// The server deletes an empty container by itself, a change no operation in the
			// history makes, so no model can follow the node's life.
			return false, outside(ref, op, s.opts.Model, "the create of a container, which the server may delete by itself")
		}
	}
	switch s.opts.Model {
	case RegisterModel:
		return s.registerScope(ref, op)
	case TreeModel:
		return true, nil
	default:
		return s.queueScope(ref, op)
	}
}

func (s scoper) registerScope(ref OpRef, op *Operation) (bool, error) {
	switch {
	case op.Kind == proto.OpGetChildren || op.Kind == proto.OpGetChildren2:
		return false, nil // the register model does not track children
	case (op.Kind == proto.OpCreate || op.Kind == proto.OpCreate2) && op.Mode.IsSequential():
		return false, outside(ref, op, RegisterModel, "a sequential create; use the queue or tree model")
	}
	return true, nil
}

func (s scoper) queueScope(ref OpRef, op *Operation) (bool, error) {
	prefix := s.opts.Prefix
	switch op.Kind {
	case proto.OpCreate, proto.OpCreate2:
		if op.Mode.IsSequential() && proto.ParentPath(op.Path) == prefix {
			return true, nil
		}
		return false, outside(ref, op, QueueModel, "not a sequential create of a queue item")
	case proto.OpDelete:
		if _, ok := sequenceOf(proto.BaseName(op.Path)); ok && proto.ParentPath(op.Path) == prefix {
			return true, nil
		}
		return false, outside(ref, op, QueueModel, "not a delete of a queue item")
	case proto.OpGetChildren, proto.OpGetChildren2:
		return op.Path == prefix, nil
	case proto.OpGetData, proto.OpExists:
		return false, nil
	default:
		return false, outside(ref, op, QueueModel, "not an operation of the queue workload")
	}
}

func (s scoper) multiInScope(ref OpRef, op *Operation) (bool, error) {
	in := 0
	for i := range op.Multi {
		if isStrictDescendant(op.Multi[i].Path, s.opts.Prefix) {
			in++
		}
	}
	switch {
	case in == 0:
		return false, nil
	case in != len(op.Multi):
		return false, outside(ref, op, s.opts.Model, "a multi that spans the prefix "+s.opts.Prefix)
	case s.opts.Model != TreeModel:
		return false, outside(ref, op, s.opts.Model, "a multi; use the tree model")
	}
	return true, nil
}

// createsEphemeral reports whether op may create an ephemeral node, and on which paths (for a
// sequential create, the prefix's parent stands for the unknown name).
func createsEphemeral(op *Operation) []string {
	var paths []string
	switch op.Kind {
	case proto.OpCreate, proto.OpCreate2:
		if op.Mode.IsEphemeral() {
			paths = append(paths, op.Path)
		}
	case proto.OpMulti:
		for i := range op.Multi {
			sub := &op.Multi[i]
			if (sub.Kind == proto.OpCreate || sub.Kind == proto.OpCreate2) && sub.Mode.IsEphemeral() {
				paths = append(paths, sub.Path)
			}
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}
