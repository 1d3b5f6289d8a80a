package proto

import "math"

// Stat is the znode metadata a client sees, the jute record
// org.apache.zookeeper.data.Stat. Times are milliseconds since the epoch (in
// the simulator, simulated milliseconds).
type Stat struct {
	Czxid          int64 // zxid of the create
	Mzxid          int64 // zxid of the last setData (the create's at first)
	Ctime          int64 // time of the create
	Mtime          int64 // time of the last setData
	Version        int32 // number of setData calls
	Cversion       int32 // number of child creates and deletes
	Aversion       int32 // number of setACL calls
	EphemeralOwner int64 // owning session for an ephemeral, ContainerEphemeralOwner for a container, else 0
	DataLength     int32 // length of the data
	NumChildren    int32 // number of children
	Pzxid          int64 // zxid of the last child create or delete
}

// ContainerEphemeralOwner is the ephemeralOwner that marks a container node
// (EphemeralType.CONTAINER_EPHEMERAL_OWNER, Long.MIN_VALUE).
const ContainerEphemeralOwner int64 = math.MinInt64

func (r *Stat) fields(c codec) {
	c.long(&r.Czxid)
	c.long(&r.Mzxid)
	c.long(&r.Ctime)
	c.long(&r.Mtime)
	intField(c, &r.Version)
	intField(c, &r.Cversion)
	intField(c, &r.Aversion)
	c.long(&r.EphemeralOwner)
	intField(c, &r.DataLength)
	intField(c, &r.NumChildren)
	c.long(&r.Pzxid)
}

// Encode implements Record.
func (r *Stat) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *Stat) Decode(d *Decoder) { r.fields(decoding(d)) }

// StatPersisted is the part of Stat a snapshot stores, the jute record
// org.apache.zookeeper.data.StatPersisted. DataLength and NumChildren are
// left out because the data and the children are stored themselves; note that
// Pzxid moves to the end, after EphemeralOwner.
type StatPersisted struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32
	Aversion       int32
	EphemeralOwner int64
	Pzxid          int64
}

func (r *StatPersisted) fields(c codec) {
	c.long(&r.Czxid)
	c.long(&r.Mzxid)
	c.long(&r.Ctime)
	c.long(&r.Mtime)
	intField(c, &r.Version)
	intField(c, &r.Cversion)
	intField(c, &r.Aversion)
	c.long(&r.EphemeralOwner)
	c.long(&r.Pzxid)
}

// Encode implements Record.
func (r *StatPersisted) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *StatPersisted) Decode(d *Decoder) { r.fields(decoding(d)) }

// ClientStat returns the Stat a client sees for a node with this persisted
// metadata, as DataNode.copyStat computes it. Two fields are translated, not
// copied:
//
//   - the persisted Cversion counts child creates only (a delete leaves it
//     alone, and the sequential-node suffix is taken from it), while the
//     client sees 2*Cversion - numChildren, which also counts deletes;
//   - a container's ContainerEphemeralOwner shows as 0. (TTL nodes, which
//     need zookeeper.extendedTypesEnabled, are likewise shown as 0 by Java;
//     they are not modelled here.)
func (r *StatPersisted) ClientStat(dataLength, numChildren int32) Stat {
	owner := r.EphemeralOwner
	if owner == ContainerEphemeralOwner {
		owner = 0
	}
	return Stat{
		Czxid: r.Czxid, Mzxid: r.Mzxid, Ctime: r.Ctime, Mtime: r.Mtime,
		Version: r.Version, Cversion: r.Cversion*2 - numChildren, Aversion: r.Aversion,
		EphemeralOwner: owner, DataLength: dataLength,
		NumChildren: numChildren, Pzxid: r.Pzxid,
	}
}

// ClientInfo is one identity of a client as whoAmI reports it, the jute
// record org.apache.zookeeper.data.ClientInfo.
type ClientInfo struct {
	AuthScheme string
	User       string
}

func (r *ClientInfo) fields(c codec) {
	c.ustring(&r.AuthScheme)
	c.ustring(&r.User)
}

// Encode implements Record.
func (r *ClientInfo) Encode(e *Encoder) { r.fields(encoding(e)) }

// Decode implements Record.
func (r *ClientInfo) Decode(d *Decoder) { r.fields(decoding(d)) }
