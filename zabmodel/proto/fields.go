package proto

// codec visits a record's fields in jute order and either encodes or decodes
// them. Each record lists its fields once, in a fields method that reads like
// the record's zookeeper.jute definition (the methods are named after jute's
// types: long, boolean, buffer, ustring), and its Encode and Decode both run
// that list, so the two directions cannot disagree about order or types.
// Exactly one of e and d is set.
type codec struct {
	e *Encoder
	d *Decoder
}

func encoding(e *Encoder) codec { return codec{e: e} }
func decoding(d *Decoder) codec { return codec{d: d} }

func (c codec) long(v *int64) {
	if c.e != nil {
		c.e.WriteInt64(*v)
	} else {
		*v = c.d.ReadInt64()
	}
}

func (c codec) boolean(v *bool) {
	if c.e != nil {
		c.e.WriteBool(*v)
	} else {
		*v = c.d.ReadBool()
	}
}

// optionalBool handles a trailing flag that older peers leave out: it is
// written unless omit is set, and read only if a byte remains, as
// ZooKeeperServer.processConnectRequest and ClientCnxnSocket.readConnectResult
// read the readOnly flag.
func (c codec) optionalBool(v, omit *bool) {
	switch {
	case c.e != nil:
		if !*omit {
			c.e.WriteBool(*v)
		}
	case c.d.Err() == nil && c.d.Remaining() == 0:
		*v, *omit = false, true
	default:
		*v, *omit = c.d.ReadBool(), false
	}
}

func (c codec) buffer(v *[]byte) {
	if c.e != nil {
		c.e.WriteBuffer(*v)
	} else {
		*v = c.d.ReadBuffer()
	}
}

func (c codec) ustring(v *string) {
	if c.e != nil {
		c.e.WriteString(*v)
	} else {
		*v = c.d.ReadString()
	}
}

func (c codec) ustrings(v *[]string) {
	if c.e != nil {
		c.e.WriteStrings(*v)
	} else {
		*v = c.d.ReadStrings()
	}
}

func (c codec) record(r Record) {
	if c.e != nil {
		r.Encode(c.e)
	} else {
		r.Decode(c.d)
	}
}

// intField handles a jute int: an int32 or any of this package's int32
// enumerations. (It is a function because methods cannot be generic.)
func intField[T ~int32](c codec, v *T) {
	if c.e != nil {
		c.e.WriteInt32(int32(*v))
	} else {
		*v = T(c.d.ReadInt32())
	}
}

// vectorField handles a jute vector of records.
func vectorField[T any, P RecordPointer[T]](c codec, v *[]T) {
	if c.e != nil {
		WriteVector[T, P](c.e, *v)
	} else {
		*v = ReadVector[T, P](c.d)
	}
}
