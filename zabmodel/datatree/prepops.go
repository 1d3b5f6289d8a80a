package datatree

import (
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// createArguments are the fields of a CreateRequest or CreateTTLRequest.
type createArguments struct {
	path  string
	data  []byte
	acl   []proto.ACL
	flags proto.CreateMode
	ttl   int64
}

// createArgumentsOf reads a create's body as pRequest2TxnCreate does: a
// CreateTTLRequest for createTTL and a CreateRequest otherwise; the other
// record type is Java's ClassCastException (reachable through a multi, whose
// create ops take their type from their flags).
func createArgumentsOf(op proto.OpCode, body proto.Record) (createArguments, error) {
	switch b := body.(type) {
	case nil:
		return createArguments{}, fmt.Errorf("%w: undecodable %v request", errJavaRuntime, op)
	case *proto.CreateTTLRequest:
		if op != proto.OpCreateTTL {
			return createArguments{}, fmt.Errorf("%w: a %v op carries a CreateTTLRequest", errJavaRuntime, op)
		}
		return createArguments{path: b.Path, data: b.Data, acl: b.ACL, flags: b.Flags, ttl: b.TTL}, nil
	case *proto.CreateRequest:
		if op == proto.OpCreateTTL {
			return createArguments{}, fmt.Errorf("%w: a createTTL op carries a CreateRequest", errJavaRuntime)
		}
		return createArguments{path: b.Path, data: b.Data, acl: b.ACL, flags: b.Flags, ttl: -1}, nil
	default:
		return createArguments{}, contractf("a %v request carries %T", op, body)
	}
}

// prepareCreate is pRequest2TxnCreate. The checks run in Java's order: the
// flags, TTL support and value, the session, the path's shape, the ACL, the
// parent's existence, CREATE permission on the parent, the final path
// (with the sequence number from the parent's cversion, outstanding changes
// included), the node's absence, and the parent not being ephemeral.
func (p *Preparer) prepareCreate(r *pending, op proto.OpCode, body proto.Record) error {
	args, err := createArgumentsOf(op, body)
	if err != nil {
		return err
	}
	mode, err := proto.CreateModeFromFlag(int32(args.flags))
	if err != nil {
		return proto.BadArguments
	}
	if err := p.validateCreateRequest(r, mode, args.ttl); err != nil {
		return err
	}
	i := strings.LastIndexByte(args.path, '/')
	if i < 0 || containsNUL(args.path) {
		return proto.BadArguments
	}
	parentPath := args.path[:i]
	acl, err := FixupACL(r.req.Auth, args.acl)
	if err != nil {
		return err
	}
	parent, err := p.recordForPath(parentPath)
	if err != nil {
		return err
	}
	if err := CheckACL(parent.acl, proto.PermCreate, r.req.Auth); err != nil {
		return err
	}
	path := args.path
	if mode.IsSequential() {
		path += fmt.Sprintf("%010d", parent.stat.Cversion)
	}
	if err := validatePath(path); err != nil {
		return err
	}
	if _, err := p.recordForPath(path); err == nil {
		return proto.NodeExists
	} else if _, ok := keeperCode(err); !ok {
		return err
	}
	parentKind, err := p.tree.kind(parent.stat.EphemeralOwner)
	if err != nil {
		return fmt.Errorf("%w: %v", errJavaRuntime, err)
	}
	if parentKind == KindNormal {
		return proto.NoChildrenForEphemerals
	}
	args.path = path
	return p.recordCreate(r, op, mode, args, acl, parentPath, parent)
}

// validateCreateRequest is PrepRequestProcessor.validateCreateRequest.
func (p *Preparer) validateCreateRequest(r *pending, mode proto.CreateMode, ttl int64) error {
	if mode.IsTTL() && !p.tree.config.ExtendedTypes {
		return proto.Unimplemented
	}
	if validateTTL(mode, ttl) != nil {
		return proto.BadArguments
	}
	if mode.IsEphemeral() {
		if r.exception != proto.OK {
			return r.exception
		}
		return sessionError("CheckGlobalSession", p.sessions.CheckGlobalSession(r.req.SessionID, r.req.Owner))
	}
	return p.checkSession(r)
}

// recordCreate builds a checked create's txn and its two change records.
// The txn type follows the op code and the owner follows the mode, as in
// Java, so that a create op code with container flags (or the reverse) makes
// a txn and a change record that disagree; the digest check then reports it.
func (p *Preparer) recordCreate(r *pending, op proto.OpCode, mode proto.CreateMode, args createArguments,
	acl []proto.ACL, parentPath string, parent *changeRecord) error {
	newCversion := parent.stat.Cversion + 1
	switch op {
	case proto.OpCreateContainer:
		r.txn = &proto.CreateContainerTxn{Path: args.path, Data: args.data, ACL: acl, ParentCVersion: newCversion}
	case proto.OpCreateTTL:
		r.txn = &proto.CreateTTLTxn{Path: args.path, Data: args.data, ACL: acl, ParentCVersion: newCversion, TTL: args.ttl}
	default:
		r.txn = &proto.CreateTxn{Path: args.path, Data: args.data, ACL: acl, Ephemeral: mode.IsEphemeral(), ParentCVersion: newCversion}
	}
	var owner int64
	switch {
	case mode.IsContainer():
		owner = proto.ContainerEphemeralOwner
	case mode.IsTTL():
		ttlOwner, err := TTLOwner(args.ttl)
		if err != nil {
			return fmt.Errorf("%w: %v", errJavaRuntime, err)
		}
		owner = ttlOwner
	case mode.IsEphemeral():
		owner = r.req.SessionID
	}
	zxid := r.header.Zxid
	stat := createStat(zxid, r.header.Time, owner)
	updated := parent.duplicate(zxid)
	updated.childCount++
	updated.stat.Cversion = newCversion
	updated.stat.Pzxid = zxid
	if err := p.recordChange(updated, digestUpdate, parentPath); err != nil {
		return err
	}
	created := newChangeRecord(changeRecord{zxid: zxid, path: args.path, acl: acl, data: args.data}, stat)
	if err := p.recordChange(created, digestAdd, args.path); err != nil {
		return err
	}
	r.digest = txnDigest(created.digest.tree)
	return nil
}

// recordChange precalculates a change's digests and adds it.
func (p *Preparer) recordChange(c *changeRecord, change digestChange, path string) error {
	digest, err := p.precalculate(change, path, c.data, c.stat)
	if err != nil {
		return err
	}
	c.digest = digest
	p.addChangeRecord(c)
	return nil
}

// recordDelete adds the change records of deleting path: its parent with
// one child fewer and a new pzxid, and the deletion itself.
func (p *Preparer) recordDelete(r *pending, path, parentPath string, parent *changeRecord) error {
	zxid := r.header.Zxid
	updated := parent.duplicate(zxid)
	updated.childCount--
	updated.stat.Pzxid = zxid
	if err := p.recordChange(updated, digestUpdate, parentPath); err != nil {
		return err
	}
	deleted := &changeRecord{zxid: zxid, path: path, childCount: -1}
	if err := p.recordChange(deleted, digestRemove, path); err != nil {
		return err
	}
	r.digest = txnDigest(deleted.digest.tree)
	return nil
}

// prepareDeleteContainer is the deleteContainer case, which the leader's
// ContainerManager issues: no session or ACL check, NotEmpty if the node has
// children, and BadVersion if it is a session's ephemeral; a persistent
// node passes.
func (p *Preparer) prepareDeleteContainer(r *pending, body proto.Record) error {
	b, err := bodyAs[*proto.DeleteRequest](body, proto.OpDeleteContainer)
	if err != nil {
		return err
	}
	parentPath, err := parentPathAndValidate(b.Path)
	if err != nil {
		return err
	}
	record, err := p.recordForPath(b.Path)
	if err != nil {
		return err
	}
	if record.childCount > 0 {
		return proto.NotEmpty
	}
	kind, err := p.tree.kind(record.stat.EphemeralOwner)
	if err != nil {
		return fmt.Errorf("%w: %v", errJavaRuntime, err)
	}
	if kind == KindNormal {
		return proto.BadVersion
	}
	parent, err := p.recordForPath(parentPath)
	if err != nil {
		return err
	}
	r.txn = &proto.DeleteTxn{Path: b.Path}
	return p.recordDelete(r, b.Path, parentPath, parent)
}

// prepareDelete is the delete case: session, path shape (special paths
// refused), parent, DELETE permission on the parent, node, version, and no
// children.
func (p *Preparer) prepareDelete(r *pending, body proto.Record) error {
	if err := p.checkSession(r); err != nil {
		return err
	}
	b, err := bodyAs[*proto.DeleteRequest](body, proto.OpDelete)
	if err != nil {
		return err
	}
	parentPath, err := parentPathAndValidate(b.Path)
	if err != nil {
		return err
	}
	parent, err := p.recordForPath(parentPath)
	if err != nil {
		return err
	}
	if err := CheckACL(parent.acl, proto.PermDelete, r.req.Auth); err != nil {
		return err
	}
	record, err := p.recordForPath(b.Path)
	if err != nil {
		return err
	}
	if _, err := checkAndIncVersion(record.stat.Version, b.Version); err != nil {
		return err
	}
	if record.childCount > 0 {
		return proto.NotEmpty
	}
	r.txn = &proto.DeleteTxn{Path: b.Path}
	return p.recordDelete(r, b.Path, parentPath, parent)
}

// prepareSetData is the setData case: session, path, node, WRITE
// permission, version.
func (p *Preparer) prepareSetData(r *pending, body proto.Record) error {
	if err := p.checkSession(r); err != nil {
		return err
	}
	b, err := bodyAs[*proto.SetDataRequest](body, proto.OpSetData)
	if err != nil {
		return err
	}
	record, version, err := p.versionedRecord(r, b.Path, proto.PermWrite, b.Version)
	if err != nil {
		return err
	}
	r.txn = &proto.SetDataTxn{Path: b.Path, Data: b.Data, Version: version}
	updated := record.duplicate(r.header.Zxid)
	updated.stat.Version = version
	updated.stat.Mtime = r.header.Time
	updated.stat.Mzxid = r.header.Zxid
	updated.data = b.Data
	if err := p.recordChange(updated, digestUpdate, b.Path); err != nil {
		return err
	}
	r.digest = txnDigest(updated.digest.tree)
	return nil
}

// prepareSetACL is the setACL case: session, path, ACL, node, ADMIN
// permission, aversion. As in Java the change record keeps the old ACL (only
// its aversion changes), so requests prepared before this txn is applied are
// still checked against the old ACL.
func (p *Preparer) prepareSetACL(r *pending, body proto.Record) error {
	if err := p.checkSession(r); err != nil {
		return err
	}
	b, err := bodyAs[*proto.SetACLRequest](body, proto.OpSetACL)
	if err != nil {
		return err
	}
	if err := validatePath(b.Path); err != nil {
		return err
	}
	acl, err := FixupACL(r.req.Auth, b.ACL)
	if err != nil {
		return err
	}
	record, err := p.recordForPath(b.Path)
	if err != nil {
		return err
	}
	if err := CheckACL(record.acl, proto.PermAdmin, r.req.Auth); err != nil {
		return err
	}
	version, err := checkAndIncVersion(record.stat.Aversion, b.Version)
	if err != nil {
		return err
	}
	r.txn = &proto.SetACLTxn{Path: b.Path, ACL: acl, Version: version}
	updated := record.duplicate(r.header.Zxid)
	updated.stat.Aversion = version
	if err := p.recordChange(updated, digestUpdate, b.Path); err != nil {
		return err
	}
	r.digest = txnDigest(updated.digest.tree)
	return nil
}

// prepareCheck is the check case: session, path, node, READ permission,
// version. It records no change.
func (p *Preparer) prepareCheck(r *pending, body proto.Record) error {
	if err := p.checkSession(r); err != nil {
		return err
	}
	b, err := bodyAs[*proto.CheckVersionRequest](body, proto.OpCheck)
	if err != nil {
		return err
	}
	_, version, err := p.versionedRecord(r, b.Path, proto.PermRead, b.Version)
	if err != nil {
		return err
	}
	r.txn = &proto.CheckVersionTxn{Path: b.Path, Version: version}
	return nil
}

// prepareCreateSession is the createSession case: the txn, then the session
// tracked and its owner set.
func (p *Preparer) prepareCreateSession(r *pending) error {
	r.txn = &proto.CreateSessionTxn{TimeoutMilliseconds: r.req.SessionTimeoutMilliseconds}
	p.sessions.TrackSession(r.req.SessionID, r.req.SessionTimeoutMilliseconds)
	return sessionError("SetOwner", p.sessions.SetOwner(r.req.SessionID, r.req.Owner))
}

// prepareCloseSession is the closeSession case. It lists the session's
// ephemerals as they will be once outstanding changes apply (deletions
// removed, pending ephemeral creates added), in the order of Java's HashSet
// (a clone of the tree's set, edited), records each deletion (with a parent record that only moves
// pzxid, for the digest; as in Java its child count is not lowered), and
// marks the session closing. No session check: the expirer issues this
// request without owning the session.
func (p *Preparer) prepareCloseSession(r *pending) error {
	session := r.req.SessionID
	paths := p.tree.ephemerals[session].clone()
	for _, c := range p.changes {
		if c.stat == nil {
			paths.remove(c.path)
		} else if c.stat.EphemeralOwner == session {
			paths.add(c.path)
		}
	}
	list := paths.keys()
	zxid := r.header.Zxid
	for _, path := range list {
		parentPath, err := parentPathAndValidate(path)
		if err != nil {
			return err
		}
		parent, err := p.recordForPath(parentPath)
		if err != nil {
			return err
		}
		updated := parent.duplicate(zxid)
		updated.stat.Pzxid = zxid
		if err := p.recordChange(updated, digestUpdate, parentPath); err != nil {
			return err
		}
		if err := p.recordChange(&changeRecord{zxid: zxid, path: path}, digestRemove, path); err != nil {
			return err
		}
	}
	r.txn = &proto.CloseSessionTxn{PathsToDelete: append([]string{}, list...)}
	p.sessions.SetSessionClosing(session)
	return nil
}

// versionedRecord is what setData and check share, in Java's order: the path is valid, the node
// exists (as its pending change record), the connection holds perm on it, and the expected
// version matches. It returns the record and the version the txn carries.
func (p *Preparer) versionedRecord(r *pending, path string, perm proto.Perm, expected int32) (*changeRecord, int32, error) {
	if err := validatePath(path); err != nil {
		return nil, 0, err
	}
	record, err := p.recordForPath(path)
	if err != nil {
		return nil, 0, err
	}
	if err := CheckACL(record.acl, perm, r.req.Auth); err != nil {
		return nil, 0, err
	}
	version, err := checkAndIncVersion(record.stat.Version, expected)
	if err != nil {
		return nil, 0, err
	}
	return record, version, nil
}
