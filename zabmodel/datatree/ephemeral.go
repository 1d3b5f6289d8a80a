package datatree

import (
	"errors"
	"fmt"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// EphemeralKind classifies a node by its ephemeralOwner, as
// org.apache.zookeeper.server.EphemeralType does.
type EphemeralKind int

// The kinds, in EphemeralType's order.
const (
	// KindVoid is a persistent node: ephemeralOwner 0.
	KindVoid EphemeralKind = iota
	// KindNormal is a session's ephemeral node: any other owner that is not
	// one of the marks below.
	KindNormal
	// KindContainer is a container: owner proto.ContainerEphemeralOwner.
	KindContainer
	// KindTTL is a node with a time to live, recognised only when extended
	// types are enabled: top byte 0xff, 16 reserved bits 0, a 40-bit TTL.
	KindTTL
)

func (k EphemeralKind) String() string {
	switch k {
	case KindVoid:
		return "VOID"
	case KindNormal:
		return "NORMAL"
	case KindContainer:
		return "CONTAINER"
	case KindTTL:
		return "TTL"
	default:
		return fmt.Sprintf("EphemeralKind(%d)", int(k))
	}
}

// The bit layout of EphemeralType's extended owners.
const (
	extendedMask     int64 = -1 << 56           // 0xff00000000000000
	reservedBitsMask int64 = 0x00ffff0000000000 // the extended-feature selector
	reservedShift          = 40                 // where the selector starts
	featureValueMask       = ^(extendedMask | reservedBitsMask)
	// MaxTTLMilliseconds is the largest time to live a TTL node may have
	// (EphemeralType.TTL.maxValue(), about 34 years).
	MaxTTLMilliseconds int64 = featureValueMask
)

// ErrInvalidOwner is wrapped by KindOf's error for an extended owner whose
// feature selector is not TTL's; Java throws IllegalArgumentException there.
var ErrInvalidOwner = errors.New("datatree: invalid ephemeralOwner")

// KindOf classifies an ephemeralOwner as EphemeralType.get does in 3.8.0.
// Which owners count as TTL nodes depends on zookeeper.extendedTypesEnabled:
// without it a TTL-shaped owner is simply a session's (KindNormal). With it,
// an owner whose top byte is 0xff but whose selector is not TTL's is an
// error, as Java's IllegalArgumentException. (The 3.5.3 TTL emulation
// property is not modelled.)
func KindOf(owner int64, extendedTypes bool) (EphemeralKind, error) {
	if extendedTypes && owner&extendedMask == extendedMask {
		if (owner&reservedBitsMask)>>reservedShift != 0 {
			return KindNormal, fmt.Errorf("%w: %x", ErrInvalidOwner, uint64(owner))
		}
		return KindTTL, nil
	}
	switch owner {
	case proto.ContainerEphemeralOwner:
		return KindContainer, nil
	case 0:
		return KindVoid, nil
	default:
		return KindNormal, nil
	}
}

// TTLOwner encodes a time to live as an ephemeralOwner, as
// EphemeralType.TTL.toEphemeralOwner does; a TTL outside
// [1, MaxTTLMilliseconds] is an error (Java's IllegalArgumentException).
func TTLOwner(ttlMilliseconds int64) (int64, error) {
	if ttlMilliseconds > MaxTTLMilliseconds || ttlMilliseconds <= 0 {
		return 0, fmt.Errorf("datatree: ttl must be positive and cannot be larger than: %d, got %d",
			MaxTTLMilliseconds, ttlMilliseconds)
	}
	return extendedMask | ttlMilliseconds, nil
}

// TTLOf returns the time to live of a TTL owner
// (EphemeralType.TTL.getValue).
func TTLOf(owner int64) int64 { return owner & featureValueMask }

// validateTTL is EphemeralType.validateTTL: a TTL mode needs a valid TTL, and
// any other mode a negative one.
func validateTTL(mode proto.CreateMode, ttl int64) error {
	if mode.IsTTL() {
		_, err := TTLOwner(ttl)
		return err
	}
	if ttl >= 0 {
		return fmt.Errorf("datatree: ttl not valid for mode: %v", mode)
	}
	return nil
}
