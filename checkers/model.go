package checkers

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// modelInput is what a porcupine model sees of an operation's call. One type serves the three
// models; each uses the fields that apply to it.
type modelInput struct {
	ref       OpRef
	partition int
	kind      proto.OpCode // closeSession also stands for a session the leader expired
	path      string
	data      string
	version   int32
	mode      proto.CreateMode
	session   int64 // the issuing session: the owner of an ephemeral, the session a close ends
	multi     []SubOperation
	source    *Operation // the operation in the history, or nil for a session end the runner recorded
	zxid      int64      // the position the zxid-order checker gives it (see linearizabilityEntry.zxid)
}

// modelOutput is what a porcupine model sees of an operation's result.
type modelOutput struct {
	// unknown marks an operation whose outcome is unknown: the model applies it if it can take
	// effect at that point, and porcupine may also place it after everything else, which stands
	// for "it never happened".
	unknown  bool
	err      proto.Code
	path     string // the created path
	version  int32  // the data version in the reply's stat, or -1 if there was none
	data     string
	children []string
	subs     []SubResult
	// resolved says the outcome came from the committed log rather than a reply.
	resolved bool
}

// checkVersion is PrepRequestProcessor.checkAndIncVersion: the expected version must be -1 or the
// current one, and the result is the next version.
func checkVersion(current, expected int32) (int32, proto.Code) {
	if expected != -1 && expected != current {
		return 0, proto.BadVersion
	}
	return current + 1, proto.OK
}

// judged reports whether a model can judge a result code for an operation kind. Codes it cannot
// judge (NOAUTH, SESSIONEXPIRED, SESSIONMOVED, BADARGUMENTS, ...) depend on things the models do
// not track; such a result is taken as a failure that had no effect.
func judged(kind proto.OpCode, code proto.Code, codes ...proto.Code) bool {
	if code == proto.OK {
		return true
	}
	for _, c := range codes {
		if c == code {
			return true
		}
	}
	return false
}

// registerState is one znode seen as a register: whether it exists, its data and data version,
// and the session owning it if it is ephemeral.
type registerState struct {
	exists  bool
	data    string
	version int32
	owner   int64
}

// registerStep computes what ZooKeeper returns for in on state s, and the state after.
func registerStep(s registerState, in *modelInput) (proto.Code, int32, registerState) {
	switch in.kind {
	case proto.OpCreate, proto.OpCreate2:
		if s.exists {
			return proto.NodeExists, -1, s
		}
		owner := int64(0)
		if in.mode.IsEphemeral() {
			owner = in.session
		}
		return proto.OK, 0, registerState{exists: true, data: in.data, owner: owner}
	case proto.OpSetData, proto.OpCheck, proto.OpDelete:
		if !s.exists {
			return proto.NoNode, -1, s
		}
		next, code := checkVersion(s.version, in.version)
		switch {
		case code != proto.OK:
			return code, -1, s
		case in.kind == proto.OpSetData:
			return proto.OK, next, registerState{exists: true, data: in.data, version: next, owner: s.owner}
		case in.kind == proto.OpCheck:
			// A check on its own replies with a stat the 3.8.0 server never fills in, so its
			// version is not judged.
			return proto.OK, -1, s
		default:
			return proto.OK, -1, registerState{}
		}
	case proto.OpGetData, proto.OpExists:
		if !s.exists {
			return proto.NoNode, -1, s
		}
		return proto.OK, s.version, s
	case proto.OpCloseSession:
		if s.exists && s.owner == in.session {
			return proto.OK, -1, registerState{}
		}
		return proto.OK, -1, s
	default:
		panic(fmt.Sprintf("checkers: register model given %v, which scoping should have rejected", in.kind))
	}
}

// registerJudged lists the codes the register model can judge for each kind.
func registerJudged(kind proto.OpCode, code proto.Code) bool {
	switch kind {
	case proto.OpCreate, proto.OpCreate2:
		return judged(kind, code, proto.NodeExists)
	case proto.OpDelete:
		return judged(kind, code, proto.NoNode, proto.BadVersion, proto.NotEmpty)
	default:
		return judged(kind, code, proto.NoNode, proto.BadVersion)
	}
}

func registerModelStep(state, input, output any) (bool, any) {
	ok, next := registerJudge(state.(registerState), input.(*modelInput), output.(*modelOutput))
	return ok, next
}

// registerJudge is the register model's step without the interfaces porcupine needs, for the
// zxid-order checker's replay.
func registerJudge(s registerState, in *modelInput, out *modelOutput) (bool, registerState) {
	code, version, next := registerStep(s, in)
	if out.unknown {
		return true, next
	}
	if !registerJudged(in.kind, out.err) {
		return true, s
	}
	if out.err == proto.NotEmpty {
		// The register model does not see children: NOTEMPTY is possible exactly where the delete
		// would otherwise have succeeded, and changes nothing.
		return code == proto.OK, s
	}
	if code != out.err {
		return false, s
	}
	if code == proto.OK && out.version >= 0 && version != out.version {
		return false, s
	}
	if in.kind == proto.OpGetData && code == proto.OK && out.data != s.data {
		return false, s
	}
	return true, next
}

func describeRegisterState(state any) string {
	s := state.(registerState)
	if !s.exists {
		return "absent"
	}
	owner := ""
	if s.owner != 0 {
		owner = " ephemeral of " + hexID(s.owner)
	}
	return fmt.Sprintf("%q v%d%s", s.data, s.version, owner)
}

func hashRegisterState(state any) uint64 {
	s := state.(registerState)
	h := fnv.New64a()
	fmt.Fprintf(h, "%t|%d|%d|%s", s.exists, s.version, s.owner, s.data)
	return h.Sum64()
}

// describeModelOperation renders an operation for porcupine's visualization.
func describeModelOperation(input, output any) string {
	in := input.(*modelInput)
	out := output.(*modelOutput)
	var b strings.Builder
	b.WriteString(in.ref.String() + " ")
	switch in.kind {
	case proto.OpCloseSession:
		fmt.Fprintf(&b, "close session %s", hexID(in.session))
	case proto.OpCreate, proto.OpCreate2:
		fmt.Fprintf(&b, "create(%s, %q, %v)", in.path, in.data, in.mode)
	case proto.OpSetData:
		fmt.Fprintf(&b, "setData(%s, %q, v=%d)", in.path, in.data, in.version)
	case proto.OpMulti:
		fmt.Fprintf(&b, "multi(%d ops)", len(in.multi))
	default:
		fmt.Fprintf(&b, "%v(%s, v=%d)", in.kind, in.path, in.version)
	}
	b.WriteString(" -> " + describeModelOutput(in, out))
	return b.String()
}

func describeModelOutput(in *modelInput, out *modelOutput) string {
	if out.unknown {
		return "unknown"
	}
	text := out.err.String()
	if out.resolved {
		text += " (from the committed log)"
	}
	if out.path != "" {
		text += " " + out.path
	}
	if out.version >= 0 {
		text += fmt.Sprintf(" v%d", out.version)
	}
	if in.kind == proto.OpGetData && out.err == proto.OK {
		text += fmt.Sprintf(" %q", out.data)
	}
	if out.children != nil {
		text += fmt.Sprintf(" %v", out.children)
	}
	return text
}
