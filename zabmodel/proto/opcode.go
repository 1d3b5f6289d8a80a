package proto

// OpCode is a request or transaction type, ZooDefs.OpCode in Java. It appears
// in RequestHeader.Type, TxnHeader.Type, MultiHeader.Type and Txn.Type.
type OpCode int32

// The op codes of ZooDefs.OpCode in ZooKeeper 3.8.0.
const (
	OpNotification         OpCode = 0
	OpCreate               OpCode = 1
	OpDelete               OpCode = 2
	OpExists               OpCode = 3
	OpGetData              OpCode = 4
	OpSetData              OpCode = 5
	OpGetACL               OpCode = 6
	OpSetACL               OpCode = 7
	OpGetChildren          OpCode = 8
	OpSync                 OpCode = 9
	OpPing                 OpCode = 11
	OpGetChildren2         OpCode = 12
	OpCheck                OpCode = 13
	OpMulti                OpCode = 14
	OpCreate2              OpCode = 15
	OpReconfig             OpCode = 16
	OpCheckWatches         OpCode = 17
	OpRemoveWatches        OpCode = 18
	OpCreateContainer      OpCode = 19
	OpDeleteContainer      OpCode = 20
	OpCreateTTL            OpCode = 21
	OpMultiRead            OpCode = 22
	OpAuth                 OpCode = 100
	OpSetWatches           OpCode = 101
	OpSASL                 OpCode = 102
	OpGetEphemerals        OpCode = 103
	OpGetAllChildrenNumber OpCode = 104
	OpSetWatches2          OpCode = 105
	OpAddWatch             OpCode = 106
	OpWhoAmI               OpCode = 107
	OpCreateSession        OpCode = -10
	OpCloseSession         OpCode = -11
	OpError                OpCode = -1
)

// The xids the Java client reserves for packets that are not numbered
// requests (ClientCnxn). The server echoes them in the ReplyHeader, and
// notifications arrive with NotificationXid.
const (
	NotificationXid int32 = -1
	PingXid         int32 = -2
	AuthXid         int32 = -4
	SetWatchesXid   int32 = -8
)

// opNames holds the ZooDefs.OpCode field names, in declaration order.
var opNames = []nameRow[OpCode]{
	{OpNotification, "notification"},
	{OpCreate, "create"},
	{OpDelete, "delete"},
	{OpExists, "exists"},
	{OpGetData, "getData"},
	{OpSetData, "setData"},
	{OpGetACL, "getACL"},
	{OpSetACL, "setACL"},
	{OpGetChildren, "getChildren"},
	{OpSync, "sync"},
	{OpPing, "ping"},
	{OpGetChildren2, "getChildren2"},
	{OpCheck, "check"},
	{OpMulti, "multi"},
	{OpCreate2, "create2"},
	{OpReconfig, "reconfig"},
	{OpCheckWatches, "checkWatches"},
	{OpRemoveWatches, "removeWatches"},
	{OpCreateContainer, "createContainer"},
	{OpDeleteContainer, "deleteContainer"},
	{OpCreateTTL, "createTTL"},
	{OpMultiRead, "multiRead"},
	{OpAuth, "auth"},
	{OpSetWatches, "setWatches"},
	{OpSASL, "sasl"},
	{OpGetEphemerals, "getEphemerals"},
	{OpGetAllChildrenNumber, "getAllChildrenNumber"},
	{OpSetWatches2, "setWatches2"},
	{OpAddWatch, "addWatch"},
	{OpWhoAmI, "whoAmI"},
	{OpCreateSession, "createSession"},
	{OpCloseSession, "closeSession"},
	{OpError, "error"},
}

// String returns the ZooDefs.OpCode field name, such as getChildren2, or
// OpCode(n) for a value 3.8.0 does not define. (Request.op2String differs only
// in spelling createTTL as "createTtl".)
func (op OpCode) String() string { return formatName(opNames, op, "OpCode") }

// ParseOpCode is the inverse of String.
func ParseOpCode(name string) (OpCode, error) { return parseName(opNames, name, "OpCode") }

// IsWrite reports whether a request of this type is a quorum operation: one
// the leader turns into a transaction, proposes and commits, and that a
// follower or observer forwards to the leader. It is Request.isQuorum of
// 3.8.0 for a global session: createSession and closeSession count as writes
// (for a local session Java keeps them local), error is the type of a failed
// write's transaction, and sync is not a write although learners forward it
// to the leader too. A read-only server refuses these types with NotReadOnly
// (ReadOnlyRequestProcessor), together with sync.
func (op OpCode) IsWrite() bool {
	switch op {
	case OpCreate, OpCreate2, OpCreateTTL, OpCreateContainer, OpError,
		OpDelete, OpDeleteContainer, OpSetACL, OpSetData, OpCheck,
		OpMulti, OpReconfig, OpCreateSession, OpCloseSession:
		return true
	default:
		return false
	}
}

// IsValid reports whether the server accepts a request of this type into its
// processor pipeline (Request.isValid). ZooKeeperServer.submitRequest answers
// any other type with Unimplemented. auth and sasl are missing because
// ZooKeeperServer.processPacket handles them before a Request is built;
// createSession is present because the server submits it for a new
// connection itself.
func (op OpCode) IsValid() bool {
	switch op {
	case OpCheck, OpCloseSession, OpCreate, OpCreate2, OpCreateTTL,
		OpCreateContainer, OpCreateSession, OpDelete, OpDeleteContainer,
		OpExists, OpGetACL, OpGetChildren, OpGetAllChildrenNumber,
		OpGetChildren2, OpGetData, OpGetEphemerals, OpMulti, OpMultiRead,
		OpPing, OpReconfig, OpSetACL, OpSetData, OpSetWatches, OpSetWatches2,
		OpSync, OpCheckWatches, OpRemoveWatches, OpAddWatch, OpWhoAmI:
		return true
	default:
		return false
	}
}
