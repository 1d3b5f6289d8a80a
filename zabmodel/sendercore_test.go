package zabmodel

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestSenderCore drives a learner handler's queue and sender (senderCore) one input at a time,
// with the time of each step given by the script, and prints each ready: the writes and the timer
// of the sender's next turn. Rewrite with
//
//	go test ./zabmodel -run TestSenderCore -rewrite
//
// The commands:
//
//	queue type=T zxid=E:C   LearnerHandler.queuePacket of a quorum packet of type T (DIFF, PROPOSAL...)
//	write type=T zxid=E:C   a write of the handler's own thread (LEADERINFO, SNAP)
//	write-snapshot bytes=N  the serialized tree of a SNAP, N bytes
//	start                   the sender starts
//	turn                    the sender's timer fires
//	close                   the handler is done
//	advance by=D            the clock moves on by D (a Go duration)
func TestSenderCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "sender"), func(t *testing.T, path string) {
		core := &senderCore{}
		mem := newMemory(proto.NewEncoder(nil), proto.NewDecoder(nil))
		var now clock.Time
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var kind senderInputKind
			var packet []byte
			var packetKind int32
			switch d.Cmd {
			case "queue", "write":
				var name, zxid string
				d.ScanArgs(t, "type", &name)
				d.ScanArgs(t, "zxid", &zxid)
				typ := packetTypeNamed(t, d, name)
				packet = mem.encodePacket(&proto.QuorumPacket{Type: typ, Zxid: parseCoreZxid(t, d, zxid)})
				kind, packetKind = senderQueue, typ
				if d.Cmd == "write" {
					kind = senderWrite
				}
			case "write-snapshot":
				var n int
				d.ScanArgs(t, "bytes", &n)
				kind, packet, packetKind = senderWrite, make([]byte, n), snapshotPayload
			case "start":
				kind = senderStart
			case "turn":
				kind = senderTurn
			case "close":
				kind = senderClose
			case "advance":
				now = now.Add(advanceBy(t, d))
				return "now " + strings.TrimSpace(now.String()) + "\n"
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			out := core.senderStep(kind, packet, packetKind, now)
			text := out.String()
			core.senderReadies.put(out)
			if text == "" {
				return "ok\n"
			}
			return text
		})
	})
}
