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

// TestLeaderCore drives the leader's broadcast core (leaderCore) one input at a time, with no
// world, and prints the ready each input returns: the PROPOSALs and COMMITs queued to each learner
// handler, the events for the checkers, the requests handed to the commit processor. The script is
// the driver: it applies nothing, so a learner's ACK is an input the script gives. Rewrite with
//
//	go test ./zabmodel -run TestLeaderCore -rewrite
//
// The commands:
//
//	new [voters=3] [sid=1] [epoch=1] [last=E:C]
//	                             a leader of epoch E whose committed frontier and last proposal
//	                             are E:C
//	learner sid=N [observer] [syncing]
//	                             a learner handler (forwarding unless syncing)
//	propose zxid=E:C             Leader.propose of a txn with that zxid
//	ack sid=N zxid=E:C           Leader.processAck
//	continue                     resume after a ready that ended with "resume"
//	sync learner=N               Leader.processSync of a sync the learner forwarded
//	forward learner=N last=E:C   Leader.startForwarding of a learner synced to E:C
//	forget sid=N                 the learner's connection ended: its acks are dropped
//	state                        the outstanding proposals with their acks, the frontier
//
// and for establishment and the tick (leaderloop.go; script leaderloop.txt):
//
//	new ... [initial-counter=C]  the testing-only initial zxid counter
//	establish zxid=E:C applied=E:C logged=E:C
//	                             Leader.startZkServer with the new epoch's zxid, and what the
//	                             database holds: the tree's last processed zxid, the log's last
//	learner sid=N ... [deadline=T] [dead]
//	                             the handler's tickOfNextAckDeadline, or a handler that ended
//	tick                         one turn of lead()'s loop (half a tick)
//	stop                         Leader.shutdown
//
// and for Leader.lead's start and its shutdown (leaderloop.go; script lead-shutdown.txt):
//
//	lead accepted=E              Leader.lead up to its first wait, with the server's acceptedEpoch
//	waiting learner=N|leader wait=epoch|epoch-ack|newleader-ack
//	                             a thread waiting in that quorum wait (its waiter, as the quorum
//	                             waits' core leaves it)
func TestLeaderCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "leader"), func(t *testing.T, path string) {
		var env leaderCoreEnv
		datadriven.RunTest(t, path, env.handle)
	})
}

type leaderCoreEnv struct {
	cfg  Config
	core *leaderCore
	// leader holds the core, as the server's leader does: a learner handler reads the leader's
	// tick through it (LearnerHandler.synced).
	leader *leader
}

func (env *leaderCoreEnv) handler(t *testing.T, d *datadriven.TestData, sid int64) *learnerHandler {
	for _, h := range env.core.handlers {
		if h.sid == sid {
			return h
		}
	}
	d.Fatalf(t, "no learner %d", sid)
	return nil
}

func (env *leaderCoreEnv) handle(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && env.core == nil {
		d.Fatalf(t, "new first")
	}
	var in leaderInput
	switch d.Cmd {
	case "new":
		voters, epoch, last, sid := 3, int64(1), "", int64(1)
		d.MaybeScanArgs(t, "voters", &voters)
		d.MaybeScanArgs(t, "epoch", &epoch)
		d.MaybeScanArgs(t, "last", &last)
		d.MaybeScanArgs(t, "sid", &sid)
		env.cfg = Config{Voters: voters, TickTime: DefaultTickTime}
		d.MaybeScanArgs(t, "initial-counter", &env.cfg.InitialZxidCounter)
		env.leader = &leader{leaderCore: leaderCore{cfg: &env.cfg, mem: newMemory(proto.NewEncoder(nil), proto.NewDecoder(nil)), epoch: epoch,
			outstanding: map[int64]*leaderProposal{}, pendingSyncs: map[int64][]*learnerHandler{}, tickSkip: true,
			discoveryState: discoveryState{self: sid}}}
		env.core = &env.leader.leaderCore
		env.core.lastProposed = MakeZxid(epoch, 0)
		if last != "" {
			env.core.lastProposed = parseCoreZxid(t, d, last)
		}
		env.core.lastCommitted = env.core.lastProposed
		return "ok\n"
	case "learner":
		var sid int64
		d.ScanArgs(t, "sid", &sid)
		h := &learnerHandler{l: env.leader, handlerCore: handlerCore{sid: sid, observer: d.HasArg("observer")}, forwarding: !d.HasArg("syncing")}
		d.MaybeScanArgs(t, "deadline", &h.tickOfNextAckDeadline)
		if d.HasArg("dead") {
			h.state = hsDead
		}
		env.core.handlers = append(env.core.handlers, h)
		return "ok\n"
	case "establish":
		var zxid, applied, logged string
		d.ScanArgs(t, "zxid", &zxid)
		d.ScanArgs(t, "applied", &applied)
		d.ScanArgs(t, "logged", &logged)
		in = leaderInput{kind: leaderEstablish, zxid: parseCoreZxid(t, d, zxid),
			held: heldHistory{applied: parseCoreZxid(t, d, applied), logged: parseCoreZxid(t, d, logged)}}
	case "tick":
		in.kind = leaderTick
	case "stop":
		in.kind = leaderShutdown
	case "lead":
		d.ScanArgs(t, "accepted", &in.zxid)
		in.kind = leaderLead
	case "waiting":
		var thread, wait string
		d.ScanArgs(t, "learner", &thread)
		d.ScanArgs(t, "wait", &wait)
		w := &quorumWaiter{}
		if thread != "leader" {
			sid, err := strconv.ParseInt(thread, 10, 64)
			if err != nil {
				d.Fatalf(t, "learner=%s: want a sid or leader", thread)
			}
			w.handler = env.handler(t, d, sid)
		}
		switch wait {
		case "epoch":
			w.wait = waitEpoch
			env.core.epochWaiters = append(env.core.epochWaiters, w)
		case "epoch-ack":
			w.wait = waitEpochAck
			env.core.ackEpochWaiters = append(env.core.ackEpochWaiters, w)
		case "newleader-ack":
			w.wait = waitNewLeaderAck
			env.core.newLeaderWaiters = append(env.core.newLeaderWaiters, w)
		default:
			d.Fatalf(t, "wait=%s: want epoch, epoch-ack or newleader-ack", wait)
		}
		return "ok\n"
	case "propose":
		var zxid string
		d.ScanArgs(t, "zxid", &zxid)
		z := parseCoreZxid(t, d, zxid)
		entry := &proto.TxnEntry{Header: proto.TxnHeader{Zxid: z, Type: proto.OpCreate}, Txn: &proto.CreateTxn{Path: "/a", ACL: proto.OpenACLUnsafe}}
		lp := &leaderProposal{proposal: &proposal{zxid: z, hash: TxnHash(entry), entry: entry, data: proto.Marshal(entry)},
			req: &request{op: proto.OpCreate, entry: entry}}
		in = leaderInput{kind: leaderPropose, lp: lp}
	case "ack":
		var zxid string
		d.ScanArgs(t, "sid", &in.sid)
		d.ScanArgs(t, "zxid", &zxid)
		in.kind, in.zxid = leaderAck, parseCoreZxid(t, d, zxid)
	case "continue":
		in.kind = leaderContinue
	case "sync":
		var sid int64
		d.ScanArgs(t, "learner", &sid)
		in = leaderInput{kind: leaderSync, h: env.handler(t, d, sid)}
	case "forward":
		var sid int64
		var last string
		d.ScanArgs(t, "learner", &sid)
		d.ScanArgs(t, "last", &last)
		in = leaderInput{kind: leaderForward, h: env.handler(t, d, sid), lastSeen: parseCoreZxid(t, d, last)}
	case "forget":
		var sid int64
		d.ScanArgs(t, "sid", &sid)
		env.core.forgetProposalAcks(sid)
		return "ok\n"
	case "state":
		return env.state()
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	out := env.core.step(in)
	text := out.String()
	env.core.done(out)
	if in.kind == leaderForward {
		in.h.forwarding = true // What the driver does once the packets are queued.
	}
	if text == "" {
		return "ok\n"
	}
	return text
}

func (env *leaderCoreEnv) state() string {
	c := env.core
	var b strings.Builder
	fmt.Fprintf(&b, "last-proposed=%s last-committed=%s\n", FormatZxid(c.lastProposed), FormatZxid(c.lastCommitted))
	fmt.Fprintf(&b, "established=%t tick=%d half-tick-next=%t stopped=%t epoch=%d\n", c.established, c.tick, c.tickSkip, c.stopped, c.epoch)
	for _, ws := range [][]*quorumWaiter{c.epochWaiters, c.ackEpochWaiters, c.newLeaderWaiters} {
		for _, w := range ws {
			fmt.Fprintf(&b, "waiter %v %s done=%t\n", w.wait, waiterThread(w.handler), w.done)
		}
	}
	for _, zxid := range sortedKeys(c.outstanding) {
		fmt.Fprintf(&b, "outstanding %s acks=%v\n", FormatZxid(zxid), c.outstanding[zxid].acks)
	}
	for _, lp := range c.toBeApplied {
		fmt.Fprintf(&b, "to-be-applied %s\n", FormatZxid(lp.zxid))
	}
	for _, zxid := range sortedKeys(c.pendingSyncs) {
		var sids []int64
		for _, h := range c.pendingSyncs[zxid] {
			sids = append(sids, h.sid)
		}
		fmt.Fprintf(&b, "pending-syncs %s learners=%v\n", FormatZxid(zxid), sids)
	}
	return b.String()
}
