package proto

import (
	"fmt"
	"strconv"
	"strings"
)

// Describe renders a record on one line for simulator traces. The output is a
// pure function of the record: zxids and session ids in hex, data as its
// length ("data=3B", or "data=nil" for null), paths and names quoted only if
// they contain spaces, quotes or non-printing characters. A request or txn
// body starts with its op name, such as
//
//	create /a data=3B mode=EPHEMERAL_SEQUENTIAL acl=[world:anyone:cdrwa]
//
// and a response body lists its fields, such as "path=/a-0000000001".
func Describe(r Record) string {
	var b strings.Builder
	describe(&b, "", r)
	return b.String()
}

// DescribeRequest renders a request header and its body (nil for none), such
// as "request xid=5 create /a data=3B mode=PERSISTENT acl=[world:anyone:cdrwa]".
// The body is named by the header's type, so a CreateRequest sent as create2
// shows as create2.
func DescribeRequest(h RequestHeader, body Record) string {
	var b strings.Builder
	b.WriteString("request xid=")
	b.WriteString(strconv.Itoa(int(h.Xid)))
	b.WriteByte(' ')
	if body == nil {
		b.WriteString(h.Type.String())
	} else {
		describe(&b, h.Type.String(), body)
	}
	return b.String()
}

// DescribeReply renders a reply header and its body (nil for none), such as
// "reply xid=5 zxid=0x100000003 err=NONODE".
func DescribeReply(h ReplyHeader, body Record) string {
	var b strings.Builder
	b.WriteString("reply xid=")
	b.WriteString(strconv.Itoa(int(h.Xid)))
	b.WriteString(" zxid=")
	b.WriteString(hexNumber(h.Zxid))
	b.WriteString(" err=")
	b.WriteString(h.Err.String())
	if body != nil {
		describe(&b, "", body)
	}
	return b.String()
}

// describer accumulates "key=value" fields separated by spaces.
type describer struct{ b *strings.Builder }

// word writes s, preceded by a space unless it starts the line or follows
// an opening bracket or a space.
func (w describer) word(s string) {
	if text := w.b.String(); text != "" {
		switch text[len(text)-1] {
		case ' ', '[':
		default:
			w.b.WriteByte(' ')
		}
	}
	w.b.WriteString(s)
}

func (w describer) field(key, value string) { w.word(key + "=" + value) }
func (w describer) int(key string, v int32) { w.field(key, strconv.Itoa(int(v))) }
func (w describer) bool(key string, v bool) { w.field(key, strconv.FormatBool(v)) }

func (w describer) stat(key string, s Stat) {
	w.field(key, "{czxid="+hexNumber(s.Czxid)+" mzxid="+hexNumber(s.Mzxid)+
		" ctime="+strconv.FormatInt(s.Ctime, 10)+" mtime="+strconv.FormatInt(s.Mtime, 10)+
		" version="+strconv.Itoa(int(s.Version))+" cversion="+strconv.Itoa(int(s.Cversion))+
		" aversion="+strconv.Itoa(int(s.Aversion))+" ephemeralOwner="+hexNumber(s.EphemeralOwner)+
		" dataLength="+strconv.Itoa(int(s.DataLength))+" numChildren="+strconv.Itoa(int(s.NumChildren))+
		" pzxid="+hexNumber(s.Pzxid)+"}")
}

// hexNumber renders a zxid or session id in hex; negative values, such as the
// -1 zxid of a notification, are rendered in decimal.
func hexNumber(v int64) string {
	if v < 0 {
		return strconv.FormatInt(v, 10)
	}
	return "0x" + strconv.FormatInt(v, 16)
}

func size(data []byte) string {
	if data == nil {
		return "nil"
	}
	return strconv.Itoa(len(data)) + "B"
}

// quote leaves a string alone unless it would break the line's word
// structure or hide characters, in which case it is Go-quoted.
func quote(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if r <= ' ' || r == '"' || r == '[' || r == ']' || r >= 0x7f {
			return strconv.Quote(s)
		}
	}
	return s
}

func list[T any](v []T, item func(T) string) string {
	if v == nil {
		return "nil"
	}
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = item(x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func acls(v []ACL) string {
	return list(v, func(a ACL) string { return quote(a.String()) })
}

func names(v []string) string { return list(v, quote) }

func or(name, fallback string) string {
	if name != "" {
		return name
	}
	return fallback
}

// describe writes r's fields. name is the op name for request and txn
// bodies; "" means the record's usual op.
func describe(b *strings.Builder, name string, r Record) {
	w := describer{b}
	switch r := r.(type) {
	case nil:
		w.word("nil")
	case *RequestHeader:
		w.int("xid", r.Xid)
		w.field("type", r.Type.String())
	case *ReplyHeader:
		w.int("xid", r.Xid)
		w.field("zxid", hexNumber(r.Zxid))
		w.field("err", r.Err.String())
	case *TxnHeader:
		w.field("session", hexNumber(r.ClientID))
		w.int("cxid", r.Cxid)
		w.field("zxid", hexNumber(r.Zxid))
		w.field("time", strconv.FormatInt(r.Time, 10))
		w.field("type", r.Type.String())
	case *MultiHeader:
		w.field("type", r.Type.String())
		w.bool("done", r.Done)
		w.field("err", r.Err.String())
	default:
		if !describeRequest(w, name, r) && !describeResponse(w, r) && !describeTxn(w, name, r) {
			describeOther(w, r)
		}
	}
}

func describeRequest(w describer, name string, r Record) bool {
	switch r := r.(type) {
	case *ConnectRequest:
		w.word("connect")
		w.field("lastZxidSeen", hexNumber(r.LastZxidSeen))
		w.field("timeout", strconv.Itoa(int(r.TimeoutMilliseconds))+"ms")
		w.field("session", hexNumber(r.SessionID))
		w.field("password", size(r.Password))
		w.field("readOnly", optionalBool(r.ReadOnly, r.OmitReadOnly))
		w.int("protocolVersion", r.ProtocolVersion)
	case *CreateRequest:
		w.word(or(name, "create") + " " + quote(r.Path))
		w.field("data", size(r.Data))
		w.field("mode", r.Flags.String())
		w.field("acl", acls(r.ACL))
	case *CreateTTLRequest:
		w.word(or(name, "createTTL") + " " + quote(r.Path))
		w.field("data", size(r.Data))
		w.field("mode", r.Flags.String())
		w.field("ttl", strconv.FormatInt(r.TTL, 10)+"ms")
		w.field("acl", acls(r.ACL))
	case *DeleteRequest:
		w.word(or(name, "delete") + " " + quote(r.Path))
		w.int("version", r.Version)
	case *ExistsRequest:
		w.word(or(name, "exists") + " " + quote(r.Path))
		w.bool("watch", r.Watch)
	case *GetDataRequest:
		w.word(or(name, "getData") + " " + quote(r.Path))
		w.bool("watch", r.Watch)
	case *SetDataRequest:
		w.word(or(name, "setData") + " " + quote(r.Path))
		w.field("data", size(r.Data))
		w.int("version", r.Version)
	case *GetACLRequest:
		w.word(or(name, "getACL") + " " + quote(r.Path))
	case *SetACLRequest:
		w.word(or(name, "setACL") + " " + quote(r.Path))
		w.field("acl", acls(r.ACL))
		w.int("version", r.Version)
	case *GetChildrenRequest:
		w.word(or(name, "getChildren") + " " + quote(r.Path))
		w.bool("watch", r.Watch)
	case *GetChildren2Request:
		w.word(or(name, "getChildren2") + " " + quote(r.Path))
		w.bool("watch", r.Watch)
	case *GetAllChildrenNumberRequest:
		w.word(or(name, "getAllChildrenNumber") + " " + quote(r.Path))
	case *SyncRequest:
		w.word(or(name, "sync") + " " + quote(r.Path))
	case *CheckVersionRequest:
		w.word(or(name, "check") + " " + quote(r.Path))
		w.int("version", r.Version)
	case *MultiRequest:
		w.word(or(name, "multi") + " [")
		for i, op := range r.Ops {
			if i > 0 {
				w.b.WriteString("; ")
			}
			describe(w.b, op.Type.String(), op.Request)
		}
		w.b.WriteString("]")
	case *ReconfigRequest:
		w.word(or(name, "reconfig"))
		w.field("joining", quote(r.JoiningServers))
		w.field("leaving", quote(r.LeavingServers))
		w.field("members", quote(r.NewMembers))
		w.field("configID", hexNumber(r.CurConfigID))
	case *AddWatchRequest:
		w.word(or(name, "addWatch") + " " + quote(r.Path))
		w.field("mode", r.Mode.String())
	case *CheckWatchesRequest:
		w.word(or(name, "checkWatches") + " " + quote(r.Path))
		w.field("type", r.Type.String())
	case *RemoveWatchesRequest:
		w.word(or(name, "removeWatches") + " " + quote(r.Path))
		w.field("type", r.Type.String())
	case *GetEphemeralsRequest:
		w.word(or(name, "getEphemerals") + " " + quote(r.PrefixPath))
	case *SetWatches:
		w.word(or(name, "setWatches"))
		w.field("relativeZxid", hexNumber(r.RelativeZxid))
		w.field("data", names(r.DataWatches))
		w.field("exist", names(r.ExistWatches))
		w.field("child", names(r.ChildWatches))
	case *SetWatches2:
		w.word(or(name, "setWatches2"))
		w.field("relativeZxid", hexNumber(r.RelativeZxid))
		w.field("data", names(r.DataWatches))
		w.field("exist", names(r.ExistWatches))
		w.field("child", names(r.ChildWatches))
		w.field("persistent", names(r.PersistentWatches))
		w.field("persistentRecursive", names(r.PersistentRecursiveWatches))
	case *AuthPacket:
		w.word(or(name, "auth"))
		w.int("type", r.Type)
		w.field("scheme", quote(r.Scheme))
		w.field("auth", size(r.Auth))
	case *GetSASLRequest:
		w.word(or(name, "sasl"))
		w.field("token", size(r.Token))
	default:
		return false
	}
	return true
}

func optionalBool(v, omitted bool) string {
	if omitted {
		return "absent"
	}
	return strconv.FormatBool(v)
}

func describeResponse(w describer, r Record) bool {
	switch r := r.(type) {
	case *ConnectResponse:
		w.word("connected")
		w.field("timeout", strconv.Itoa(int(r.TimeoutMilliseconds))+"ms")
		w.field("session", hexNumber(r.SessionID))
		w.field("password", size(r.Password))
		w.field("readOnly", optionalBool(r.ReadOnly, r.OmitReadOnly))
		w.int("protocolVersion", r.ProtocolVersion)
	case *WatcherEvent:
		w.word("event " + r.Type.String() + " " + quote(r.Path))
		w.field("state", r.State.String())
	case *CreateResponse:
		w.field("path", quote(r.Path))
	case *Create2Response:
		w.field("path", quote(r.Path))
		w.stat("stat", r.Stat)
	case *ExistsResponse:
		w.stat("stat", r.Stat)
	case *GetDataResponse:
		w.field("data", size(r.Data))
		w.stat("stat", r.Stat)
	case *SetDataResponse:
		w.stat("stat", r.Stat)
	case *GetACLResponse:
		w.field("acl", acls(r.ACL))
		w.stat("stat", r.Stat)
	case *SetACLResponse:
		w.stat("stat", r.Stat)
	case *GetChildrenResponse:
		w.field("children", names(r.Children))
	case *GetChildren2Response:
		w.field("children", names(r.Children))
		w.stat("stat", r.Stat)
	case *GetAllChildrenNumberResponse:
		w.int("total", r.TotalNumber)
	case *SyncResponse:
		w.field("path", quote(r.Path))
	case *GetEphemeralsResponse:
		w.field("ephemerals", names(r.Ephemerals))
	case *WhoAmIResponse:
		w.field("clientInfo", list(r.ClientInfo, func(c ClientInfo) string {
			return quote(c.AuthScheme + ":" + c.User)
		}))
	case *ErrorResponse:
		w.field("err", r.Err.String())
	case *SetSASLResponse:
		w.field("token", size(r.Token))
	case *MultiResponse:
		w.word("results=[")
		for i, res := range r.Results {
			if i > 0 {
				w.b.WriteString("; ")
			}
			w.b.WriteString(res.Type.String())
			if res.Type == OpError {
				w.b.WriteString(" err=" + res.Err.String())
			} else if res.Response != nil {
				describe(w.b, "", res.Response)
			}
		}
		w.b.WriteString("]")
	default:
		return false
	}
	return true
}

func describeTxn(w describer, name string, r Record) bool {
	switch r := r.(type) {
	case *TxnEntry:
		w.word("txn")
		describe(w.b, "", &r.Header)
		if r.Txn == nil {
			w.word(r.Header.Type.String())
		} else {
			describe(w.b, r.Header.Type.String(), r.Txn)
		}
		if r.Digest != nil {
			w.field("digest", strconv.Itoa(int(r.Digest.Version))+":"+hexNumber(r.Digest.TreeDigest))
		}
	case *CreateTxn:
		w.word(or(name, "create") + " " + quote(r.Path))
		w.field("data", size(r.Data))
		w.bool("ephemeral", r.Ephemeral)
		w.int("parentCVersion", r.ParentCVersion)
		w.field("acl", acls(r.ACL))
	case *CreateTxnV0:
		w.word(or(name, "create") + " " + quote(r.Path))
		w.field("data", size(r.Data))
		w.bool("ephemeral", r.Ephemeral)
		w.field("acl", acls(r.ACL))
	case *CreateTTLTxn:
		w.word(or(name, "createTTL") + " " + quote(r.Path))
		w.field("data", size(r.Data))
		w.field("ttl", strconv.FormatInt(r.TTL, 10)+"ms")
		w.int("parentCVersion", r.ParentCVersion)
		w.field("acl", acls(r.ACL))
	case *CreateContainerTxn:
		w.word(or(name, "createContainer") + " " + quote(r.Path))
		w.field("data", size(r.Data))
		w.int("parentCVersion", r.ParentCVersion)
		w.field("acl", acls(r.ACL))
	case *DeleteTxn:
		w.word(or(name, "delete") + " " + quote(r.Path))
	case *SetDataTxn:
		w.word(or(name, "setData") + " " + quote(r.Path))
		w.field("data", size(r.Data))
		w.int("version", r.Version)
	case *CheckVersionTxn:
		w.word(or(name, "check") + " " + quote(r.Path))
		w.int("version", r.Version)
	case *SetACLTxn:
		w.word(or(name, "setACL") + " " + quote(r.Path))
		w.field("acl", acls(r.ACL))
		w.int("version", r.Version)
	case *CreateSessionTxn:
		w.word(or(name, "createSession"))
		w.field("timeout", strconv.Itoa(int(r.TimeoutMilliseconds))+"ms")
	case *CloseSessionTxn:
		w.word(or(name, "closeSession"))
		w.field("delete", names(r.PathsToDelete))
	case *ErrorTxn:
		w.word(or(name, "error"))
		w.field("err", r.Err.String())
	case *MultiTxn:
		w.word(or(name, "multi") + " [")
		for i := range r.Txns {
			if i > 0 {
				w.b.WriteString("; ")
			}
			describeSubTxn(w.b, &r.Txns[i])
		}
		w.b.WriteString("]")
	case *Txn:
		describeSubTxn(w.b, r)
	default:
		return false
	}
	return true
}

// describeSubTxn decodes a sub-txn for display, falling back to its type
// and size if it does not decode.
func describeSubTxn(b *strings.Builder, t *Txn) {
	body, err := t.Body()
	if err != nil {
		b.WriteString(t.Type.String() + " data=" + size(t.Data) + " (undecodable)")
		return
	}
	describe(b, t.Type.String(), body)
}

// describeOther covers the records that only servers exchange.
func describeOther(w describer, r Record) {
	switch r := r.(type) {
	case *Stat:
		w.stat("stat", *r)
	case *StatPersisted:
		w.field("czxid", hexNumber(r.Czxid))
		w.field("mzxid", hexNumber(r.Mzxid))
		w.field("ctime", strconv.FormatInt(r.Ctime, 10))
		w.field("mtime", strconv.FormatInt(r.Mtime, 10))
		w.int("version", r.Version)
		w.int("cversion", r.Cversion)
		w.int("aversion", r.Aversion)
		w.field("ephemeralOwner", hexNumber(r.EphemeralOwner))
		w.field("pzxid", hexNumber(r.Pzxid))
	case *ID:
		w.word(quote(r.String()))
	case *ACL:
		w.word(quote(r.String()))
	case *ClientInfo:
		w.word(quote(r.AuthScheme + ":" + r.User))
	case *TxnDigest:
		w.int("version", r.Version)
		w.field("treeDigest", hexNumber(r.TreeDigest))
	case *LearnerInfo:
		w.field("sid", strconv.FormatInt(r.ServerID, 10))
		w.int("protocolVersion", r.ProtocolVersion)
		w.field("configVersion", hexNumber(r.ConfigVersion))
	case *QuorumPacket:
		w.int("type", r.Type)
		w.field("zxid", hexNumber(r.Zxid))
		w.field("data", size(r.Data))
		w.field("authInfo", list(r.AuthInfo, func(id ID) string { return quote(id.String()) }))
	case *FileHeader:
		w.field("magic", "0x"+strconv.FormatUint(uint64(uint32(r.Magic)), 16))
		w.int("version", r.Version)
		w.field("dbid", strconv.FormatInt(r.DBID, 10))
	default:
		// A record defined outside this package: name its type, which is
		// deterministic, rather than guess at its fields.
		w.word(strings.TrimPrefix(fmt.Sprintf("%T", r), "*"))
	}
}
