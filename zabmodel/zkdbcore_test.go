package zabmodel

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/zabsim/zabsim/zabmodel/proto"
	"github.com/zabsim/zabsim/zabmodel/storage"
)

// TestDatabaseCore drives ZKDatabase's core (dbCore: the load from disk and the fast-forward) one
// input at a time over an in-memory disk, with no world, and prints each ready: the checkers'
// events of the load and of every replayed txn, the deletion of a txn log the snapshot overtook,
// a broken assertion of the replayed log. The script is the driver: it applies a log deletion to
// the disk and nothing else. Rewrite with
//
//	go test ./zabmodel -run TestDatabaseCore -rewrite
//
// The commands:
//
//	new [bugs=LIST] [commit-log=N]  a fresh database over an empty disk
//	log zxid=E:C [holds=E:C]        append a create of /E-C to the txn log (holds: the record
//	                                carries a txn of another zxid)
//	snapshot zxid=E:C               save a snapshot of the tree the log's records up to E:C make
//	truncate zxid=E:C               truncate the txn log after E:C (as a crash's loss would)
//	load [source=startup|truncate]  ZKDatabase.loadDataBase
//	continue                        resume after a ready that ended with "resume"
//	fast-forward                    ZKDatabase.fastForwardDataBase
//	state                           the tree, the committed-log window, the session table
func TestDatabaseCore(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "core", "zkdb"), func(t *testing.T, path string) {
		var env dbCoreEnv
		datadriven.RunTest(t, path, env.handle)
	})
}

type dbCoreEnv struct {
	cfg  Config
	core *dbCore
	disk *storage.Disk
}

func (env *dbCoreEnv) handle(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && env.core == nil {
		d.Fatalf(t, "new first")
	}
	var in dbInput
	switch d.Cmd {
	case "new":
		bugs, commitLog := "", 500
		d.MaybeScanArgs(t, "bugs", &bugs)
		d.MaybeScanArgs(t, "commit-log", &commitLog)
		set, err := ParseBugs(bugs)
		if err != nil {
			d.Fatalf(t, "bugs: %v", err)
		}
		env.cfg = Config{Voters: 1, Bugs: set, CommitLogCount: commitLog}
		env.core = &dbCore{cfg: &env.cfg, mem: newMemory(proto.NewEncoder(nil), proto.NewDecoder(nil)), sid: 1, sessions: map[int64]int32{}}
		env.disk = storage.New()
		return "ok\n"
	case "log":
		var zxid string
		d.ScanArgs(t, "zxid", &zxid)
		z := parseCoreZxid(t, d, zxid)
		holds := z
		if d.HasArg("holds") {
			var h string
			d.ScanArgs(t, "holds", &h)
			holds = parseCoreZxid(t, d, h)
		}
		entry := &proto.TxnEntry{Header: proto.TxnHeader{Zxid: holds, Type: proto.OpCreate},
			Txn: &proto.CreateTxn{Path: fmt.Sprintf("/%d-%d", EpochOf(z), CounterOf(z)), ACL: proto.OpenACLUnsafe}}
		if err := env.disk.Append(storage.Record{Zxid: z, Data: proto.Marshal(entry)}); err != nil {
			d.Fatalf(t, "append: %v", err)
		}
		return "ok\n"
	case "snapshot":
		var zxid string
		d.ScanArgs(t, "zxid", &zxid)
		z := parseCoreZxid(t, d, zxid)
		tr := newTree(&env.cfg)
		for _, r := range env.disk.Records(0) {
			if r.Zxid <= z {
				tr.apply(decodeLogRecord(r))
			}
		}
		env.disk.SaveSnapshot(storage.Snapshot{Zxid: z, Data: serializeTree(tr, nil)}, true)
		return "ok\n"
	case "truncate":
		var zxid string
		d.ScanArgs(t, "zxid", &zxid)
		env.disk.TruncateAfter(parseCoreZxid(t, d, zxid))
		return "ok\n"
	case "load":
		source := "startup"
		d.MaybeScanArgs(t, "source", &source)
		in = dbInput{kind: dbLoad}
		switch source {
		case "startup":
			in.source = SourceStartup
		case "truncate":
			in.source = SourceTruncate
		default:
			d.Fatalf(t, "source=%s: want startup or truncate", source)
		}
	case "continue":
		in.kind = dbContinue
	case "fast-forward":
		in.kind = dbFastForward
	case "state":
		return env.state()
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	out := env.core.step(in, env.disk)
	text := out.String()
	for _, e := range out.effects {
		if e.kind == effectLogDelete {
			env.disk.ClearLog()
		}
	}
	env.core.done(out)
	if text == "" {
		return "ok\n"
	}
	return text
}

func (env *dbCoreEnv) state() string {
	c := env.core
	var b strings.Builder
	if c.tree == nil {
		b.WriteString("tree=none")
	} else {
		fmt.Fprintf(&b, "tree at %s", FormatZxid(c.tree.lastProcessedZxid()))
	}
	fmt.Fprintf(&b, " initialized=%t\n", c.initialized)
	var window []string
	for _, pr := range c.committed {
		window = append(window, FormatZxid(pr.zxid))
	}
	fmt.Fprintf(&b, "committed-log=[%s]\n", strings.Join(window, " "))
	fmt.Fprintf(&b, "disk: log-records=%d last=%s\n", env.disk.Len(), FormatZxid(env.disk.LastZxid()))
	return b.String()
}
