package datatree

import (
	"fmt"
	"testing"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// benchTree is a tree of 10,000 nodes: 100 parents of 99 children each.
func benchTree(b *testing.B) (*Tree, int64) {
	tree := New(Config{})
	zxid := int64(0)
	for p := range 100 {
		zxid++
		tree.Apply(createEntry(zxid, 1, fmt.Sprintf("/p%02d", p), "parent", false, -1))
		for c := range 99 {
			zxid++
			tree.Apply(createEntry(zxid, 1, fmt.Sprintf("/p%02d/c%02d", p, c), "some data", false, -1))
		}
	}
	if tree.NodeCount() < 10000 {
		b.Fatalf("tree has %d nodes", tree.NodeCount())
	}
	return tree, zxid
}

func BenchmarkApplySetData(b *testing.B) {
	tree, zxid := benchTree(b)
	entries := make([]*proto.TxnEntry, 1000)
	for i := range entries {
		entries[i] = setDataEntry(0, fmt.Sprintf("/p%02d/c%02d", i%100, i%99), "new data!", 1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := entries[i%len(entries)]
		zxid++
		e.Header.Zxid = zxid
		if r := tree.Apply(e); r.Err != proto.OK {
			b.Fatal(r.Err)
		}
	}
}

func BenchmarkApplyCreate(b *testing.B) {
	tree, zxid := benchTree(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		zxid++
		e := createEntry(zxid, 1, fmt.Sprintf("/p%02d/n%d", i%100, i), "data", false, -1)
		b.StartTimer()
		if r := tree.Apply(e); r.Err != proto.OK {
			b.Fatal(r.Err)
		}
	}
}

func BenchmarkPrepareAndApplyCreate(b *testing.B) {
	tree, zxid := benchTree(b)
	sessions := newFakeSessions()
	sessions.sessions[1] = &fakeSession{}
	prep, _ := NewPreparer(tree, sessions)
	auth := []proto.ID{{Scheme: "ip", ID: "127.0.0.1"}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		zxid++
		p, err := prep.Prepare(Request{SessionID: 1, Type: proto.OpCreate, Auth: auth, Zxid: zxid,
			Body: &proto.CreateRequest{Path: fmt.Sprintf("/p%02d/s-", i%100), ACL: proto.OpenACLUnsafe, Flags: proto.PersistentSequential}})
		if err != nil || p.Err != proto.OK {
			b.Fatal(err, p.Err)
		}
		tree.Apply(p.Txn)
		prep.Applied(zxid)
	}
}
