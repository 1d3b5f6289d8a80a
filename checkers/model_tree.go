package checkers

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// treeState is the subtree under the checked prefix as the whole-tree model sees it: every node
// with its data, data version, persisted cversion (the count of child creates, from which
// sequential names are taken), owner and number of children. Nodes are sorted by path; the first
// is the prefix node itself, which the model takes to exist throughout.
type treeState struct {
	nodes []treeNode
}

type treeNode struct {
	path     string
	data     string
	version  int32
	cversion int32
	owner    int64
	children int32
}

func newTreeState(prefix string) treeState {
	return treeState{nodes: []treeNode{{path: prefix}}}
}

func (s treeState) find(path string) (int, bool) {
	return slices.BinarySearchFunc(s.nodes, path, func(n treeNode, p string) int { return strings.Compare(n.path, p) })
}

func (s treeState) clone() treeState {
	return treeState{nodes: slices.Clone(s.nodes)}
}

func (s *treeState) insert(n treeNode) {
	i, _ := s.find(n.path)
	s.nodes = slices.Insert(s.nodes, i, n)
}

// applySub applies one create, delete, setData or check to the working copy s as
// PrepRequestProcessor validates it, in Java's order of checks, and returns its result. It changes
// s only when the operation succeeds.
func (s *treeState) applySub(sub *SubOperation, session int64) SubResult {
	switch sub.Kind {
	case proto.OpCreate, proto.OpCreate2:
		return s.create(sub, session)
	case proto.OpDelete:
		parent, ok := s.find(proto.ParentPath(sub.Path))
		i, exists := s.find(sub.Path)
		if !ok || !exists {
			return SubResult{Err: proto.NoNode}
		}
		if _, code := checkVersion(s.nodes[i].version, sub.Version); code != proto.OK {
			return SubResult{Err: code}
		}
		if s.nodes[i].children > 0 {
			return SubResult{Err: proto.NotEmpty}
		}
		s.nodes[parent].children--
		s.nodes = slices.Delete(s.nodes, i, i+1)
		return SubResult{}
	case proto.OpSetData, proto.OpCheck:
		i, exists := s.find(sub.Path)
		if !exists {
			return SubResult{Err: proto.NoNode}
		}
		next, code := checkVersion(s.nodes[i].version, sub.Version)
		if code != proto.OK {
			return SubResult{Err: code}
		}
		if sub.Kind == proto.OpCheck {
			return SubResult{}
		}
		s.nodes[i].data = string(sub.Data)
		s.nodes[i].version = next
		return SubResult{Stat: &proto.Stat{Version: next}}
	default:
		panic(fmt.Sprintf("checkers: tree model given %v, which scoping should have rejected", sub.Kind))
	}
}

func (s *treeState) create(sub *SubOperation, session int64) SubResult {
	parent, ok := s.find(proto.ParentPath(sub.Path))
	if !ok {
		return SubResult{Err: proto.NoNode}
	}
	path := sub.Path
	if sub.Mode.IsSequential() {
		path += fmt.Sprintf("%010d", s.nodes[parent].cversion)
	}
	if _, exists := s.find(path); exists {
		return SubResult{Err: proto.NodeExists}
	}
	if s.nodes[parent].owner != 0 {
		return SubResult{Err: proto.NoChildrenForEphemerals}
	}
	owner := int64(0)
	if sub.Mode.IsEphemeral() {
		owner = session
	}
	s.nodes[parent].cversion++
	s.nodes[parent].children++
	s.insert(treeNode{path: path, data: string(sub.Data), owner: owner})
	return SubResult{Path: path, Stat: &proto.Stat{}}
}

// closeSession deletes the session's ephemeral nodes, which never have children.
func (s *treeState) closeSession(session int64) {
	for i := 0; i < len(s.nodes); {
		if s.nodes[i].owner != session || i == 0 {
			i++
			continue
		}
		if parent, ok := s.find(proto.ParentPath(s.nodes[i].path)); ok {
			s.nodes[parent].children--
		}
		s.nodes = slices.Delete(s.nodes, i, i+1)
	}
}

// treeApply computes what ZooKeeper returns for in on state s: the code, the per-op results of a
// multi, and the state after.
func treeApply(s treeState, in *modelInput) (proto.Code, []SubResult, treeState) {
	work := s.clone()
	switch in.kind {
	case proto.OpCloseSession:
		work.closeSession(in.session)
		return proto.OK, nil, work
	case proto.OpMulti:
		results := make([]SubResult, len(in.multi))
		for i := range in.multi {
			results[i] = work.applySub(&in.multi[i], in.session)
			if code := results[i].Err; code != proto.OK {
				return code, failedMultiResults(len(in.multi), i, code), s
			}
		}
		return proto.OK, results, work
	default:
		sub := SubOperation{Kind: in.kind, Path: in.path, Data: []byte(in.data), Version: in.version, Mode: in.mode}
		r := work.applySub(&sub, in.session)
		if r.Err != proto.OK {
			return r.Err, []SubResult{r}, s
		}
		return proto.OK, []SubResult{r}, work
	}
}

// failedMultiResults is what a 3.8.0 server returns for a multi whose op failed: OK for the ops
// before it, its code for it, RUNTIMEINCONSISTENCY for the ops after it.
func failedMultiResults(n, failed int, code proto.Code) []SubResult {
	out := make([]SubResult, n)
	out[failed].Err = code
	for i := failed + 1; i < n; i++ {
		out[i].Err = proto.RuntimeInconsistency
	}
	return out
}

func treeJudged(kind proto.OpCode, code proto.Code) bool {
	switch kind {
	case proto.OpCreate, proto.OpCreate2:
		return judged(kind, code, proto.NoNode, proto.NodeExists, proto.NoChildrenForEphemerals)
	case proto.OpDelete:
		return judged(kind, code, proto.NoNode, proto.BadVersion, proto.NotEmpty)
	case proto.OpMulti:
		return judged(kind, code, proto.NoNode, proto.NodeExists, proto.NoChildrenForEphemerals,
			proto.BadVersion, proto.NotEmpty)
	default:
		return judged(kind, code, proto.NoNode, proto.BadVersion)
	}
}

func treeModelStep(state, input, output any) (bool, any) {
	s := state.(treeState)
	in := input.(*modelInput)
	out := output.(*modelOutput)
	if isRead(in.kind) {
		return treeRead(s, in, out), s
	}
	code, results, next := treeApply(s, in)
	if out.unknown {
		return true, next
	}
	if in.kind == proto.OpCloseSession {
		return true, next
	}
	if !treeJudged(in.kind, out.err) {
		return true, s
	}
	if code != out.err {
		return false, s
	}
	if in.kind == proto.OpMulti {
		if out.subs != nil && !subResultsMatch(results, out.subs, code == proto.OK) {
			return false, s
		}
		return true, next
	}
	if code == proto.OK && !subResultsMatch(results, []SubResult{{Path: out.path, Stat: versionStat(out.version)}}, true) {
		return false, s
	}
	return true, next
}

func versionStat(version int32) *proto.Stat {
	if version < 0 {
		return nil
	}
	return &proto.Stat{Version: version}
}

// subResultsMatch compares computed results with recorded ones: codes always, and for a multi that
// succeeded the created paths and data versions the client recorded.
func subResultsMatch(want, got []SubResult, succeeded bool) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if want[i].Err != got[i].Err {
			return false
		}
		if !succeeded {
			continue
		}
		if got[i].Path != "" && got[i].Path != want[i].Path {
			return false
		}
		if got[i].Stat != nil && want[i].Stat != nil && got[i].Stat.Version != want[i].Stat.Version {
			return false
		}
	}
	return true
}

func isRead(kind proto.OpCode) bool {
	switch kind {
	case proto.OpGetData, proto.OpExists, proto.OpGetChildren, proto.OpGetChildren2:
		return true
	}
	return false
}

// treeRead judges a read against the tree (reads are in the model only on request).
func treeRead(s treeState, in *modelInput, out *modelOutput) bool {
	i, exists := s.find(in.path)
	if out.err == proto.NoNode {
		return !exists
	}
	if out.err != proto.OK {
		return true
	}
	if !exists {
		return false
	}
	n := s.nodes[i]
	switch in.kind {
	case proto.OpGetData:
		return out.data == n.data && (out.version < 0 || out.version == n.version)
	case proto.OpExists:
		return out.version < 0 || out.version == n.version
	default:
		return slices.Equal(sortedCopy(out.children), s.childNames(in.path))
	}
}

// childNames returns the names of path's children, sorted.
func (s treeState) childNames(path string) []string {
	var out []string
	for _, n := range s.nodes {
		if n.path != path && proto.ParentPath(n.path) == path {
			out = append(out, proto.BaseName(n.path))
		}
	}
	slices.Sort(out)
	return out
}

func sortedCopy(v []string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

func treeEqual(a, b any) bool {
	return slices.Equal(a.(treeState).nodes, b.(treeState).nodes)
}

func hashTreeState(state any) uint64 {
	h := fnv.New64a()
	for _, n := range state.(treeState).nodes {
		fmt.Fprintf(h, "%s|%s|%d|%d|%d|%d;", n.path, n.data, n.version, n.cversion, n.owner, n.children)
	}
	return h.Sum64()
}

func describeTreeState(state any) string {
	var parts []string
	for _, n := range state.(treeState).nodes {
		text := fmt.Sprintf("%s=%q v%d", n.path, n.data, n.version)
		if n.owner != 0 {
			text += " ephemeral of " + hexID(n.owner)
		}
		parts = append(parts, text)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
