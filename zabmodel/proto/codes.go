package proto

import "strconv"

// Code is a ZooKeeper error code, KeeperException.Code in Java, as carried in
// ReplyHeader.Err, MultiHeader.Err, ErrorResponse and ErrorTxn.
//
// Code implements error so that a reply's code can travel up a call stack and
// be tested with errors.Is(err, proto.NoNode). OK is not an error: use Err to
// turn a code into nil-or-error.
type Code int32

// The codes of KeeperException.Code in ZooKeeper 3.8.0, with their values.
// There are no codes -9 to -11, -99, -104 to -107, -109, -116, -117 or -126.
const (
	OK                           Code = 0
	SystemError                  Code = -1
	RuntimeInconsistency         Code = -2
	DataInconsistency            Code = -3
	ConnectionLoss               Code = -4
	MarshallingError             Code = -5
	Unimplemented                Code = -6
	OperationTimeout             Code = -7
	BadArguments                 Code = -8
	UnknownSession               Code = -12
	NewConfigNoQuorum            Code = -13
	ReconfigInProgress           Code = -14
	APIError                     Code = -100
	NoNode                       Code = -101
	NoAuth                       Code = -102
	BadVersion                   Code = -103
	NoChildrenForEphemerals      Code = -108
	NodeExists                   Code = -110
	NotEmpty                     Code = -111
	SessionExpired               Code = -112
	InvalidCallback              Code = -113
	InvalidACL                   Code = -114
	AuthFailed                   Code = -115
	SessionMoved                 Code = -118
	NotReadOnly                  Code = -119
	EphemeralOnLocalSession      Code = -120
	NoWatcher                    Code = -121
	RequestTimeout               Code = -122
	ReconfigDisabled             Code = -123
	SessionClosedRequireSASLAuth Code = -124
	QuotaExceeded                Code = -125
	ThrottledOp                  Code = -127
)

// codeInfo is one row of the code table: the Java enum name (which has no
// underscores, so it is also our conformance name) and the text
// KeeperException.getCodeMessage gives it.
type codeInfo struct {
	code    Code
	name    string
	message string
}

// codeTable lists every code in declaration order. Lookups scan it; with 32
// entries a scan is as fast as a map and its order is fixed.
var codeTable = [...]codeInfo{
	{OK, "OK", "ok"},
	{SystemError, "SYSTEMERROR", "SystemError"},
	{RuntimeInconsistency, "RUNTIMEINCONSISTENCY", "RuntimeInconsistency"},
	{DataInconsistency, "DATAINCONSISTENCY", "DataInconsistency"},
	{ConnectionLoss, "CONNECTIONLOSS", "ConnectionLoss"},
	{MarshallingError, "MARSHALLINGERROR", "MarshallingError"},
	{Unimplemented, "UNIMPLEMENTED", "Unimplemented"},
	{OperationTimeout, "OPERATIONTIMEOUT", "OperationTimeout"},
	{BadArguments, "BADARGUMENTS", "BadArguments"},
	{UnknownSession, "UNKNOWNSESSION", "Unknown error UNKNOWNSESSION"},
	{NewConfigNoQuorum, "NEWCONFIGNOQUORUM", "NewConfigNoQuorum"},
	{ReconfigInProgress, "RECONFIGINPROGRESS", "ReconfigInProgress"},
	{APIError, "APIERROR", "APIError"},
	{NoNode, "NONODE", "NoNode"},
	{NoAuth, "NOAUTH", "NoAuth"},
	{BadVersion, "BADVERSION", "BadVersion"},
	{NoChildrenForEphemerals, "NOCHILDRENFOREPHEMERALS", "NoChildrenForEphemerals"},
	{NodeExists, "NODEEXISTS", "NodeExists"},
	{NotEmpty, "NOTEMPTY", "Directory not empty"},
	{SessionExpired, "SESSIONEXPIRED", "Session expired"},
	{InvalidCallback, "INVALIDCALLBACK", "Invalid callback"},
	{InvalidACL, "INVALIDACL", "InvalidACL"},
	{AuthFailed, "AUTHFAILED", "AuthFailed"},
	{SessionMoved, "SESSIONMOVED", "Session moved"},
	{NotReadOnly, "NOTREADONLY", "Not a read-only call"},
	{EphemeralOnLocalSession, "EPHEMERALONLOCALSESSION", "Ephemeral node on local session"},
	{NoWatcher, "NOWATCHER", "No such watcher"},
	{RequestTimeout, "REQUESTTIMEOUT", "Unknown error REQUESTTIMEOUT"},
	{ReconfigDisabled, "RECONFIGDISABLED", "Reconfig is disabled"},
	{SessionClosedRequireSASLAuth, "SESSIONCLOSEDREQUIRESASLAUTH", "Session closed because client failed to authenticate"},
	{QuotaExceeded, "QUOTAEXCEEDED", "Quota has exceeded"},
	{ThrottledOp, "THROTTLEDOP", "Op throttled due to high load"},
}

func (c Code) info() (codeInfo, bool) {
	for _, row := range codeTable {
		if row.code == c {
			return row, true
		}
	}
	return codeInfo{}, false
}

// String returns the Java enum name, such as NONODE, or Code(-999) for a value
// ZooKeeper 3.8.0 does not define.
func (c Code) String() string {
	if row, ok := c.info(); ok {
		return row.name
	}
	return "Code(" + strconv.Itoa(int(c)) + ")"
}

// Error returns the message a Java KeeperException for this code carries
// without a path, such as "KeeperErrorCode = NoNode". The texts are
// KeeperException.getCodeMessage's, including its fallback "Unknown error X"
// for the codes it has no case for.
func (c Code) Error() string {
	if row, ok := c.info(); ok {
		return "KeeperErrorCode = " + row.message
	}
	return "KeeperErrorCode = Unknown error " + c.String()
}

// Err returns nil for OK and c otherwise, so that a reply's code can be
// returned as an error directly.
func (c Code) Err() error {
	if c == OK {
		return nil
	}
	return c
}

// ParseCode is the inverse of String: it accepts a Java enum name such as
// NONODE, or the Code(n) form String uses for undefined values.
func ParseCode(name string) (Code, error) {
	rows := make([]nameRow[Code], len(codeTable))
	for i, row := range codeTable {
		rows[i] = nameRow[Code]{row.code, row.name}
	}
	return parseName(rows, name, "Code")
}
