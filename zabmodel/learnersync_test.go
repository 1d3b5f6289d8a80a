package zabmodel

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestSyncDecision drives the learner handler's sync decision (decideSync, LearnerHandler
// .syncFollower) against a leader's database given in the script, with no world, and prints its
// ready and whether a snapshot follows. Rewrite with
//
//	go test ./zabmodel -run TestSyncDecision -rewrite
//
// The commands:
//
//	leader [committed=E:C-E:C,...] [last=E:C] [log=E:C-E:C,...] [no-txn-log-sync]
//	                          the leader's committed log window (a range of one epoch), its last
//	                          processed zxid (default: the window's end) and its txn log
//	sync learner=N peer=E:C   the decision for learner N, whose last zxid is peer
func TestSyncDecision(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "syncdecision"), func(t *testing.T, path string) {
		var src *fakeSyncSource
		mem := newMemory(proto.NewEncoder(nil), proto.NewDecoder(nil))
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "leader":
				src = &fakeSyncSource{txnLogSync: !d.HasArg("no-txn-log-sync")}
				if d.HasArg("committed") {
					var r string
					d.ScanArgs(t, "committed", &r)
					src.committed = proposalRange(t, d, r)
				}
				if d.HasArg("log") {
					var r string
					d.ScanArgs(t, "log", &r)
					src.log = proposalRange(t, d, r)
				}
				if n := len(src.committed); n > 0 {
					src.last = src.committed[n-1].zxid
				}
				if d.HasArg("last") {
					var z string
					d.ScanArgs(t, "last", &z)
					src.last = parseCoreZxid(t, d, z)
				}
				return "ok\n"
			case "sync":
				if src == nil {
					d.Fatalf(t, "leader first")
				}
				var sid int64
				var peer string
				d.ScanArgs(t, "learner", &sid)
				d.ScanArgs(t, "peer", &peer)
				out := &ready{}
				needSnap := decideSync(src, mem, &learnerHandler{handlerCore: handlerCore{sid: sid}}, parseCoreZxid(t, d, peer), out)
				return out.String() + fmt.Sprintf("snapshot needed: %t\n", needSnap)
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}

type fakeSyncSource struct {
	committed, log []*proposal
	last           int64
	txnLogSync     bool
}

func (f *fakeSyncSource) committedLog() []*proposal { return f.committed }
func (f *fakeSyncSource) lastProcessedZxid() int64  { return f.last }
func (f *fakeSyncSource) txnLogSyncEnabled() bool   { return f.txnLogSync }
func (f *fakeSyncSource) txnLogSizeLimit() int64    { return 0 }

func (f *fakeSyncSource) maxCommittedLog() int64 {
	if len(f.committed) == 0 {
		return 0
	}
	return f.committed[len(f.committed)-1].zxid
}

func (f *fakeSyncSource) minCommittedLog() int64 {
	if len(f.committed) == 0 {
		return 0
	}
	return f.committed[0].zxid
}

// proposalsFromLog is ZKDatabase.getProposalsFromTxnLog over the fake log: nil unless the log holds
// peerZxid itself.
func (f *fakeSyncSource) proposalsFromLog(peerZxid, _ int64) []*proposal {
	for i, pr := range f.log {
		if pr.zxid == peerZxid {
			return f.log[i:]
		}
	}
	return nil
}

// proposalRange reads ranges E:C-E:C, comma-separated, each within one epoch.
func proposalRange(t *testing.T, d *datadriven.TestData, ranges string) []*proposal {
	var out []*proposal
	for _, r := range strings.Split(ranges, ",") {
		from, to, ok := strings.Cut(r, "-")
		if !ok {
			d.Fatalf(t, "range %q: want E:C-E:C", r)
		}
		a, b := parseCoreZxid(t, d, from), parseCoreZxid(t, d, to)
		if EpochOf(a) != EpochOf(b) || b < a {
			d.Fatalf(t, "range %q: one epoch, rising", r)
		}
		for z := a; z <= b; z++ {
			entry := &proto.TxnEntry{Header: proto.TxnHeader{Zxid: z, Type: proto.OpCreate}, Txn: &proto.CreateTxn{Path: "/a", ACL: proto.OpenACLUnsafe}}
			out = append(out, &proposal{zxid: z, entry: entry})
		}
	}
	return out
}
