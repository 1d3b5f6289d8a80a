package zabmodel

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Quorum packet types, as the constants of Leader.java number them.
const (
	pktRequest           int32 = 1
	pktProposal          int32 = 2
	pktAck               int32 = 3
	pktCommit            int32 = 4
	pktPing              int32 = 5
	pktRevalidate        int32 = 6
	pktSync              int32 = 7
	pktInform            int32 = 8
	pktCommitAndActivate int32 = 9
	pktNewLeader         int32 = 10
	pktFollowerInfo      int32 = 11
	pktUpToDate          int32 = 12
	pktDiff              int32 = 13
	pktTrunc             int32 = 14
	pktSnap              int32 = 15
	pktObserverInfo      int32 = 16
	pktLeaderInfo        int32 = 17
	pktAckEpoch          int32 = 18
	pktInformAndActivate int32 = 19
)

var packetNames = map[int32]string{
	pktRequest: "REQUEST", pktProposal: "PROPOSAL", pktAck: "ACK", pktCommit: "COMMIT", pktPing: "PING",
	pktRevalidate: "REVALIDATE", pktSync: "SYNC", pktInform: "INFORM", pktCommitAndActivate: "COMMITANDACTIVATE",
	pktNewLeader: "NEWLEADER", pktFollowerInfo: "FOLLOWERINFO", pktUpToDate: "UPTODATE", pktDiff: "DIFF",
	pktTrunc: "TRUNC", pktSnap: "SNAP", pktObserverInfo: "OBSERVERINFO", pktLeaderInfo: "LEADERINFO",
	pktAckEpoch: "ACKEPOCH", pktInformAndActivate: "INFORMANDACTIVATE",
}

func packetName(t int32) string {
	if n, ok := packetNames[t]; ok {
		return n
	}
	return fmt.Sprintf("UNKNOWN(%d)", t)
}

// protocolVersion is the learner protocol version of 3.8.0 (0x10000: ZAB 1.0 with LEADERINFO).
const protocolVersion = 0x10000

// errPacket reports a malformed or unexpected quorum packet; the receiving side closes the
// connection, as the Java code does on an IOException.
var errPacket = errors.New("zabmodel: bad quorum packet")

func decodePacket(b []byte) (proto.QuorumPacket, error) {
	var qp proto.QuorumPacket
	if err := proto.Unmarshal(b, &qp); err != nil {
		return qp, fmt.Errorf("%w: %v", errPacket, err)
	}
	return qp, nil
}

// describePacket renders a quorum message for the trace.
func describePacket(b []byte) string {
	qp, err := decodePacket(b)
	if err != nil {
		return fmt.Sprintf("(%d bytes, not a quorum packet: the stream after SNAP)", len(b))
	}
	s := fmt.Sprintf("%s zxid=%s", packetName(qp.Type), FormatZxid(qp.Zxid))
	if qp.Type == pktProposal || qp.Type == pktInform {
		var entry proto.TxnEntry
		if proto.Unmarshal(qp.Data, &entry) == nil {
			s += " " + entry.Header.Type.String()
		}
	}
	return s
}

// learnerInfoData is the data of FOLLOWERINFO / OBSERVERINFO.
func learnerInfoData(sid int64) []byte {
	li := proto.LearnerInfo{ServerID: sid, ProtocolVersion: protocolVersion, ConfigVersion: 0}
	return proto.Marshal(&li)
}

func int32Data(v int32) []byte {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, uint32(v))
	return b
}

// requestData is what Learner.request writes into a REQUEST packet: the session, the xid, the op
// code and the request's bytes after its header.
func requestData(session int64, cxid int32, op proto.OpCode, body []byte) []byte {
	b := make([]byte, 16, 16+len(body))
	binary.BigEndian.PutUint64(b, uint64(session))
	binary.BigEndian.PutUint32(b[8:], uint32(cxid))
	binary.BigEndian.PutUint32(b[12:], uint32(op))
	return append(b, body...)
}

func parseRequestData(b []byte) (session int64, cxid int32, op proto.OpCode, body []byte, err error) {
	if len(b) < 16 {
		return 0, 0, 0, nil, fmt.Errorf("%w: REQUEST data of %d bytes", errPacket, len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), int32(binary.BigEndian.Uint32(b[8:])),
		proto.OpCode(int32(binary.BigEndian.Uint32(b[12:]))), b[16:], nil
}

// touchData is a learner's PING reply: (session id, timeout) pairs, as Learner.ping writes them.
func touchData(sessions []sessionTouch) []byte {
	b := make([]byte, 0, 12*len(sessions))
	for _, t := range sessions {
		b = binary.BigEndian.AppendUint64(b, uint64(t.id))
		b = binary.BigEndian.AppendUint32(b, uint32(t.timeoutMs))
	}
	return b
}

func parseTouchData(b []byte) []sessionTouch {
	var out []sessionTouch
	for len(b) >= 12 {
		out = append(out, sessionTouch{id: int64(binary.BigEndian.Uint64(b)), timeoutMs: int32(binary.BigEndian.Uint32(b[8:]))})
		b = b[12:]
	}
	return out
}

// revalidateData is the data of a REVALIDATE request (session id, timeout) and reply (session id,
// valid).
func revalidateRequestData(session int64, timeoutMs int32) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(session))
	return binary.BigEndian.AppendUint32(b, uint32(timeoutMs))
}

func revalidateReplyData(session int64, valid bool) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(session))
	if valid {
		return append(b, 1)
	}
	return append(b, 0)
}
