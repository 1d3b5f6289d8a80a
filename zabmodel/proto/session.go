package proto

// This file holds the records of a client connection's framing: the
// handshake, the request and reply headers, notifications and the
// connection-level requests (auth, setWatches).

// ConnectRequest opens or resumes a session; it is the first packet on a
// connection and has no RequestHeader. Jute record
// org.apache.zookeeper.proto.ConnectRequest, followed by the readOnly flag.
//
// The flag is not in zookeeper.jute: ClientCnxn.Packet.createBB appends it by
// hand after the record, and ZooKeeperServer.processConnectRequest reads it
// only if a byte remains, treating its absence as an old client (a pre-3.3
// Java client, or go-zookeeper, which never sends it). The server then omits
// the flag from its ConnectResponse too.
type ConnectRequest struct {
	ProtocolVersion     int32
	LastZxidSeen        int64
	TimeoutMilliseconds int32 // requested session timeout
	SessionID           int64 // 0 for a new session
	Password            []byte
	// ReadOnly says the client accepts a read-only server.
	ReadOnly bool
	// OmitReadOnly leaves the flag off the wire (an old client). Decode sets
	// it when the packet ends after Password.
	OmitReadOnly bool
}

func (r *ConnectRequest) fields(c codec) {
	intField(c, &r.ProtocolVersion)
	c.long(&r.LastZxidSeen)
	intField(c, &r.TimeoutMilliseconds)
	c.long(&r.SessionID)
	c.buffer(&r.Password)
	c.optionalBool(&r.ReadOnly, &r.OmitReadOnly)
}

// Encode implements Record.
func (r *ConnectRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *ConnectRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// ConnectResponse answers a ConnectRequest. Jute record
// org.apache.zookeeper.proto.ConnectResponse, followed by the readOnly flag
// that ZooKeeperServer.finishSessionInit appends only if the client sent one
// (and that ClientCnxnSocket.readConnectResult reads only if present). A
// session the server will not renew is answered with timeout 0, session id 0
// and a zero 16-byte password, and then the connection is closed.
type ConnectResponse struct {
	ProtocolVersion     int32
	TimeoutMilliseconds int32 // negotiated session timeout
	SessionID           int64
	Password            []byte
	// ReadOnly says the server is a read-only server.
	ReadOnly bool
	// OmitReadOnly leaves the flag off the wire, as the server does for an
	// old client. Decode sets it when the packet ends after Password.
	OmitReadOnly bool
}

func (r *ConnectResponse) fields(c codec) {
	intField(c, &r.ProtocolVersion)
	intField(c, &r.TimeoutMilliseconds)
	c.long(&r.SessionID)
	c.buffer(&r.Password)
	c.optionalBool(&r.ReadOnly, &r.OmitReadOnly)
}

// Encode implements Record.
func (r *ConnectResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *ConnectResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// RequestHeader precedes every request after the handshake. Jute record
// org.apache.zookeeper.proto.RequestHeader.
type RequestHeader struct {
	Xid  int32 // client-chosen request number, or one of the reserved xids
	Type OpCode
}

func (r *RequestHeader) fields(c codec) {
	intField(c, &r.Xid)
	intField(c, &r.Type)
}

// Encode implements Record.
func (r *RequestHeader) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *RequestHeader) Decode(d *Decoder) { r.fields(decoding(d)) }

// ReplyHeader precedes every reply and notification. Jute record
// org.apache.zookeeper.proto.ReplyHeader. A response record follows when Err
// is OK. On error the server normally sends the header alone (a write whose
// txn fails when applied is the rare exception), and the Java client never
// reads a body after a non-zero Err, so DecodeReply does not either. A
// notification has Xid NotificationXid, Zxid -1 and a WatcherEvent body.
type ReplyHeader struct {
	Xid  int32
	Zxid int64 // the server's last processed zxid when it replied
	Err  Code
}

func (r *ReplyHeader) fields(c codec) {
	intField(c, &r.Xid)
	c.long(&r.Zxid)
	intField(c, &r.Err)
}

// Encode implements Record.
func (r *ReplyHeader) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *ReplyHeader) Decode(d *Decoder) { r.fields(decoding(d)) }

// WatcherEvent is a watch notification. Jute record
// org.apache.zookeeper.proto.WatcherEvent.
type WatcherEvent struct {
	Type  EventType
	State KeeperState
	Path  string
}

func (r *WatcherEvent) fields(c codec) {
	intField(c, &r.Type)
	intField(c, &r.State)
	c.ustring(&r.Path)
}

// Encode implements Record.
func (r *WatcherEvent) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *WatcherEvent) Decode(d *Decoder) { r.fields(decoding(d)) }

// AuthPacket adds an identity to the connection (op auth, xid AuthXid). Jute
// record org.apache.zookeeper.proto.AuthPacket. The server replies with a
// bare ReplyHeader: OK, or AuthFailed followed by closing the connection.
type AuthPacket struct {
	Type   int32 // always 0 from the Java client
	Scheme string
	Auth   []byte
}

func (r *AuthPacket) fields(c codec) {
	intField(c, &r.Type)
	c.ustring(&r.Scheme)
	c.buffer(&r.Auth)
}

// Encode implements Record.
func (r *AuthPacket) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *AuthPacket) Decode(d *Decoder) { r.fields(decoding(d)) }

// SetWatches re-registers a reconnecting client's watches (op setWatches, xid
// SetWatchesXid). Jute record org.apache.zookeeper.proto.SetWatches. The Java
// client uses it when it has no persistent watches and splits the lists into
// batches of about 128 KiB of path characters (ClientCnxn
// SET_WATCHES_MAX_LENGTH) to stay under jute.maxbuffer.
type SetWatches struct {
	RelativeZxid int64 // the last zxid the client saw
	DataWatches  []string
	ExistWatches []string
	ChildWatches []string
}

func (r *SetWatches) fields(c codec) {
	c.long(&r.RelativeZxid)
	c.ustrings(&r.DataWatches)
	c.ustrings(&r.ExistWatches)
	c.ustrings(&r.ChildWatches)
}

// Encode implements Record.
func (r *SetWatches) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *SetWatches) Decode(d *Decoder) { r.fields(decoding(d)) }

// SetWatches2 is SetWatches with persistent watches (op setWatches2). Jute
// record org.apache.zookeeper.proto.SetWatches2.
type SetWatches2 struct {
	RelativeZxid               int64
	DataWatches                []string
	ExistWatches               []string
	ChildWatches               []string
	PersistentWatches          []string
	PersistentRecursiveWatches []string
}

func (r *SetWatches2) fields(c codec) {
	c.long(&r.RelativeZxid)
	c.ustrings(&r.DataWatches)
	c.ustrings(&r.ExistWatches)
	c.ustrings(&r.ChildWatches)
	c.ustrings(&r.PersistentWatches)
	c.ustrings(&r.PersistentRecursiveWatches)
}

// Encode implements Record.
func (r *SetWatches2) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *SetWatches2) Decode(d *Decoder) { r.fields(decoding(d)) }
