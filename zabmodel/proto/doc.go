// Package proto is the ZooKeeper vocabulary and its binary ("jute") encoding,
// mirroring Apache ZooKeeper 3.8.0: error codes, op codes, stats, ACLs,
// create modes, watch types, path rules, and every record a client, a server,
// the data tree and the txn log exchange, with the field order and types of
// zookeeper.jute and the hand-written framing around them (the readOnly flag
// of the handshake, multi requests and responses, txn log entries).
//
// Messages on the simulated network are []byte holding exactly what Java
// puts after a packet's 4-byte length prefix, so CheckPacketLength applies to
// their length directly.
//
// Encoding a request:
//
//	var e proto.Encoder // reusable; e.Reset() between messages
//	h := proto.RequestHeader{Xid: 5, Type: proto.OpCreate}
//	req := proto.CreateRequest{Path: "/lock/seq-", Data: []byte("x"),
//		ACL: proto.OpenACLUnsafe, Flags: proto.EphemeralSequential}
//	h.Encode(&e)
//	req.Encode(&e)
//	msg := bytes.Clone(e.Bytes()) // or proto.Marshal(&h, &req)
//
// Decoding it on the server and checking it:
//
//	h, body, err := proto.DecodeRequest(msg) // err: reply MarshallingError
//	create := body.(*proto.CreateRequest)
//	mode, err := proto.CreateModeFromFlag(int32(create.Flags)) // err wraps BadArguments
//	if err := proto.ValidateSequentialPath(create.Path); err != nil { ... }
//
// Decoding a reply on the client, which knows the op it sent with that xid:
//
//	rh, body, err := proto.DecodeReply(proto.OpCreate, msg)
//	if err := rh.Err.Err(); errors.Is(err, proto.NodeExists) { ... }
//	path := body.(*proto.CreateResponse).Path
//	trace(proto.DescribeReply(rh, body)) // reply xid=5 zxid=0x100000003 err=OK path=/lock/seq-0000000000
//
// Decoders never panic on malformed input: they record the first error
// (ErrTruncated, ErrLength, ErrInvalidRecord, ErrTrailingBytes) and return
// zero values from then on. They are as lenient as Java where Java is lenient
// (trailing bytes, negative vector counts, optional trailing fields) and as
// strict where it is strict (BinaryInputArchive's length check).
//
// Strings are Java strings on both ends. Encoder.WriteString writes a
// supplementary character as Java's BinaryOutputArchive does, as two 3-byte
// surrogates, and Decoder.ReadString replaces malformed UTF-8 as Java's
// decoder does, so such characters do not survive a round trip here any more
// than in Java. Everything in the Basic Multilingual Plane does.
//
// The package has no goroutines, clock, randomness or map iteration: every
// function is deterministic, as the simulator requires.
package proto
