package electionmodel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ServerState is a server's role as election notifications report it (QuorumPeer.ServerState).
type ServerState int32

// States, with the numbers the wire format uses.
const (
	Looking   ServerState = 0
	Following ServerState = 1
	Leading   ServerState = 2
	Observing ServerState = 3
)

func (s ServerState) String() string {
	switch s {
	case Looking:
		return "LOOKING"
	case Following:
		return "FOLLOWING"
	case Leading:
		return "LEADING"
	case Observing:
		return "OBSERVING"
	}
	return fmt.Sprintf("STATE(%d)", int32(s))
}

// NoServer is the sid a non-participant proposes (Java's Long.MIN_VALUE): it never wins.
const NoServer int64 = math.MinInt64

// NoZxid is the last logged zxid an observer reports (Long.MIN_VALUE).
const NoZxid int64 = math.MinInt64

// Vote is a proposal for a leader, with the round it was made in and the state of the voter.
// Version is the notification format the vote came from: 3.8.0 keeps votes built from notifications
// with version 0x2 and votes built by hand with 0x0, and its equality depends on the difference.
type Vote struct {
	Leader        int64
	Zxid          int64
	ElectionEpoch int64
	PeerEpoch     int64
	State         ServerState
	Version       int32
}

func (v Vote) String() string {
	return fmt.Sprintf("(leader=%d zxid=%#x round=%#x peerEpoch=%#x %s)", v.Leader, v.Zxid, v.ElectionEpoch, v.PeerEpoch, v.State)
}

// sameAs is Vote.equals in 3.8.0: if either vote is LOOKING they must agree on leader, zxid, round
// and peer epoch; votes of servers out of election agree when they name the same leader in the same
// peer epoch, because their zxids and rounds can legitimately differ (ZOOKEEPER-1805); and when
// exactly one of the two carries a format version above 0 (a rolling-upgrade accommodation,
// ZOOKEEPER-1732) only the leader is compared. That last branch is reachable in 3.8.0 itself, which
// stores FOLLOWING and LEADING votes in recvset with version 0 but compares them with a vote built
// from the notification's version, so it is modelled too.
func (v Vote) sameAs(o Vote) bool {
	if v.State == Looking || o.State == Looking {
		return v.Leader == o.Leader && v.Zxid == o.Zxid && v.ElectionEpoch == o.ElectionEpoch && v.PeerEpoch == o.PeerEpoch
	}
	if (v.Version > 0) != (o.Version > 0) {
		return v.Leader == o.Leader
	}
	return v.Leader == o.Leader && v.PeerEpoch == o.PeerEpoch
}

// Notification is one election message (FastLeaderElection.Notification).
type Notification struct {
	Sender        int64 // set by the transport from the connection, not carried in the message
	State         ServerState
	Leader        int64
	Zxid          int64
	ElectionEpoch int64
	PeerEpoch     int64
}

func (n Notification) String() string {
	return fmt.Sprintf("notification from=%d %s leader=%d zxid=%#x round=%#x peerEpoch=%#x",
		n.Sender, n.State, n.Leader, n.Zxid, n.ElectionEpoch, n.PeerEpoch)
}

func (n Notification) vote() Vote {
	return Vote{Leader: n.Leader, Zxid: n.Zxid, ElectionEpoch: n.ElectionEpoch, PeerEpoch: n.PeerEpoch, State: n.State}
}

// wireVersion is the notification format version 3.8.0 sends (0x2: with a configuration block).
const wireVersion = 0x2

// encodedSize is the size of an encoded notification with an empty configuration block.
const encodedSize = 4 + 8 + 8 + 8 + 8 + 4 + 4

// ErrShortNotification is returned for messages shorter than any version of the format.
var ErrShortNotification = errors.New("electionmodel: notification shorter than 28 bytes")

// Encode renders the notification in the 3.8.0 layout: state, leader, zxid, electionEpoch,
// peerEpoch, version, and a configuration block (empty here: zabsim does not reconfigure).
func (n Notification) Encode() []byte {
	b := make([]byte, encodedSize)
	binary.BigEndian.PutUint32(b[0:], uint32(n.State))
	binary.BigEndian.PutUint64(b[4:], uint64(n.Leader))
	binary.BigEndian.PutUint64(b[12:], uint64(n.Zxid))
	binary.BigEndian.PutUint64(b[20:], uint64(n.ElectionEpoch))
	binary.BigEndian.PutUint64(b[28:], uint64(n.PeerEpoch))
	binary.BigEndian.PutUint32(b[36:], wireVersion)
	binary.BigEndian.PutUint32(b[40:], 0)
	return b
}

// Decode parses a notification as WorkerReceiver does, including the older 28- and 40-byte formats.
// An unknown state or a configuration block longer than the message is an error, never a panic.
func Decode(sender int64, b []byte) (Notification, error) {
	if len(b) < 28 {
		return Notification{}, ErrShortNotification
	}
	n := Notification{
		Sender:        sender,
		State:         ServerState(int32(binary.BigEndian.Uint32(b[0:]))),
		Leader:        int64(binary.BigEndian.Uint64(b[4:])),
		Zxid:          int64(binary.BigEndian.Uint64(b[12:])),
		ElectionEpoch: int64(binary.BigEndian.Uint64(b[20:])),
	}
	if n.State < Looking || n.State > Observing {
		return Notification{}, fmt.Errorf("electionmodel: unknown state %d in notification from %d", n.State, sender)
	}
	if len(b) == 28 {
		n.PeerEpoch = n.Zxid >> 32 // Before ZOOKEEPER-107 the epoch lived only in the zxid.
		return n, nil
	}
	// Past 28 bytes Java reads the peer epoch; a 40-byte message is taken to end there (its version
	// is not read), anything else must also hold the version, and version 0x2 a configuration block.
	malformed := fmt.Errorf("electionmodel: malformed notification of %d bytes from %d", len(b), sender)
	if len(b) < 40 {
		return Notification{}, malformed
	}
	n.PeerEpoch = int64(binary.BigEndian.Uint64(b[28:]))
	if len(b) == 40 {
		return n, nil
	}
	if version := binary.BigEndian.Uint32(b[36:]); version > 0x1 {
		if len(b) < 44 {
			return Notification{}, malformed
		}
		configLength := int64(int32(binary.BigEndian.Uint32(b[40:])))
		if configLength < 0 || configLength > int64(len(b)-44) {
			return Notification{}, fmt.Errorf("electionmodel: invalid config length %d in notification from %d", configLength, sender)
		}
	}
	return n, nil
}
