package zabmodel

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestSyncProcessorCore drives SyncRequestProcessor's core (syncCore) one input at a time, as etcd
// raft's interaction tests drive a RawNode, and prints the ready each input returns. No world, no
// ensemble: the script is the driver. It applies the storage effects to a fake log (an append the
// core expected the log to take moves its last zxid and its count since the last snapshot; the
// snapshot thread's start resets the count), and the core is told nothing else unless the script
// says so. Rewrite the expected output after a deliberate change with
//
//	go test ./zabmodel -run TestSyncProcessorCore -rewrite
//
// The commands:
//
//	new [snap-count=N] [roll=R] [last=E:C] [txns=T]
//	                      a fresh core: its snapshot threshold is snap-count/2 + roll; the log's
//	                      last zxid is E:C and T txns were appended since the last snapshot
//	request zxid=E:C      a txn request (a proposal to log)
//	request cxid=N        a request without a txn (a read or a sync)
//	turn                  the processor's thread comes round to its queue (the post it asked for)
//	continue [roll=R]     resume after a ready that ended with "resume" (roll: the threshold drawn
//	                      for a snapshot-thread effect)
//	flushed covered=N     the fsync the core started completes, covering N records
//	shutdown              SyncRequestProcessor.shutdown
//	abandon               the ZOOKEEPER-4712 processor that is never told to stop
//	state                 the core's queue, fsync batch and flags
func TestSyncProcessorCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "syncproc"), func(t *testing.T, path string) {
		var env syncCoreEnv
		datadriven.RunTest(t, path, env.handle)
	})
}

type syncCoreEnv struct {
	core *syncCore
	last int64
	txns int
}

func (env *syncCoreEnv) LastZxid() int64        { return env.last }
func (env *syncCoreEnv) TxnsSinceSnapshot() int { return env.txns }

func (env *syncCoreEnv) handle(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && env.core == nil {
		d.Fatalf(t, "new first")
	}
	var in syncInput
	switch d.Cmd {
	case "new":
		snapCount, roll, last := 100000, 0, "0:0"
		d.MaybeScanArgs(t, "snap-count", &snapCount)
		d.MaybeScanArgs(t, "roll", &roll)
		d.MaybeScanArgs(t, "last", &last)
		d.MaybeScanArgs(t, "txns", &env.txns)
		env.core = &syncCore{snapCount: snapCount, randRoll: roll}
		env.last = parseCoreZxid(t, d, last)
		return "ok\n"
	case "request":
		r := &request{op: proto.OpGetData}
		if d.HasArg("zxid") {
			var zxid string
			d.ScanArgs(t, "zxid", &zxid)
			z := parseCoreZxid(t, d, zxid)
			r.op = proto.OpCreate
			r.entry = &proto.TxnEntry{Header: proto.TxnHeader{Zxid: z, Type: proto.OpCreate}}
		} else {
			var cxid int
			d.ScanArgs(t, "cxid", &cxid)
			r.cxid = int32(cxid)
		}
		in = syncInput{kind: syncRequest, req: r}
	case "turn":
		in = syncInput{kind: syncTurn}
	case "continue":
		in = syncInput{kind: syncContinue}
		if d.HasArg("roll") {
			d.ScanArgs(t, "roll", &in.roll)
			in.rolled = true
		}
	case "flushed":
		in = syncInput{kind: syncFlushed}
		d.ScanArgs(t, "covered", &in.covered)
	case "shutdown":
		in = syncInput{kind: syncShutdown}
	case "abandon":
		in = syncInput{kind: syncAbandon}
	case "state":
		return env.state()
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	out := env.core.step(in, env)
	text := out.String()
	for _, e := range out.effects {
		switch {
		case e.kind == effectAppend && e.appended:
			env.last = e.entry.Header.Zxid
			env.txns++
		case e.kind == effectSnapshotThread:
			env.txns = 0
		}
	}
	env.core.done(out)
	if text == "" {
		return "ok\n"
	}
	return text
}

func (env *syncCoreEnv) state() string {
	c := env.core
	var b strings.Builder
	list := func(rs []*request) string {
		var parts []string
		for _, r := range rs {
			if r == nil {
				continue
			}
			if r.entry != nil {
				parts = append(parts, FormatZxid(r.zxid()))
			} else {
				parts = append(parts, fmt.Sprintf("cxid=%d", r.cxid))
			}
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	fmt.Fprintf(&b, "queue=%s to-flush=%s batch=%s\n", list(c.queue[c.queueHead:]), list(c.toFlush), list(c.flushBatch[c.flushNext:]))
	fmt.Fprintf(&b, "scheduled=%t flushing=%t stopped=%t busy=%t\n", c.scheduled, c.flushing, c.stopped, c.busy())
	fmt.Fprintf(&b, "log last=%s txns-since-snapshot=%d\n", FormatZxid(env.last), env.txns)
	return b.String()
}

func parseCoreZxid(t *testing.T, d *datadriven.TestData, s string) int64 {
	epoch, counter, ok := strings.Cut(s, ":")
	e, err1 := strconv.ParseInt(epoch, 10, 64)
	c, err2 := strconv.ParseInt(counter, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		d.Fatalf(t, "zxid %q: want EPOCH:COUNTER", s)
	}
	return MakeZxid(e, c)
}
