package datatree

import (
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// recomputeDigest sums the node digests from scratch, without the caches
// and incremental updates the tree keeps: every indexed path but the root's
// alias "/" and the paths under "/zookeeper/".
func recomputeDigest(t *Tree) int64 {
	var sum int64
	for _, path := range sortedKeys(t.nodes.nodes) {
		if path == "/" || strings.HasPrefix(path, zookeeperSubtree) {
			continue
		}
		n := t.nodes.nodes[path]
		sum += nodeDigest(path, n.data, &n.stat)
	}
	return sum
}

func header(op proto.OpCode, session int64, zxid int64) proto.TxnHeader {
	return proto.TxnHeader{ClientID: session, Cxid: int32(zxid), Zxid: zxid, Time: 1000 + zxid, Type: op}
}

func createEntry(zxid, session int64, path string, data string, ephemeral bool, parentCVersion int32) *proto.TxnEntry {
	return &proto.TxnEntry{Header: header(proto.OpCreate, session, zxid),
		Txn: &proto.CreateTxn{Path: path, Data: []byte(data), ACL: proto.OpenACLUnsafe, Ephemeral: ephemeral, ParentCVersion: parentCVersion}}
}

func deleteEntry(zxid, session int64, path string) *proto.TxnEntry {
	return &proto.TxnEntry{Header: header(proto.OpDelete, session, zxid), Txn: &proto.DeleteTxn{Path: path}}
}

func setDataEntry(zxid int64, path, data string, version int32) *proto.TxnEntry {
	return &proto.TxnEntry{Header: header(proto.OpSetData, 1, zxid), Txn: &proto.SetDataTxn{Path: path, Data: []byte(data), Version: version}}
}

// stat reads a node's client stat, failing the caller's expectations with a
// zero stat if the node is missing.
func statOf(t *Tree, path string) proto.Stat {
	s, err := t.Exists(path, nil)
	if err != nil {
		return proto.Stat{}
	}
	return s
}
