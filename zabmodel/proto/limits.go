package proto

import (
	"errors"
	"fmt"
)

// Size limits, as ZooKeeper 3.8.0 enforces them with default settings.
//
// MaxBufferBytes is the default of the jute.maxbuffer system property
// (BinaryInputArchive.maxBuffer, 0xfffff = 1048575 bytes, one byte short of
// 1 MiB). It limits whole packets, not znode data as such:
//
//   - Server, client connections. NIOServerCnxn.readLength and
//     NettyServerCnxn.receiveMessage read the 4-byte length prefix of every
//     packet from a client (the ConnectRequest included; only a
//     four-letter-word probe on a new connection is checked first) and, before
//     allocating, throw IOException ("Len error") if it is negative or greater
//     than jute.maxbuffer. The length covers everything after the prefix:
//     RequestHeader plus request record. NIOServerCnxn.doIO (and the Netty
//     handler) catch it and close the connection with
//     DisconnectReason.IO_EXCEPTION. No reply is sent, the request is never
//     submitted, every request pending on that connection goes unanswered, and
//     the session is not closed: it lives on until it expires or the client
//     reconnects, and the Java client fails the pending requests with
//     ConnectionLoss. So a create or setData is refused only through the whole
//     packet: 8 bytes of header, 4+len(path), 4+len(data) and the rest of the
//     record must fit in MaxBufferBytes.
//   - Server, large-request throttling. Right after that check
//     ZooKeeperServer.checkRequestSizeWhenReceivingMessage, and again in
//     processPacket (checkRequestSizeWhenMessageReceived), reject a packet
//     larger than zookeeper.largeRequestThreshold when the bytes of large
//     requests in flight would exceed zookeeper.largeRequestMaxBytes (default
//     100 MiB) with IOException "Rejecting large request", which closes the
//     connection the same way. The threshold defaults to -1, which disables
//     the check, so by default only the jute.maxbuffer check applies.
//   - Fields. BinaryInputArchive.checkLength rejects a buffer or string
//     length that is negative or greater than maxBuffer + extraMaxBuffer,
//     where extraMaxBuffer is zookeeper.jute.maxbuffer.extrasize and defaults
//     to maxBuffer itself (at least 1024): 2 * 0xfffff by default. A client
//     packet can never reach that, so the check matters for what servers read
//     from each other and from disk (QuorumPacket, snapshots, txn logs), where
//     the slack lets a ~1 MiB request plus its txn header pass. Vector counts
//     are not checked at all.
//   - Client. ClientCnxnSocket.readLength rejects a reply packet longer than
//     the client's jute.maxbuffer (ZKClientConfig default 0xfffff) with
//     IOException "Packet len N is out of range!", and the client drops the
//     connection and reconnects: a getChildren of a node whose child list
//     encodes to more than 1 MiB fails with ConnectionLoss. The client does
//     not check the size of what it sends.
//
// There is no separate znode data size check in 3.8.0: no
// "zookeeper.maxbuffer" property exists, and neither PrepRequestProcessor nor
// DataTree looks at the data length.
const (
	// MaxBufferBytes is the default jute.maxbuffer: the largest packet, after
	// its length prefix, that a server accepts from a client and a client
	// accepts from a server.
	MaxBufferBytes = 0xfffff
	// MaxBufferExtraBytes is the default zookeeper.jute.maxbuffer.extrasize.
	MaxBufferExtraBytes = MaxBufferBytes
	// MaxFieldBytes is the largest buffer or string length
	// BinaryInputArchive accepts by default, and the Decoder's default limit.
	MaxFieldBytes = MaxBufferBytes + MaxBufferExtraBytes
)

// ErrPacketLength reports a packet length that the receiving side of a
// client connection refuses; the Java code closes the connection.
var ErrPacketLength = errors.New("proto: packet length out of range")

// CheckPacketLength checks the length prefix of a packet on a client
// connection against MaxBufferBytes, as NIOServerCnxn.readLength does for
// requests and ClientCnxnSocket.readLength does for replies. n counts the
// bytes after the prefix, which in the simulator is the length of the
// message. On error the receiver must close the connection without replying.
func CheckPacketLength(n int) error {
	if n < 0 || n > MaxBufferBytes {
		return fmt.Errorf("%w: %d (jute.maxbuffer=%d)", ErrPacketLength, n, MaxBufferBytes)
	}
	return nil
}
