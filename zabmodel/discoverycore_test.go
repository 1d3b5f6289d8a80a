package zabmodel

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestDiscoveryCore drives the leader's quorum waits (leaderCore.discover: getEpochToPropose,
// waitForEpochAck, waitForNewLeaderAck) one call at a time, with no world, and prints each ready:
// the acceptedEpoch write, the epoch quorum's event, which thread goes on at once, which starts to
// wait, and which the quorum wakes. The script is the driver: a thread that goes on does not call
// the next wait unless the script says so. Rewrite with
//
//	go test ./zabmodel -run TestDiscoveryCore -rewrite
//
// The commands:
//
//	new [voters=3] [sid=1] [epoch=E] [last=E:C] [bugs=LIST]
//	                               a leader whose currentEpoch is E and last zxid E:C
//	epoch [learner=N] [accepted=E] getEpochToPropose by learner N's handler (or the leader's own
//	                               thread) with lastAcceptedEpoch E
//	ackepoch [learner=N] [epoch=E] [last=E:C]
//	                               waitForEpochAck with that state summary (epoch=-1: an
//	                               ACKEPOCH of an epoch the learner had already accepted)
//	newleader-ack [learner=N] zxid=E:C
//	                               waitForNewLeaderAck with the ACK's zxid
//	newleader-zxid zxid=E:C        the NEWLEADER zxid the leader's own thread decided
//	deadline learner=N|leader      the deadline of that thread's current wait
//	state                          the sets and the waiting threads
func TestDiscoveryCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "discovery"), func(t *testing.T, path string) {
		var env discoveryCoreEnv
		datadriven.RunTest(t, path, env.handle)
	})
}

type discoveryCoreEnv struct {
	core     *leaderCore
	handlers map[int64]*learnerHandler
	// waiting is each thread's current waiter (0 is the leader's own thread).
	waiting map[int64]*quorumWaiter
}

func (env *discoveryCoreEnv) thread(t *testing.T, d *datadriven.TestData) (*learnerHandler, int64) {
	if !d.HasArg("learner") {
		return nil, env.core.self
	}
	var sid int64
	d.ScanArgs(t, "learner", &sid)
	h, ok := env.handlers[sid]
	if !ok {
		h = &learnerHandler{handlerCore: handlerCore{sid: sid}}
		env.handlers[sid] = h
	}
	return h, sid
}

func (env *discoveryCoreEnv) handle(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && env.core == nil {
		d.Fatalf(t, "new first")
	}
	var in discoveryInput
	switch d.Cmd {
	case "new":
		voters, sid, epoch, last, bugs := 3, int64(1), int64(0), "0:0", ""
		d.MaybeScanArgs(t, "voters", &voters)
		d.MaybeScanArgs(t, "sid", &sid)
		d.MaybeScanArgs(t, "epoch", &epoch)
		d.MaybeScanArgs(t, "last", &last)
		d.MaybeScanArgs(t, "bugs", &bugs)
		set, err := ParseBugs(bugs)
		if err != nil {
			d.Fatalf(t, "bugs: %v", err)
		}
		env.core = &leaderCore{cfg: &Config{Voters: voters, Bugs: set}, epoch: -1,
			discoveryState: discoveryState{self: sid, waitingForNewEpoch: true,
				leaderSummary: stateSummary{currentEpoch: epoch, lastZxid: parseCoreZxid(t, d, last)}}}
		env.handlers, env.waiting = map[int64]*learnerHandler{}, map[int64]*quorumWaiter{}
		return "ok\n"
	case "epoch":
		h, sid := env.thread(t, d)
		in = discoveryInput{kind: discoveryCall, wait: waitEpoch, handler: h, sid: sid}
		d.MaybeScanArgs(t, "accepted", &in.lastAcceptedEpoch)
	case "ackepoch":
		h, sid := env.thread(t, d)
		in = discoveryInput{kind: discoveryCall, wait: waitEpochAck, handler: h, sid: sid, summary: env.core.leaderSummary}
		if h != nil {
			last := "0:0"
			d.MaybeScanArgs(t, "epoch", &in.summary.currentEpoch)
			d.MaybeScanArgs(t, "last", &last)
			in.summary.lastZxid = parseCoreZxid(t, d, last)
		}
	case "newleader-ack":
		h, sid := env.thread(t, d)
		var z string
		d.ScanArgs(t, "zxid", &z)
		in = discoveryInput{kind: discoveryCall, wait: waitNewLeaderAck, handler: h, sid: sid, zxid: parseCoreZxid(t, d, z)}
	case "newleader-zxid":
		var z string
		d.ScanArgs(t, "zxid", &z)
		env.core.newLeaderZxid = parseCoreZxid(t, d, z)
		return "ok\n"
	case "deadline":
		var key int64
		if d.HasArg("learner") {
			d.ScanArgs(t, "learner", &key)
		}
		w, ok := env.waiting[key]
		if !ok {
			d.Fatalf(t, "no thread %d is waiting", key)
		}
		in = discoveryInput{kind: discoveryDeadline, waiter: w}
	case "state":
		return env.state()
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	out := env.core.discover(in)
	text := out.String()
	for _, e := range out.effects {
		if e.kind == effectWaitStart {
			w := out.waiters[e.event]
			var key int64
			if w.handler != nil {
				key = w.handler.sid
			}
			env.waiting[key] = w
		}
	}
	env.core.done(out)
	if text == "" {
		return "ok\n"
	}
	return text
}

func (env *discoveryCoreEnv) state() string {
	d := &env.core.discoveryState
	threads := func(ws []*quorumWaiter) string {
		parts := make([]string, len(ws))
		for i, w := range ws {
			parts[i] = waiterThread(w.handler)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "epoch=%d waiting-for-new-epoch=%t connecting=%v waiting=%s\n", env.core.epoch, d.waitingForNewEpoch, d.connecting, threads(d.epochWaiters))
	fmt.Fprintf(&b, "election-finished=%t electing=%v waiting=%s\n", d.electionFinished, d.electing, threads(d.ackEpochWaiters))
	fmt.Fprintf(&b, "quorum-formed=%t newleader-acks=%v waiting=%s\n", d.quorumFormed, d.newLeaderAcks, threads(d.newLeaderWaiters))
	return b.String()
}
