package checkers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/zabsim/zabsim/clock"
)

// maxExplainedPartitions bounds how many failing partitions one result explains, and
// maxUnplacedShown how many operations each explanation lists.
const (
	maxExplainedPartitions = 3
	maxUnplacedShown       = 4
)

// verdict turns porcupine's answer into a result, explaining an Illegal one partition by
// partition.
func (b *linearizabilityBuilder) verdict(col *collector, model porcupine.Model, history []porcupine.Operation,
	partitions []string, outcome porcupine.CheckResult, info porcupine.LinearizationInfo, limit time.Duration) Result {
	scopeText := fmt.Sprintf("%d operations under %s in %d partitions", len(history), b.opts.Prefix, len(partitions))
	switch outcome {
	case porcupine.Ok:
		return col.result(len(history), scopeText+" are linearizable")
	case porcupine.Unknown:
		res := col.result(len(history), fmt.Sprintf("porcupine could not decide within %v whether the %s are linearizable; this is not a pass",
			limit, scopeText))
		if res.Status == Pass {
			res.Status = Unknown
		}
		return res
	}
	if info.PartialLinearizations() == nil {
		// The fast check does not keep the linearizations it tried; search again, keeping them,
		// to explain the failure.
		var again porcupine.CheckResult
		again, info = porcupine.CheckOperationsVerbose(model, history, limit)
		if again != porcupine.Illegal {
			col.add(Finding{Rule: "linearizable", Message: fmt.Sprintf(
				"the %s are not linearizable, but the search for an explanation ran out of its %v", scopeText, limit)})
			return col.result(len(history), scopeText+" are not linearizable")
		}
	}
	b.explain(col, model, history, partitions, info)
	return col.result(len(history), scopeText+" are not linearizable")
}

// explain adds a finding for each partition (up to a bound) that has no linearization.
func (b *linearizabilityBuilder) explain(col *collector, model porcupine.Model, history []porcupine.Operation,
	partitions []string, info porcupine.LinearizationInfo) {
	// Porcupine numbers a partition's operations in the order the partition function returns
	// them, which is history order.
	members := make([][]porcupine.Operation, len(partitions))
	for _, op := range history {
		p := op.Input.(*modelInput).partition
		members[p] = append(members[p], op)
	}
	explained := 0
	for p, partials := range info.PartialLinearizations() {
		if p >= len(partitions) || explained >= maxExplainedPartitions {
			break
		}
		longest := canonicalLongest(partials)
		if len(longest) == len(members[p]) {
			continue
		}
		explained++
		ops := make([]porcupine.Operation, len(longest))
		for i, id := range longest {
			ops[i] = members[p][id]
		}
		col.add(b.partitionFinding(model, members[p], partitions[p], ops))
	}
	if explained == 0 {
		col.add(Finding{Rule: "linearizable", Message: "porcupine found no linearization but kept no partial one to explain it"})
	}
}

// canonicalLongest returns the longest partial linearization, the lexicographically smallest
// among equals: porcupine returns them in map order, and explanations must not depend on it.
func canonicalLongest(partials [][]int) []int {
	var best []int
	for _, seq := range partials {
		if len(seq) > len(best) || (len(seq) == len(best) && slices.Compare(seq, best) < 0) {
			best = seq
		}
	}
	return best
}

// partitionFinding explains one partition without a linearization: how far the longest
// linearizable order gets, the state it ends in, and the operations that cannot follow it.
func (b *linearizabilityBuilder) partitionFinding(model porcupine.Model, members []porcupine.Operation, key string,
	longest []porcupine.Operation) Finding {
	state := model.Init()
	placed := map[*modelInput]bool{}
	for _, op := range longest {
		_, state = model.Step(state, op.Input, op.Output)
		placed[op.Input.(*modelInput)] = true
	}
	var unplaced []porcupine.Operation
	for _, op := range members {
		if !placed[op.Input.(*modelInput)] {
			unplaced = append(unplaced, op)
		}
	}
	slices.SortStableFunc(unplaced, func(x, y porcupine.Operation) int { return compareInt64(x.Call, y.Call) })
	f := Finding{Rule: "linearizable"}
	var lines []string
	for i, op := range unplaced {
		if i == maxUnplacedShown {
			lines = append(lines, fmt.Sprintf("and %d more", len(unplaced)-maxUnplacedShown))
			break
		}
		lines = append(lines, b.describeUnplaced(&f, op))
	}
	f.Message = fmt.Sprintf("the %d operations on %s have no linearization: the longest linearizable order places %d of them and ends in state %s; none of these can follow it: %s",
		len(members), key, len(longest), model.DescribeState(state), strings.Join(lines, "; "))
	if b.opts.Model == QueueModel && !b.opts.QueueAnyOrder {
		f.Message += " (the queue model lets a successful delete remove only the lowest item present: consumers take the head)"
	}
	return f
}

// describeUnplaced renders one operation porcupine could not place, and records what it names.
func (b *linearizabilityBuilder) describeUnplaced(f *Finding, op porcupine.Operation) string {
	in := op.Input.(*modelInput)
	out := op.Output.(*modelOutput)
	if in.source == nil {
		f.Sessions = append(f.Sessions, in.session)
		f.Times = append(f.Times, clock.Time(op.Call))
		return fmt.Sprintf("the end of session %s committed at %s", hexID(in.session), timeString(clock.Time(op.Call)))
	}
	f.Clients = append(f.Clients, in.ref.Client)
	f.Sessions = append(f.Sessions, in.session)
	f.Ops = append(f.Ops, in.ref)
	f.Times = append(f.Times, clock.Time(op.Call))
	if in.source.Outcome == OutcomeReplied {
		f.Zxids = append(f.Zxids, in.source.Zxid)
	}
	text := describeOperation(in.ref, in.source)
	switch {
	case out.resolved:
		text += " (the committed log shows it took effect: " + describeModelOutput(in, out) + ")"
	case out.unknown:
		text += " (it may or may not have taken effect)"
	}
	return text
}
