package zabmodel

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// TestLearnerCore drives the learner's discovery and sync core (learnerCore) one packet at a time,
// with no world, and prints the ready each input returns: the epoch writes, the truncation, the
// txns applied, appended, handed to the sync processor or to the follower's core, the boundaries,
// the ACKs. The script is the driver: it applies only the epoch writes (to the core's view), so a
// truncation's outcome, a snapshot's decoding and a draw are inputs the script gives with
// continue. Rewrite with
//
//	go test ./zabmodel -run TestLearnerCore -rewrite
//
// The commands:
//
//	new [observer] [bugs=LIST] [accepted=N] [current=N] [connecting] [self=SID] [leader=SID]
//	    [servers=(SID,...)] [init=DURATION] [sync=DURATION]
//	                        a learner that has sent FOLLOWERINFO (or OBSERVERINFO), with those
//	                        epochs and bug switches; with connecting, one that has not connected
//	                        yet (self 1 and leader 2 of servers 1, 2, 3, initLimit 10 and
//	                        syncLimit 5 ticks of 2 s unless given)
//	connect now=DURATION    Learner.connectToLeader's first try, at that monotonic time
//	connect-retry now=DURATION
//	                        the next try, after the retry's sleep
//	connected               the socket connected
//	closed now=DURATION [err=TEXT]
//	                        the socket closed or was refused
//	read                    a packet arrives (before it is handled)
//	read-timeout            the read timeout expires
//	shutdown                Learner.shutdown
//	leaderinfo zxid=E:C     LEADERINFO
//	diff|trunc|snap zxid=E:C
//	                        the sync mode
//	snapshot [bytes=N]      the leader's snapshot after a SNAP
//	proposal|inform|commit zxid=E:C
//	                        a packet of the sync
//	newleader, uptodate, ping, sync
//	                        NEWLEADER, UPTODATE, PING (which the sync ignores), SYNC
//	ping ... [touched=(ID:MS,...)]
//	                        a PING, with the session tracker's touch snapshot
//	revalidate session=ID valid=BOOL [short]
//	                        the leader's answer to a validation (short: 8 bytes, no verdict)
//	validate session=ID [timeout=MS]
//	                        Learner.validateSession for a new client connection
//	continue [ok=BOOL] [reached=E:C] [failure=TEXT] [draw=N] [busy=BOOL]
//	                        resume after a ready that ended with "resume", with the world's answer
//	                        (busy: whether the sync processor has work in hand, the answer to
//	                        ask-sync-busy)
//	epoch-written           the QuorumPeer thread's currentEpoch write completes
//	sync-idle               the QuorumPeer thread's turn after the sync thread's (ZK-4643)
//	state                   the core's state and syncWithLeader's lists
func TestLearnerCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "learner"), func(t *testing.T, path string) {
		var env learnerCoreEnv
		datadriven.RunTest(t, path, env.handle)
	})
}

type learnerCoreEnv struct {
	core              *learnerCore
	accepted, current int64
	servers           []int64
}

func (env *learnerCoreEnv) acceptedEpochValue() int64  { return env.accepted }
func (env *learnerCoreEnv) currentEpochValue() int64   { return env.current }
func (env *learnerCoreEnv) knowsServer(sid int64) bool { return slices.Contains(env.servers, sid) }

var learnerCorePackets = map[string]int32{
	"leaderinfo": pktLeaderInfo, "diff": pktDiff, "trunc": pktTrunc, "snap": pktSnap, "proposal": pktProposal,
	"inform": pktInform, "commit": pktCommit, "newleader": pktNewLeader, "uptodate": pktUpToDate, "ping": pktPing,
	"sync": pktSync,
}

func (env *learnerCoreEnv) handle(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && env.core == nil {
		d.Fatalf(t, "new first")
	}
	var in learnerInput
	switch d.Cmd {
	case "new":
		bugs := ""
		d.MaybeScanArgs(t, "bugs", &bugs)
		set, err := ParseBugs(bugs)
		if err != nil {
			d.Fatalf(t, "bugs: %v", err)
		}
		env.accepted, env.current = 0, 0
		d.MaybeScanArgs(t, "accepted", &env.accepted)
		d.MaybeScanArgs(t, "current", &env.current)
		env.core = &learnerCore{bugs: set, observer: d.HasArg("observer"), state: lsAwaitLeaderInfo,
			mem: newMemory(proto.NewEncoder(nil), proto.NewDecoder(nil)), pendingRevalidations: map[int64]*clientConn{},
			self: 1, leaderSid: 2, initTimeout: 20 * clock.Second, syncTimeout: 10 * clock.Second}
		if d.HasArg("connecting") {
			env.core.state = lsConnecting
		}
		d.MaybeScanArgs(t, "self", &env.core.self)
		d.MaybeScanArgs(t, "leader", &env.core.leaderSid)
		env.servers = []int64{1, 2, 3}
		d.MaybeScanArgs(t, "servers", &env.servers)
		env.core.initTimeout = scanDuration(t, d, "init", env.core.initTimeout)
		env.core.syncTimeout = scanDuration(t, d, "sync", env.core.syncTimeout)
		return "ok\n"
	case "leaderinfo", "diff", "trunc", "snap", "proposal", "inform", "commit", "newleader", "uptodate", "ping", "sync":
		in = learnerInput{kind: learnerPacket, packetType: learnerCorePackets[d.Cmd]}
		if d.HasArg("zxid") {
			var z string
			d.ScanArgs(t, "zxid", &z)
			in.zxid = parseCoreZxid(t, d, z)
		}
		if d.Cmd == "proposal" || d.Cmd == "inform" {
			in.entry = &proto.TxnEntry{Header: proto.TxnHeader{Zxid: in.zxid, Type: proto.OpCreate}}
		}
		if d.HasArg("touched") {
			var touched []string
			d.ScanArgs(t, "touched", &touched)
			for _, entry := range touched {
				var touch sessionTouch
				if _, err := fmt.Sscanf(entry, "%d:%d", &touch.id, &touch.timeoutMs); err != nil {
					d.Fatalf(t, "touched %q: want ID:MS", entry)
				}
				in.touched = append(in.touched, touch)
			}
		}
	case "revalidate":
		var id int64
		var valid bool
		d.ScanArgs(t, "session", &id)
		d.MaybeScanArgs(t, "valid", &valid)
		in = learnerInput{kind: learnerPacket, packetType: pktRevalidate, payload: revalidateReplyData(id, valid)}
		if d.HasArg("short") {
			in.payload = in.payload[:8]
		}
	case "validate":
		in = learnerInput{kind: learnerValidate, timeoutMs: 4000, client: &clientConn{}}
		d.ScanArgs(t, "session", &in.session)
		d.MaybeScanArgs(t, "timeout", &in.timeoutMs)
	case "snapshot":
		n := 16
		d.MaybeScanArgs(t, "bytes", &n)
		in = learnerInput{kind: learnerSnapshot, payload: make([]byte, n)}
	case "continue":
		in = learnerInput{kind: learnerContinue}
		d.MaybeScanArgs(t, "ok", &in.ok)
		d.MaybeScanArgs(t, "failure", &in.failure)
		d.MaybeScanArgs(t, "draw", &in.draw)
		d.MaybeScanArgs(t, "busy", &in.syncBusy)
		if d.HasArg("reached") {
			var z string
			d.ScanArgs(t, "reached", &z)
			in.reached = parseCoreZxid(t, d, z)
		}
	case "connect", "connect-retry":
		in = learnerInput{kind: learnerConnect, now: clock.Time(scanDuration(t, d, "now", 0))}
		if d.Cmd == "connect-retry" {
			in.kind = learnerConnectRetry
		}
	case "connected":
		in = learnerInput{kind: learnerConnected}
	case "closed":
		in = learnerInput{kind: learnerClosed, now: clock.Time(scanDuration(t, d, "now", 0)), failure: "connection refused"}
		d.MaybeScanArgs(t, "err", &in.failure)
	case "read":
		in = learnerInput{kind: learnerRead}
	case "read-timeout":
		in = learnerInput{kind: learnerReadTimeout}
	case "shutdown":
		in = learnerInput{kind: learnerShutdown}
	case "epoch-written":
		in = learnerInput{kind: learnerEpochWritten}
	case "sync-idle":
		in = learnerInput{kind: learnerSyncIdle}
	case "state":
		return env.state()
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	out := env.core.step(in, env)
	text := out.String()
	for _, e := range out.effects {
		if e.kind == effectSetEpoch {
			if e.label == storage.AcceptedEpochFile {
				env.accepted = e.zxid
			} else {
				env.current = e.zxid
			}
		}
	}
	env.core.done(out)
	if text == "" {
		return "ok\n"
	}
	return text
}

var learnerStateNames = [...]string{
	lsConnecting: "connecting", lsAwaitLeaderInfo: "await-leaderinfo", lsAwaitSyncMode: "await-sync-mode",
	lsAwaitSnapshot: "await-snapshot", lsSyncing: "syncing", lsBroadcast: "broadcast", lsDead: "dead",
}

func (env *learnerCoreEnv) state() string {
	c := env.core
	var b strings.Builder
	zxids := func(list []int64) string {
		parts := make([]string, len(list))
		for i, z := range list {
			parts[i] = FormatZxid(z)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	notLogged := make([]int64, len(c.notLogged))
	for i, e := range c.notLogged {
		notLogged[i] = e.Header.Zxid
	}
	fmt.Fprintf(&b, "state=%s epoch=%d accepted=%d current=%d\n", learnerStateNames[c.state], c.newEpoch, env.accepted, env.current)
	if c.tries > 0 || c.connectStart != 0 {
		fmt.Fprintf(&b, "connect-tries=%d connect-start=%v\n", c.tries, clock.Duration(c.connectStart))
	}
	fmt.Fprintf(&b, "snapshot-needed=%t sync-snapshot=%t write-to-txn-log=%t pre-zab1=%t\n", c.snapshotNeeded, c.syncSnapshot, c.writeToTxnLog, c.preZab1)
	fmt.Fprintf(&b, "not-logged=%s committed=%s requests-to-ack=%s\n", zxids(notLogged), zxids(c.committed), zxids(c.requestsToAck))
	if len(c.pendingRevalidations) > 0 {
		fmt.Fprintf(&b, "pending-revalidations=%v\n", sortedKeys(c.pendingRevalidations))
	}
	return b.String()
}

// scanDuration reads the duration argument key (a Go duration such as 1.5s), or def without one.
func scanDuration(t *testing.T, d *datadriven.TestData, key string, def clock.Duration) clock.Duration {
	if !d.HasArg(key) {
		return def
	}
	var text string
	d.ScanArgs(t, key, &text)
	v, err := time.ParseDuration(text)
	if err != nil {
		d.Fatalf(t, "%s: %v", key, err)
	}
	return clock.Duration(v.Nanoseconds())
}
