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
//	start                 the processor's construction (it draws the roll it starts with)
//	request zxid=E:C      a txn request (a proposal to log)
//	request cxid=N        a request without a txn (a read or a sync)
//	turn                  the processor's thread comes round to its queue (the post it asked for)
//	continue [draw=R]     resume after a ready that ended with "resume" (draw: the world's answer
//	                      to the ready's draw)
//	flushed covered=N     the fsync the core started completes, covering N records
//	stop [race]           ZooKeeperServer.shutdown's stop of the processor and fast-forward; race:
//	                      ZOOKEEPER-4712's processor that is not told to stop first
//	when-idle name=X      another thread's step X waits until the processor is idle
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
		env.txns = 0
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
	case "start":
		in = syncInput{kind: syncStart}
	case "continue":
		in = syncInput{kind: syncContinue}
		d.MaybeScanArgs(t, "draw", &in.draw)
	case "flushed":
		in = syncInput{kind: syncFlushed}
		d.ScanArgs(t, "covered", &in.covered)
	case "stop":
		in = syncInput{kind: syncStop, race: d.HasArg("race")}
	case "when-idle":
		var name string
		d.ScanArgs(t, "name", &name)
		in = syncInput{kind: syncWhenIdle, waiter: namedStep(name)}
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
	fmt.Fprintf(&b, "scheduled=%t flushing=%t stopped=%t abandoned=%t busy=%t\n", c.scheduled, c.flushing, c.stopped, c.abandoned, c.busy())
	fmt.Fprintf(&b, "roll=%d idle-waiters=%d\n", c.randRoll, len(c.idleWaiters))
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

// namedStep is another thread's step in the core tests: a timer that only has a name.
type namedStep string

func (s namedStep) OnTimer(uint64)          {}
func (s namedStep) fire()                   {}
func (s namedStep) TimerName(uint64) string { return string(s) }
