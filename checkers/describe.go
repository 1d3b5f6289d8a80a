package checkers

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// hexID renders a zxid or session id as ZooKeeper's logs do ("0x100000003"); negative values, such
// as the -1 zxid of a notification, stay decimal.
func hexID(v int64) string {
	if v < 0 {
		return strconv.FormatInt(v, 10)
	}
	return "0x" + strconv.FormatInt(v, 16)
}

// quoteData renders data for an explanation: quoted, and cut short if long.
func quoteData(data []byte) string {
	const maxShown = 32
	if data == nil {
		return "null"
	}
	if len(data) > maxShown {
		return strconv.Quote(string(data[:maxShown])) + "…(" + strconv.Itoa(len(data)) + "B)"
	}
	return strconv.Quote(string(data))
}

// describeInput renders an operation's call, such as `setData(/a, "x", version=2)`.
func describeInput(op *Operation) string {
	switch op.Kind {
	case proto.OpCreate, proto.OpCreate2:
		return fmt.Sprintf("%v(%s, %s, %v)", op.Kind, op.Path, quoteData(op.Data), op.Mode)
	case proto.OpSetData:
		return fmt.Sprintf("setData(%s, %s, version=%d)", op.Path, quoteData(op.Data), op.Version)
	case proto.OpDelete, proto.OpCheck:
		return fmt.Sprintf("%v(%s, version=%d)", op.Kind, op.Path, op.Version)
	case proto.OpGetData, proto.OpExists, proto.OpGetChildren, proto.OpGetChildren2:
		return fmt.Sprintf("%v(%s, watch=%t)", op.Kind, op.Path, op.Watch)
	case proto.OpAddWatch:
		return fmt.Sprintf("addWatch(%s, %v)", op.Path, op.WatchMode)
	case proto.OpSync:
		return fmt.Sprintf("sync(%s)", op.Path)
	case proto.OpCloseSession:
		return "closeSession()"
	case proto.OpMulti:
		parts := make([]string, len(op.Multi))
		for i := range op.Multi {
			parts[i] = describeSubOperation(&op.Multi[i])
		}
		return "multi(" + strings.Join(parts, "; ") + ")"
	default:
		return op.Kind.String() + "(" + op.Path + ")"
	}
}

func describeSubOperation(sub *SubOperation) string {
	switch sub.Kind {
	case proto.OpCreate, proto.OpCreate2:
		return fmt.Sprintf("create(%s, %s, %v)", sub.Path, quoteData(sub.Data), sub.Mode)
	case proto.OpSetData:
		return fmt.Sprintf("setData(%s, %s, version=%d)", sub.Path, quoteData(sub.Data), sub.Version)
	default:
		return fmt.Sprintf("%v(%s, version=%d)", sub.Kind, sub.Path, sub.Version)
	}
}

// describeOutput renders what came of an operation, such as "OK zxid=0x100000005 version=3".
func describeOutput(op *Operation) string {
	switch op.Outcome {
	case OutcomeReplied:
	case OutcomePending:
		return "pending (no result by the end of the run)"
	default:
		return fmt.Sprintf("%v (%s)", op.Outcome, op.Err.String())
	}
	var b strings.Builder
	b.WriteString(op.Err.String())
	b.WriteString(" zxid=" + hexID(op.Zxid))
	if op.CreatedPath != "" {
		b.WriteString(" path=" + op.CreatedPath)
	}
	if op.Kind == proto.OpGetData && op.Err == proto.OK {
		b.WriteString(" data=" + quoteData(op.ResultData))
	}
	if op.Stat != nil {
		fmt.Fprintf(&b, " version=%d", op.Stat.Version)
	}
	if op.Kind == proto.OpGetChildren || op.Kind == proto.OpGetChildren2 {
		fmt.Fprintf(&b, " children=%v", op.Children)
	}
	return b.String()
}

// describeOperation renders a whole operation with its client, session and times, as
// explanations name it: `c1#4 (session 0x1) setData(/a, "x", version=2) -> OK zxid=0x5 [1.0s, 1.2s]`.
func describeOperation(ref OpRef, op *Operation) string {
	return fmt.Sprintf("%v (session %s) %s -> %s [%s]", ref, hexID(op.Session), describeInput(op),
		describeOutput(op), describeSpan(op))
}

func describeSpan(op *Operation) string {
	if op.Outcome == OutcomePending {
		return timeString(op.Call) + ", never"
	}
	return timeString(op.Call) + ", " + timeString(op.Return)
}

// timeString renders a virtual time without the padding the trace uses.
func timeString(t clock.Time) string { return strings.TrimSpace(t.String()) + "s" }
