package lockmodel

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// This file holds the session's ZooKeeper operations: single requests that trace themselves and
// keep the watch dispatch in step with the client's watch tables, the retry loop around them, and
// the two composite operations the recipes share: the protected create and the guaranteed delete.

// watchTable names the client's watch tables that a recipe watch can land in.
type watchTable uint8

const (
	tableData  watchTable = iota // getData, or exists of an existing node
	tableExist                   // exists of a missing node
	tableChild                   // getChildren
)

// watchTarget is a recipe that waits for watch events. Every event of a watch it set reaches it, and
// so does every connection state change while it has one set, as a Java watcher hears them.
type watchTarget interface {
	watchEvent(e client.Event)
}

type registration struct {
	path   string
	table  watchTable
	target watchTarget
}

// dispatcher is the one watcher a session registers with the client.
type dispatcher struct{ s *Session }

// Process implements client.Watcher.
func (d *dispatcher) Process(e client.Event) { d.s.watchEvent(e) }

// register records that target's watch on path landed in table, once per target, path and table,
// as the client's tables keep one entry per watcher.
func (s *Session) register(path string, table watchTable, target watchTarget) {
	r := registration{path: path, table: table, target: target}
	if slices.Contains(s.watches, r) {
		return
	}
	if len(s.watches) >= maxRegistrations {
		panic(fmt.Sprintf("lockmodel: %s holds %d watch registrations: a recipe leaks them", s.cfg.Name, len(s.watches)))
	}
	s.watches = append(s.watches, r)
}

// tablesOf is ZKWatchManager.materialize: the tables an event of this type fires.
func tablesOf(t proto.EventType) []watchTable {
	switch t {
	case proto.EventNodeDataChanged, proto.EventNodeCreated:
		return []watchTable{tableData, tableExist}
	case proto.EventNodeChildrenChanged:
		return []watchTable{tableChild}
	case proto.EventNodeDeleted:
		return []watchTable{tableData, tableExist, tableChild}
	}
	return nil
}

// watchEvent delivers an event of the session's watcher to the recipes it concerns.
func (s *Session) watchEvent(e client.Event) {
	var targets []watchTarget
	if e.Type == proto.EventNone {
		// A state change reaches every watcher with a watch set, which stays set (the client
		// re-registers it after a reconnect); Curator's lock loop wakes up on it.
		for _, r := range s.watches {
			if !slices.Contains(targets, r.target) {
				targets = append(targets, r.target)
			}
		}
	} else {
		if s.cfg.Tracer != nil {
			s.cfg.Tracer.WatchEvent(s.c.SessionID(), e)
		}
		tables := tablesOf(e.Type)
		kept := s.watches[:0]
		for _, r := range s.watches {
			if r.path == e.Path && slices.Contains(tables, r.table) {
				if !slices.Contains(targets, r.target) {
					targets = append(targets, r.target)
				}
				continue
			}
			kept = append(kept, r)
		}
		s.watches = kept
	}
	for _, t := range targets {
		t.watchEvent(e)
	}
}

// forget drops target's registrations (a closed recipe). The client keeps its own entries, whose
// events then reach no one, as a Java watcher that ignores them.
func (s *Session) forget(target watchTarget) {
	s.watches = slices.DeleteFunc(s.watches, func(r registration) bool { return r.target == target })
}

// trace tells the tracer a request is about to be sent and returns what hears its outcome.
func (s *Session) trace(r Request) func(Reply) {
	if s.cfg.Tracer == nil {
		return func(Reply) {}
	}
	return s.cfg.Tracer.Request(s.c.SessionID(), r)
}

// refused handles a request the client refused before sending: the tracer hears it, and the
// operation fails later (never inside the call that issued it) with the code a Java caller would
// see for it.
func (s *Session) refused(err error, done func(Reply), fail func(proto.Code)) {
	done(Reply{Local: err})
	code := proto.BadArguments
	switch {
	case errors.Is(err, client.ErrCrashed):
		return // The process is gone, and with it the recipe.
	case errors.Is(err, client.ErrQueueFull):
		code = proto.ConnectionLoss
	}
	s.later(0, func() { fail(code) })
}

func (s *Session) watcherFor(target watchTarget) client.Watcher {
	if target == nil {
		return nil
	}
	return s.dispatch
}

func (s *Session) create(path string, data []byte, mode proto.CreateMode, cb func(client.CreateResult)) {
	done := s.trace(Request{Kind: proto.OpCreate, Path: path, Data: data, Mode: mode})
	err := s.c.Create(path, data, proto.OpenACLUnsafe, mode, func(r client.CreateResult) {
		stat := statIf(r.Err, r.Stat)
		done(Reply{Err: r.Err, Zxid: r.Zxid, Xid: r.Xid, Session: r.Session, Path: r.Path, Stat: stat})
		cb(r)
	})
	if err != nil {
		s.refused(err, done, func(c proto.Code) { cb(client.CreateResult{Err: c}) })
	}
}

func (s *Session) delete(path string, cb func(client.Result)) {
	done := s.trace(Request{Kind: proto.OpDelete, Path: path, Version: -1})
	err := s.c.Delete(path, -1, func(r client.Result) {
		done(Reply{Err: r.Err, Zxid: r.Zxid, Xid: r.Xid, Session: r.Session})
		cb(r)
	})
	if err != nil {
		s.refused(err, done, func(c proto.Code) { cb(client.Result{Err: c}) })
	}
}

func (s *Session) sync(path string, cb func(client.Result)) {
	done := s.trace(Request{Kind: proto.OpSync, Path: path})
	err := s.c.Sync(path, func(r client.Result) {
		done(Reply{Err: r.Err, Zxid: r.Zxid, Xid: r.Xid, Session: r.Session})
		cb(r)
	})
	if err != nil {
		s.refused(err, done, func(c proto.Code) { cb(client.Result{Err: c}) })
	}
}

func (s *Session) getData(path string, target watchTarget, cb func(client.DataResult)) {
	done := s.trace(Request{Kind: proto.OpGetData, Path: path, Watch: target != nil})
	err := s.c.GetData(path, s.watcherFor(target), func(r client.DataResult) {
		done(Reply{Err: r.Err, Zxid: r.Zxid, Xid: r.Xid, Session: r.Session, Data: r.Data, Stat: statIf(r.Err, r.Stat)})
		if target != nil && r.Err == proto.OK {
			s.register(path, tableData, target)
		}
		cb(r)
	})
	if err != nil {
		s.refused(err, done, func(c proto.Code) { cb(client.DataResult{Err: c}) })
	}
}

func (s *Session) exists(path string, target watchTarget, cb func(client.StatResult)) {
	done := s.trace(Request{Kind: proto.OpExists, Path: path, Watch: target != nil})
	err := s.c.Exists(path, s.watcherFor(target), func(r client.StatResult) {
		done(Reply{Err: r.Err, Zxid: r.Zxid, Xid: r.Xid, Session: r.Session, Stat: statIf(r.Err, r.Stat)})
		switch {
		case target == nil:
		case r.Err == proto.OK:
			s.register(path, tableData, target)
		case r.Err == proto.NoNode:
			s.register(path, tableExist, target)
		}
		cb(r)
	})
	if err != nil {
		s.refused(err, done, func(c proto.Code) { cb(client.StatResult{Err: c}) })
	}
}

func (s *Session) getChildren(path string, target watchTarget, cb func(client.ChildrenResult)) {
	done := s.trace(Request{Kind: proto.OpGetChildren, Path: path, Watch: target != nil})
	err := s.c.GetChildren(path, s.watcherFor(target), func(r client.ChildrenResult) {
		done(Reply{Err: r.Err, Zxid: r.Zxid, Xid: r.Xid, Session: r.Session, Children: r.Children, Stat: statIf(r.Err, r.Stat)})
		if target != nil && r.Err == proto.OK {
			s.register(path, tableChild, target)
		}
		cb(r)
	})
	if err != nil {
		s.refused(err, done, func(c proto.Code) { cb(client.ChildrenResult{Err: c}) })
	}
}

func statIf(code proto.Code, stat proto.Stat) *proto.Stat {
	if code != proto.OK {
		return nil
	}
	return &stat
}

// retrying is RetryLoop.callWithRetry, the retry loop of a foreground operation: it runs attempt
// (given the number of retries so far) once the session is connected or the connection timeout has
// passed, and again after the policy's sleep while the result's code is retryable, then hands the
// last result to done. Only the first attempt waits for a connection, as callWithRetry calls
// CuratorZookeeperClient.internalBlockUntilConnectedOrTimedOut once, before its loop: a retry goes
// to the ZooKeeper client at once, connected or not, and a client that is not connected queues it
// and fails it with CONNECTIONLOSS when its next connection attempt fails (ClientCnxn.cleanup), so
// that a long disconnection uses up the policy's retries.
func retrying[R any](s *Session, code func(R) proto.Code, attempt func(count int, done func(R)), done func(R)) {
	retryingOn(s, new(retryLoop), code, attempt, done)
}

// retryLoop is the state of one of Curator's RetryLoops: how many retries its policy has allowed,
// and whether a call marked it complete. Since Curator 5.0 (CURATOR-559) a foreground call nested
// in another's retry loop on the same thread, such as the protected-mode search inside a create's
// retry, runs on the outer call's loop (ThreadLocalRetryLoop), so that the two share one policy's
// retries.
type retryLoop struct {
	count    int
	complete bool
}

// retryingOn is retrying on a given retry loop, which nested calls share.
func retryingOn[R any](s *Session, loop *retryLoop, code func(R) proto.Code, attempt func(count int, done func(R)), done func(R)) {
	var run func()
	run = func() {
		attempt(loop.count, func(r R) {
			if c := code(r); retryable(c) && s.state != StateLost {
				if d, ok := s.cfg.Retry.sleep(s.w, loop.count); ok {
					loop.count++
					s.later(d, run)
					return
				}
			}
			done(r)
		})
	}
	s.whenConnected(run)
}

// retryingInBackground is the retry loop of a background operation (CuratorFrameworkImpl's
// performBackgroundOperation and processBackgroundOperation): each attempt, the first and every
// retry, waits for a connection, but only until the connection timeout has passed since the
// operation began (OperationAndData.getElapsedTimeMs); an attempt that finds no connection after
// that is not sent but fails with CONNECTIONLOSS (lost), which goes through the retry policy like
// any other (CURATOR-52).
func retryingInBackground[R any](s *Session, code func(R) proto.Code, lost func(proto.Code) R, attempt func(count int, done func(R)), done func(R)) {
	deadline := s.w.Elapsed(s.node).Add(s.cfg.ConnectionTimeout)
	var run func(count int)
	run = func(count int) {
		s.whenConnectedWithin(deadline.Sub(s.w.Elapsed(s.node)), func() {
			finish := func(r R) {
				if c := code(r); retryable(c) && s.state != StateLost {
					if d, ok := s.cfg.Retry.sleep(s.w, count); ok {
						s.later(d, func() { run(count + 1) })
						return
					}
				}
				done(r)
			}
			if !s.state.IsConnected() && s.state != StateLost {
				finish(lost(proto.ConnectionLoss))
				return
			}
			attempt(count, finish)
		})
	}
	run(0)
}

func codeOfChildren(r client.ChildrenResult) proto.Code { return r.Err }
func codeOfData(r client.DataResult) proto.Code         { return r.Err }
func codeOfStat(r client.StatResult) proto.Code         { return r.Err }
func codeOfResult(r client.Result) proto.Code           { return r.Err }

// getChildrenRetrying is getChildren().forPath(path) (or usingWatcher) with the retry policy.
func (s *Session) getChildrenRetrying(path string, target watchTarget, done func(client.ChildrenResult)) {
	s.getChildrenOn(new(retryLoop), path, target, done)
}

// getChildrenOn is getChildrenRetrying on a retry loop that it shares with its caller.
func (s *Session) getChildrenOn(loop *retryLoop, path string, target watchTarget, done func(client.ChildrenResult)) {
	retryingOn(s, loop, codeOfChildren, func(_ int, cb func(client.ChildrenResult)) { s.getChildren(path, target, cb) }, done)
}

// getDataRetrying is getData().usingWatcher(target).forPath(path) with the retry policy.
func (s *Session) getDataRetrying(path string, target watchTarget, done func(client.DataResult)) {
	retrying(s, codeOfData, func(_ int, cb func(client.DataResult)) { s.getData(path, target, cb) }, done)
}

// existsRetrying is checkExists().forPath(path) with the retry policy.
func (s *Session) existsRetrying(path string, target watchTarget, done func(client.StatResult)) {
	retrying(s, codeOfStat, func(_ int, cb func(client.StatResult)) { s.exists(path, target, cb) }, done)
}

// getChildrenInBackground is getChildren().inBackground(callback).forPath(path) (or usingWatcher),
// with the retry policy of a background operation.
func (s *Session) getChildrenInBackground(path string, target watchTarget, done func(client.ChildrenResult)) {
	retryingInBackground(s, codeOfChildren, func(c proto.Code) client.ChildrenResult { return client.ChildrenResult{Err: c} },
		func(_ int, cb func(client.ChildrenResult)) { s.getChildren(path, target, cb) }, done)
}

// getDataInBackground is getData().inBackground(callback).forPath(path) (or usingWatcher), with the
// retry policy of a background operation.
func (s *Session) getDataInBackground(path string, target watchTarget, done func(client.DataResult)) {
	retryingInBackground(s, codeOfData, func(c proto.Code) client.DataResult { return client.DataResult{Err: c} },
		func(_ int, cb func(client.DataResult)) { s.getData(path, target, cb) }, done)
}

// existsInBackground is checkExists().inBackground(callback).forPath(path), with the retry policy
// of a background operation.
func (s *Session) existsInBackground(path string, target watchTarget, done func(client.StatResult)) {
	retryingInBackground(s, codeOfStat, func(c proto.Code) client.StatResult { return client.StatResult{Err: c} },
		func(_ int, cb func(client.StatResult)) { s.exists(path, target, cb) }, done)
}

// created is the outcome of a lock node's create: the node's path, its stat if the create's reply
// carried it (nil when a protected-mode search found it), and the code.
type created struct {
	path string
	stat *proto.Stat
	code proto.Code
	// null: the create returned null without an exception (BugNestedRetryNull).
	null bool
}

func codeOfCreated(r created) proto.Code { return r.code }

// createLockNode is CreateBuilderImpl's create for
// create().creatingParentContainersIfNeeded().withProtection().withMode(mode).forPath(path, data),
// in the foreground (pathInForeground, as LockInternals calls it) or, with background, as
// inBackground makes it (pathInBackground, as LeaderLatch calls it). The node's name gets a
// protected prefix with a fresh random id, and every attempt after the first looks among the
// parent's children for a node with that prefix, which a create whose reply was lost may have
// made. With BugUnprotectedCreate the name has no prefix and a retry creates again blindly.
//
// The two forms differ only when the create finds no parent. The foreground create makes the
// missing ancestors as containers (ZKPaths.mkdirs) and creates the node once more; if that create
// finds no parent either (the container manager deleted an empty container between the two), the
// NONODE goes to the caller, since RetryLoop does not retry it. The background create
// (backgroundCreateParentsThenNode) makes the ancestors, ignoring a retryable error, and queues
// the whole operation again, protected-mode search first, as often as it takes; an error of
// mkdirs that is not retryable goes to the callback (CURATOR-665).
//
// One deviation from Curator: the search syncs first. Curator lists the children straight away,
// from whatever server the client reconnected to, and that server may not have applied the lost
// create yet: a leader that proposed it and lost its quorum commits it only later. The search then
// misses it, the retry creates a second node, and the first becomes an orphan that blocks the queue
// for as long as the session lives (zabsim's sweeps found this). A leader answers a sync only after
// every proposal it had outstanding when the sync arrived, and a create that reaches a leader after
// the session moved to another server is refused with SESSIONMOVED, so a synced search sees every
// create of the session that can still commit. BugUnsyncedSearch restores Curator's search.
func (s *Session) createLockNode(path string, data []byte, mode proto.CreateMode, background bool, done func(created)) {
	parent := parentOf(path)
	protected := !s.cfg.Bugs.Has(BugUnprotectedCreate)
	target := path
	id := ""
	if protected {
		id = newProtectedID(s.w)
		target = joinPath(parent, protectedPrefix(id)+nodeName(path))
	}
	first, requeues := true, 0
	// The foreground create's retry loop, which its protected-mode searches share; a background
	// create's search runs on a loop of its own (findProtectedNodeInForeground, called from the
	// background thread).
	shared := new(retryLoop)
	var attempt func(count int, cb func(created))
	create := func(count int, cb func(created)) {
		if !background {
			s.createWithParents(target, data, mode, cb)
			return
		}
		s.createOrMkdirs(target, data, mode, true, cb, func() {
			requeues++
			if requeues > maxRequeues {
				panic(fmt.Sprintf("lockmodel: %s's background create of %s found no parent %d times", s.cfg.Name, target, requeues))
			}
			s.whenConnected(func() { attempt(count, cb) })
		})
	}
	attempt = func(count int, cb func(created)) {
		if first || !protected {
			first = false
			create(count, cb)
			return
		}
		loop := shared
		if background {
			loop = new(retryLoop)
		}
		s.findProtectedNode(loop, parent, id, func(found string, code proto.Code) {
			if code == proto.OK {
				loop.complete = true // The search's callWithRetry marked the shared loop complete.
			}
			switch {
			case code != proto.OK:
				cb(created{code: code})
			case found != "":
				cb(created{path: found, code: proto.OK})
			default:
				create(count, cb)
			}
		})
	}
	finish := func(r created) {
		if protected && r.code == proto.ConnectionLoss {
			// CreateBuilderImpl (CURATOR-45, CURATOR-79): the create may have made the node
			// after all; left alone it would be an orphan of this live session.
			s.findAndDeleteProtected(parent, id, 0)
		}
		done(r)
	}
	if background {
		retryingInBackground(s, codeOfCreated, func(c proto.Code) created { return created{code: c} }, attempt, finish)
		return
	}
	// pathInForeground's RetryLoop.callWithRetry, written out for BugNestedRetryNull: once a
	// protected-mode search has marked the shared loop complete, a retryable failure of the
	// create that follows it is taken (RetryLoopImpl.takeException sleeps and does not rethrow),
	// but shouldContinue is false, so callWithRetry returns the null result, without an
	// exception and so without the FindAndDeleteProtectedNodeInBackground that
	// protectedPathInForeground schedules for a CONNECTIONLOSS. Without the switch the loop goes
	// on as a loop whose nested call's completion is its own.
	var run func()
	run = func() {
		attempt(shared.count, func(r created) {
			if retryable(r.code) && s.state != StateLost {
				if d, ok := s.cfg.Retry.sleep(s.w, shared.count); ok {
					shared.count++
					if shared.complete && s.cfg.Bugs.Has(BugNestedRetryNull) {
						s.later(d, func() { done(created{code: proto.OK, null: true}) })
						return
					}
					s.later(d, run)
					return
				}
			}
			finish(r)
		})
	}
	s.whenConnected(run)
}

// findAndDeleteProtected is FindAndDeleteProtectedNodeInBackground: it lists the parent, and if a
// child carries the protected id of a create that ended in a connection loss, deletes it
// (guaranteed); an error runs it again later, since Curator re-queues it for as long as it fails.
// Like the protected-mode search (findProtectedNode) it syncs first unless BugUnsyncedSearch. A
// lost session needs no cleaning: its ephemeral nodes went with it.
func (s *Session) findAndDeleteProtected(parent, id string, round int) {
	s.whenConnected(func() {
		if s.state == StateLost || !s.alive() {
			return
		}
		s.findProtectedNode(new(retryLoop), parent, id, func(found string, code proto.Code) {
			switch {
			case code == proto.OK && found != "":
				s.deleteGuaranteed(found, nil)
			case code == proto.OK || code == proto.NoNode:
				// The create made nothing (or its parent is gone, and the node with it).
			case retryable(code) && s.state != StateLost && round+1 < maxBackgroundRuns:
				s.later(s.cfg.Retry.BaseSleep, func() { s.findAndDeleteProtected(parent, id, round+1) })
			}
		})
	})
}

// maxRequeues bounds how often a background create queues itself again after finding no parent.
// Curator has no bound; each round needs the container manager to delete the parent between
// mkdirs and the create, so a create that reaches the bound is stuck in a loop the model must
// report.
const maxRequeues = 1 << 12

// createWithParents is the create of CreateBuilderImpl.pathInForeground with
// creatingParentContainersIfNeeded: it creates path, and if the parent is missing, makes the
// missing ancestors as containers (ZKPaths.mkdirs) and creates path once more. A NONODE of that
// second create (the container manager deleted the new parent's empty container, or an ancestor,
// in between) is the result, as Curator throws it.
func (s *Session) createWithParents(path string, data []byte, mode proto.CreateMode, cb func(created)) {
	s.createOrMkdirs(path, data, mode, false, cb, func() {
		s.create(path, data, mode, func(r client.CreateResult) {
			cb(created{path: r.Path, stat: statIf(r.Err, r.Stat), code: r.Err})
		})
	})
}

// createOrMkdirs creates path and hands cb the outcome, unless the parent is missing: then it
// makes the missing ancestors with mkdirs and calls again, which goes on as the caller's form of
// the create does. An error of mkdirs goes to cb, except that with background a retryable one is
// swallowed and again is called anyway (the queued operation meets the connection problem
// itself), as backgroundCreateParentsThenNode does.
func (s *Session) createOrMkdirs(path string, data []byte, mode proto.CreateMode, background bool, cb func(created), again func()) {
	s.create(path, data, mode, func(r client.CreateResult) {
		if r.Err != proto.NoNode {
			cb(created{path: r.Path, stat: statIf(r.Err, r.Stat), code: r.Err})
			return
		}
		s.mkdirs(path, func(code proto.Code) {
			if code != proto.OK && !(background && retryable(code)) {
				cb(created{code: code})
				return
			}
			again()
		})
	})
}

// mkdirs is ZKPaths.mkdirs(zk, path, false, acl, true) as Curator 5.8 has it (CURATOR-715 and
// CURATOR-728): from path itself up towards the root it asks exists until it finds a node that
// exists (the root is taken to), then creates each missing node below that one down to path's
// parent (path itself is not made), root side first, as containers, ignoring NODEEXISTS: someone
// else made it since. Any other error of an exists or a create ends it with that code, as the
// KeeperException Curator lets through. Each node is created at most once: a container deleted
// again meanwhile is the caller's NONODE to handle.
func (s *Session) mkdirs(path string, done func(proto.Code)) {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	prefixes := make([]string, len(parts))
	for i := range parts {
		prefixes[i] = "/" + strings.Join(parts[:i+1], "/")
	}
	var create func(i int)
	create = func(i int) {
		if i >= len(prefixes)-1 {
			done(proto.OK)
			return
		}
		s.create(prefixes[i], nil, proto.Container, func(r client.CreateResult) {
			if r.Err != proto.OK && r.Err != proto.NodeExists {
				done(r.Err)
				return
			}
			create(i + 1)
		})
	}
	var find func(i int)
	find = func(i int) {
		if i < 0 {
			create(0)
			return
		}
		s.exists(prefixes[i], nil, func(r client.StatResult) {
			switch r.Err {
			case proto.OK:
				create(i + 1)
			case proto.NoNode:
				find(i - 1)
			default:
				done(r.Err)
			}
		})
	}
	find(len(prefixes) - 1)
}

// findProtectedNode is findProtectedNodeInForeground: the parent's children, with the retry policy,
// searched for the protected prefix, after a sync (see createLockNode). A missing parent finds
// nothing.
func (s *Session) findProtectedNode(loop *retryLoop, parent, id string, done func(found string, code proto.Code)) {
	if s.cfg.Bugs.Has(BugUnsyncedSearch) {
		s.searchChildren(loop, parent, id, done)
		return
	}
	s.syncOn(loop, parent, func(code proto.Code) {
		if code != proto.OK {
			done("", code)
			return
		}
		s.searchChildren(loop, parent, id, done)
	})
}

// syncRetrying syncs path's server with the leader, with the retry policy, and hands done OK or
// the code the policy gave up on (a missing path syncs as well as any). A read after it sees every
// write of this session that can still commit: the leader answers a sync only once the proposals
// it had when the sync came are committed, and a request the session's previous server forwards
// after the session moved is refused (SESSIONMOVED).
func (s *Session) syncRetrying(path string, done func(code proto.Code)) {
	s.syncOn(new(retryLoop), path, done)
}

// syncOn is syncRetrying on a retry loop that it shares with its caller.
func (s *Session) syncOn(loop *retryLoop, path string, done func(code proto.Code)) {
	retryingOn(s, loop, codeOfResult, func(_ int, cb func(client.Result)) { s.sync(path, cb) }, func(r client.Result) {
		if r.Err != proto.OK && r.Err != proto.NoNode {
			done(r.Err)
			return
		}
		done(proto.OK)
	})
}

func (s *Session) searchChildren(loop *retryLoop, parent, id string, done func(found string, code proto.Code)) {
	s.getChildrenOn(loop, parent, nil, func(r client.ChildrenResult) {
		switch r.Err {
		case proto.OK:
			prefix := protectedPrefix(id)
			for _, child := range r.Children {
				if strings.HasPrefix(child, prefix) {
					done(joinPath(parent, child), proto.OK)
					return
				}
			}
			done("", proto.OK)
		case proto.NoNode:
			done("", proto.OK)
		default:
			done("", r.Err)
		}
	})
}

// deleteGuaranteed is delete().guaranteed().forPath(path): a foreground delete with the retry
// policy, where a missing node counts as deleted. If the policy gives up, done hears the code, and
// the delete goes on in the background (Curator's FailedDeleteManager) for a bounded number of
// rounds, until the session is lost: a lost session's ephemeral nodes are gone already.
func (s *Session) deleteGuaranteed(path string, done func(proto.Code)) {
	s.deleteRounds(path, 0, false, done)
}

// deleteGuaranteedInBackground is delete().guaranteed().inBackground().forPath(path): the same, as
// a background operation from the start.
func (s *Session) deleteGuaranteedInBackground(path string, done func(proto.Code)) {
	s.deleteRounds(path, 0, true, done)
}

func (s *Session) deleteRounds(path string, round int, background bool, done func(proto.Code)) {
	attempt := func(_ int, cb func(client.Result)) { s.delete(path, cb) }
	finish := func(r client.Result) {
		code := r.Err
		if code == proto.NoNode {
			code = proto.OK
		}
		if done != nil {
			done(code)
		}
		if code == proto.OK || !retryable(code) || s.state == StateLost || round+1 >= maxBackgroundRuns {
			return
		}
		// FailedDeleteManager.executeGuaranteedOperationInBackground: the next rounds run as
		// background operations.
		s.later(s.cfg.Retry.BaseSleep, func() { s.deleteRounds(path, round+1, true, nil) })
	}
	if background {
		retryingInBackground(s, codeOfResult, func(c proto.Code) client.Result { return client.Result{Err: c} }, attempt, finish)
		return
	}
	retrying(s, codeOfResult, attempt, finish)
}
