package zabmodel

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestFollowerCore drives the follower's broadcast core (followerCore) one packet at a time, with
// no world, and prints each ready. Rewrite with
//
//	go test ./zabmodel -run TestFollowerCore -rewrite
//
// The commands:
//
//	proposal zxid=E:C    a PROPOSAL from the leader: logRequest
//	commit zxid=E:C      a COMMIT from the leader
//	forward-sync cxid=N  a local sync forwarded to the leader
//	sync                 the leader's SYNC
//	state                the pending txns and syncs
func TestFollowerCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "follower"), func(t *testing.T, path string) {
		core := &followerCore{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var kind followerInputKind
			var req *request
			var zxid int64
			switch d.Cmd {
			case "proposal", "commit":
				var z string
				d.ScanArgs(t, "zxid", &z)
				zxid = parseCoreZxid(t, d, z)
				kind = followerCommit
				if d.Cmd == "proposal" {
					kind = followerLog
					req = &request{op: proto.OpCreate, entry: &proto.TxnEntry{Header: proto.TxnHeader{Zxid: zxid, Type: proto.OpCreate}}}
				}
			case "forward-sync":
				var cxid int
				d.ScanArgs(t, "cxid", &cxid)
				kind, req = followerSyncForwarded, &request{op: proto.OpSync, cxid: int32(cxid)}
			case "sync":
				kind = followerSyncAnswered
			case "state":
				s := "pending txns:"
				for _, r := range core.pendingTxns {
					s += " " + FormatZxid(r.zxid())
				}
				s += "\npending syncs:"
				for _, r := range core.pendingSyncs {
					s += fmt.Sprintf(" cxid=%d", r.cxid)
				}
				return s + "\n"
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			out := core.step(kind, req, zxid)
			text := out.String()
			core.done(out)
			if text == "" {
				return "ok\n"
			}
			return text
		})
	})
}
