package zabmodel_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// TestInteraction runs the interaction scripts of testdata/interaction, in the manner of etcd
// raft's rafttest: each command drives a small ensemble (a few events, a held link, a crash at an
// effect boundary) and prints what happened, the quorum packets delivered and the servers' protocol
// events, in order. Rewrite the expected output after a deliberate change with
//
//	go test ./zabmodel -run TestInteraction -rewrite
//
// The commands:
//
//	add-servers voters=N [observers=M] [seed=S] [bugs=ZK-4646,...] [commit-log=N]
//	            [snapshot-size-factor=F]    (a negative factor turns DIFF from the txn log off)
//	start                            start every server
//	elect [limit=30s]                run until a leader is established and every live server serves
//	write [n=1] [path=/a] [limit=5s] [via=zkN]
//	                                 n creates, one at a time, through a client of the whole
//	                                 ensemble (or of server zkN alone)
//	run for=D                        run the world for D of virtual time
//	step [n=1]                       run n events of the world
//	hold from=zkA to=zkB             hold every message from zkA to zkB (a clogged link)
//	release from=zkA to=zkB          deliver what the link holds, and let it flow again
//	partition zk1 zk2 / zk3          split the network (servers in no group reach everyone)
//	heal                             end every partition
//	crash zkN [at=BOUNDARY]          crash now, or when the server next reaches that effect boundary
//	restart zkN
//	state                            each server's role, epochs and zxids
//	storage zkN                      the server's txn log, fsync frontier, snapshots and epoch files
//
// Every command that runs the world prints its log (the quorum packets and client requests
// delivered, and the protocol events); PINGs, votes and applies are left out to keep
// the scripts readable.
func TestInteraction(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "interaction"), func(t *testing.T, path string) {
		env := &interaction{t: t}
		datadriven.RunTest(t, path, env.handle)
	})
}

type interaction struct {
	t   *testing.T
	w   *sim.World
	nw  *net.Network
	e   *zabmodel.Ensemble
	out strings.Builder
	// crashAt holds, per sid, the boundary at which that server crashes the next time it reaches it.
	crashAt map[int64]string
	// clients are the clients by the server they connect to ("" for the whole ensemble).
	clients map[string]*client.Client
	written int
}

func (env *interaction) handle(t *testing.T, d *datadriven.TestData) string {
	env.out.Reset()
	if d.Cmd != "add-servers" && env.e == nil {
		d.Fatalf(t, "add-servers first")
	}
	switch d.Cmd {
	case "add-servers":
		env.addServers(t, d)
	case "start":
		env.e.Start()
	case "elect":
		env.elect(t, d)
	case "write":
		env.write(t, d)
	case "run":
		var dur string
		d.ScanArgs(t, "for", &dur)
		env.w.RunFor(parseDuration(t, d, dur))
	case "step":
		n := 1
		d.MaybeScanArgs(t, "n", &n)
		for i := 0; i < n && env.w.Step(); i++ {
		}
	case "hold", "release":
		var from, to string
		d.ScanArgs(t, "from", &from)
		d.ScanArgs(t, "to", &to)
		a, b := env.server(t, d, from), env.server(t, d, to)
		if d.Cmd == "hold" {
			env.nw.ClogOneWay(a.Node(), b.Node(), 0)
		} else {
			env.nw.UnclogPair(a.Node(), b.Node())
		}
	case "partition":
		var groups [][]sim.NodeID
		var group []sim.NodeID
		for _, arg := range d.CmdArgs {
			if arg.Key == "/" {
				groups, group = append(groups, group), nil
				continue
			}
			group = append(group, env.server(t, d, arg.Key).Node())
		}
		env.nw.Partition(append(groups, group)...)
	case "heal":
		env.nw.Heal()
	case "crash":
		s := env.server(t, d, d.CmdArgs[0].Key)
		if d.HasArg("at") {
			var at string
			d.ScanArgs(t, "at", &at)
			env.crashAt[s.Sid()] = at
		} else {
			env.w.Crash(s.Node())
		}
	case "restart":
		env.w.Restart(env.server(t, d, d.CmdArgs[0].Key).Node())
	case "state":
		env.state()
	case "storage":
		env.storage(env.server(t, d, d.CmdArgs[0].Key))
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	if env.w.Ended() {
		fmt.Fprintf(&env.out, "run ended: %v\n", env.w.Outcome())
	}
	if env.out.Len() == 0 {
		return "ok\n"
	}
	return env.out.String()
}

func (env *interaction) addServers(t *testing.T, d *datadriven.TestData) {
	voters, observers, seed, bugs := 3, 0, uint64(1), ""
	d.MaybeScanArgs(t, "voters", &voters)
	d.MaybeScanArgs(t, "observers", &observers)
	d.MaybeScanArgs(t, "seed", &seed)
	d.MaybeScanArgs(t, "bugs", &bugs)
	commitLog, sizeFactor := 0, ""
	d.MaybeScanArgs(t, "commit-log", &commitLog)
	d.MaybeScanArgs(t, "snapshot-size-factor", &sizeFactor)
	parsed, err := zabmodel.ParseBugs(bugs)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	w, err := sim.New(sim.Config{Seed: seed})
	require.NoError(t, err)
	nw, err := net.New(w, net.Config{})
	require.NoError(t, err)
	env.w, env.nw, env.crashAt = w, nw, map[int64]string{}
	cfg := zabmodel.Config{Voters: voters, Observers: observers, Bugs: parsed, CommitLogCount: commitLog,
		Observer: zabmodel.ObserverFunc(env.event)}
	if sizeFactor != "" {
		if cfg.SnapshotSizeFactor, err = strconv.ParseFloat(sizeFactor, 64); err != nil {
			d.Fatalf(t, "snapshot-size-factor: %v", err)
		}
	}
	env.e, err = zabmodel.NewEnsemble(w, nw, cfg)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	env.e.SetBoundaryHook(func(sid int64, point string, _ net.ConnID) bool {
		if env.crashAt[sid] != point {
			return false
		}
		delete(env.crashAt, sid)
		fmt.Fprintf(&env.out, "zk%d crashes at %s\n", sid, point)
		return true
	})
	nw.ObserveDeliveries(env.delivered)
	for _, s := range env.e.Servers() {
		fmt.Fprintf(&env.out, "zk%d %s\n", s.Sid(), map[bool]string{true: "voter", false: "observer"}[env.e.Config().IsVoter(s.Sid())])
	}
}

// event prints a protocol event, unless it is one of the frequent kinds left out.
func (env *interaction) event(e zabmodel.Event) {
	switch e.Kind {
	case zabmodel.EventVote, zabmodel.EventApply:
		return
	}
	line := fmt.Sprintf("zk%d %s", e.Server, e.Kind)
	if e.Epoch != 0 {
		line += fmt.Sprintf(" epoch=%d", e.Epoch)
	}
	if e.Zxid != 0 {
		line += " zxid=" + zabmodel.FormatZxid(e.Zxid)
	}
	if e.Leader != 0 {
		line += fmt.Sprintf(" leader=zk%d", e.Leader)
	}
	if e.Learner != 0 {
		line += fmt.Sprintf(" learner=zk%d", e.Learner)
	}
	if e.Count != 0 {
		line += fmt.Sprintf(" count=%d", e.Count)
	}
	if e.Source != zabmodel.SourceNone {
		line += " from=" + e.Source.String()
	}
	env.out.WriteString(line + "\n")
}

// delivered prints a quorum packet as it is delivered.
func (env *interaction) delivered(d net.Delivery) {
	if d.Label == "" || strings.HasPrefix(d.Label, "PING") {
		return // Not a quorum packet (elections, clients), or a ping.
	}
	fmt.Fprintf(&env.out, "%s->%s %s\n", env.w.Name(d.From), env.w.Name(d.To), d.Label)
}

func (env *interaction) elect(t *testing.T, d *datadriven.TestData) {
	limit := "30s"
	d.MaybeScanArgs(t, "limit", &limit)
	deadline := env.w.Now().Add(parseDuration(t, d, limit))
	for env.w.Now() < deadline && !env.w.Ended() {
		if env.settled() {
			sid, epoch, _ := env.e.Leader()
			fmt.Fprintf(&env.out, "leader zk%d epoch %d\n", sid, epoch)
			return
		}
		env.w.RunFor(10 * clock.Millisecond)
	}
	fmt.Fprintf(&env.out, "no established leader served by every live server within %s\n", limit)
}

// settled reports whether a leader is established and every live server serves.
func (env *interaction) settled() bool {
	if _, _, ok := env.e.Leader(); !ok {
		return false
	}
	for _, s := range env.e.Servers() {
		if st := s.State(); st.Up && !st.Serving {
			return false
		}
	}
	return true
}

func (env *interaction) write(t *testing.T, d *datadriven.TestData) {
	n, path, limit, via := 1, "/a", "5s", ""
	d.MaybeScanArgs(t, "n", &n)
	d.MaybeScanArgs(t, "path", &path)
	d.MaybeScanArgs(t, "limit", &limit)
	d.MaybeScanArgs(t, "via", &via)
	if env.clients == nil {
		env.clients = map[string]*client.Client{}
	}
	cl := env.clients[via]
	if cl == nil {
		servers := env.e.Nodes()
		if via != "" {
			servers = []sim.NodeID{env.server(t, d, via).Node()}
		}
		node := env.w.AddNode(fmt.Sprintf("c%d", len(env.clients)+1), nil)
		var err error
		cl, err = client.New(env.w, env.nw, node, client.Config{Servers: servers, SessionTimeout: 30 * clock.Second}, nil)
		require.NoError(t, err)
		env.clients[via] = cl
	}
	for i := 0; i < n; i++ {
		env.written++
		name := fmt.Sprintf("%s%d", path, env.written)
		var result *client.CreateResult
		if err := cl.Create(name, []byte("x"), proto.OpenACLUnsafe, proto.Persistent, func(r client.CreateResult) { result = &r }); err != nil {
			d.Fatalf(t, "create %s: %v", name, err)
		}
		deadline := env.w.Now().Add(parseDuration(t, d, limit))
		for result == nil && env.w.Now() < deadline && !env.w.Ended() {
			env.w.RunFor(clock.Millisecond)
		}
		if result == nil {
			fmt.Fprintf(&env.out, "create %s: no reply within %s\n", name, limit)
			continue
		}
		fmt.Fprintf(&env.out, "create %s: %v\n", name, result.Err)
	}
}

func (env *interaction) state() {
	for _, s := range env.e.Servers() {
		st := s.State()
		if !st.Up {
			fmt.Fprintf(&env.out, "zk%d down lastLogged=%s", st.Sid, zabmodel.FormatZxid(st.LastLoggedZxid))
			if exit := s.Exit(); exit != "" {
				fmt.Fprintf(&env.out, " exited: %s", exit)
			}
			env.out.WriteString("\n")
			continue
		}
		fmt.Fprintf(&env.out, "zk%d %s serving=%t accepted=%d current=%d lastProcessed=%s lastLogged=%s\n",
			st.Sid, st.Role, st.Serving, st.AcceptedEpoch, st.CurrentEpoch,
			zabmodel.FormatZxid(st.LastProcessedZxid), zabmodel.FormatZxid(st.LastLoggedZxid))
	}
}

func (env *interaction) storage(s *zabmodel.Server) {
	disk := s.Disk()
	var zxids []string
	for _, r := range disk.Records(-1) {
		zxids = append(zxids, zabmodel.FormatZxid(r.Zxid))
	}
	fmt.Fprintf(&env.out, "log: %s\n", strings.Join(zxids, " "))
	fmt.Fprintf(&env.out, "synced: %d of %d records\n", disk.SyncedLen(), disk.Len())
	for _, snap := range disk.Snapshots() {
		fmt.Fprintf(&env.out, "snapshot %s durable=%t\n", zabmodel.FormatZxid(snap.Zxid), snap.Durable)
	}
	for _, name := range []string{storage.AcceptedEpochFile, storage.CurrentEpochFile, storage.CurrentEpochTmpFile} {
		if b, ok := disk.ReadFile(name); ok {
			fmt.Fprintf(&env.out, "%s: %s\n", name, b)
		}
	}
}

// server resolves a name such as zk2.
func (env *interaction) server(t *testing.T, d *datadriven.TestData, name string) *zabmodel.Server {
	sid, err := strconv.ParseInt(strings.TrimPrefix(name, "zk"), 10, 64)
	if err != nil || !strings.HasPrefix(name, "zk") || sid < 1 || int(sid) > len(env.e.Servers()) {
		d.Fatalf(t, "no server %q", name)
	}
	return env.e.Server(sid)
}

func parseDuration(t *testing.T, d *datadriven.TestData, s string) clock.Duration {
	dur, err := time.ParseDuration(s)
	if err != nil {
		d.Fatalf(t, "duration %q: %v", s, err)
	}
	return dur
}
