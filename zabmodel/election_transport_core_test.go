package zabmodel

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zabsim/zabsim/net"
)

// TestElectionTransportCore drives the election transport's core (cnxCore, QuorumCnxManager) one
// input at a time, with no world, and prints each ready: the dials, writes, closes and deliveries.
// The script is the driver: it answers each dial with the connection id it names (dialed), and
// feeds the sockets' events. Rewrite with
//
//	go test ./zabmodel -run TestElectionTransportCore -rewrite
//
// The commands:
//
//	new sid=N [peers=(SID,...)]   the transport of server N in an ensemble of those peers
//	                              (1, 2, 3 unless given)
//	send to=SID msg=TEXT          the election's toSend
//	connect-all                   the election's connectAll (its timeout)
//	dialed to=SID conn=C          the dial to SID got connection C
//	accept conn=C                 the listener accepted C
//	connected conn=C              a connection this server dialed came up
//	identity conn=C sid=SID       the initial message of SID arrives on C
//	receive conn=C msg=TEXT       a message arrives on C
//	closed conn=C                 C closed
//	state                         the connections, the send slots and haveDelivered
func TestElectionTransportCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "transport"), func(t *testing.T, path string) {
		var env transportCoreEnv
		datadriven.RunTest(t, path, env.handle)
	})
}

type transportCoreEnv struct {
	core  *cnxCore
	peers []int64
}

func (env *transportCoreEnv) knowsPeer(sid int64) bool { return slices.Contains(env.peers, sid) }

func (env *transportCoreEnv) handle(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && env.core == nil {
		d.Fatalf(t, "new first")
	}
	conn := func() net.ConnID {
		var c uint64
		d.ScanArgs(t, "conn", &c)
		return net.ConnID(c)
	}
	var in cnxInput
	switch d.Cmd {
	case "new":
		var sid int64
		d.ScanArgs(t, "sid", &sid)
		env.peers = []int64{1, 2, 3}
		d.MaybeScanArgs(t, "peers", &env.peers)
		core := newCnxCore(sid)
		env.core = &core
		return "ok\n"
	case "send":
		var msg string
		d.ScanArgs(t, "to", &in.sid)
		d.ScanArgs(t, "msg", &msg)
		in = cnxInput{kind: cnxToSend, sid: in.sid, payload: []byte(msg)}
	case "connect-all":
		in = cnxInput{kind: cnxConnectAll}
	case "dialed":
		in = cnxInput{kind: cnxDialed, conn: conn()}
		d.ScanArgs(t, "to", &in.sid)
	case "accept":
		in = cnxInput{kind: cnxAccept, conn: conn()}
	case "connected":
		in = cnxInput{kind: cnxConnected, conn: conn()}
	case "identity":
		var sid int64
		d.ScanArgs(t, "sid", &sid)
		in = cnxInput{kind: cnxReceived, conn: conn(), payload: initialMessage(sid)}
	case "receive":
		var msg string
		d.ScanArgs(t, "msg", &msg)
		in = cnxInput{kind: cnxReceived, conn: conn(), payload: []byte(msg)}
	case "closed":
		in = cnxInput{kind: cnxClosed, conn: conn()}
	case "state":
		return env.state()
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	out := env.core.step(in, env)
	text := out.String()
	env.core.readies.put(out)
	if text == "" {
		return "ok\n"
	}
	return text
}

func (env *transportCoreEnv) state() string {
	c := env.core
	var b strings.Builder
	for _, sid := range sortedKeys(c.senders) {
		fmt.Fprintf(&b, "sender %d conn=%d\n", sid, c.senders[sid])
	}
	for _, sid := range sortedKeys(c.dialing) {
		fmt.Fprintf(&b, "dialing %d conn=%d\n", sid, c.dialing[sid])
	}
	for _, conn := range sortedKeys(c.inbound) {
		fmt.Fprintf(&b, "inbound conn=%d\n", conn)
	}
	for _, sid := range sortedKeys(c.queues) {
		fmt.Fprintf(&b, "queue %d %s last=%s\n", sid, electionPayloadText(c.queues[sid]), electionPayloadText(c.lastSent[sid]))
	}
	if c.haveDelivered() {
		b.WriteString("have-delivered\n")
	}
	if b.Len() == 0 {
		return "empty\n"
	}
	return b.String()
}
