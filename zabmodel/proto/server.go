package proto

// This file holds the records servers exchange with each other and write to
// disk, modules org.apache.zookeeper.server.quorum and
// org.apache.zookeeper.server.persistence of zookeeper.jute. The simulator's
// ZAB model may use its own message types; these give the Java layout for
// anything that wants to mirror it byte for byte.

// LearnerInfo is the data of a FOLLOWERINFO or OBSERVERINFO packet. Jute
// record org.apache.zookeeper.server.quorum.LearnerInfo.
type LearnerInfo struct {
	ServerID        int64 // the learner's sid
	ProtocolVersion int32
	ConfigVersion   int64
}

func (r *LearnerInfo) fields(c codec) {
	c.long(&r.ServerID)
	intField(c, &r.ProtocolVersion)
	c.long(&r.ConfigVersion)
}

// Encode implements Record.
func (r *LearnerInfo) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *LearnerInfo) Decode(d *Decoder) { r.fields(decoding(d)) }

// QuorumPacket is every message between leader and learners. Jute record
// org.apache.zookeeper.server.quorum.QuorumPacket. For PROPOSAL and INFORM,
// Data holds a TxnEntry; for REQUEST, the client's session id, xid, op code
// and request body as Learner.request writes them.
type QuorumPacket struct {
	Type     int32 // Leader.PROPOSAL, ACK, COMMIT, PING, ...
	Zxid     int64
	Data     []byte
	AuthInfo []ID
}

func (r *QuorumPacket) fields(c codec) {
	intField(c, &r.Type)
	c.long(&r.Zxid)
	c.buffer(&r.Data)
	vectorField(c, &r.AuthInfo)
}

// Encode implements Record.
func (r *QuorumPacket) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *QuorumPacket) Decode(d *Decoder) { r.fields(decoding(d)) }

// FileHeader starts every txn log and snapshot file. Jute record
// org.apache.zookeeper.server.persistence.FileHeader. Magic is TxnLogMagic or
// SnapshotMagic and Version is 2; DBID is 0 in a txn log and -1 in a
// snapshot.
type FileHeader struct {
	Magic   int32
	Version int32
	DBID    int64
}

func (r *FileHeader) fields(c codec) {
	intField(c, &r.Magic)
	intField(c, &r.Version)
	c.long(&r.DBID)
}

// Encode implements Record.
func (r *FileHeader) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *FileHeader) Decode(d *Decoder) { r.fields(decoding(d)) }

// The FileHeader magics: the ASCII bytes "ZKLG" and "ZKSN" read as a
// big-endian int (FileTxnLog.TXNLOG_MAGIC, FileSnap.SNAP_MAGIC).
const (
	TxnLogMagic   int32 = 0x5a4b4c47
	SnapshotMagic int32 = 0x5a4b534e
)
