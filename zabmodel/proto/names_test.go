package proto_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// javaCodes is KeeperException.Code of 3.8.0, copied from the Java source:
// every enum constant with its value.
var javaCodes = []struct {
	name  string
	value int32
}{
	{"OK", 0}, {"SYSTEMERROR", -1}, {"RUNTIMEINCONSISTENCY", -2}, {"DATAINCONSISTENCY", -3},
	{"CONNECTIONLOSS", -4}, {"MARSHALLINGERROR", -5}, {"UNIMPLEMENTED", -6},
	{"OPERATIONTIMEOUT", -7}, {"BADARGUMENTS", -8}, {"NEWCONFIGNOQUORUM", -13},
	{"RECONFIGINPROGRESS", -14}, {"UNKNOWNSESSION", -12}, {"APIERROR", -100},
	{"NONODE", -101}, {"NOAUTH", -102}, {"BADVERSION", -103}, {"NOCHILDRENFOREPHEMERALS", -108},
	{"NODEEXISTS", -110}, {"NOTEMPTY", -111}, {"SESSIONEXPIRED", -112}, {"INVALIDCALLBACK", -113},
	{"INVALIDACL", -114}, {"AUTHFAILED", -115}, {"SESSIONMOVED", -118}, {"NOTREADONLY", -119},
	{"EPHEMERALONLOCALSESSION", -120}, {"NOWATCHER", -121}, {"REQUESTTIMEOUT", -122},
	{"RECONFIGDISABLED", -123}, {"SESSIONCLOSEDREQUIRESASLAUTH", -124}, {"QUOTAEXCEEDED", -125},
	{"THROTTLEDOP", -127},
}

func TestCodes(t *testing.T) {
	constants := []proto.Code{
		proto.OK, proto.SystemError, proto.RuntimeInconsistency, proto.DataInconsistency,
		proto.ConnectionLoss, proto.MarshallingError, proto.Unimplemented, proto.OperationTimeout,
		proto.BadArguments, proto.NewConfigNoQuorum, proto.ReconfigInProgress, proto.UnknownSession,
		proto.APIError, proto.NoNode, proto.NoAuth, proto.BadVersion, proto.NoChildrenForEphemerals,
		proto.NodeExists, proto.NotEmpty, proto.SessionExpired, proto.InvalidCallback,
		proto.InvalidACL, proto.AuthFailed, proto.SessionMoved, proto.NotReadOnly,
		proto.EphemeralOnLocalSession, proto.NoWatcher, proto.RequestTimeout,
		proto.ReconfigDisabled, proto.SessionClosedRequireSASLAuth, proto.QuotaExceeded,
		proto.ThrottledOp,
	}
	require.Len(t, constants, len(javaCodes))
	for i, java := range javaCodes {
		assert.Equal(t, proto.Code(java.value), constants[i], java.name)
		assert.Equal(t, java.name, constants[i].String())
		parsed, err := proto.ParseCode(java.name)
		require.NoError(t, err)
		assert.Equal(t, constants[i], parsed)
	}

	assert.Equal(t, "Code(-999)", proto.Code(-999).String())
	parsed, err := proto.ParseCode("Code(-999)")
	require.NoError(t, err)
	assert.Equal(t, proto.Code(-999), parsed)
	for _, bad := range []string{"", "NoNode", "nonode", "Code(x)", "Code(-1", "NONODE "} {
		_, err := proto.ParseCode(bad)
		assert.Error(t, err, "%q", bad)
	}
}

// TestCodeErrors checks that a Code is an error that errors.Is finds through
// wrapping, with KeeperException's message texts.
func TestCodeErrors(t *testing.T) {
	err := fmt.Errorf("create /a: %w", proto.NodeExists)
	assert.ErrorIs(t, err, proto.NodeExists)
	assert.NotErrorIs(t, err, proto.NoNode)
	var code proto.Code
	require.True(t, errors.As(err, &code))
	assert.Equal(t, proto.NodeExists, code)

	assert.NoError(t, proto.OK.Err())
	assert.Equal(t, proto.NoNode, proto.NoNode.Err())

	assert.EqualError(t, proto.NoNode, "KeeperErrorCode = NoNode")
	assert.EqualError(t, proto.NotEmpty, "KeeperErrorCode = Directory not empty")
	assert.EqualError(t, proto.RequestTimeout, "KeeperErrorCode = Unknown error REQUESTTIMEOUT")
	assert.EqualError(t, proto.Code(-999), "KeeperErrorCode = Unknown error Code(-999)")
}

// javaOpCodes is ZooDefs.OpCode of 3.8.0, copied from the Java source.
var javaOpCodes = []struct {
	name  string
	value int32
}{
	{"notification", 0}, {"create", 1}, {"delete", 2}, {"exists", 3}, {"getData", 4},
	{"setData", 5}, {"getACL", 6}, {"setACL", 7}, {"getChildren", 8}, {"sync", 9},
	{"ping", 11}, {"getChildren2", 12}, {"check", 13}, {"multi", 14}, {"create2", 15},
	{"reconfig", 16}, {"checkWatches", 17}, {"removeWatches", 18}, {"createContainer", 19},
	{"deleteContainer", 20}, {"createTTL", 21}, {"multiRead", 22}, {"auth", 100},
	{"setWatches", 101}, {"sasl", 102}, {"getEphemerals", 103}, {"getAllChildrenNumber", 104},
	{"setWatches2", 105}, {"addWatch", 106}, {"whoAmI", 107}, {"createSession", -10},
	{"closeSession", -11}, {"error", -1},
}

func TestOpCodes(t *testing.T) {
	for _, java := range javaOpCodes {
		op := proto.OpCode(java.value)
		assert.Equal(t, java.name, op.String())
		parsed, err := proto.ParseOpCode(java.name)
		require.NoError(t, err)
		assert.Equal(t, op, parsed)
	}
	assert.Equal(t, "OpCode(10)", proto.OpCode(10).String())
	parsed, err := proto.ParseOpCode("OpCode(10)")
	require.NoError(t, err)
	assert.Equal(t, proto.OpCode(10), parsed)
	_, err = proto.ParseOpCode("createTtl")
	assert.Error(t, err, "Request.op2String's spelling is not the ZooDefs name")
}

// TestOpClassification checks IsWrite against Request.isQuorum (for a global
// session) and IsValid against Request.isValid, both copied from 3.8.0.
func TestOpClassification(t *testing.T) {
	writes := map[string]bool{
		"create": true, "create2": true, "createTTL": true, "createContainer": true, "error": true,
		"delete": true, "deleteContainer": true, "setACL": true, "setData": true, "check": true,
		"multi": true, "reconfig": true, "closeSession": true, "createSession": true,
	}
	invalid := map[string]bool{"notification": true, "auth": true, "sasl": true, "error": true}
	for _, java := range javaOpCodes {
		op := proto.OpCode(java.value)
		assert.Equal(t, writes[java.name], op.IsWrite(), "IsWrite %s", java.name)
		assert.Equal(t, !invalid[java.name], op.IsValid(), "IsValid %s", java.name)
	}
	assert.False(t, proto.OpCode(10).IsWrite())
	assert.False(t, proto.OpCode(10).IsValid())
}

func TestEnumNames(t *testing.T) {
	assert.Equal(t, []string{"None", "NodeCreated", "NodeDeleted", "NodeDataChanged", "NodeChildrenChanged",
		"DataWatchRemoved", "ChildWatchRemoved", "PersistentWatchRemoved", "EventType(0)"},
		stringsOf(proto.EventNone, 1, 2, 3, 4, 5, 6, 7, 0))
	assert.Equal(t, []string{"Unknown", "Disconnected", "NoSyncConnected", "SyncConnected", "AuthFailed",
		"ConnectedReadOnly", "SaslAuthenticated", "Expired", "Closed", "KeeperState(2)"},
		stringsOf(proto.StateUnknown, 0, 1, 3, 4, 5, 6, -112, 7, 2))
	assert.Equal(t, []string{"Children", "Data", "Any", "WatcherType(0)"}, stringsOf(proto.WatcherChildren, 2, 3, 0))
	assert.Equal(t, []string{"PERSISTENT", "PERSISTENT_RECURSIVE", "AddWatchMode(2)"},
		stringsOf(proto.AddWatchPersistent, 1, 2))
	assert.Equal(t, []string{"PERSISTENT", "EPHEMERAL", "PERSISTENT_SEQUENTIAL", "EPHEMERAL_SEQUENTIAL",
		"CONTAINER", "PERSISTENT_WITH_TTL", "PERSISTENT_SEQUENTIAL_WITH_TTL", "CreateMode(7)"},
		stringsOf(proto.Persistent, 1, 2, 3, 4, 5, 6, 7))
}

// stringsOf renders the first value and the others converted to its type.
func stringsOf[T interface {
	~int32
	fmt.Stringer
}](first T, rest ...int32) []string {
	out := []string{first.String()}
	for _, v := range rest {
		out = append(out, T(v).String())
	}
	return out
}

// TestCreateModes checks the flags and predicates of CreateMode's enum
// constructor arguments (flag, ephemeral, sequential, container, ttl).
func TestCreateModes(t *testing.T) {
	java := []struct {
		mode                                  proto.CreateMode
		flag                                  int32
		ephemeral, sequential, container, ttl bool
	}{
		{proto.Persistent, 0, false, false, false, false},
		{proto.PersistentSequential, 2, false, true, false, false},
		{proto.Ephemeral, 1, true, false, false, false},
		{proto.EphemeralSequential, 3, true, true, false, false},
		{proto.Container, 4, false, false, true, false},
		{proto.PersistentWithTTL, 5, false, false, false, true},
		{proto.PersistentSequentialWithTTL, 6, false, true, false, true},
	}
	for _, c := range java {
		mode, err := proto.CreateModeFromFlag(c.flag)
		require.NoError(t, err)
		assert.Equal(t, c.mode, mode)
		assert.Equal(t, c.ephemeral, mode.IsEphemeral(), "%v", mode)
		assert.Equal(t, c.sequential, mode.IsSequential(), "%v", mode)
		assert.Equal(t, c.container, mode.IsContainer(), "%v", mode)
		assert.Equal(t, c.ttl, mode.IsTTL(), "%v", mode)
		parsed, err := proto.ParseCreateMode(mode.String())
		require.NoError(t, err)
		assert.Equal(t, mode, parsed)
	}
	for _, flag := range []int32{-1, 7, 100} {
		_, err := proto.CreateModeFromFlag(flag)
		assert.ErrorIs(t, err, proto.BadArguments, "flag %d", flag)
	}
}

func TestPerms(t *testing.T) {
	assert.Equal(t, proto.Perm(31), proto.PermAll)
	assert.Equal(t, "cdrwa", proto.PermAll.String())
	assert.Equal(t, "rw", (proto.PermWrite | proto.PermRead).String())
	assert.Equal(t, "", proto.Perm(0).String())
	assert.Equal(t, "r+0x20", proto.Perm(0x21).String())
	for p := proto.Perm(0); p <= proto.PermAll; p++ {
		parsed, err := proto.ParsePerms(p.String())
		require.NoError(t, err)
		assert.Equal(t, p, parsed)
	}
	parsed, err := proto.ParsePerms("awrdcr")
	require.NoError(t, err)
	assert.Equal(t, proto.PermAll, parsed, "any order, repeats allowed")
	for _, bad := range []string{"x", "rwx", "R", "cdrwa ", "r,w"} {
		_, err := proto.ParsePerms(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestACLs(t *testing.T) {
	assert.Equal(t, []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "world", ID: "anyone"}}}, proto.OpenACLUnsafe)
	assert.Equal(t, []proto.ACL{{Perms: proto.PermAll, ID: proto.ID{Scheme: "auth", ID: ""}}}, proto.CreatorAllACL)
	assert.Equal(t, []proto.ACL{{Perms: proto.PermRead, ID: proto.AnyoneID}}, proto.ReadACLUnsafe)
	assert.Equal(t, "world:anyone:cdrwa", proto.OpenACLUnsafe[0].String())

	acl, err := proto.ParseACL("digest:bob:hash=:rw")
	require.NoError(t, err)
	assert.Equal(t, proto.ACL{Perms: proto.PermRead | proto.PermWrite, ID: proto.ID{Scheme: "digest", ID: "bob:hash="}}, acl)
	acl, err = proto.ParseACL("auth::cdrwa")
	require.NoError(t, err)
	assert.Equal(t, proto.CreatorAllACL[0], acl)
	for _, bad := range []string{"world", "world:anyone", "world:anyone:q"} {
		_, err := proto.ParseACL(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestClientStat(t *testing.T) {
	persisted := proto.StatPersisted{Czxid: 1, Mzxid: 2, Ctime: 3, Mtime: 4, Version: 5, Cversion: 3,
		Aversion: 7, EphemeralOwner: proto.ContainerEphemeralOwner, Pzxid: 9}
	// Three creates, one since deleted: the client sees 2*3-2 = 4 changes.
	assert.Equal(t, proto.Stat{Czxid: 1, Mzxid: 2, Ctime: 3, Mtime: 4, Version: 5, Cversion: 4,
		Aversion: 7, EphemeralOwner: 0, DataLength: 10, NumChildren: 2, Pzxid: 9},
		persisted.ClientStat(10, 2))
	persisted.EphemeralOwner = 0x1234
	assert.Equal(t, int64(0x1234), persisted.ClientStat(0, 0).EphemeralOwner)
}
