package zabmodel

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/zabmodel/datatree"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestLearnerHandlerCore drives a learner handler's thread (handlerCore.handlerStep) one input at
// a time, with no world, leader or network, and prints each ready: its reads, each a step of its
// own armed by read-next, the read timeout, the calls into the leader, the SNAP stream, the
// startup poll, the ping and the shutdown. The script is the driver: it applies nothing except
// the sender's start (which the ping reads), and where a ready ends with resume the script gives
// the continue input itself (continue), after whatever the leader would do meanwhile (a quorum
// wait that returns at once is epoch-decided before the read's continue). Rewrite with
//
//	go test ./zabmodel -run TestLearnerHandlerCore -rewrite
//
// The commands:
//
//	new [hold-learners] [stale-ack]   a handler of a newly accepted connection (initLimit 10,
//	                                  syncLimit 5, tickTime 2s); the flags are the self-test and
//	                                  the bug switch
//	leader [committed=E:C-E:C,...] [last=E:C] [nodes=N] [running] [stopped] [tick=N]
//	                                  [proposed=E:C]
//	                                  the leader's database (its committed log window, its last
//	                                  processed zxid, a tree of N nodes for a SNAP's walk) and
//	                                  state; flags not given keep their value
//	in-broadcast sid=N                the handler of learner N as it is once UPTODATE is queued:
//	                                  in broadcast, its sender and its syncLimit check running
//	accept                            LearnerCnxAcceptor's accept
//	receive <TYPE> [zxid=E:C] [sid=N] [epoch=N] [session=N timeout=N] [cxid=N]
//	                                  a packet reaches the receive buffer: FOLLOWERINFO and
//	                                  OBSERVERINFO carry sid, ACKEPOCH epoch, PING and REVALIDATE a
//	                                  session's timeout, REQUEST a create of session with cxid;
//	                                  TYPE garbage is bytes that decode to no packet
//	close [err=eof|reset]             the connection ends
//	read                              the thread's read (the timer of read-next)
//	read-timeout                      the read timeout fires
//	epoch-decided epoch=N             getEpochToPropose returned
//	synchronize                       waitForEpochAck returned: the sync from the ACKEPOCH's zxid
//	new-leader-acked                  waitForNewLeaderAck returned
//	startup-poll                      waitForStartup's timer
//	snap-step                         the SNAP stream's timer (walk-next)
//	continue [draw=K]                 the continue input of the latest ready that asked to
//	                                  resume (with the answer K to its draw)
//	proposal-sent zxid=E:C            SyncLimitCheck.updateProposal
//	ping                              LearnerHandler.ping
//	shutdown reason=R                 LearnerHandler.shutdown
//	advance by=D                      the clock moves on by D (a Go duration)
//	state                             the handler's state, buffer and syncLimit check
func TestLearnerHandlerCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "handler"), func(t *testing.T, path string) {
		env := &handlerCoreEnv{src: &fakeSyncSource{}}
		datadriven.RunTest(t, path, env.handle)
	})
}

// handlerCoreEnv is the handler core's view and the script's driver.
type handlerCoreEnv struct {
	h        *learnerHandler
	mem      *memory
	src      *fakeSyncSource
	tree     *tree
	stopped  bool
	running  bool
	tick     int
	proposed int64
	started  bool
	now      clock.Time
	// pending are the continue inputs of the readies that asked to resume, the latest last.
	pending []handlerInput
}

func (env *handlerCoreEnv) leaderStopped() bool     { return env.stopped }
func (env *handlerCoreEnv) serverRunning() bool     { return env.running }
func (env *handlerCoreEnv) leaderTick() int         { return env.tick }
func (env *handlerCoreEnv) lastProposedZxid() int64 { return env.proposed }
func (env *handlerCoreEnv) senderStarted() bool     { return env.started }
func (env *handlerCoreEnv) syncSource() syncSource  { return env.src }

func (env *handlerCoreEnv) snapshotWriter() *datatree.SnapshotWriter {
	if env.tree == nil {
		env.tree = newTree(&Config{})
	}
	return env.tree.t.NewSnapshotWriter(nil, false)
}

var handlerStateNames = [...]string{
	hsAwaitInfo: "await-info", hsAwaitEpoch: "await-epoch", hsAwaitAckEpoch: "await-ackepoch",
	hsAwaitEpochQuorum: "await-epoch-quorum", hsAwaitNewLeaderAck: "await-newleader-ack",
	hsAwaitNewLeaderQuorum: "await-newleader-quorum", hsBroadcast: "broadcast", hsDead: "dead",
}

func (env *handlerCoreEnv) handle(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && d.Cmd != "leader" && d.Cmd != "advance" && env.h == nil {
		d.Fatalf(t, "new first")
	}
	var in handlerInput
	switch d.Cmd {
	case "new":
		cfg := Config{Voters: 3}.WithDefaults()
		if d.HasArg("hold-learners") {
			cfg.SelfTests = cfg.SelfTests.With(SelfTestHoldLearners)
		}
		if d.HasArg("stale-ack") {
			cfg.Bugs = cfg.Bugs.With(BugStaleAck)
		}
		env.mem = newMemory(proto.NewEncoder(nil), proto.NewDecoder(nil))
		env.h = &learnerHandler{}
		env.h.handlerCore = handlerCore{self: env.h, cfg: &cfg, mem: env.mem}
		env.started, env.pending = false, nil
		return "ok\n"
	case "leader":
		return env.leader(t, d)
	case "in-broadcast":
		c := &env.h.handlerCore
		d.ScanArgs(t, "sid", &c.sid)
		c.state, c.syncCheckStarted, env.started = hsBroadcast, true, true
		return "ok\n"
	case "accept":
		in.kind = handlerAccepted
	case "receive":
		in = handlerInput{kind: handlerReceived, payload: env.packet(t, d)}
	case "close":
		in = handlerInput{kind: handlerClosed, err: net.ErrEOF}
		if d.HasArg("err") {
			var name string
			d.ScanArgs(t, "err", &name)
			if name == "reset" {
				in.err = net.ErrReset
			}
		}
	case "read":
		in.kind = handlerRead
	case "read-timeout":
		in.kind = handlerReadTimeout
	case "epoch-decided":
		var epoch int64
		d.ScanArgs(t, "epoch", &epoch)
		in = handlerInput{kind: handlerEpochDecided, zxid: epoch}
	case "synchronize":
		in = handlerInput{kind: handlerSynchronize, zxid: env.h.peerLastZxid}
	case "new-leader-acked":
		in.kind = handlerNewLeaderAcked
	case "startup-poll":
		in.kind = handlerStartupPoll
	case "snap-step":
		in.kind = handlerSnapStep
	case "continue":
		if len(env.pending) == 0 {
			d.Fatalf(t, "no ready asked to resume")
		}
		in = env.pending[len(env.pending)-1]
		env.pending = env.pending[:len(env.pending)-1]
		if d.HasArg("draw") {
			d.ScanArgs(t, "draw", &in.draw)
		}
	case "proposal-sent":
		var zxid string
		d.ScanArgs(t, "zxid", &zxid)
		in = handlerInput{kind: handlerProposalSent, zxid: parseCoreZxid(t, d, zxid), now: env.now}
	case "ping":
		in = handlerInput{kind: handlerPing, now: env.now}
	case "shutdown":
		var reason string
		d.ScanArgs(t, "reason", &reason)
		in = handlerInput{kind: handlerShutdown, reason: reason}
	case "advance":
		env.now = env.now.Add(advanceBy(t, d))
		return "now " + strings.TrimSpace(env.now.String()) + "\n"
	case "state":
		c := &env.h.handlerCore
		s := fmt.Sprintf("state=%s sid=%d buffered=%d read-armed=%t\n", handlerStateNames[c.state], c.sid,
			len(c.inbox)-c.inboxHead, c.readPending)
		if c.syncCheckStarted {
			s += fmt.Sprintf("sync-check current=%s@%s next=%s@%s\n", FormatZxid(c.currentZxid),
				strings.TrimSpace(c.currentTime.String()), FormatZxid(c.nextZxid), strings.TrimSpace(c.nextTime.String()))
		}
		return s
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	out, next := env.h.handlerStep(in, env)
	text := out.String()
	for _, e := range out.effects {
		if e.kind == effectSenderStart {
			env.started = true
		}
	}
	if out.resume {
		env.pending = append(env.pending, next)
	}
	env.h.handlerReadies.put(out)
	if text == "" {
		return "ok\n"
	}
	return text
}

func (env *handlerCoreEnv) leader(t *testing.T, d *datadriven.TestData) string {
	if d.HasArg("committed") {
		var r string
		d.ScanArgs(t, "committed", &r)
		env.src.committed = proposalRange(t, d, r)
		env.src.last = env.src.committed[len(env.src.committed)-1].zxid
	}
	if d.HasArg("last") {
		var z string
		d.ScanArgs(t, "last", &z)
		env.src.last = parseCoreZxid(t, d, z)
	}
	if d.HasArg("nodes") {
		var n int
		d.ScanArgs(t, "nodes", &n)
		env.tree = newTree(&Config{})
		for i := range n {
			res := env.tree.apply(&proto.TxnEntry{
				Header: proto.TxnHeader{Zxid: MakeZxid(1, int64(i+1)), Type: proto.OpCreate},
				Txn:    &proto.CreateTxn{Path: fmt.Sprintf("/a%03d", i), ACL: proto.OpenACLUnsafe, ParentCVersion: int32(i + 1)},
			})
			if res.res.Err != 0 {
				d.Fatalf(t, "create: %v", res.res.Err)
			}
		}
	}
	env.running = env.running || d.HasArg("running")
	env.stopped = env.stopped || d.HasArg("stopped")
	if d.HasArg("tick") {
		d.ScanArgs(t, "tick", &env.tick)
	}
	if d.HasArg("proposed") {
		var z string
		d.ScanArgs(t, "proposed", &z)
		env.proposed = parseCoreZxid(t, d, z)
	}
	return "ok\n"
}

// packet encodes the packet of a receive command.
func (env *handlerCoreEnv) packet(t *testing.T, d *datadriven.TestData) []byte {
	name := d.CmdArgs[0].Key
	if name == "garbage" {
		return []byte{1, 2, 3}
	}
	typ := packetTypeNamed(t, d, name)
	qp := proto.QuorumPacket{Type: typ}
	if d.HasArg("zxid") {
		var z string
		d.ScanArgs(t, "zxid", &z)
		qp.Zxid = parseCoreZxid(t, d, z)
	}
	var session int64
	var timeout int32
	if d.HasArg("session") {
		var s string
		d.ScanArgs(t, "session", &s)
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			d.Fatalf(t, "session: %v", err)
		}
		session = v
	}
	if d.HasArg("timeout") {
		var ms int
		d.ScanArgs(t, "timeout", &ms)
		timeout = int32(ms)
	}
	switch typ {
	case pktFollowerInfo, pktObserverInfo:
		var sid int64
		d.ScanArgs(t, "sid", &sid)
		qp.Data = learnerInfoData(sid)
	case pktAckEpoch:
		var epoch int
		d.ScanArgs(t, "epoch", &epoch)
		qp.Data = int32Data(int32(epoch))
	case pktPing:
		if d.HasArg("session") {
			qp.Data = touchData([]sessionTouch{{id: session, timeoutMs: timeout}})
		}
	case pktRevalidate:
		qp.Data = revalidateRequestData(session, timeout)
	case pktRequest:
		var cxid int
		d.ScanArgs(t, "cxid", &cxid)
		qp.Data = requestData(session, int32(cxid), proto.OpCreate, nil)
	}
	return env.mem.encodePacket(&qp)
}

// packetTypeNamed is the type of the quorum packet the traces call name; an unknown name fails the test.
func packetTypeNamed(t *testing.T, d *datadriven.TestData, name string) int32 {
	for typ, n := range packetNames { // determinism:ok a lookup by name; names are unique
		if n == name {
			return typ
		}
	}
	d.Fatalf(t, "unknown packet type %q", name)
	return -2
}

// advanceBy is the duration of an advance command's by argument (a Go duration such as 1500us).
func advanceBy(t *testing.T, d *datadriven.TestData) clock.Duration {
	var by string
	d.ScanArgs(t, "by", &by)
	dur, err := time.ParseDuration(by)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	return clock.Duration(dur.Nanoseconds())
}
