package datatree

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// Sessions is what PrepRequestProcessor asks of the server's session tracker
// (SessionTracker in Java), which the server implements. Errors must be
// proto.Code values (or wrap one): SessionExpired, SessionMoved,
// UnknownSession. The Preparer calls these methods exactly where Java does:
//
//   - CheckSession for every request but createSession, closeSession,
//     deleteContainer, an ephemeral create and a reconfig, before anything
//     else about the request is checked (for a create, after its mode and
//     TTL are checked), and once per op of a multi;
//   - CheckGlobalSession instead for an ephemeral create (Java:
//     checkGlobalSession, which turns UnknownSession into SessionExpired);
//   - TrackSession then SetOwner for createSession;
//   - SetSessionClosing for closeSession, after its txn is built.
type Sessions interface {
	CheckSession(id int64, owner any) error
	CheckGlobalSession(id int64, owner any) error
	TrackSession(id int64, timeoutMilliseconds int32)
	SetOwner(id int64, owner any) error
	SetSessionClosing(id int64)
}

// Request is one client request as the server hands it to
// PrepRequestProcessor.
type Request struct {
	SessionID int64
	Cxid      int32
	Type      proto.OpCode
	// Body is the decoded request record, of the type proto.NewRequest
	// gives for Type (deleteContainer: *proto.DeleteRequest, whose Version
	// is ignored). nil means the body failed to decode; Java then logs an
	// error txn with MarshallingError for a write. createSession and
	// closeSession have none.
	Body proto.Record
	// SessionTimeoutMilliseconds is createSession's negotiated timeout,
	// which Java reads from the request buffer.
	SessionTimeoutMilliseconds int32
	// Auth is the connection's identities, its {ip, address} included, in
	// AuthInfo.IDs order.
	Auth []proto.ID
	// Owner identifies the connection for the session checks.
	Owner any
	// Zxid is zks.getNextZxid(), taken by the server for this request
	// exactly when TakesZxid says so; it is ignored otherwise.
	Zxid int64
	// TimeMilliseconds is the leader's wall time for the TxnHeader.
	TimeMilliseconds int64
}

// TakesZxid reports whether PrepRequestProcessor takes a zxid
// (zks.getNextZxid()) for a request: every write type, whether or not it
// then fails (a failed write is logged as an error txn with that zxid), and
// reconfig only when its body decoded. Reads, sync, ping and the watch and
// session-less requests take none; for them the server must not advance its
// zxid counter. Local sessions, whose createSession and closeSession take
// none, are not modelled.
func TakesZxid(op proto.OpCode, body proto.Record) bool {
	switch op {
	case proto.OpCreate, proto.OpCreate2, proto.OpCreateTTL, proto.OpCreateContainer,
		proto.OpDelete, proto.OpDeleteContainer, proto.OpSetData, proto.OpSetACL,
		proto.OpCheck, proto.OpMulti, proto.OpCreateSession, proto.OpCloseSession:
		return true
	case proto.OpReconfig:
		return body != nil
	default:
		return false
	}
}

// Prepared is what preparing a request yields.
type Prepared struct {
	// Txn is the txn to propose and log, or nil for a request that makes
	// none (reads, sync, ping, watch requests, and requests that failed
	// before Java built a header). A request whose preparation failed has
	// header type error and an ErrorTxn with the code; a failed multi stays
	// a multi whose sub-txns say which op failed.
	Txn *proto.TxnEntry
	// Err is the KeeperException Java records on the request
	// (request.getException()), or OK. For a read it is the session check's
	// failure, which the reply carries (SessionMoved: the server closes the
	// connection instead). For a write it equals the ErrorTxn's code; for a
	// failed multi it is the failing op's code, and the reply comes from
	// the applied multi's results unless it is SessionMoved.
	Err proto.Code
}

// MaxOutstandingChanges bounds the change records a Preparer holds. Each
// prepared write adds a few; Applied removes them. Reaching the bound means
// the server never calls Applied, and Prepare refuses further requests.
const MaxOutstandingChanges = 1 << 20

// changeRecord is ZooKeeperServer.ChangeRecord: the state a node will have
// once the prepared but not yet applied txns are applied. stat is nil for a
// node that will be deleted.
type changeRecord struct {
	zxid       int64
	path       string
	stat       *proto.StatPersisted
	childCount int32
	acl        []proto.ACL
	data       []byte
	digest     precalculatedDigest
}

// precalculatedDigest is PrecalculatedDigest: the node's digest and the tree
// digest once this change is applied.
type precalculatedDigest struct {
	node int64
	tree int64
}

// duplicate is ChangeRecord.duplicate: a copy for a new zxid with its own
// stat (a zero one for a deleted node) and its own ACL list.
func (c *changeRecord) duplicate(zxid int64) *changeRecord {
	stat := proto.StatPersisted{}
	if c.stat != nil {
		stat = *c.stat
	}
	acl := slices.Clone(c.acl)
	if acl == nil {
		acl = []proto.ACL{}
	}
	return newChangeRecord(changeRecord{zxid: zxid, path: c.path, childCount: c.childCount, acl: acl, data: c.data, digest: c.digest}, stat)
}

// recordAndStat holds a change record and the stat it points to, so that the two take one
// allocation. The record is the stat's only user, and it keeps it alive through its pointer.
type recordAndStat struct {
	record changeRecord
	stat   proto.StatPersisted
}

// newChangeRecord returns a copy of r whose stat is a copy of stat.
func newChangeRecord(r changeRecord, stat proto.StatPersisted) *changeRecord {
	x := &recordAndStat{record: r, stat: stat}
	x.record.stat = &x.stat
	return &x.record
}

// Preparer is PrepRequestProcessor with the outstanding changes it shares
// with FinalRequestProcessor (zks.outstandingChanges and
// outstandingChangesForPath): it turns requests into txns, checking them
// against the tree as it will be once every txn prepared so far is applied.
//
// A leader prepares each request with Prepare, proposes the txn, applies it
// with Tree.Apply once committed, and then calls Applied with its zxid. A new
// leader starts with Reset (Java builds a new server object).
type Preparer struct {
	tree     *Tree
	sessions Sessions
	changes  []*changeRecord // in zxid order
	byPath   map[string]*changeRecord
}

// NewPreparer returns a Preparer over tree that asks sessions about
// sessions. Only the stock reconfig setting is modelled.
func NewPreparer(tree *Tree, sessions Sessions) (*Preparer, error) {
	if tree == nil || sessions == nil {
		return nil, errors.New("datatree: NewPreparer needs a tree and a session tracker")
	}
	if tree.config.ReconfigEnabled {
		return nil, errors.New("datatree: zookeeper.reconfigEnabled is not modelled")
	}
	return &Preparer{tree: tree, sessions: sessions, byPath: make(map[string]*changeRecord)}, nil
}

// Outstanding returns the number of change records held.
func (p *Preparer) Outstanding() int { return len(p.changes) }

// Applied drops the change records of every txn up to zxid, as
// ZooKeeperServer.processTxn does after applying a txn; a path's record is
// forgotten only if no later change replaced it.
func (p *Preparer) Applied(zxid int64) {
	n := 0
	for n < len(p.changes) && p.changes[n].zxid <= zxid {
		c := p.changes[n]
		if p.byPath[c.path] == c {
			delete(p.byPath, c.path)
		}
		p.changes[n] = nil
		n++
	}
	p.changes = p.changes[n:]
	if len(p.changes) == 0 {
		p.changes = nil
	}
}

// Reset drops every change record.
func (p *Preparer) Reset() {
	p.changes = nil
	p.byPath = make(map[string]*changeRecord)
}

func (p *Preparer) addChangeRecord(c *changeRecord) {
	p.changes = append(p.changes, c)
	p.byPath[c.path] = c
}

// recordForPath is getRecordForPath: the outstanding change for path, or a
// record of the node as the tree has it; NoNode if neither exists or the
// change deletes it.
func (p *Preparer) recordForPath(path string) (*changeRecord, error) {
	if c := p.byPath[path]; c != nil {
		if c.stat == nil {
			return nil, proto.NoNode
		}
		return c, nil
	}
	n := p.tree.nodes.get(path)
	if n == nil {
		return nil, proto.NoNode
	}
	acl, err := p.tree.nodeACL(n)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errJavaRuntime, err)
	}
	return newChangeRecord(changeRecord{
		zxid: -1, path: path, childCount: n.numChildren(), acl: acl, data: n.data,
		digest: precalculatedDigest{node: cachedDigest(path, n)},
	}, n.stat), nil
}

// currentTreeDigest is the tree digest once every outstanding change is
// applied.
func (p *Preparer) currentTreeDigest() int64 {
	if len(p.changes) == 0 {
		return p.tree.Digest()
	}
	return p.changes[len(p.changes)-1].digest.tree
}

type digestChange int

const (
	digestAdd digestChange = iota
	digestRemove
	digestUpdate
	digestNoop
)

// precalculate is precalculateDigest: the digest of path after the change,
// and the tree digest after it, from the current one.
func (p *Preparer) precalculate(change digestChange, path string, data []byte, stat *proto.StatPersisted) (precalculatedDigest, error) {
	var previous, next int64
	switch change {
	case digestAdd:
		next = nodeDigest(path, data, stat)
	case digestRemove, digestUpdate:
		record, err := p.recordForPath(path)
		if err != nil {
			return precalculatedDigest{}, err
		}
		previous = record.digest.node
		if change == digestUpdate {
			next = nodeDigest(path, data, stat)
		}
	}
	return precalculatedDigest{node: next, tree: p.currentTreeDigest() - previous + next}, nil
}

// txnDigest is the TxnDigest of a tree digest.
func txnDigest(tree int64) *proto.TxnDigest {
	return &proto.TxnDigest{Version: DigestVersion, TreeDigest: tree}
}
