package datatree_test

import (
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/datatree"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// openSessions accepts every session: a stand-in for the server's tracker.
type openSessions struct{}

func (openSessions) CheckSession(int64, any) error       { return nil }
func (openSessions) CheckGlobalSession(int64, any) error { return nil }
func (openSessions) TrackSession(int64, int32)           {}
func (openSessions) SetOwner(int64, any) error           { return nil }
func (openSessions) SetSessionClosing(int64)             {}

// printer is a connection that prints its notifications.
type printer struct{ name string }

func (p *printer) Process(e proto.WatcherEvent, zxid int64) {
	fmt.Printf("%s notified: %v %s (zxid %d)\n", p.name, e.Type, e.Path, zxid)
}

func Example() {
	tree := datatree.New(datatree.Config{})
	prep, err := datatree.NewPreparer(tree, openSessions{})
	if err != nil {
		panic(err)
	}
	var auth datatree.AuthInfo
	auth.Add(proto.ID{Scheme: "ip", ID: "127.0.0.1"})
	watcher := &printer{name: "conn1"}
	if _, err := tree.Exists("/lock", watcher); err == proto.NoNode {
		fmt.Println("exists: NoNode, watch left")
	}

	zxid := int64(0x100000000)
	req := datatree.Request{SessionID: 0x42, Cxid: 1, Type: proto.OpCreate, Auth: auth.IDs(), TimeMilliseconds: 1000,
		Body: &proto.CreateRequest{Path: "/lock", ACL: proto.OpenACLUnsafe, Flags: proto.EphemeralSequential}}
	if datatree.TakesZxid(req.Type, req.Body) {
		zxid++
		req.Zxid = zxid
	}
	prepared, err := prep.Prepare(req)
	if err != nil {
		panic(err)
	}
	fmt.Println("txn:", prepared.Txn.Header.Type, prepared.Txn.Txn.(*proto.CreateTxn).Path)
	result := tree.Apply(prepared.Txn)
	prep.Applied(zxid)
	fmt.Println("applied:", result.Err.String(), result.Path, "digest ok:", !result.DigestMismatch)

	children, stat, _ := tree.GetChildren("/", auth.IDs(), nil)
	fmt.Println("children:", children, "cversion:", stat.Cversion)
	fmt.Println("ephemerals of 0x42:", tree.Ephemerals(0x42))
	// Output:
	// exists: NoNode, watch left
	// txn: create /lock0000000000
	// applied: OK /lock0000000000 digest ok: true
	// children: [lock0000000000 zookeeper] cversion: 0
	// ephemerals of 0x42: [/lock0000000000]
}
