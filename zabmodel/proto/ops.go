package proto

// This file holds the request and response records of the client operations,
// from module org.apache.zookeeper.proto of zookeeper.jute. NewRequest and
// NewResponse say which record goes with which op code.

// CreateRequest creates a node: the body of create, create2 and
// createContainer, and of a create op inside a multi. Jute record
// org.apache.zookeeper.proto.CreateRequest. The server converts Flags with
// CreateModeFromFlag, so an unknown flag is answered with BadArguments; for a
// sequential mode Path is the prefix to which the server appends the counter.
type CreateRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags CreateMode
}

func (r *CreateRequest) fields(c codec) {
	c.ustring(&r.Path)
	c.buffer(&r.Data)
	vectorField(c, &r.ACL)
	intField(c, &r.Flags)
}

// Encode implements Record.
func (r *CreateRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CreateRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// CreateTTLRequest creates a node with a time to live: the body of createTTL.
// Jute record org.apache.zookeeper.proto.CreateTTLRequest.
type CreateTTLRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags CreateMode
	TTL   int64 // milliseconds
}

func (r *CreateTTLRequest) fields(c codec) {
	c.ustring(&r.Path)
	c.buffer(&r.Data)
	vectorField(c, &r.ACL)
	intField(c, &r.Flags)
	c.long(&r.TTL)
}

// Encode implements Record.
func (r *CreateTTLRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CreateTTLRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// CreateResponse answers create with the path created, which for a
// sequential node includes the counter. Jute record
// org.apache.zookeeper.proto.CreateResponse.
type CreateResponse struct {
	Path string
}

func (r *CreateResponse) fields(c codec) {
	c.ustring(&r.Path)
}

// Encode implements Record.
func (r *CreateResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CreateResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// Create2Response answers create2, createContainer and createTTL. Jute
// record org.apache.zookeeper.proto.Create2Response.
type Create2Response struct {
	Path string
	Stat Stat
}

func (r *Create2Response) fields(c codec) {
	c.ustring(&r.Path)
	c.record(&r.Stat)
}

// Encode implements Record.
func (r *Create2Response) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *Create2Response) Decode(d *Decoder) { r.fields(decoding(d)) }

// DeleteRequest deletes a node: the body of delete. Jute record
// org.apache.zookeeper.proto.DeleteRequest. (deleteContainer, which only the
// leader's ContainerManager issues, carries the raw UTF-8 path with no length
// prefix instead of this record.)
type DeleteRequest struct {
	Path    string
	Version int32 // expected version, -1 for any
}

func (r *DeleteRequest) fields(c codec) {
	c.ustring(&r.Path)
	intField(c, &r.Version)
}

// Encode implements Record.
func (r *DeleteRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *DeleteRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// ExistsRequest is the body of exists. Jute record
// org.apache.zookeeper.proto.ExistsRequest.
type ExistsRequest struct {
	Path  string
	Watch bool // leave a watch if the call succeeds (exists: also if the node is missing)
}

func (r *ExistsRequest) fields(c codec) {
	c.ustring(&r.Path)
	c.boolean(&r.Watch)
}

// Encode implements Record.
func (r *ExistsRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *ExistsRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// ExistsResponse answers exists for a node that exists; for a missing node the
// server replies NoNode with no body. Jute record
// org.apache.zookeeper.proto.ExistsResponse.
type ExistsResponse struct {
	Stat Stat
}

func (r *ExistsResponse) fields(c codec) {
	c.record(&r.Stat)
}

// Encode implements Record.
func (r *ExistsResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *ExistsResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetDataRequest is the body of getData. Jute record
// org.apache.zookeeper.proto.GetDataRequest.
type GetDataRequest struct {
	Path  string
	Watch bool // leave a data watch
}

func (r *GetDataRequest) fields(c codec) {
	c.ustring(&r.Path)
	c.boolean(&r.Watch)
}

// Encode implements Record.
func (r *GetDataRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetDataRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetDataResponse answers getData and reconfig. Jute record
// org.apache.zookeeper.proto.GetDataResponse.
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

func (r *GetDataResponse) fields(c codec) {
	c.buffer(&r.Data)
	c.record(&r.Stat)
}

// Encode implements Record.
func (r *GetDataResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetDataResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// SetDataRequest is the body of setData. Jute record
// org.apache.zookeeper.proto.SetDataRequest.
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32 // expected version, -1 for any
}

func (r *SetDataRequest) fields(c codec) {
	c.ustring(&r.Path)
	c.buffer(&r.Data)
	intField(c, &r.Version)
}

// Encode implements Record.
func (r *SetDataRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *SetDataRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// SetDataResponse answers setData, and also a check sent on its own. Jute
// record org.apache.zookeeper.proto.SetDataResponse.
type SetDataResponse struct {
	Stat Stat
}

func (r *SetDataResponse) fields(c codec) {
	c.record(&r.Stat)
}

// Encode implements Record.
func (r *SetDataResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *SetDataResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetACLRequest is the body of getACL. Jute record
// org.apache.zookeeper.proto.GetACLRequest.
type GetACLRequest struct {
	Path string
}

func (r *GetACLRequest) fields(c codec) {
	c.ustring(&r.Path)
}

// Encode implements Record.
func (r *GetACLRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetACLRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetACLResponse answers getACL. Jute record
// org.apache.zookeeper.proto.GetACLResponse.
type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

func (r *GetACLResponse) fields(c codec) {
	vectorField(c, &r.ACL)
	c.record(&r.Stat)
}

// Encode implements Record.
func (r *GetACLResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetACLResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// SetACLRequest is the body of setACL. Jute record
// org.apache.zookeeper.proto.SetACLRequest.
type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32 // expected ACL version (aversion), -1 for any
}

func (r *SetACLRequest) fields(c codec) {
	c.ustring(&r.Path)
	vectorField(c, &r.ACL)
	intField(c, &r.Version)
}

// Encode implements Record.
func (r *SetACLRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *SetACLRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// SetACLResponse answers setACL. Jute record
// org.apache.zookeeper.proto.SetACLResponse.
type SetACLResponse struct {
	Stat Stat
}

func (r *SetACLResponse) fields(c codec) {
	c.record(&r.Stat)
}

// Encode implements Record.
func (r *SetACLResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *SetACLResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetChildrenRequest is the body of getChildren. Jute record
// org.apache.zookeeper.proto.GetChildrenRequest.
type GetChildrenRequest struct {
	Path  string
	Watch bool // leave a child watch
}

func (r *GetChildrenRequest) fields(c codec) {
	c.ustring(&r.Path)
	c.boolean(&r.Watch)
}

// Encode implements Record.
func (r *GetChildrenRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetChildrenRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetChildrenResponse answers getChildren with the children's names (not
// paths), in the server's order, which is unspecified (a HashSet in Java).
// Jute record org.apache.zookeeper.proto.GetChildrenResponse.
type GetChildrenResponse struct {
	Children []string
}

func (r *GetChildrenResponse) fields(c codec) {
	c.ustrings(&r.Children)
}

// Encode implements Record.
func (r *GetChildrenResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetChildrenResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetChildren2Request is the body of getChildren2. Jute record
// org.apache.zookeeper.proto.GetChildren2Request.
type GetChildren2Request struct {
	Path  string
	Watch bool // leave a child watch
}

func (r *GetChildren2Request) fields(c codec) {
	c.ustring(&r.Path)
	c.boolean(&r.Watch)
}

// Encode implements Record.
func (r *GetChildren2Request) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetChildren2Request) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetChildren2Response answers getChildren2. Jute record
// org.apache.zookeeper.proto.GetChildren2Response.
type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

func (r *GetChildren2Response) fields(c codec) {
	c.ustrings(&r.Children)
	c.record(&r.Stat)
}

// Encode implements Record.
func (r *GetChildren2Response) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetChildren2Response) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetAllChildrenNumberRequest is the body of getAllChildrenNumber. Jute record
// org.apache.zookeeper.proto.GetAllChildrenNumberRequest.
type GetAllChildrenNumberRequest struct {
	Path string
}

func (r *GetAllChildrenNumberRequest) fields(c codec) {
	c.ustring(&r.Path)
}

// Encode implements Record.
func (r *GetAllChildrenNumberRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetAllChildrenNumberRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetAllChildrenNumberResponse answers getAllChildrenNumber with the number
// of descendants. Jute record
// org.apache.zookeeper.proto.GetAllChildrenNumberResponse.
type GetAllChildrenNumberResponse struct {
	TotalNumber int32
}

func (r *GetAllChildrenNumberResponse) fields(c codec) {
	intField(c, &r.TotalNumber)
}

// Encode implements Record.
func (r *GetAllChildrenNumberResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetAllChildrenNumberResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// SyncRequest is the body of sync. Jute record
// org.apache.zookeeper.proto.SyncRequest.
type SyncRequest struct {
	Path string
}

func (r *SyncRequest) fields(c codec) {
	c.ustring(&r.Path)
}

// Encode implements Record.
func (r *SyncRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *SyncRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// SyncResponse answers sync, echoing the path. Jute record
// org.apache.zookeeper.proto.SyncResponse.
type SyncResponse struct {
	Path string
}

func (r *SyncResponse) fields(c codec) {
	c.ustring(&r.Path)
}

// Encode implements Record.
func (r *SyncResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *SyncResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// CheckVersionRequest is the body of check, normally an op inside a multi.
// Jute record org.apache.zookeeper.proto.CheckVersionRequest.
type CheckVersionRequest struct {
	Path    string
	Version int32 // expected version, -1 for any
}

func (r *CheckVersionRequest) fields(c codec) {
	c.ustring(&r.Path)
	intField(c, &r.Version)
}

// Encode implements Record.
func (r *CheckVersionRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CheckVersionRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// ReconfigRequest is the body of reconfig; the reply is a GetDataResponse
// with the new configuration. Jute record
// org.apache.zookeeper.proto.ReconfigRequest.
type ReconfigRequest struct {
	JoiningServers string
	LeavingServers string
	NewMembers     string
	CurConfigID    int64 // expected config version, -1 for any
}

func (r *ReconfigRequest) fields(c codec) {
	c.ustring(&r.JoiningServers)
	c.ustring(&r.LeavingServers)
	c.ustring(&r.NewMembers)
	c.long(&r.CurConfigID)
}

// Encode implements Record.
func (r *ReconfigRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *ReconfigRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// AddWatchRequest is the body of addWatch; the server answers with an
// ErrorResponse holding OK. Jute record
// org.apache.zookeeper.proto.AddWatchRequest.
type AddWatchRequest struct {
	Path string
	Mode AddWatchMode
}

func (r *AddWatchRequest) fields(c codec) {
	c.ustring(&r.Path)
	intField(c, &r.Mode)
}

// Encode implements Record.
func (r *AddWatchRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *AddWatchRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// CheckWatchesRequest is the body of checkWatches. Jute record
// org.apache.zookeeper.proto.CheckWatchesRequest.
type CheckWatchesRequest struct {
	Path string
	Type WatcherType
}

func (r *CheckWatchesRequest) fields(c codec) {
	c.ustring(&r.Path)
	intField(c, &r.Type)
}

// Encode implements Record.
func (r *CheckWatchesRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *CheckWatchesRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// RemoveWatchesRequest is the body of removeWatches. Jute record
// org.apache.zookeeper.proto.RemoveWatchesRequest.
type RemoveWatchesRequest struct {
	Path string
	Type WatcherType
}

func (r *RemoveWatchesRequest) fields(c codec) {
	c.ustring(&r.Path)
	intField(c, &r.Type)
}

// Encode implements Record.
func (r *RemoveWatchesRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *RemoveWatchesRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetEphemeralsRequest is the body of getEphemerals: the session's
// ephemerals whose paths start with PrefixPath ("/", "" or blank for all).
// Jute record org.apache.zookeeper.proto.GetEphemeralsRequest.
type GetEphemeralsRequest struct {
	PrefixPath string
}

func (r *GetEphemeralsRequest) fields(c codec) {
	c.ustring(&r.PrefixPath)
}

// Encode implements Record.
func (r *GetEphemeralsRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetEphemeralsRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetEphemeralsResponse answers getEphemerals. Jute record
// org.apache.zookeeper.proto.GetEphemeralsResponse.
type GetEphemeralsResponse struct {
	Ephemerals []string
}

func (r *GetEphemeralsResponse) fields(c codec) {
	c.ustrings(&r.Ephemerals)
}

// Encode implements Record.
func (r *GetEphemeralsResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetEphemeralsResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// WhoAmIResponse answers whoAmI, which has no request body. Jute record
// org.apache.zookeeper.proto.WhoAmIResponse.
type WhoAmIResponse struct {
	ClientInfo []ClientInfo
}

func (r *WhoAmIResponse) fields(c codec) {
	vectorField(c, &r.ClientInfo)
}

// Encode implements Record.
func (r *WhoAmIResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *WhoAmIResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// ErrorResponse carries a code as a body: the result of a failed op in a
// MultiResponse, and the reply to addWatch. Jute record
// org.apache.zookeeper.proto.ErrorResponse.
type ErrorResponse struct {
	Err Code
}

func (r *ErrorResponse) fields(c codec) {
	intField(c, &r.Err)
}

// Encode implements Record.
func (r *ErrorResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *ErrorResponse) Decode(d *Decoder) { r.fields(decoding(d)) }

// GetSASLRequest is the body of sasl: a token from the client. Jute record
// org.apache.zookeeper.proto.GetSASLRequest.
type GetSASLRequest struct {
	Token []byte
}

func (r *GetSASLRequest) fields(c codec) {
	c.buffer(&r.Token)
}

// Encode implements Record.
func (r *GetSASLRequest) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *GetSASLRequest) Decode(d *Decoder) { r.fields(decoding(d)) }

// SetSASLResponse answers sasl with the server's token. Jute record
// org.apache.zookeeper.proto.SetSASLResponse.
type SetSASLResponse struct {
	Token []byte
}

func (r *SetSASLResponse) fields(c codec) {
	c.buffer(&r.Token)
}

// Encode implements Record.
func (r *SetSASLResponse) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *SetSASLResponse) Decode(d *Decoder) { r.fields(decoding(d)) }
