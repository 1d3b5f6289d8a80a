package datatree

import (
	"errors"
	"fmt"
	"hash/adler32"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// snapshotVersion and snapshotDBID are FileSnap.VERSION and FileSnap.dbId.
const (
	snapshotVersion int32 = 2
	snapshotDBID    int64 = -1
	// syncSignature ends the snapshot a leader streams in a SNAP sync
	// (LearnerHandler writes it, Learner checks it).
	syncSignature = "BenWasHere"
)

// ErrCorruptSnapshot is wrapped by every error Deserialize and
// DeserializeSync return.
var ErrCorruptSnapshot = errors.New("datatree: corrupt snapshot")

// Serialize returns the tree as a 3.8.0 snapshot file (FileSnap.serialize
// with the default, uncompressed stream): a FileHeader ("ZKSN", version 2,
// dbid -1), the session table (sorted by id here; Java writes its HashMap's
// order), the ACL cache (by ascending index), the nodes depth first from the
// root with children in sorted order (Java: its HashSets' order), the "/"
// that ends them, a seal (the Adler-32 of everything before it, as a long,
// then "/"), the digest of the last applied txn (zxid, digest version,
// digest; zeros before the first txn), and a second seal over everything
// before it. The snapshot's zxid is not in the bytes: Java puts it in the
// file name, and Deserialize takes it as an argument.
func (t *Tree) Serialize(sessions []Session) []byte {
	return t.NewSnapshotWriter(sessions, true).Finish()
}

// SerializeSync returns the snapshot as a leader streams it to a learner in
// a SNAP sync (ZKDatabase.serializeSnapshot followed by LearnerHandler's
// signature): the session table, the ACL cache and the nodes as in
// Serialize, then the string "BenWasHere"; no header, seals or digest.
func (t *Tree) SerializeSync(sessions []Session) []byte {
	return t.NewSnapshotWriter(sessions, false).Finish()
}

func seal(e *proto.Encoder) {
	e.WriteInt64(int64(adler32.Checksum(e.Bytes())))
	e.WriteString("/")
}

// Deserialize reads a snapshot file written by Serialize or by a 3.8.0
// server, as FileSnap.deserialize does, and returns the tree with
// lastProcessedZxid set to snapshotZxid (the zxid in the file's name) and the
// session table. It checks the magic, both seals and the structure, and
// returns an error wrapping ErrCorruptSnapshot, never panicking, on bad
// input. It is stricter than Java in refusing a snapshot whose root is not
// the first node or that names a node twice. Like Java it loads a node whose
// ACL index the cache lacks (a fuzzy snapshot's node created with a new ACL
// after the cache was written), which only a read of that ACL then fails. A missing digest section
// (a pre-3.6 snapshot) is accepted. If the stored digest is for
// snapshotZxid it is compared at once (see DigestMismatchOnLoad); if it is
// for a later zxid, Apply compares it when that zxid is applied.
func Deserialize(b []byte, snapshotZxid int64, config Config) (*Tree, []Session, error) {
	d := proto.NewDecoder(b)
	var header proto.FileHeader
	header.Decode(d)
	if err := d.Err(); err != nil {
		return nil, nil, corrupt("file header", err)
	}
	if header.Magic != proto.SnapshotMagic {
		return nil, nil, corrupt("file header", fmt.Errorf("mismatching magic headers %d != %d", header.Magic, proto.SnapshotMagic))
	}
	t, sessions, err := deserializeSnapshot(d, config)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSeal(b, d); err != nil {
		return nil, nil, err
	}
	digest, present, err := readZxidDigest(d)
	if err != nil {
		return nil, nil, err
	}
	if present {
		if err := checkSeal(b, d); err != nil {
			return nil, nil, err
		}
		if digest.Zxid > 0 && digest.Zxid >= snapshotZxid {
			t.snapshotDigest = &digest
		}
	}
	t.lastProcessedZxid = snapshotZxid
	if t.snapshotDigest != nil && !t.compareSnapshotDigest(snapshotZxid) {
		t.mismatchOnLoad = true
	}
	return t, sessions, nil
}

// DeserializeSync reads what SerializeSync writes, as a learner reads a SNAP
// sync (ZKDatabase.deserializeSnapshot, the signature check, then
// setlastProcessedZxid with the SNAP packet's zxid). Bytes after the
// signature are ignored.
func DeserializeSync(b []byte, zxid int64, config Config) (*Tree, []Session, error) {
	d := proto.NewDecoder(b)
	t, sessions, err := deserializeSnapshot(d, config)
	if err != nil {
		return nil, nil, err
	}
	if signature := d.ReadString(); d.Err() != nil || signature != syncSignature {
		return nil, nil, corrupt("signature", fmt.Errorf("missing signature, got %q (%v)", signature, d.Err()))
	}
	t.lastProcessedZxid = zxid
	return t, sessions, nil
}

// StoredDigest returns the digest a snapshot file written by Serialize (or a
// SnapshotWriter for a file) stores after its nodes: the zxid and tree digest
// of the last transaction the tree had applied when the walk ended
// (DataTree.serializeZxidDigest reads lastProcessedZxidDigest then). A fuzzy
// snapshot may reflect transactions up to that zxid, past the zxid it is
// named by. It reads the file's end only, where the digest sits between the
// two seals, and checks both seals; it reports false for a file without a
// current-format digest (an old snapshot, one written before any transaction
// applied, or damaged bytes), of which nothing can be said.
func StoredDigest(b []byte) (ZxidDigest, bool) {
	const (
		sealSize   = 8 + 4 + 1 // the Adler-32 as a long, then the string "/"
		digestSize = 8 + 4 + 8 // zxid, digest version, digest
	)
	sealAt := func(end int) bool {
		at := end - sealSize
		if at < 0 {
			return false
		}
		d := proto.NewDecoder(b[at:end])
		value := d.ReadInt64()
		slash := d.ReadString()
		return d.Err() == nil && slash == "/" && value == int64(adler32.Checksum(b[:at]))
	}
	end := len(b)
	digestEnd := end - sealSize
	if !sealAt(end) || !sealAt(digestEnd-digestSize) {
		return ZxidDigest{}, false
	}
	d := proto.NewDecoder(b[digestEnd-digestSize : digestEnd])
	digest := ZxidDigest{Zxid: d.ReadInt64(), Version: d.ReadInt32(), Digest: d.ReadInt64()}
	if d.Err() != nil || digest.Version < 2 || digest.Zxid <= 0 {
		return ZxidDigest{}, false
	}
	return digest, true
}

func corrupt(where string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrCorruptSnapshot, where, err)
}

// checkSeal is SnapStream.checkSealIntegrity: a long that must equal the
// Adler-32 of every byte before it, then a string Java reads and ignores.
func checkSeal(b []byte, d *proto.Decoder) error {
	sum := int64(adler32.Checksum(b[:d.Offset()]))
	value := d.ReadInt64()
	d.ReadString()
	if err := d.Err(); err != nil {
		return corrupt("seal", err)
	}
	if value != sum {
		return corrupt("seal", fmt.Errorf("CRC corruption: stored %d, computed %d", value, sum))
	}
	return nil
}

// readZxidDigest is DataTree.deserializeZxidDigest: zxid, digest version,
// and the digest (a hex string before version 2). Running out of input
// anywhere in it means there is no digest, as Java's EOFException does.
func readZxidDigest(d *proto.Decoder) (ZxidDigest, bool, error) {
	var digest ZxidDigest
	digest.Zxid = d.ReadInt64()
	digest.Version = d.ReadInt32()
	if digest.Version < 2 {
		text := d.ReadString()
		if d.Err() == nil && text != "" {
			value, ok := parseHexLong(text)
			if !ok {
				return digest, false, corrupt("digest", fmt.Errorf("digest %q is not hexadecimal", text))
			}
			digest.Digest = value
		}
	} else {
		digest.Digest = d.ReadInt64()
	}
	if err := d.Err(); err != nil {
		if errors.Is(err, proto.ErrTruncated) {
			return digest, false, nil
		}
		return digest, false, corrupt("digest", err)
	}
	return digest, true, nil
}

// parseHexLong is Long.parseLong(s, 16) for the digests of old snapshots.
func parseHexLong(s string) (int64, bool) {
	negative := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if digits == "" || len(digits) > 16 {
		return 0, false
	}
	var value uint64
	for _, c := range digits {
		var v uint64
		switch {
		case c >= '0' && c <= '9':
			v = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			v = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v = uint64(c-'A') + 10
		default:
			return 0, false
		}
		value = value<<4 | v
	}
	if negative {
		if value > 1<<63 {
			return 0, false
		}
		return -int64(value), true
	}
	if value > 1<<63-1 {
		return 0, false
	}
	return int64(value), true
}
