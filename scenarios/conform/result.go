package conform

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Code is the outcome of an operation: a ZooKeeper error by its
// KeeperException.Code name, or one of the local codes below.
type Code string

// The ZooKeeper codes (KeeperException.Code), with their numbers in the
// comments.
const (
	CodeOK                           Code = "OK"                           // 0
	CodeSystemError                  Code = "SYSTEMERROR"                  // -1
	CodeRuntimeInconsistency         Code = "RUNTIMEINCONSISTENCY"         // -2
	CodeDataInconsistency            Code = "DATAINCONSISTENCY"            // -3
	CodeConnectionLoss               Code = "CONNECTIONLOSS"               // -4
	CodeMarshallingError             Code = "MARSHALLINGERROR"             // -5
	CodeUnimplemented                Code = "UNIMPLEMENTED"                // -6
	CodeOperationTimeout             Code = "OPERATIONTIMEOUT"             // -7
	CodeBadArguments                 Code = "BADARGUMENTS"                 // -8
	CodeUnknownSession               Code = "UNKNOWNSESSION"               // -12
	CodeNewConfigNoQuorum            Code = "NEWCONFIGNOQUORUM"            // -13
	CodeReconfigInProgress           Code = "RECONFIGINPROGRESS"           // -14
	CodeAPIError                     Code = "APIERROR"                     // -100
	CodeNoNode                       Code = "NONODE"                       // -101
	CodeNoAuth                       Code = "NOAUTH"                       // -102
	CodeBadVersion                   Code = "BADVERSION"                   // -103
	CodeNoChildrenForEphemerals      Code = "NOCHILDRENFOREPHEMERALS"      // -108
	CodeNodeExists                   Code = "NODEEXISTS"                   // -110
	CodeNotEmpty                     Code = "NOTEMPTY"                     // -111
	CodeSessionExpired               Code = "SESSIONEXPIRED"               // -112
	CodeInvalidCallback              Code = "INVALIDCALLBACK"              // -113
	CodeInvalidACL                   Code = "INVALIDACL"                   // -114
	CodeAuthFailed                   Code = "AUTHFAILED"                   // -115
	CodeSessionMoved                 Code = "SESSIONMOVED"                 // -118
	CodeNotReadOnly                  Code = "NOTREADONLY"                  // -119
	CodeEphemeralOnLocalSession      Code = "EPHEMERALONLOCALSESSION"      // -120
	CodeNoWatcher                    Code = "NOWATCHER"                    // -121
	CodeRequestTimeout               Code = "REQUESTTIMEOUT"               // -122
	CodeReconfigDisabled             Code = "RECONFIGDISABLED"             // -123
	CodeSessionClosedRequireSASLAuth Code = "SESSIONCLOSEDREQUIRESASLAUTH" // -124
	CodeQuotaExceeded                Code = "QUOTAEXCEEDED"                // -125
	CodeThrottledOp                  Code = "THROTTLEDOP"                  // -127
)

// CodeInvalidPath is local: the client library rejected the path before
// sending anything (see ClientRejectsPath). The server never returns it.
const CodeInvalidPath Code = "INVALIDPATH"

var codesByNumber = map[int32]Code{
	0: CodeOK, -1: CodeSystemError, -2: CodeRuntimeInconsistency, -3: CodeDataInconsistency,
	-4: CodeConnectionLoss, -5: CodeMarshallingError, -6: CodeUnimplemented, -7: CodeOperationTimeout,
	-8: CodeBadArguments, -12: CodeUnknownSession, -13: CodeNewConfigNoQuorum, -14: CodeReconfigInProgress,
	-100: CodeAPIError, -101: CodeNoNode, -102: CodeNoAuth, -103: CodeBadVersion,
	-108: CodeNoChildrenForEphemerals, -110: CodeNodeExists, -111: CodeNotEmpty, -112: CodeSessionExpired,
	-113: CodeInvalidCallback, -114: CodeInvalidACL, -115: CodeAuthFailed, -118: CodeSessionMoved,
	-119: CodeNotReadOnly, -120: CodeEphemeralOnLocalSession, -121: CodeNoWatcher, -122: CodeRequestTimeout,
	-123: CodeReconfigDisabled, -124: CodeSessionClosedRequireSASLAuth, -125: CodeQuotaExceeded, -127: CodeThrottledOp,
}

// CodeFromNumber maps a ZooKeeper error number to its Code. A number outside
// KeeperException.Code becomes "UNKNOWN(n)", so that it still shows up in a
// comparison instead of being lost.
func CodeFromNumber(number int32) Code {
	if code, ok := codesByNumber[number]; ok {
		return code
	}
	return Code(fmt.Sprintf("UNKNOWN(%d)", number))
}

// EventType names a watch event. Only node events appear in results.
type EventType string

// The node event types (Watcher.Event.EventType).
const (
	EventNodeCreated         EventType = "NodeCreated"
	EventNodeDeleted         EventType = "NodeDeleted"
	EventNodeDataChanged     EventType = "NodeDataChanged"
	EventNodeChildrenChanged EventType = "NodeChildrenChanged"
)

// Event is one watch notification a session received.
type Event struct {
	Type EventType `json:"type"`
	Path string    `json:"path"`
}

// Stat is a znode's metadata. EphemeralOwner is rendered, not numeric:
// "" for none (0), the session's name for a session of the run, "container"
// for a container node, "ttl:N" for a TTL node with N ms to live, and
// "0x%016x" for any other value.
type Stat struct {
	Czxid          int64  `json:"czxid"`
	Mzxid          int64  `json:"mzxid"`
	Pzxid          int64  `json:"pzxid"`
	Ctime          int64  `json:"ctime"`
	Mtime          int64  `json:"mtime"`
	Version        int32  `json:"version"`
	Cversion       int32  `json:"cversion"`
	Aversion       int32  `json:"aversion"`
	EphemeralOwner string `json:"ephemeralOwner"`
	DataLength     int32  `json:"dataLength"`
	NumChildren    int32  `json:"numChildren"`
}

// The raw ephemeralOwner values of the extended node types
// (EphemeralType.CONTAINER_EPHEMERAL_OWNER and the TTL encoding: top byte
// 0xff, the next two bytes reserved, the low 40 bits the TTL).
const (
	containerOwner    = int64(-1 << 63)
	ttlOwnerMask      = int64(-1 << 56)
	ttlOwnerValueMask = int64(1<<40 - 1)
)

// RenderOwner renders a raw ephemeralOwner; sessionName maps the session ids
// of the run to names and reports whether it knows the id.
func RenderOwner(owner int64, sessionName func(int64) (string, bool)) string {
	if owner == 0 {
		return ""
	}
	if name, ok := sessionName(owner); ok {
		return name
	}
	if owner == containerOwner {
		return ReservedSessionName
	}
	if owner&ttlOwnerMask == ttlOwnerMask && owner&^ttlOwnerMask&^ttlOwnerValueMask == 0 {
		return fmt.Sprintf("ttl:%d", owner&ttlOwnerValueMask)
	}
	return fmt.Sprintf("0x%016x", uint64(owner))
}

// MultiResult is the outcome of one operation inside a multi.
type MultiResult struct {
	Op   OpKind `json:"op"`
	Err  Code   `json:"err"`
	Path string `json:"path,omitempty"`
	Stat *Stat  `json:"stat,omitempty"`
}

// MaxInlineData is the largest payload a Result shows as "data"; a longer one
// shows as "data_sha256" (its length is in stat.dataLength), so that size
// limit cases do not put a megabyte on one line.
const MaxInlineData = 1024

// Result is the outcome of one Op. Which fields are set depends on the op
// and its outcome; the package documentation lists them. Slices are nil when
// absent and non-nil (possibly empty) when present.
type Result struct {
	// I is the index of the op in its sequence, from 0.
	I       int
	Session string
	Op      OpKind
	Err     Code
	// Path is the created path of create and the path answered by sync.
	Path string
	// Data is the payload of get, when at most MaxInlineData bytes.
	Data *string
	// DataSHA256 is the hex SHA-256 of a longer payload of get.
	DataSHA256 string
	Stat       *Stat
	// Children are the sorted child names of children.
	Children []string
	ACL      []ACL
	Results  []MultiResult
	// Events maps session names to the node events each received since the
	// previous result, in arrival order. Sessions without events are absent.
	Events map[string][]Event
}

// SetData records a get payload, inline or as a digest.
func (r *Result) SetData(data []byte) {
	if len(data) <= MaxInlineData {
		s := string(data)
		r.Data, r.DataSHA256 = &s, ""
		return
	}
	sum := sha256.Sum256(data)
	r.Data, r.DataSHA256 = nil, hex.EncodeToString(sum[:])
}

// resultJSON is the wire shape: pointers and omitempty make "absent" and
// "present but empty" distinct.
type resultJSON struct {
	I          int                `json:"i"`
	Session    string             `json:"session"`
	Op         OpKind             `json:"op"`
	Err        Code               `json:"err"`
	Path       string             `json:"path,omitempty"`
	Data       *string            `json:"data,omitempty"`
	DataSHA256 string             `json:"data_sha256,omitempty"`
	Stat       *Stat              `json:"stat,omitempty"`
	Children   *[]string          `json:"children,omitempty"`
	ACL        *[]ACL             `json:"acl,omitempty"`
	Results    *[]MultiResult     `json:"results,omitempty"`
	Events     map[string][]Event `json:"events,omitempty"`
}

// MarshalJSON writes the result line.
func (r Result) MarshalJSON() ([]byte, error) {
	w := resultJSON{
		I: r.I, Session: r.Session, Op: r.Op, Err: r.Err, Path: r.Path,
		Data: r.Data, DataSHA256: r.DataSHA256, Stat: r.Stat, Events: r.Events,
	}
	if r.Children != nil {
		w.Children = &r.Children
	}
	if r.ACL != nil {
		w.ACL = &r.ACL
	}
	if r.Results != nil {
		w.Results = &r.Results
	}
	if len(w.Events) == 0 {
		w.Events = nil
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a result line, keeping present empty lists non-nil.
func (r *Result) UnmarshalJSON(b []byte) error {
	var w resultJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Result{
		I: w.I, Session: w.Session, Op: w.Op, Err: w.Err, Path: w.Path,
		Data: w.Data, DataSHA256: w.DataSHA256, Stat: w.Stat, Events: w.Events,
	}
	if w.Children != nil {
		r.Children = *w.Children
	}
	if w.ACL != nil {
		r.ACL = *w.ACL
	}
	if w.Results != nil {
		r.Results = *w.Results
	}
	return nil
}
