package client

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// This file is the asynchronous API of ZooKeeper.java. Each call validates its arguments as Java does
// before queueing (a refusal is a returned error, and nothing is sent or called back), then queues
// the request; the callback runs exactly once, later, from the client's event delivery. A nil
// callback is allowed: the request is sent and its outcome ignored.

// maxTTLMilliseconds is EphemeralType.TTL.maxValue(): 40 bits of milliseconds.
const maxTTLMilliseconds = 1<<40 - 1

// InvalidOpsError is how a multi whose ops Java's validation refuses is reported. Java's asynchronous
// multi calls back at once with BADARGUMENTS and these per-op results (BADARGUMENTS for each
// refused op, RUNTIMEINCONSISTENCY for the others); here the call returns this error instead, and
// nothing is sent. It wraps the first op's cause (ErrInvalidPath or ErrInvalidArgument).
type InvalidOpsError struct {
	Results []OpResult
	Cause   error
}

func (e *InvalidOpsError) Error() string {
	return "client: multi refused before sending: " + e.Cause.Error()
}

func (e *InvalidOpsError) Unwrap() error { return e.Cause }

func validatePath(path string) error {
	if err := proto.ValidatePath(path); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidPath, err)
	}
	return nil
}

// checkPath is PathUtils.validatePath for a Java client; go-zookeeper's own check is left to the
// caller (see GoZookeeper).
func (c *Client) checkPath(path string) error {
	if c.goZookeeper() {
		return nil
	}
	return validatePath(path)
}

// checkCreate validates a create as the emulated library does: go-zookeeper only parses the mode.
func (c *Client) checkCreate(path string, mode proto.CreateMode, ttl int64) error {
	if c.goZookeeper() {
		return checkCreateMode(mode)
	}
	return validateCreate(path, mode, ttl)
}

// checkCreateMode is CreateMode.fromFlag, and go-zookeeper's parseCreateMode, which accepts the same
// seven modes.
func checkCreateMode(mode proto.CreateMode) error {
	if _, err := proto.CreateModeFromFlag(int32(mode)); err != nil {
		// Not %w: proto's error wraps BadArguments, and a local refusal must carry no server code.
		return fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	return nil
}

// validateCreate is PathUtils.validatePath(path, mode.isSequential()) followed by
// EphemeralType.validateTTL(mode, ttl), with ttl -1 for a create without one.
func validateCreate(path string, mode proto.CreateMode, ttl int64) error {
	if err := checkCreateMode(mode); err != nil {
		return err
	}
	validate := proto.ValidatePath
	if mode.IsSequential() {
		validate = proto.ValidateSequentialPath
	}
	if err := validate(path); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidPath, err)
	}
	switch {
	case mode.IsTTL() && (ttl <= 0 || ttl > maxTTLMilliseconds):
		return fmt.Errorf("%w: ttl must be positive and cannot be larger than: %d", ErrInvalidArgument, int64(maxTTLMilliseconds))
	case !mode.IsTTL() && ttl >= 0:
		return fmt.Errorf("%w: ttl not valid for mode: %v", ErrInvalidArgument, mode)
	}
	return nil
}

// submit queues a request packet built by an API call.
func (c *Client) submit(p *packet) error {
	if c.crashed() {
		return ErrCrashed
	}
	p.hasHeader, p.hasReply = true, true
	c.enter()
	err := c.queuePacket(p)
	c.leaveAPI()
	return err
}

func watchOf(w Watcher, kind watchKind, path string) *watchRegistration {
	if w == nil {
		return nil
	}
	return &watchRegistration{watcher: w, path: path, kind: kind}
}

// Create creates a node, as the asynchronous create with a Create2Callback does: sent as create2
// (createContainer for a container), answered with the path and the Stat. TTL modes need CreateTTL.
// data and acl are copied. (go-zookeeper: create, no Stat; see GoZookeeper.)
func (c *Client) Create(path string, data []byte, acl []proto.ACL, mode proto.CreateMode, cb func(CreateResult)) error {
	return c.CreateTTL(path, data, acl, mode, -1, cb)
}

// CreateTTL is Create with a time to live in milliseconds, sent as createTTL for a TTL mode. A
// negative ttl with another mode is a plain Create.
func (c *Client) CreateTTL(path string, data []byte, acl []proto.ACL, mode proto.CreateMode, ttl int64, cb func(CreateResult)) error {
	return c.create(path, data, acl, mode, ttl, cb, nil)
}

// CreateWith is Create with a callback that is a value with a method rather than a function, so
// that a request in flight holds no closure and a world holding the client can be copied
// (package modelcheck). The calls, packets and deliveries are Create's.
func (c *Client) CreateWith(path string, data []byte, acl []proto.ACL, mode proto.CreateMode, cb CreateCallback) error {
	return c.create(path, data, acl, mode, -1, nil, cb)
}

func (c *Client) create(path string, data []byte, acl []proto.ACL, mode proto.CreateMode, ttl int64, cb func(CreateResult), typed CreateCallback) error {
	if err := c.checkCreate(path, mode, ttl); err != nil {
		return err
	}
	if c.goZookeeper() {
		p := goZookeeperCreate(path, slices.Clone(data), slices.Clone(acl), mode, ttl, cb)
		if typed != nil {
			p.sink = createSink{cb: typed, withStat: false}
		}
		return c.submit(p)
	}
	p := &packet{deliver: deliverCreate(cb, true)}
	if typed != nil {
		p.sink = createSink{cb: typed, withStat: true}
	}
	switch {
	case mode.IsTTL():
		p.header.Type = proto.OpCreateTTL
		p.request = &proto.CreateTTLRequest{Path: path, Data: slices.Clone(data), ACL: slices.Clone(acl), Flags: mode, TTL: ttl}
	case mode.IsContainer():
		p.header.Type = proto.OpCreateContainer
	default:
		p.header.Type = proto.OpCreate2
	}
	if p.request == nil {
		p.request = &proto.CreateRequest{Path: path, Data: slices.Clone(data), ACL: slices.Clone(acl), Flags: mode}
	}
	return c.submit(p)
}

// Delete deletes a node if its version matches (-1: any).
func (c *Client) Delete(path string, version int32, cb func(Result)) error {
	if err := c.checkPath(path); err != nil {
		return err
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: proto.OpDelete},
		request: &proto.DeleteRequest{Path: path, Version: version}, deliver: deliverResult(cb)})
}

// Exists reads a node's Stat. A non-nil watcher (the default watcher for Java's watch=true) is
// registered as a data watch if the node exists and as an exist watch if the server answers NONODE.
func (c *Client) Exists(path string, watcher Watcher, cb func(StatResult)) error {
	return c.exists(path, watcher, deliverStat(cb), nil)
}

// ExistsWith is Exists with a callback that is a value with a method (see CreateWith).
func (c *Client) ExistsWith(path string, watcher Watcher, cb StatCallback) error {
	var sink resultSink
	if cb != nil {
		sink = statSink{cb: cb}
	}
	return c.exists(path, watcher, nil, sink)
}

func (c *Client) exists(path string, watcher Watcher, deliver func(*packet), sink resultSink) error {
	if err := c.checkRead(path, watcher); err != nil {
		return err
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: proto.OpExists},
		request: &proto.ExistsRequest{Path: path, Watch: watcher != nil},
		watch:   watchOf(watcher, watchExist, path), deliver: deliver, sink: sink})
}

// GetData reads a node's data and Stat; a non-nil watcher is registered as a data watch on success.
func (c *Client) GetData(path string, watcher Watcher, cb func(DataResult)) error {
	if err := c.checkRead(path, watcher); err != nil {
		return err
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: proto.OpGetData},
		request: &proto.GetDataRequest{Path: path, Watch: watcher != nil},
		watch:   watchOf(watcher, watchData, path), deliver: deliverData(cb)})
}

// GetChildren reads a node's children and Stat (getChildren2); a non-nil watcher is registered as a
// child watch on success.
func (c *Client) GetChildren(path string, watcher Watcher, cb func(ChildrenResult)) error {
	if err := c.checkRead(path, watcher); err != nil {
		return err
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: proto.OpGetChildren2},
		request: &proto.GetChildren2Request{Path: path, Watch: watcher != nil},
		watch:   watchOf(watcher, watchChild, path), deliver: deliverChildren(cb)})
}

func (c *Client) checkRead(path string, watcher Watcher) error {
	if err := c.checkPath(path); err != nil {
		return err
	}
	return checkWatcher(watcher, false)
}

// SetData sets a node's data if its version matches (-1: any). data is copied.
func (c *Client) SetData(path string, data []byte, version int32, cb func(StatResult)) error {
	if err := c.checkPath(path); err != nil {
		return err
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: proto.OpSetData},
		request: &proto.SetDataRequest{Path: path, Data: slices.Clone(data), Version: version}, deliver: deliverStat(cb)})
}

// GetACL reads a node's ACL and Stat.
func (c *Client) GetACL(path string, cb func(ACLResult)) error {
	if err := c.checkPath(path); err != nil {
		return err
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: proto.OpGetACL},
		request: &proto.GetACLRequest{Path: path}, deliver: deliverACL(cb)})
}

// SetACL sets a node's ACL if its ACL version matches (-1: any). The asynchronous Java call does not
// check the list; the server answers INVALIDACL for an empty one.
func (c *Client) SetACL(path string, acl []proto.ACL, version int32, cb func(StatResult)) error {
	if err := c.checkPath(path); err != nil {
		return err
	}
	acl = slices.Clone(acl)
	if c.goZookeeper() {
		acl = nonNilACL(acl)
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: proto.OpSetACL},
		request: &proto.SetACLRequest{Path: path, ACL: acl, Version: version}, deliver: deliverStat(cb)})
}

// Sync asks the server to catch up with the leader before answering.
func (c *Client) Sync(path string, cb func(Result)) error {
	if err := c.checkPath(path); err != nil {
		return err
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: proto.OpSync},
		request: &proto.SyncRequest{Path: path}, deliver: deliverResult(cb)})
}

// Multi sends ops as one multi (writes) or multiRead (reads). Java's validation runs first: an
// invalid op gives an *InvalidOpsError, mixing reads and writes ErrInvalidArgument. An empty multi
// sends nothing and calls back OK with no results. (go-zookeeper differs; see GoZookeeper.)
func (c *Client) Multi(ops []Op, cb func(MultiResult)) error {
	if c.goZookeeper() {
		return c.goZookeeperMulti(ops, cb)
	}
	if err := validateOps(ops); err != nil {
		return err
	}
	if c.crashed() {
		return ErrCrashed
	}
	if len(ops) == 0 {
		c.enter()
		if cb != nil {
			c.queueCallback(func() { cb(MultiResult{Err: proto.OK, Results: []OpResult{}}) })
		}
		c.leaveAPI()
		return nil
	}
	request := &proto.MultiRequest{Ops: make([]proto.MultiOp, 0, len(ops))}
	for _, op := range ops {
		request.Ops = append(request.Ops, op.record())
	}
	typ := proto.OpMulti
	if ops[0].isRead() {
		typ = proto.OpMultiRead
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: typ}, request: request, deliver: deliverMulti(cb, false)})
}

// validateOps is ZooKeeper's private validatePath(Iterable<Op>) followed by the check in
// MultiOperationRecord that all ops are reads or all are writes.
func validateOps(ops []Op) error {
	results := make([]OpResult, len(ops))
	var cause error
	for i, op := range ops {
		results[i] = OpResult{Type: proto.OpError, Err: proto.RuntimeInconsistency}
		if err := op.validate(); err != nil {
			results[i].Err = proto.BadArguments
			if cause == nil {
				cause = err
			}
		}
	}
	if cause != nil {
		return &InvalidOpsError{Results: results, Cause: cause}
	}
	for _, op := range ops {
		if op.isRead() != ops[0].isRead() {
			return fmt.Errorf("%w: Mixing read and write operations (transactions) is not allowed in a multi request.", ErrInvalidArgument)
		}
	}
	return nil
}

// AddWatch sets a persistent (or persistent recursive) watch on path. It is registered when the
// server answers OK or NONODE, as AddWatchRegistration does.
func (c *Client) AddWatch(path string, watcher Watcher, mode proto.AddWatchMode, cb func(Result)) error {
	if err := c.unsupported("addWatch"); err != nil {
		return err
	}
	if err := c.checkPath(path); err != nil {
		return err
	}
	if err := checkWatcher(watcher, true); err != nil {
		return err
	}
	kind := watchPersistent
	switch mode {
	case proto.AddWatchPersistent:
	case proto.AddWatchPersistentRecursive:
		kind = watchRecursive
	default:
		return fmt.Errorf("%w: Mode not supported: %d", ErrInvalidArgument, mode)
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: proto.OpAddWatch},
		request: &proto.AddWatchRequest{Path: path, Mode: mode},
		watch:   &watchRegistration{watcher: watcher, path: path, kind: kind}, deliver: deliverResult(cb)})
}

// RemoveWatches removes one watcher of the given type from path (checkWatches on the wire). With
// local set, the watcher is removed here even if the server cannot be reached. The watcher hears a
// DataWatchRemoved, ChildWatchRemoved or PersistentWatchRemoved event; a watcher that is not
// registered makes the call finish with NOWATCHER.
func (c *Client) RemoveWatches(path string, watcher Watcher, watcherType proto.WatcherType, local bool, cb func(Result)) error {
	if err := checkWatcher(watcher, true); err != nil {
		return err
	}
	return c.removeWatches(proto.OpCheckWatches, path, watcher, watcherType, local, cb)
}

// RemoveAllWatches removes every watcher of the given type from path (removeWatches on the wire).
func (c *Client) RemoveAllWatches(path string, watcherType proto.WatcherType, local bool, cb func(Result)) error {
	return c.removeWatches(proto.OpRemoveWatches, path, nil, watcherType, local, cb)
}

func (c *Client) removeWatches(op proto.OpCode, path string, watcher Watcher, watcherType proto.WatcherType, local bool, cb func(Result)) error {
	if err := c.unsupported(op.String()); err != nil {
		return err
	}
	if err := c.checkPath(path); err != nil {
		return err
	}
	if watcherType < proto.WatcherChildren || watcherType > proto.WatcherAny {
		return fmt.Errorf("%w: Invalid integer value for conversion to WatcherType: %d", ErrInvalidArgument, watcherType)
	}
	var request proto.Record = &proto.CheckWatchesRequest{Path: path, Type: watcherType}
	if op == proto.OpRemoveWatches {
		request = &proto.RemoveWatchesRequest{Path: path, Type: watcherType}
	}
	return c.submit(&packet{header: proto.RequestHeader{Type: op}, request: request,
		unwatch: &watchDeregistration{path: path, watcher: watcher, watcherType: watcherType, local: local},
		deliver: deliverResult(cb)})
}

// AddAuth adds credentials to the session (Java's addAuthInfo). They are sent now (xid -4) and again
// first thing after every reconnect. A server that refuses them answers AUTHFAILED and closes the
// connection; the client then goes to AUTH_FAILED for good, its watchers hear AuthFailed, and every
// request fails with AUTHFAILED. Java gives no callback for an auth packet; cb, if not nil, is an
// addition of this library: it gets the reply to this packet, or the code a request would get if the
// packet is lost with its connection (no callback reports the re-sent credentials). go-zookeeper
// differs; see GoZookeeper.
func (c *Client) AddAuth(scheme string, auth []byte, cb func(Result)) error {
	if c.crashed() {
		return ErrCrashed
	}
	c.enter()
	defer c.leaveAPI()
	if c.goZookeeper() {
		// An ordinary request; the credential is remembered when the server accepts it.
		return c.queuePacket(goZookeeperAuthPacket(authData{scheme: scheme, data: slices.Clone(auth)}, cb, false))
	}
	if !c.state.IsAlive() {
		// addAuthInfo returns without doing anything.
		if cb != nil {
			p := &packet{authDone: cb}
			c.conLossPacket(p)
		}
		return nil
	}
	a := authData{scheme: scheme, data: slices.Clone(auth)}
	c.auth = append(c.auth, a)
	return c.queuePacket(c.authPacket(a, cb))
}

// Close closes the session, as ZooKeeper.close() does: a closeSession request, then, once it is
// answered or lost, the connection is closed and the client is dead (state CLOSED). cb gets the
// closeSession's outcome after the Closed event. Closing a client that is already dead calls back
// OK, as Java's close() returns at once; closing one that is already closing calls back when the
// first close completes.
func (c *Client) Close(cb func(Result)) error {
	if c.crashed() {
		return ErrCrashed
	}
	c.enter()
	defer c.leaveAPI()
	switch {
	case c.closeWaiters != nil:
		// ZooKeeper.close() is synchronized: a second caller waits for the first.
		c.closeWaiters = append(c.closeWaiters, cbOrNop(cb))
		return nil
	case !c.state.IsAlive():
		if cb != nil {
			c.queueCallback(func() { cb(Result{Err: proto.OK}) })
		}
		return nil
	}
	c.closeWaiters = []func(Result){cbOrNop(cb)}
	p := &packet{header: proto.RequestHeader{Type: proto.OpCloseSession}, hasHeader: true, hasReply: true, onFinish: c.closeSessionFinished}
	if err := c.queuePacket(p); err != nil {
		c.closeWaiters = nil
		return err
	}
	return nil
}

func cbOrNop(cb func(Result)) func(Result) {
	if cb == nil {
		return func(Result) {}
	}
	return cb
}

// closeSessionFinished is the application thread of close() waking up: ClientCnxn.disconnect sets
// the state to CLOSED at once, and the SendThread leaves its loop at its next turn.
func (c *Client) closeSessionFinished(p *packet) {
	c.closeResult = resultOf(p)
	c.disconnecting = true
	c.setState(StateClosed)
}
