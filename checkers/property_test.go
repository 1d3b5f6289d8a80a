package checkers

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The property tests generate histories from a sequential reference execution: random operations
// on a few registers are applied one after another to a reference store, each at its own
// linearization point; every write commits a transaction (an error txn if it fails) at that point;
// each client's operations then get random call and return times around their points, without
// overlapping each other, so that operations of different clients overlap freely. Such a history
// is linearizable and sequentially consistent by construction; changing one read to a value
// nobody wrote must make both checkers fail.

type registerValue struct {
	exists  bool
	data    string
	version int32
}

// generated is one generated history with what the mutation needs.
type generated struct {
	h     *History
	reads []OpRef // replied getData operations
}

const (
	stepMillis = 10 // distance between consecutive linearization points
	rootZxid   = 1 << 32
)

// source is where the generator draws its choices: rapid in property tests, a seeded PRNG in
// benchmarks.
type source interface {
	intRange(min, max int, label string) int
	int64Range(min, max int64, label string) int64
	Fatalf(format string, args ...any)
}

type rapidSource struct{ *rapid.T }

func (s rapidSource) intRange(min, max int, label string) int {
	return rapid.IntRange(min, max).Draw(s.T, label)
}

func (s rapidSource) int64Range(min, max int64, label string) int64 {
	return rapid.Int64Range(min, max).Draw(s.T, label)
}

type generator struct {
	t        source
	rec      *Recorder
	tree     *refTree
	store    map[string]registerValue
	zxid     int64
	clients  int
	paths    int
	xids     []int32
	lastBusy []clock.Time // per client, the return time of its last operation
	out      generated
}

func newGenerator(t source, clients int) *generator {
	g := &generator{t: t, rec: NewRecorder(), tree: newRefTree(), store: map[string]registerValue{}, zxid: rootZxid}
	g.clients = clients
	g.xids = make([]int32, g.clients)
	g.lastBusy = make([]clock.Time, g.clients)
	g.commit(1, 0, proto.OpCreateSession, &proto.CreateSessionTxn{TimeoutMilliseconds: 6000}, ms(1))
	g.commit(1, 1, proto.OpCreate, &proto.CreateTxn{Path: "/r", ACL: proto.OpenACLUnsafe, ParentCVersion: -1}, ms(1))
	for c := 0; c < g.clients; c++ {
		g.commit(sessionOf(c), 0, proto.OpCreateSession, &proto.CreateSessionTxn{TimeoutMilliseconds: 6000}, ms(2))
		g.lastBusy[c] = ms(3)
	}
	return g
}

func sessionOf(client int) int64   { return int64(client) + 2 }
func clientName(client int) string { return fmt.Sprintf("c%d", client) }

func (g *generator) commit(session int64, xid int32, typ proto.OpCode, body proto.Record, at clock.Time) int64 {
	g.zxid++
	entry := proto.TxnEntry{Header: proto.TxnHeader{ClientID: session, Cxid: xid, Zxid: g.zxid, Time: int64(at / clock.Time(clock.Millisecond)), Type: typ}, Txn: body}
	if err := g.rec.Commit(entry, at); err != nil {
		g.t.Fatalf("generator: %v", err)
	}
	if err := g.tree.apply(&entry, func(change) {}); err != nil {
		g.t.Fatalf("generator: the reference tree rejects its own txn: %v", err)
	}
	return g.zxid
}

// drawOperation picks an operation on one of three registers, with versions that sometimes match.
func (g *generator) drawOperation(i int) Operation {
	path := fmt.Sprintf("/r/k%d", g.t.intRange(0, g.paths-1, "path"))
	current := g.store[path].version
	version := []int32{-1, current, current + 1}[g.t.intRange(0, 2, "version")]
	data := []byte(fmt.Sprintf("v%d", i))
	switch g.t.intRange(0, 4, "kind") {
	case 0:
		return Operation{Kind: proto.OpCreate, Path: path, Data: data}
	case 1:
		return Operation{Kind: proto.OpSetData, Path: path, Data: data, Version: version}
	case 2:
		return Operation{Kind: proto.OpDelete, Path: path, Version: version}
	case 3:
		return Operation{Kind: proto.OpExists, Path: path}
	default:
		return Operation{Kind: proto.OpGetData, Path: path}
	}
}

// apply runs op at its linearization point on the reference store and returns the reply, and
// the transaction a write commits.
func (g *generator) apply(op *Operation, client int, at clock.Time) Reply {
	v := g.store[op.Path]
	code := proto.OK
	switch {
	case op.Kind == proto.OpCreate && v.exists:
		code = proto.NodeExists
	case op.Kind != proto.OpCreate && !v.exists:
		code = proto.NoNode
	case (op.Kind == proto.OpSetData || op.Kind == proto.OpDelete) && op.Version != -1 && op.Version != v.version:
		code = proto.BadVersion
	}
	if isRead(op.Kind) {
		return g.readReply(op, code)
	}
	session := sessionOf(client)
	if code != proto.OK {
		return Reply{Err: code, Zxid: g.commit(session, op.Xid, proto.OpError, &proto.ErrorTxn{Err: code}, at)}
	}
	switch op.Kind {
	case proto.OpCreate:
		g.store[op.Path] = registerValue{exists: true, data: string(op.Data)}
		zxid := g.commit(session, op.Xid, proto.OpCreate, &proto.CreateTxn{Path: op.Path, Data: op.Data, ParentCVersion: -1}, at)
		return Reply{Zxid: zxid, CreatedPath: op.Path}
	case proto.OpSetData:
		g.store[op.Path] = registerValue{exists: true, data: string(op.Data), version: v.version + 1}
		zxid := g.commit(session, op.Xid, proto.OpSetData, &proto.SetDataTxn{Path: op.Path, Data: op.Data, Version: v.version + 1}, at)
		st := g.tree.nodes[op.Path].clientStat()
		return Reply{Zxid: zxid, Stat: &st}
	default:
		delete(g.store, op.Path)
		return Reply{Zxid: g.commit(session, op.Xid, proto.OpDelete, &proto.DeleteTxn{Path: op.Path}, at)}
	}
}

func (g *generator) readReply(op *Operation, code proto.Code) Reply {
	reply := Reply{Err: code, Zxid: g.zxid}
	if code == proto.OK {
		node := g.tree.nodes[op.Path]
		st := node.clientStat()
		reply.Stat = &st
		if op.Kind == proto.OpGetData {
			reply.Data = []byte(g.store[op.Path].data)
		}
	}
	return reply
}

// record gives op a call and return time around its point at, after the client's previous
// operation, and records it. A write is sometimes lost: its reply never arrives, whether or not
// its transaction committed.
func (g *generator) record(client int, op Operation, at clock.Time) {
	g.xids[client]++
	op.Session, op.Xid = sessionOf(client), g.xids[client]
	lost := !isRead(op.Kind) && g.t.intRange(0, 9, "lost") == 0
	happened := !lost || g.t.intRange(0, 1, "lost write happened") == 1
	call := g.lastBusy[client] + clock.Time(g.t.int64Range(1, int64(at-g.lastBusy[client]), "call"))
	ret := at + clock.Time(g.t.int64Range(0, int64(3*stepMillis*clock.Millisecond), "return"))
	ref := g.rec.Call(clientName(client), call, op)
	var reply Reply
	if happened {
		reply = g.apply(&op, client, at)
	}
	g.lastBusy[client] = ret
	switch {
	case lost:
		if err := g.rec.Fail(ref, ret, proto.ConnectionLoss, OutcomeUnknown); err != nil {
			g.t.Fatalf("generator: %v", err)
		}
	default:
		if err := g.rec.Reply(ref, ret, reply); err != nil {
			g.t.Fatalf("generator: %v", err)
		}
		if op.Kind == proto.OpGetData {
			g.out.reads = append(g.out.reads, ref)
		}
	}
}

// generateHistory draws a correct history: n operations on the given number of registers at
// points 10 ms apart, each by a client that is free by then.
func generateHistory(t source, clients, paths, n int) generated {
	g := newGenerator(t, clients)
	g.paths = paths
	for i := 0; i < n; i++ {
		at := ms(100 + stepMillis*i)
		var free []int
		for c := 0; c < g.clients; c++ {
			if g.lastBusy[c] < at {
				free = append(free, c)
			}
		}
		if len(free) == 0 {
			continue // every client is still busy: skip this point
		}
		client := free[t.intRange(0, len(free)-1, "client")]
		g.record(client, g.drawOperation(i), at)
	}
	// End with a read, by then every client is free, so that a mutation always has one to change.
	last := t.intRange(0, g.clients-1, "last reader")
	g.record(last, Operation{Kind: proto.OpGetData, Path: "/r/k0"}, ms(100+stepMillis*(n+10)))
	g.out.h = g.rec.Finish(ms(100+stepMillis*(n+20)), nil)
	return g.out
}

func drawHistory(t *rapid.T) generated {
	return generateHistory(rapidSource{t}, rapid.IntRange(1, 4).Draw(t, "clients"), rapid.IntRange(1, 3).Draw(t, "paths"),
		rapid.IntRange(1, 40).Draw(t, "operations"))
}

func propertyOptions() LinearizabilityOptions {
	return LinearizabilityOptions{Model: RegisterModel, Prefix: "/r", IncludeReads: true, TimeLimit: 10 * time.Second}
}

func TestPropertyGeneratedHistoriesPass(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		gen := drawHistory(t)
		if err := Validate(gen.h); err != nil {
			t.Fatalf("generated an invalid history: %v", err)
		}
		for _, noLog := range []bool{false, true} {
			opts := propertyOptions()
			opts.NoLogResolution = noLog
			res, err := CheckLinearizability(gen.h, opts)
			if err != nil || res.Status != Pass {
				t.Fatalf("linearizability (noLogResolution=%t): %v\n%s", noLog, err, res)
			}
		}
		reads := checkReads(gen.h, ReadOptions{LinearizableReadsAfterSync: true})
		for _, res := range reads {
			if res.Status != Pass {
				t.Fatalf("reads: %s", res)
			}
		}
	})
}

func TestPropertyReadOfAValueNeverWrittenFails(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		gen := drawHistory(t)
		if len(gen.reads) == 0 {
			t.Fatalf("the generator always ends with a read")
		}
		ref := rapid.SampledFrom(gen.reads).Draw(t, "mutated read")
		op := &gen.h.Clients[clientIndex(gen.h, ref.Client)].Ops[ref.Index]
		op.Err, op.ResultData = proto.OK, []byte("never written")
		res, err := CheckLinearizability(gen.h, propertyOptions())
		if err != nil || res.Status != Violation {
			t.Fatalf("linearizability accepted a read of a value never written: %v\n%s", err, res)
		}
		reads := checkReads(gen.h, ReadOptions{})
		if reads[0].Status != Violation || reads[0].Findings[0].Rule != "read-state" {
			t.Fatalf("the read check accepted a read of a value never written:\n%s", reads[0])
		}
	})
}

func clientIndex(h *History, name string) int {
	for i := range h.Clients {
		if h.Clients[i].Name == name {
			return i
		}
	}
	return -1
}
