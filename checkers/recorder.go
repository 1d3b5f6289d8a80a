package checkers

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Recorder builds a History as a run goes: the runner reports each call, reply, failure, event,
// state change and commit when it happens, and Finish turns whatever is still outstanding into
// pending operations. It keeps the arrival stream consistent with the operations by construction.
// It copies the data and result data it is given (the history owns them), and the operations on
// one path share one copy of it: both keep a long history compact for the checkers to read.
//
// Misuse (a reply to an operation that is not outstanding, a commit out of zxid order) is an
// error; the history is left unchanged.
type Recorder struct {
	h        History
	clients  map[string]int
	sessions map[int64]int
	// paths holds one copy of each path recorded so far (up to maxInternedPaths), which the
	// recorded operations share: see Call.
	paths map[string]string
	// data holds, per client, the block the client's data and result data are copied into (see
	// keep).
	data [][]byte
}

// dataBlock is the size of the largest blocks a Recorder copies data into; data larger than a
// sixteenth of it gets an allocation of its own.
const dataBlock = 64 << 10

// firstDataBlock is the size of a client's first block; each later block is twice the size of
// the one before, up to dataBlock. A long history soon reaches blocks of dataBlock, and a short
// one keeps little room: the model checker copies a world, recorder included, at each state it
// branches from, and a first block of dataBlock would be most of the world's memory (64 KiB of
// room behind a few bytes of data, allocated and zeroed at every copy).
const firstDataBlock = 256

// keep returns a copy of data, which the history then owns, laid out with the client's earlier
// data (the checkers read a client's operations in order, a million of them, and find their data
// in a few blocks rather than in allocations of the run's own, made in the order of the run,
// one cache miss each). Empty data is kept as it is, nil or not.
func (r *Recorder) keep(client int, data []byte) []byte {
	if len(data) == 0 {
		return data
	}
	if len(data) > dataBlock/16 {
		return slices.Clone(data)
	}
	for len(r.data) <= client {
		r.data = append(r.data, nil)
	}
	block := r.data[client]
	if cap(block)-len(block) < len(data) {
		block = make([]byte, 0, min(dataBlock, max(firstDataBlock, 2*cap(block), len(data))))
	}
	start := len(block)
	block = append(block, data...)
	r.data[client] = block
	// The capacity ends with the copy, so that an append to it cannot reach the next one.
	return block[start:len(block):len(block)]
}

// maxInternedPaths bounds the paths a Recorder shares: a workload that names a new znode at
// every operation (the queue's items) would otherwise grow the table with the history, for no
// sharing; the paths after the first maxInternedPaths are kept as given.
const maxInternedPaths = 4096

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{clients: map[string]int{}, sessions: map[int64]int{}, paths: map[string]string{}}
}

// Reply is what a server's reply says, for Recorder.Reply.
type Reply struct {
	// Session, if not 0, is the session the reply came on; it fills in the operation's session if
	// the request was issued before the client had one (Java queues such requests until the
	// handshake completes).
	Session      int64
	Err          proto.Code
	Zxid         int64
	CreatedPath  string
	Data         []byte
	Stat         *proto.Stat
	Children     []string
	MultiResults []SubResult
}

func (r *Recorder) client(name string) *ClientHistory {
	return &r.h.Clients[r.clientIndex(name)]
}

func (r *Recorder) clientIndex(name string) int {
	i, ok := r.clients[name]
	if !ok {
		i = len(r.h.Clients)
		r.clients[name] = i
		r.h.Clients = append(r.h.Clients, ClientHistory{Name: name})
	}
	return i
}

// Call records that a client issued op at now. The input fields, Session and Xid (and, for a
// sync, SyncLeaderZxid) come from op; the rest is filled by the result.
func (r *Recorder) Call(client string, now clock.Time, op Operation) OpRef {
	ci := r.clientIndex(client)
	c := &r.h.Clients[ci]
	op.Call, op.Return, op.Outcome = now, 0, OutcomePending
	op.Data = r.keep(ci, op.Data)
	// The operations on one znode share one copy of its path. A path is read by every check (the
	// validation, the scoping, the partitioning), and a million paths each in an allocation of
	// its own, made in the order of the run and read client by client, cost a cache miss each
	// time; a few shared copies stay in the cache.
	if shared, ok := r.paths[op.Path]; ok {
		op.Path = shared
	} else if len(r.paths) < maxInternedPaths {
		r.paths[op.Path] = op.Path
	}
	c.Ops = append(c.Ops, op)
	return OpRef{Client: client, Index: len(c.Ops) - 1}
}

// outstanding returns the operation ref names if it is still waiting for its result.
func (r *Recorder) outstanding(ref OpRef) (*ClientHistory, *Operation, error) {
	i, ok := r.clients[ref.Client]
	if !ok || ref.Index < 0 || ref.Index >= len(r.h.Clients[i].Ops) {
		return nil, nil, fmt.Errorf("checkers: recorder: no operation %v", ref)
	}
	c := &r.h.Clients[i]
	op := &c.Ops[ref.Index]
	if op.Outcome != OutcomePending {
		return nil, nil, fmt.Errorf("checkers: recorder: operation %v already has its result (%v)", ref, op.Outcome)
	}
	return c, op, nil
}

// Reply records that the server's reply to ref reached the client at now.
func (r *Recorder) Reply(ref OpRef, now clock.Time, reply Reply) error {
	c, op, err := r.outstanding(ref)
	if err != nil {
		return err
	}
	if now < op.Call {
		return fmt.Errorf("checkers: recorder: reply to %v at %s, before its call", ref, timeString(now))
	}
	if op.Session == 0 {
		op.Session = reply.Session
	}
	op.Outcome, op.Return, op.Err, op.Zxid = OutcomeReplied, now, reply.Err, reply.Zxid
	op.CreatedPath, op.ResultData, op.Stat = reply.CreatedPath, r.keep(r.clients[ref.Client], reply.Data), reply.Stat
	op.Children, op.MultiResults = reply.Children, reply.MultiResults
	c.Arrivals = append(c.Arrivals, Arrival{Kind: ArrivalReply, Time: now, Session: op.Session, Op: ref.Index})
	return nil
}

// Result records whatever the client library's callback delivered for ref at now, when the runner
// cannot tell a reply from a give-up otherwise: a server reply always carries the zxid of a
// server state, which is positive once the session exists (its createSession is a transaction),
// while a code the client chose itself (CONNECTIONLOSS, SESSIONEXPIRED, AUTHFAILED) comes with
// zxid 0 and leaves the outcome unknown.
func (r *Recorder) Result(ref OpRef, now clock.Time, reply Reply) error {
	if reply.Zxid > 0 {
		return r.Reply(ref, now, reply)
	}
	return r.Fail(ref, now, reply.Err, OutcomeUnknown)
}

// Written records the session and xid the client library wrote ref's request with, which are known
// only once it is sent (a request issued while disconnected is numbered when it goes out). The
// checkers find an unknown-outcome write in the committed log by (session, xid). Zero values leave
// the operation as it is.
func (r *Recorder) Written(ref OpRef, session int64, xid int32) error {
	_, op, err := r.outstanding(ref)
	if err != nil {
		return err
	}
	if session != 0 {
		op.Session = session
	}
	if xid != 0 {
		op.Xid = xid
	}
	return nil
}

// Fail records that the client reported ref failed at now without a reply: outcome is
// OutcomeUnknown if the request may have reached a server (CONNECTIONLOSS, SESSIONEXPIRED while in
// flight), OutcomeNotApplied if it certainly did not.
func (r *Recorder) Fail(ref OpRef, now clock.Time, code proto.Code, outcome Outcome) error {
	_, op, err := r.outstanding(ref)
	if err != nil {
		return err
	}
	if outcome != OutcomeUnknown && outcome != OutcomeNotApplied {
		return fmt.Errorf("checkers: recorder: a failure is unknown or not-applied, not %v", outcome)
	}
	if now < op.Call {
		return fmt.Errorf("checkers: recorder: failure of %v at %s, before its call", ref, timeString(now))
	}
	op.Outcome, op.Return, op.Err = outcome, now, code
	return nil
}

// Event records a watch notification reaching the client. zxid is the triggering change's zxid
// if known, else -1.
func (r *Recorder) Event(client string, session int64, now clock.Time, event proto.EventType, path string, zxid int64) {
	c := r.client(client)
	c.Arrivals = append(c.Arrivals, Arrival{Kind: ArrivalEvent, Time: now, Session: session, Event: event, Path: path, Zxid: zxid})
}

// State records a connection state change the client library reported.
func (r *Recorder) State(client string, session int64, now clock.Time, state proto.KeeperState) {
	c := r.client(client)
	c.Arrivals = append(c.Arrivals, Arrival{Kind: ArrivalState, Time: now, Session: session, State: state})
}

// Stopped records that the client process crashed or stopped for good.
func (r *Recorder) Stopped(client string) { r.client(client).Stopped = true }

// Commit records a transaction the global view saw committed at now. Transactions may be reported
// more than once (say, as each server applies them) and out of order: the log keeps each zxid
// once, in zxid order, with the earliest time it was reported. Two different transactions with
// one zxid are an error: that is a broken Agreement, which the white-box checkers report.
func (r *Recorder) Commit(entry proto.TxnEntry, now clock.Time) error {
	log := r.h.Committed
	z := entry.Header.Zxid
	if n := len(log); n == 0 || log[n-1].Entry.Header.Zxid < z {
		// The usual case, a commit above every other: no search.
		r.h.Committed = append(log, CommittedTxn{Entry: entry, Time: now})
		return nil
	}
	i := committedSearch(log, z)
	if i < len(log) && log[i].Entry.Header.Zxid == z {
		if log[i].Entry.Header != entry.Header {
			return fmt.Errorf("checkers: recorder: two different transactions committed with zxid %s: %v of session %s and %v of session %s",
				hexID(z), log[i].Entry.Header.Type, hexID(log[i].Entry.Header.ClientID), entry.Header.Type, hexID(entry.Header.ClientID))
		}
		if now > 0 && (log[i].Time == 0 || now < log[i].Time) {
			log[i].Time = now
		}
		return nil
	}
	r.h.Committed = slices.Insert(log, i, CommittedTxn{Entry: entry, Time: now})
	return nil
}

func (r *Recorder) session(id int64) *SessionFacts {
	i, ok := r.sessions[id]
	if !ok {
		i = len(r.h.Sessions)
		r.sessions[id] = i
		r.h.Sessions = append(r.h.Sessions, SessionFacts{Session: id})
	}
	return &r.h.Sessions[i]
}

// SessionStarted records a session's owner and negotiated timeout.
func (r *Recorder) SessionStarted(id int64, client string, timeout clock.Duration) {
	s := r.session(id)
	s.Client, s.Timeout = client, timeout
}

// SessionHealthy records that the session was healthy during [from, to). Intervals must come in
// order; one that touches the previous one extends it.
func (r *Recorder) SessionHealthy(id int64, from, to clock.Time) error {
	if to < from {
		return fmt.Errorf("checkers: recorder: healthy interval [%s, %s) ends before it starts", timeString(from), timeString(to))
	}
	s := r.session(id)
	if n := len(s.Healthy); n > 0 {
		last := &s.Healthy[n-1]
		switch {
		case from < last.To:
			return fmt.Errorf("checkers: recorder: healthy interval of session %s from %s overlaps the previous one", hexID(id), timeString(from))
		case from == last.To:
			last.To = to
			return nil
		}
	}
	s.Healthy = append(s.Healthy, Interval{From: from, To: to})
	return nil
}

// SessionEnded records the committed closeSession of a session.
func (r *Recorder) SessionEnded(id int64, end SessionEnd) error {
	s := r.session(id)
	if s.End != nil {
		return fmt.Errorf("checkers: recorder: session %s ended twice", hexID(id))
	}
	s.End = &end
	return nil
}

// ForcedExpiry records that a killer process sent closeSession for another client's session at
// e.Time (see ForcedExpiry). Records come in time order; a record without a session, or one
// earlier than the last, is an error and is not kept.
func (r *Recorder) ForcedExpiry(e ForcedExpiry) error {
	if e.Session == 0 {
		return fmt.Errorf("checkers: recorder: a forced expiry of %q at %s names no session", e.Client, timeString(e.Time))
	}
	if n := len(r.h.ForcedExpiries); n > 0 && e.Time < r.h.ForcedExpiries[n-1].Time {
		return fmt.Errorf("checkers: recorder: forced expiry of session %s at %s, before the previous one at %s",
			hexID(e.Session), timeString(e.Time), timeString(r.h.ForcedExpiries[n-1].Time))
	}
	r.h.ForcedExpiries = append(r.h.ForcedExpiries, e)
	return nil
}

// Finish ends the recording at end, with the liveness facts (nil if the run had no liveness
// phase), and returns the history. Operations still outstanding stay pending.
func (r *Recorder) Finish(end clock.Time, liveness *LivenessFacts) *History {
	r.h.End = end
	r.h.Liveness = liveness
	h := r.h
	return &h
}
