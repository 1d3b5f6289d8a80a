package datatree_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/scenarios/conform"
	"github.com/zabsim/zabsim/zabmodel/datatree"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The conformance sequences recorded from a real 3.8.0 server
// (scenarios/conform/testdata/*.real.jsonl), replayed here against
// Preparer + Apply + the read API alone, with the client-side path checks
// of go-zookeeper, the library that recorded them. sizes is left out: its
// outcomes are decided by packet length limits, which are the connection's
// business.
var conformSequences = []string{
	"create_modes", "delete", "set_get", "acl", "multi", "paths", "reserved",
	"watches", "sessions", "containers_ttl", "sync",
}

func TestConformanceGoldens(t *testing.T) {
	dir := filepath.Join("..", "..", "scenarios", "conform", "testdata")
	for _, name := range conformSequences {
		t.Run(name, func(t *testing.T) {
			ops, err := conform.ParseFile(filepath.Join(dir, name+".jsonl"))
			require.NoError(t, err)
			want, err := conform.ReadResultsFile(filepath.Join(dir, name+".real.jsonl"))
			require.NoError(t, err)
			got := newConformRunner(datatree.Config{}).run(ops)
			diffs := conform.Compare(want, got)
			assert.Empty(t, diffs, "%s", conform.Report(diffs))
		})
	}
}

// conformClient is one session of a sequence and its connection.
type conformClient struct {
	name    string
	id      int64
	auth    datatree.AuthInfo
	watcher *eventRecorder
}

// eventRecorder is a connection's Watcher: it keeps the notifications.
type eventRecorder struct{ events []proto.WatcherEvent }

func (r *eventRecorder) Process(e proto.WatcherEvent, _ int64) { r.events = append(r.events, e) }

func (r *eventRecorder) take() []proto.WatcherEvent {
	out := r.events
	r.events = nil
	return out
}

// trackerSessions is the session tracker of these runs, in which every
// session is valid until it closes.
type trackerSessions struct{ closing map[int64]bool }

func (s *trackerSessions) CheckSession(id int64, _ any) error {
	if s.closing[id] {
		return proto.SessionExpired
	}
	return nil
}
func (s *trackerSessions) CheckGlobalSession(id int64, owner any) error {
	return s.CheckSession(id, owner)
}
func (s *trackerSessions) TrackSession(int64, int32)  {}
func (s *trackerSessions) SetOwner(int64, any) error  { return nil }
func (s *trackerSessions) SetSessionClosing(id int64) { s.closing[id] = true }

// conformServer is a leader whose every proposal commits at once.
type conformServer struct {
	tree *datatree.Tree
	prep *datatree.Preparer
	zxid int64
	time int64
}

type conformReply struct {
	err      proto.Code
	result   datatree.Result
	prepared datatree.Prepared
}

// submit prepares and applies a request and answers as
// FinalRequestProcessor does.
func (s *conformServer) submit(req datatree.Request) conformReply {
	if datatree.TakesZxid(req.Type, req.Body) {
		s.zxid++
		req.Zxid = s.zxid
	}
	s.time++
	req.TimeMilliseconds = s.time
	prepared, err := s.prep.Prepare(req)
	if err != nil {
		panic(err)
	}
	out := conformReply{prepared: prepared, err: prepared.Err}
	if prepared.Txn == nil {
		return out
	}
	out.result = s.tree.Apply(prepared.Txn)
	if out.result.DigestMismatch || out.result.Fault != nil {
		panic(fmt.Sprintf("txn %v: digest mismatch %v, fault %v", prepared.Txn.Header, out.result.DigestMismatch, out.result.Fault))
	}
	s.prep.Applied(prepared.Txn.Header.Zxid)
	switch {
	case prepared.Txn.Header.Type == proto.OpError:
		if out.err == proto.OK {
			out.err = prepared.Txn.Txn.(*proto.ErrorTxn).Err
		}
	case prepared.Err != proto.OK && req.Type != proto.OpMulti:
	default:
		out.err = out.result.Err
	}
	return out
}

type conformRunner struct {
	srv     *conformServer
	clients map[string]*conformClient
	names   map[int64]string
	nextID  int64
}

func newConformRunner(config datatree.Config) *conformRunner {
	tree := datatree.New(config)
	prep, err := datatree.NewPreparer(tree, &trackerSessions{closing: map[int64]bool{}})
	if err != nil {
		panic(err)
	}
	return &conformRunner{
		srv: &conformServer{tree: tree, prep: prep, zxid: 0x100000000}, clients: map[string]*conformClient{},
		names: map[int64]string{}, nextID: 0x0100000000000000,
	}
}

func (r *conformRunner) run(ops []conform.Op) []conform.Result {
	results := make([]conform.Result, 0, len(ops))
	for i, op := range ops {
		c := r.client(op)
		involved := r.liveClients()
		result := conform.Result{I: i, Session: op.Session, Op: op.Kind, Err: conform.CodeOK}
		r.execute(c, op, &result)
		for _, other := range involved {
			events := other.watcher.take()
			if len(events) == 0 {
				continue
			}
			if result.Events == nil {
				result.Events = map[string][]conform.Event{}
			}
			for _, e := range events {
				result.Events[other.name] = append(result.Events[other.name],
					conform.Event{Type: conform.EventType(e.Type.String()), Path: e.Path})
			}
		}
		results = append(results, result)
	}
	return results
}

// client opens the op's session on first use with a createSession txn.
func (r *conformRunner) client(op conform.Op) *conformClient {
	if c, ok := r.clients[op.Session]; ok {
		return c
	}
	r.nextID++
	c := &conformClient{name: op.Session, id: r.nextID, watcher: &eventRecorder{}}
	c.auth.Add(proto.ID{Scheme: datatree.SchemeIP, ID: "127.0.0.1"})
	timeout := op.TimeoutMs
	if timeout == 0 {
		timeout = conform.DefaultSessionTimeoutMs
	}
	reply := r.srv.submit(datatree.Request{SessionID: c.id, Type: proto.OpCreateSession,
		SessionTimeoutMilliseconds: int32(timeout), Owner: c})
	if reply.err != proto.OK {
		panic("createSession failed: " + reply.err.String())
	}
	r.clients[op.Session] = c
	r.names[c.id] = op.Session
	return c
}

func (r *conformRunner) liveClients() []*conformClient {
	names := make([]string, 0, len(r.clients))
	for name := range r.clients {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]*conformClient, 0, len(names))
	for _, name := range names {
		out = append(out, r.clients[name])
	}
	return out
}

func (r *conformRunner) request(c *conformClient, op proto.OpCode, body proto.Record) conformReply {
	return r.srv.submit(datatree.Request{SessionID: c.id, Type: op, Body: body, Auth: c.auth.IDs(), Owner: c})
}

func kindHasPath(k conform.OpKind) bool {
	switch k {
	case conform.OpAddAuth, conform.OpClose, conform.OpExpire, conform.OpMulti:
		return false
	}
	return true
}

func code(c proto.Code) conform.Code { return conform.Code(c.String()) }

func (r *conformRunner) execute(c *conformClient, op conform.Op, result *conform.Result) {
	if kindHasPath(op.Kind) && conform.ClientRejectsPath(op.Path, op.Kind == conform.OpCreate && op.Flags.Sequential) {
		result.Err = conform.CodeInvalidPath
		return
	}
	switch op.Kind {
	case conform.OpCreate:
		r.create(c, op, result)
	case conform.OpDelete:
		rep := r.request(c, proto.OpDelete, &proto.DeleteRequest{Path: op.Path, Version: op.Version})
		result.Err = code(rep.err)
	case conform.OpSet:
		rep := r.request(c, proto.OpSetData, &proto.SetDataRequest{Path: op.Path, Data: op.Payload(), Version: op.Version})
		result.Err = code(rep.err)
		if rep.err == proto.OK {
			result.Stat = r.stat(*rep.result.Stat)
		}
	case conform.OpSetACL:
		rep := r.request(c, proto.OpSetACL, &proto.SetACLRequest{Path: op.Path, ACL: toProtoACL(op.EffectiveACL()), Version: op.Version})
		result.Err = code(rep.err)
		if rep.err == proto.OK {
			result.Stat = r.stat(*rep.result.Stat)
		}
	case conform.OpMulti:
		r.multi(c, op, result)
	case conform.OpAddAuth:
		id, err := datatree.Authenticate(op.Scheme, []byte(op.Auth), "127.0.0.1")
		if err != nil {
			result.Err = code(err.(proto.Code))
			return
		}
		c.auth.Add(id)
	case conform.OpClose, conform.OpExpire:
		if op.Kind == conform.OpExpire {
			r.srv.tree.RemoveWatcher(c.watcher)
		}
		rep := r.srv.submit(datatree.Request{SessionID: c.id, Type: proto.OpCloseSession})
		result.Err = code(rep.err)
		r.srv.tree.RemoveWatcher(c.watcher)
		delete(r.clients, c.name)
	default:
		r.read(c, op, result)
	}
}

// read serves the ops that reach the tree after the session check.
func (r *conformRunner) read(c *conformClient, op conform.Op, result *conform.Result) {
	reads := map[conform.OpKind]proto.OpCode{conform.OpExists: proto.OpExists, conform.OpGet: proto.OpGetData,
		conform.OpChildren: proto.OpGetChildren2, conform.OpGetACL: proto.OpGetACL, conform.OpSync: proto.OpSync}
	if rep := r.request(c, reads[op.Kind], nil); rep.err != proto.OK {
		result.Err = code(rep.err)
		return
	}
	var w datatree.Watcher
	if op.Watch {
		w = c.watcher
	}
	var err error
	switch op.Kind {
	case conform.OpExists:
		var stat proto.Stat
		if stat, err = r.srv.tree.Exists(op.Path, w); err == nil {
			result.Stat = r.stat(stat)
		}
	case conform.OpGet:
		var data []byte
		var stat proto.Stat
		if data, stat, err = r.srv.tree.GetData(op.Path, c.auth.IDs(), w); err == nil {
			result.SetData(data)
			result.Stat = r.stat(stat)
		}
	case conform.OpChildren:
		var children []string
		var stat proto.Stat
		if children, stat, err = r.srv.tree.GetChildren(op.Path, c.auth.IDs(), w); err == nil {
			result.Children, result.Stat = append([]string{}, children...), r.stat(stat)
		}
	case conform.OpGetACL:
		var acl []proto.ACL
		var stat proto.Stat
		if acl, stat, err = r.srv.tree.GetACL(op.Path, c.auth.IDs()); err == nil {
			result.ACL, result.Stat = fromProtoACL(acl), r.stat(stat)
		}
	case conform.OpSync:
		result.Path = op.Path
	}
	if err != nil {
		result.Err = code(err.(proto.Code))
	}
}

func (r *conformRunner) create(c *conformClient, op conform.Op, result *conform.Result) {
	acl := toProtoACL(op.EffectiveACL())
	var rep conformReply
	switch {
	case op.Flags.Container:
		rep = r.request(c, proto.OpCreateContainer, &proto.CreateRequest{Path: op.Path, Data: op.Payload(), ACL: acl, Flags: proto.Container})
	case op.Flags.TTL:
		flags := proto.PersistentWithTTL
		if op.Flags.Sequential {
			flags = proto.PersistentSequentialWithTTL
		}
		rep = r.request(c, proto.OpCreateTTL, &proto.CreateTTLRequest{Path: op.Path, Data: op.Payload(), ACL: acl, Flags: flags, TTL: op.TTLMs})
	default:
		rep = r.request(c, proto.OpCreate, &proto.CreateRequest{Path: op.Path, Data: op.Payload(), ACL: acl, Flags: createFlags(op.Flags)})
	}
	result.Err = code(rep.err)
	if rep.err == proto.OK {
		result.Path = rep.result.Path
	}
}

func createFlags(f conform.Flags) proto.CreateMode {
	var mode proto.CreateMode
	if f.Ephemeral {
		mode |= proto.Ephemeral
	}
	if f.Sequential {
		mode |= proto.PersistentSequential
	}
	return mode
}

func (r *conformRunner) multi(c *conformClient, op conform.Op, result *conform.Result) {
	request := &proto.MultiRequest{}
	for _, sub := range op.Ops {
		switch sub.Kind {
		case conform.OpCreate:
			request.Ops = append(request.Ops, proto.MultiOp{Type: proto.OpCreate, Request: &proto.CreateRequest{
				Path: sub.Path, Data: sub.Payload(), ACL: toProtoACL(sub.EffectiveACL()), Flags: createFlags(sub.Flags)}})
		case conform.OpDelete:
			request.Ops = append(request.Ops, proto.MultiOp{Type: proto.OpDelete, Request: &proto.DeleteRequest{Path: sub.Path, Version: sub.Version}})
		case conform.OpSet:
			request.Ops = append(request.Ops, proto.MultiOp{Type: proto.OpSetData, Request: &proto.SetDataRequest{Path: sub.Path, Data: sub.Payload(), Version: sub.Version}})
		case conform.OpCheck:
			request.Ops = append(request.Ops, proto.MultiOp{Type: proto.OpCheck, Request: &proto.CheckVersionRequest{Path: sub.Path, Version: sub.Version}})
		}
	}
	rep := r.request(c, proto.OpMulti, request)
	if rep.prepared.Txn == nil || rep.prepared.Txn.Header.Type == proto.OpError {
		result.Err = code(rep.err)
		return
	}
	response, moved, err := rep.result.MultiResponse()
	if err != nil || moved {
		panic("multi reply failed")
	}
	result.Results = []conform.MultiResult{}
	for i, sub := range response.Results {
		m := conform.MultiResult{Op: op.Ops[i].Kind, Err: code(sub.Err)}
		if sub.Err != proto.OK && result.Err == conform.CodeOK {
			result.Err = m.Err
		}
		switch body := sub.Response.(type) {
		case *proto.CreateResponse:
			m.Path = body.Path
		case *proto.SetDataResponse:
			m.Stat = r.stat(body.Stat)
		}
		result.Results = append(result.Results, m)
	}
}

func (r *conformRunner) stat(s proto.Stat) *conform.Stat {
	return &conform.Stat{
		Czxid: s.Czxid, Mzxid: s.Mzxid, Pzxid: s.Pzxid, Ctime: s.Ctime, Mtime: s.Mtime,
		Version: s.Version, Cversion: s.Cversion, Aversion: s.Aversion,
		EphemeralOwner: conform.RenderOwner(s.EphemeralOwner, func(id int64) (string, bool) {
			name, ok := r.names[id]
			return name, ok
		}),
		DataLength: s.DataLength, NumChildren: s.NumChildren,
	}
}

func toProtoACL(acl []conform.ACL) []proto.ACL {
	out := make([]proto.ACL, len(acl))
	for i, a := range acl {
		out[i] = proto.ACL{Perms: proto.Perm(a.Perms), ID: proto.ID{Scheme: a.Scheme, ID: a.ID}}
	}
	return out
}

func fromProtoACL(acl []proto.ACL) []conform.ACL {
	out := make([]conform.ACL, len(acl))
	for i, a := range acl {
		out[i] = conform.ACL{Perms: conform.Perms(a.Perms), Scheme: a.ID.Scheme, ID: a.ID.ID}
	}
	return out
}
