package zabmodel

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zabsim/zabsim/electionmodel"
)

// TestPeerCore drives QuorumPeer's core (peerCore, the role loop) one input at a time, with no
// world, and prints each ready: the notifications, the election's timer, the decision, a role's
// shutdown and the post of the next election. The script is the driver: it answers each ask-self
// with continue, and feeds the election's notifications and timeouts. Rewrite with
//
//	go test ./zabmodel -run TestPeerCore -rewrite
//
// The commands:
//
//	new sid=N                         server N of voters 1, 2, 3
//	look                              enter LOOKING (QuorumPeer.start)
//	continue [zxid=Z epoch=E]         resume after a ready that asked to, answering ask-self with
//	                                  the last logged zxid Z and current epoch E (the last given,
//	                                  which notification and timeout also pass, unless given)
//	notification from=S state=STATE leader=L [zxid=Z] round=R [epoch=E]
//	                                  a notification from S (STATE: looking, following, leading)
//	timeout [delivered=false]         the election's timer expires
//	end reason=TEXT                   lead() or followLeader() returns
//	posted generation=G               the post of a role's end runs
//	state                             the role, its generation and the vote
//	file name=NAME [value=V]          the disk holds the epoch file NAME with V (none without)
//	load                              QuorumPeer.loadDataBase starts
//	load-continue [zxid=Z]            the load goes on, after the database reached Z (0x... allowed)
//	epochs                            the accepted and current epochs and the load's failure
func TestPeerCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "peer"), func(t *testing.T, path string) {
		var core *peerCore
		files := epochFiles{}
		var self electionmodel.Self // the last answer of continue, which the election reads again
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "new" && core == nil {
				d.Fatalf(t, "new first")
			}
			var in peerInput
			switch d.Cmd {
			case "new":
				var sid int64
				d.ScanArgs(t, "sid", &sid)
				election, err := electionmodel.New(electionmodel.Config{ID: sid, Voters: []int64{1, 2, 3}, Participant: true})
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				core = &peerCore{cfg: &Config{}, election: election}
				return "ok\n"
			case "look":
				in = peerInput{kind: peerLook}
			case "continue":
				d.MaybeScanArgs(t, "zxid", &self.LastLoggedZxid)
				d.MaybeScanArgs(t, "epoch", &self.CurrentEpoch)
				in = peerInput{kind: peerContinue, self: self}
			case "notification":
				var state string
				n := electionmodel.Notification{}
				d.ScanArgs(t, "from", &n.Sender)
				d.ScanArgs(t, "state", &state)
				d.ScanArgs(t, "leader", &n.Leader)
				d.MaybeScanArgs(t, "zxid", &n.Zxid)
				d.ScanArgs(t, "round", &n.ElectionEpoch)
				d.MaybeScanArgs(t, "epoch", &n.PeerEpoch)
				switch state {
				case "looking":
					n.State = electionmodel.Looking
				case "following":
					n.State = electionmodel.Following
				case "leading":
					n.State = electionmodel.Leading
				default:
					d.Fatalf(t, "unknown state %q", state)
				}
				in = peerInput{kind: peerNotification, notification: n, self: self}
			case "timeout":
				in = peerInput{kind: peerElectionTimeout, delivered: true, self: self}
				d.MaybeScanArgs(t, "delivered", &in.delivered)
			case "end":
				in = peerInput{kind: peerRoleEnd}
				d.ScanArgs(t, "reason", &in.reason)
			case "posted":
				in = peerInput{kind: peerStartPosted}
				d.ScanArgs(t, "generation", &in.generation)
			case "state":
				return fmt.Sprintf("%s generation=%d vote=%d\n", core.role, core.roleGeneration, core.vote.Leader)
			case "file":
				var name string
				d.ScanArgs(t, "name", &name)
				if !d.HasArg("value") {
					delete(files, name)
					return "ok\n"
				}
				var v int64
				d.ScanArgs(t, "value", &v)
				files[name] = []byte(fmt.Sprint(v))
				return "ok\n"
			case "epochs":
				return fmt.Sprintf("accepted=%d current=%d failed=%t\n", core.acceptedEpoch, core.currentEpoch, core.load.failed)
			case "load", "load-continue":
				in = peerInput{kind: peerLoadStart}
				if d.Cmd == "load-continue" {
					in = peerInput{kind: peerLoadContinue}
					var zxid string
					d.MaybeScanArgs(t, "zxid", &zxid)
					if zxid != "" {
						z, err := strconv.ParseInt(zxid, 0, 64)
						if err != nil {
							d.Fatalf(t, "zxid: %v", err)
						}
						in.zxid = z
					}
				}
				out := core.stepLoad(in, files)
				text := out.String()
				core.done(out)
				if text == "" {
					return "ok\n"
				}
				return text
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			out := core.step(in)
			text := out.String()
			core.done(out)
			if text == "" {
				return "ok\n"
			}
			return text
		})
	})
}

// epochFiles is the disk of TestPeerCore's load: the epoch files by name.
type epochFiles map[string][]byte

func (f epochFiles) ReadFile(name string) ([]byte, bool) {
	b, ok := f[name]
	return b, ok
}
