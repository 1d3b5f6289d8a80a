package zabmodel

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestCommitProcessorCore drives CommitProcessor's core (commitCore) one input at a time, with no
// world, and prints the requests each input sends to the final processor. Rewrite with
//
//	go test ./zabmodel -run TestCommitProcessorCore -rewrite
//
// The commands:
//
//	new [match-syncs]                          a fresh core (a learner's matches syncs to SYNCs)
//	local session=S cxid=N op=create|read|sync a local request
//	commit session=S cxid=N zxid=E:C           a committed txn (a local write's, or a remote one)
//	continue                                   resume after a ready that ended with "resume"
//	state                                      the requests waiting, per session
func TestCommitProcessorCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "commitproc"), func(t *testing.T, path string) {
		var core *commitCore
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "new" && core == nil {
				d.Fatalf(t, "new first")
			}
			var kind commitInputKind
			var r *request
			switch d.Cmd {
			case "new":
				core = &commitCore{matchSyncs: d.HasArg("match-syncs"), pending: map[int64][]*request{}}
				return "ok\n"
			case "local", "commit":
				var session int64
				var cxid int
				d.ScanArgs(t, "session", &session)
				d.ScanArgs(t, "cxid", &cxid)
				r = &request{sessionID: session, cxid: int32(cxid), op: proto.OpCreate}
				kind = commitLocal
				if d.Cmd == "commit" {
					var zxid string
					d.ScanArgs(t, "zxid", &zxid)
					r.entry = &proto.TxnEntry{Header: proto.TxnHeader{Zxid: parseCoreZxid(t, d, zxid), ClientID: session, Cxid: int32(cxid), Type: proto.OpCreate}}
					kind = commitCommitted
				} else {
					var op string
					d.ScanArgs(t, "op", &op)
					switch op {
					case "create":
					case "read":
						r.op = proto.OpGetData
					case "sync":
						r.op = proto.OpSync
					default:
						d.Fatalf(t, "op %q: want create, read or sync", op)
					}
				}
			case "continue":
				kind = commitContinue
			case "state":
				var b strings.Builder
				for _, s := range sortedKeys(core.pending) {
					var parts []string
					for _, r := range core.pending[s] {
						parts = append(parts, fmt.Sprintf("%v cxid=%d", r.op, r.cxid))
					}
					fmt.Fprintf(&b, "session %d: %s\n", s, strings.Join(parts, ", "))
				}
				fmt.Fprintf(&b, "commits in progress: %d\n", len(core.drains))
				return b.String()
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			out := core.step(kind, r)
			text := out.String()
			core.done(out)
			if text == "" {
				return "ok\n"
			}
			return text
		})
	})
}
