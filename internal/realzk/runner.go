package realzk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zabsim/zabsim/scenarios/conform"
)

// endWaitSlack is added to a session's timeout when waiting for the server
// to expire or close it.
const endWaitSlack = 10 * time.Second

// pollInterval is how often the runner asks the server whether a session
// is gone.
const pollInterval = 10 * time.Millisecond

// ErrNotFresh is returned by Run for a server that has already applied a
// transaction: results would then depend on what ran before.
var ErrNotFresh = errors.New("server is not fresh")

// RunFresh starts a server, runs the sequence on it and stops it.
func RunFresh(ctx context.Context, opts Options, ops []conform.Op) ([]conform.Result, error) {
	server, err := Start(opts)
	if err != nil {
		return nil, err
	}
	defer server.Stop()
	return Run(ctx, server, ops)
}

// Run executes ops in order against a fresh server, one go-zookeeper
// connection per session, and returns one result per op.
//
// The results are deterministic despite the real concurrency of server and
// clients, because Run never has two operations in flight: after each op it
// makes a round trip on every live session (see session.barrier), so all
// notifications the op caused have arrived, and only then reports them and
// starts the next op. Close and expire wait until the server has applied the
// session's closeSession transaction.
//
// Run returns an error, and no results, when the harness cannot vouch for
// the outcome: the sequence is invalid, the server is not fresh, a wait
// timed out, or a session lost its connection unasked while holding
// watches (go-zookeeper then re-registers them concurrently with later
// ops, so when their notifications arrive would depend on timing).
func Run(ctx context.Context, server *Server, ops []conform.Op) ([]conform.Result, error) {
	if err := conform.Validate(ops); err != nil {
		return nil, fmt.Errorf("invalid sequence: %w", err)
	}
	zxid, err := server.LastZxid(ctx)
	if err != nil {
		return nil, fmt.Errorf("check server: %w", err)
	}
	if zxid != 0 {
		return nil, fmt.Errorf("%w: last zxid 0x%x", ErrNotFresh, zxid)
	}
	r := &runner{server: server, sessions: map[string]*session{}, names: map[int64]string{}}
	results, err := r.run(ctx, ops)
	// Clients must be gone before Run returns, success or not, so that no
	// goroutine outlives it.
	shutdownErr := r.shutdownAll()
	if err != nil {
		return nil, err
	}
	if shutdownErr != nil {
		return nil, fmt.Errorf("after the last op: %w", shutdownErr)
	}
	return results, nil
}

// run executes the ops one by one.
func (r *runner) run(ctx context.Context, ops []conform.Op) ([]conform.Result, error) {
	results := make([]conform.Result, 0, len(ops))
	for i, op := range ops {
		result, err := r.step(ctx, i, op)
		if err != nil {
			return nil, fmt.Errorf("op %d %s: %w\nserver log tail:\n%s", i, op, err, r.server.LogTail(20))
		}
		results = append(results, result)
	}
	return results, nil
}

// runner is the state of one Run.
type runner struct {
	server *Server
	// sessions are the live sessions by name.
	sessions map[string]*session
	// names maps every session id of the run to its name, so that stats
	// can name ephemeral owners.
	names map[int64]string
	// shutdowns tracks clients of expired sessions shutting down in the
	// background; shutdownErr keeps the first failure of any shutdown.
	shutdowns   sync.WaitGroup
	shutdownMu  sync.Mutex
	shutdownErr error
}

// step runs one op and collects the events it caused.
func (r *runner) step(ctx context.Context, index int, op conform.Op) (conform.Result, error) {
	if err := ctx.Err(); err != nil {
		return conform.Result{}, err
	}
	s, err := r.session(ctx, op)
	if err != nil {
		return conform.Result{}, err
	}
	// The sessions live before the op: a session the op ends still
	// reports what it received before its end.
	involved := r.liveSessions()
	before := map[string]int{}
	for _, other := range involved {
		before[other.name], _ = other.connectionState()
	}
	result := conform.Result{I: index, Session: op.Session, Op: op.Kind}
	if err := r.execute(ctx, s, op, &result); err != nil {
		return conform.Result{}, err
	}
	for _, other := range r.liveSessions() {
		if err := other.barrier(ctx); err != nil {
			return conform.Result{}, err
		}
	}
	for _, other := range involved {
		disconnects, holdsWatches := other.connectionState()
		if disconnects > before[other.name] && holdsWatches && r.sessions[other.name] == other {
			return conform.Result{}, fmt.Errorf("session %s lost its connection while holding watches; "+
				"go-zookeeper re-registers them concurrently with later ops, so the outcome would depend on timing", other.name)
		}
		events, err := other.takeEvents()
		if err != nil {
			return conform.Result{}, err
		}
		if len(events) > 0 {
			if result.Events == nil {
				result.Events = map[string][]conform.Event{}
			}
			result.Events[other.name] = events
		}
	}
	return result, nil
}

// session returns the op's session, opening it on first use.
func (r *runner) session(ctx context.Context, op conform.Op) (*session, error) {
	if s, ok := r.sessions[op.Session]; ok {
		return s, nil
	}
	timeoutMs := op.TimeoutMs
	if timeoutMs == 0 {
		timeoutMs = conform.DefaultSessionTimeoutMs
	}
	s, err := openSession(ctx, r.server.Addr(), op.Session, timeoutMs)
	if err != nil {
		return nil, err
	}
	r.sessions[op.Session] = s
	r.names[s.id] = op.Session
	return s, nil
}

// liveSessions returns the live sessions sorted by name, so that barriers
// run in a fixed order.
func (r *runner) liveSessions() []*session {
	live := make([]*session, 0, len(r.sessions))
	for _, s := range r.sessions {
		live = append(live, s)
	}
	sort.Slice(live, func(i, j int) bool { return live[i].name < live[j].name })
	return live
}

// shutdownAll closes the sessions still open at the end of a run and
// waits for the background shutdowns of expired ones.
func (r *runner) shutdownAll() error {
	for _, s := range r.liveSessions() {
		if err := s.shutdown(); err != nil {
			r.recordShutdownError(err)
		}
	}
	r.shutdowns.Wait()
	r.shutdownMu.Lock()
	defer r.shutdownMu.Unlock()
	return r.shutdownErr
}

// recordShutdownError keeps the first error of a session shutdown.
func (r *runner) recordShutdownError(err error) {
	r.shutdownMu.Lock()
	defer r.shutdownMu.Unlock()
	if r.shutdownErr == nil {
		r.shutdownErr = err
	}
}

// execute performs the op on its session and fills the result.
func (r *runner) execute(ctx context.Context, s *session, op conform.Op, result *conform.Result) error {
	var err error
	switch op.Kind {
	case conform.OpCreate:
		var path string
		path, err = r.create(s, op)
		if err == nil {
			result.Path = path
		}
	case conform.OpDelete:
		err = s.conn.Delete(op.Path, op.Version)
	case conform.OpExists:
		err = r.exists(s, op, result)
	case conform.OpGet:
		err = r.get(s, op, result)
	case conform.OpSet:
		var stat *zk.Stat
		stat, err = s.conn.Set(op.Path, op.Payload(), op.Version)
		if err == nil {
			result.Stat = r.stat(stat)
		}
	case conform.OpChildren:
		err = r.children(s, op, result)
	case conform.OpMulti:
		err = r.multi(s, op, result)
	case conform.OpSync:
		var path string
		path, err = s.conn.Sync(op.Path)
		if err == nil {
			result.Path = path
		}
	case conform.OpGetACL:
		var acl []zk.ACL
		var stat *zk.Stat
		acl, stat, err = s.conn.GetACL(op.Path)
		if err == nil {
			result.ACL, result.Stat = fromZKACL(acl), r.stat(stat)
		}
	case conform.OpSetACL:
		var stat *zk.Stat
		stat, err = s.conn.SetACL(op.Path, toZKACL(op.EffectiveACL()), op.Version)
		if err == nil {
			result.Stat = r.stat(stat)
		}
	case conform.OpAddAuth:
		err = s.conn.AddAuth(op.Scheme, []byte(op.Auth))
	case conform.OpClose:
		return r.end(ctx, s, result, false)
	case conform.OpExpire:
		return r.end(ctx, s, result, true)
	default:
		return fmt.Errorf("unknown op kind %q", op.Kind)
	}
	code, mapErr := codeOf(err)
	if mapErr != nil {
		return mapErr
	}
	result.Err = code
	return nil
}

// create picks the go-zookeeper call for the mode: containers and TTL nodes
// have their own opcodes.
func (r *runner) create(s *session, op conform.Op) (string, error) {
	acl := toZKACL(op.EffectiveACL())
	switch {
	case op.Flags.Container:
		return s.conn.CreateContainer(op.Path, op.Payload(), zk.FlagContainer, acl)
	case op.Flags.TTL:
		flag := int32(zk.FlagTTL)
		if op.Flags.Sequential {
			flag = zk.FlagPersistentSequentialWithTTL
		}
		return s.conn.CreateTTL(op.Path, op.Payload(), flag, acl, time.Duration(op.TTLMs)*time.Millisecond)
	}
	return s.conn.Create(op.Path, op.Payload(), createFlags(op.Flags), acl)
}

// createFlags is the CreateMode number of a plain create.
func createFlags(flags conform.Flags) int32 {
	var mode int32
	if flags.Ephemeral {
		mode |= zk.FlagEphemeral
	}
	if flags.Sequential {
		mode |= zk.FlagSequence
	}
	return mode
}

// exists reports a missing node as NONODE, as the server does; go-zookeeper
// turns that answer into exists=false.
func (r *runner) exists(s *session, op conform.Op, result *conform.Result) error {
	var found bool
	var stat *zk.Stat
	var err error
	if op.Watch {
		found, stat, _, err = s.conn.ExistsW(op.Path)
	} else {
		found, stat, err = s.conn.Exists(op.Path)
	}
	switch {
	case err != nil:
	case found:
		result.Stat = r.stat(stat)
		if op.Watch {
			s.recordWatch(op.Path, watchData)
		}
	default:
		err = zk.ErrNoNode
		if op.Watch {
			s.recordWatch(op.Path, watchExist)
		}
	}
	return err
}

func (r *runner) get(s *session, op conform.Op, result *conform.Result) error {
	var data []byte
	var stat *zk.Stat
	var err error
	if op.Watch {
		data, stat, _, err = s.conn.GetW(op.Path)
	} else {
		data, stat, err = s.conn.Get(op.Path)
	}
	if err == nil {
		result.SetData(data)
		result.Stat = r.stat(stat)
		if op.Watch {
			s.recordWatch(op.Path, watchData)
		}
	}
	return err
}

func (r *runner) children(s *session, op conform.Op, result *conform.Result) error {
	var children []string
	var stat *zk.Stat
	var err error
	if op.Watch {
		children, stat, _, err = s.conn.ChildrenW(op.Path)
	} else {
		children, stat, err = s.conn.Children(op.Path)
	}
	if err == nil {
		result.Children = slices.Sorted(slices.Values(children))
		if result.Children == nil {
			result.Children = []string{}
		}
		result.Stat = r.stat(stat)
		if op.Watch {
			s.recordWatch(op.Path, watchChild)
		}
	}
	return err
}

// multi runs a transaction. On failure the server answers every op with an
// error result (OK before the failing op, its code for it,
// RUNTIMEINCONSISTENCY after it) and go-zookeeper returns the first non-OK
// code as the multi's error.
func (r *runner) multi(s *session, op conform.Op, result *conform.Result) error {
	requests := make([]any, 0, len(op.Ops))
	for _, sub := range op.Ops {
		switch sub.Kind {
		case conform.OpCreate:
			requests = append(requests, &zk.CreateRequest{Path: sub.Path, Data: sub.Payload(),
				Acl: toZKACL(sub.EffectiveACL()), Flags: createFlags(sub.Flags)})
		case conform.OpDelete:
			requests = append(requests, &zk.DeleteRequest{Path: sub.Path, Version: sub.Version})
		case conform.OpSet:
			requests = append(requests, &zk.SetDataRequest{Path: sub.Path, Data: sub.Payload(), Version: sub.Version})
		case conform.OpCheck:
			requests = append(requests, &zk.CheckVersionRequest{Path: sub.Path, Version: sub.Version})
		default:
			return fmt.Errorf("unknown multi op kind %q", sub.Kind)
		}
	}
	responses, err := s.conn.Multi(requests...)
	if isConnectionLoss(err) {
		return err
	}
	result.Results = make([]conform.MultiResult, 0, len(responses))
	for i, response := range responses {
		sub := conform.MultiResult{Err: conform.CodeOK}
		if i < len(op.Ops) {
			sub.Op = op.Ops[i].Kind
		}
		code, mapErr := codeOf(response.Error)
		if mapErr != nil {
			return mapErr
		}
		sub.Err = code
		if code == conform.CodeOK {
			sub.Path = response.String
			if response.Stat != nil {
				sub.Stat = r.stat(response.Stat)
			}
		}
		result.Results = append(result.Results, sub)
	}
	return err
}

// end closes or expires the session and waits until the server has applied
// its closeSession transaction, whose ephemeral deletions fire watches of
// other sessions.
func (r *runner) end(ctx context.Context, s *session, result *conform.Result, expire bool) error {
	lastZxid, err := r.server.LastZxid(ctx)
	if err != nil {
		return err
	}
	s.markEnding()
	delete(r.sessions, s.name)
	if expire {
		err = r.expire(ctx, s, lastZxid)
	} else {
		err = r.close(ctx, s, lastZxid)
	}
	if err != nil {
		s.shutdown()
		return err
	}
	result.Err = conform.CodeOK
	return nil
}

// close is go-zookeeper's Close, which sends closeSession and waits up to
// a second for the reply. It reports no error; the wait on the server
// confirms the session ended.
func (r *runner) close(ctx context.Context, s *session, lastZxid int64) error {
	if err := s.shutdown(); err != nil {
		return err
	}
	return r.waitSessionGone(ctx, s, lastZxid)
}

// expire imitates a client that stops for longer than its session timeout:
// the session's TCP connection is cut and new connections are held back
// until the server has expired the session and applied its closeSession.
// Then the client may reconnect once, learns from the server that the
// session expired (the server answers the reconnect with session id 0), and
// is shut down.
func (r *runner) expire(ctx context.Context, s *session, lastZxid int64) error {
	s.gate.sever()
	if err := r.waitSessionGone(ctx, s, lastZxid); err != nil {
		return err
	}
	s.gate.setState(gateLastDial)
	if err := s.waitFor(ctx, connectWait, func() bool { return s.sawExpired }); err != nil {
		return fmt.Errorf("session %s: client never learned of its expiry: %w; client log:\n%s", s.name, err, s.clientLog())
	}
	// The server is done with the session and the gate refuses new
	// connections, so the client can shut down in the background: its Close
	// can race with go-zookeeper's reconnect loop and then waits out a
	// one-second timeout. Run waits for it before returning.
	r.shutdowns.Add(1)
	go func() {
		defer r.shutdowns.Done()
		if err := s.shutdown(); err != nil {
			r.recordShutdownError(err)
		}
	}()
	return nil
}

// waitSessionGone polls until the server no longer tracks the session and
// has applied a transaction after lastZxid. No other transaction can occur
// meanwhile (the runner is idle and other sessions only ping), so that
// transaction is the session's closeSession. The session tracker drops an
// expired session before closeSession is applied, hence both conditions.
func (r *runner) waitSessionGone(ctx context.Context, s *session, lastZxid int64) error {
	limit := time.Duration(s.timeoutMs)*time.Millisecond + endWaitSlack
	deadline := time.Now().Add(limit)
	for {
		zxid, err := r.server.LastZxid(ctx)
		if err != nil {
			return err
		}
		if zxid > lastZxid {
			tracked, err := r.server.TracksSession(ctx, s.id)
			if err != nil {
				return err
			}
			if !tracked {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("session %s (0x%x) still alive %v after it was ended (last zxid 0x%x)", s.name, s.id, limit, zxid)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// stat converts a stat, naming the ephemeral owner.
func (r *runner) stat(stat *zk.Stat) *conform.Stat {
	if stat == nil {
		return nil
	}
	return &conform.Stat{
		Czxid: stat.Czxid, Mzxid: stat.Mzxid, Pzxid: stat.Pzxid,
		Ctime: stat.Ctime, Mtime: stat.Mtime,
		Version: stat.Version, Cversion: stat.Cversion, Aversion: stat.Aversion,
		EphemeralOwner: conform.RenderOwner(stat.EphemeralOwner, func(id int64) (string, bool) {
			name, ok := r.names[id]
			return name, ok
		}),
		DataLength: stat.DataLength, NumChildren: stat.NumChildren,
	}
}

func toZKACL(acl []conform.ACL) []zk.ACL {
	out := make([]zk.ACL, len(acl))
	for i, entry := range acl {
		out[i] = zk.ACL{Perms: int32(entry.Perms), Scheme: entry.Scheme, ID: entry.ID}
	}
	return out
}

func fromZKACL(acl []zk.ACL) []conform.ACL {
	out := make([]conform.ACL, len(acl))
	for i, entry := range acl {
		out[i] = conform.ACL{Perms: conform.Perms(entry.Perms), Scheme: entry.Scheme, ID: entry.ID}
	}
	return out
}
