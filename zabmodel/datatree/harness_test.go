package datatree

import (
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// fakeSessions is a session tracker with SessionTrackerImpl's checks:
// unknown sessions, closing sessions and owner changes.
type fakeSessions struct {
	sessions map[int64]*fakeSession
	calls    []string
}

type fakeSession struct {
	timeout int32
	owner   any
	closing bool
}

func newFakeSessions() *fakeSessions {
	return &fakeSessions{sessions: make(map[int64]*fakeSession)}
}

func (f *fakeSessions) CheckSession(id int64, owner any) error {
	f.calls = append(f.calls, fmt.Sprintf("CheckSession(%#x)", id))
	s := f.sessions[id]
	switch {
	case s == nil:
		return proto.UnknownSession
	case s.closing:
		return proto.SessionExpired
	case s.owner == nil:
		s.owner = owner
	case s.owner != owner:
		return proto.SessionMoved
	}
	return nil
}

func (f *fakeSessions) CheckGlobalSession(id int64, owner any) error {
	f.calls = append(f.calls, fmt.Sprintf("CheckGlobalSession(%#x)", id))
	err := f.CheckSession(id, owner)
	f.calls = f.calls[:len(f.calls)-1]
	if err == proto.UnknownSession {
		return proto.SessionExpired
	}
	return err
}

func (f *fakeSessions) TrackSession(id int64, timeout int32) {
	f.calls = append(f.calls, fmt.Sprintf("TrackSession(%#x, %d)", id, timeout))
	if f.sessions[id] == nil {
		f.sessions[id] = &fakeSession{timeout: timeout}
	}
}

func (f *fakeSessions) SetOwner(id int64, owner any) error {
	f.calls = append(f.calls, fmt.Sprintf("SetOwner(%#x)", id))
	s := f.sessions[id]
	if s == nil || s.closing {
		return proto.SessionExpired
	}
	s.owner = owner
	return nil
}

func (f *fakeSessions) SetSessionClosing(id int64) {
	f.calls = append(f.calls, fmt.Sprintf("SetSessionClosing(%#x)", id))
	if s := f.sessions[id]; s != nil {
		s.closing = true
	}
}

// recorder is a Watcher that keeps what it is sent.
type recorder struct {
	name   string
	events []proto.WatcherEvent
	zxids  []int64
}

func (r *recorder) Process(e proto.WatcherEvent, zxid int64) {
	r.events = append(r.events, e)
	r.zxids = append(r.zxids, zxid)
}

func (r *recorder) take() []proto.WatcherEvent {
	out := r.events
	r.events, r.zxids = nil, nil
	return out
}

// server is a single simulated server for tests: a tree, a preparer, a
// session tracker and a zxid counter, driving requests as a leader whose
// every proposal commits at once.
type server struct {
	tree     *Tree
	prep     *Preparer
	sessions *fakeSessions
	zxid     int64
	time     int64
	results  []Result
}

func newServer(config Config) *server {
	tree := New(config)
	sessions := newFakeSessions()
	prep, err := NewPreparer(tree, sessions)
	if err != nil {
		panic(err)
	}
	return &server{tree: tree, prep: prep, sessions: sessions, zxid: 0x100000000, time: 1000}
}

// reply is what a client gets for one request.
type reply struct {
	err      proto.Code
	result   Result
	prepared Prepared
	closed   bool // the server closed the connection (SessionMoved)
}

// submit prepares, applies and answers one request as FinalRequestProcessor
// would for a write; for a read it returns the session check's outcome.
func (s *server) submit(req Request) reply {
	if TakesZxid(req.Type, req.Body) {
		s.zxid++
		req.Zxid = s.zxid
	}
	s.time++
	req.TimeMilliseconds = s.time
	prepared, err := s.prep.Prepare(req)
	if err != nil {
		panic(err)
	}
	out := reply{prepared: prepared, err: prepared.Err}
	if prepared.Txn == nil {
		return out
	}
	out.result = s.tree.Apply(prepared.Txn)
	s.results = append(s.results, out.result)
	s.prep.Applied(prepared.Txn.Header.Zxid)
	switch {
	case prepared.Txn.Header.Type == proto.OpError:
		if out.err == proto.OK {
			out.err = prepared.Txn.Txn.(*proto.ErrorTxn).Err
		}
	case prepared.Err == proto.SessionMoved:
		out.closed = true
	case prepared.Err != proto.OK && req.Type != proto.OpMulti:
	default:
		out.err = out.result.Err
	}
	return out
}
