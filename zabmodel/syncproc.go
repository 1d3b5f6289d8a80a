package zabmodel

// SyncRequestProcessor is a core (see ready.go): syncCore holds its state and decides, input by
// input, what must happen; syncProcessor is its driver, which applies each ready to the log, the
// timers and the next processor.
//
// It runs as its own thread in Java, so its steps are separate events here: requests wait in a
// queue until the processor's next turn; each turn appends what is queued; an fsync then takes time
// (drawn from the world's Chooser), during which new requests queue up again. A crash can therefore
// fall between an append and its fsync, and between the fsync and the ACK it triggers.

// syncInputKind names what a step of the sync processor's core is about.
type syncInputKind uint8

const (
	// syncStart is the processor's construction: it draws the snapshot threshold it starts with
	// (effectDraw), as SyncRequestProcessor's constructor does with ThreadLocalRandom.
	syncStart syncInputKind = iota + 1
	// syncRequest is processRequest: a request joins the queue.
	syncRequest
	// syncTurn is the processor's thread coming round to its queue (the effectPost it asked for).
	syncTurn
	// syncFlushed is the completion of the fsync the core started, with the records it covers.
	syncFlushed
	// syncContinue resumes the core after a ready that ended with resume; draw is the world's
	// answer if that ready asked for one (effectDraw).
	syncContinue
	// syncStop is the processor's part of ZooKeeperServer.shutdown: SyncRequestProcessor.shutdown
	// before the fast-forward of the tree (effectFastForward), or, with race (a learner's server
	// under ZOOKEEPER-4712), the processor that is never told to stop racing the fast-forward.
	syncStop
	// syncWhenIdle is another thread's step (waiter) that the scheduler puts off until this thread
	// is idle (see syncProcessor.whenIdle).
	syncWhenIdle
)

// syncInput is one input of the sync processor's core.
type syncInput struct {
	kind    syncInputKind
	req     *request
	covered int
	// draw is the world's answer to the effectDraw that ended the ready before a syncContinue.
	draw int
	// race is syncStop's ZOOKEEPER-4712: the processor is not stopped before the fast-forward.
	race bool
	// waiter is syncWhenIdle's step of another thread.
	waiter timer
}

// syncView is what the core reads of its durable storage (it never writes it): the last logged
// zxid, to know whether the log takes an append, and how many txns were appended since the last
// snapshot, for the snapshot threshold.
type syncView interface {
	LastZxid() int64
	TxnsSinceSnapshot() int
}

// syncResume says what a continue input resumes.
type syncResume uint8

const (
	resumeNothing syncResume = iota
	resumeStart              // the threshold drawn at construction
	resumeTurn               // the loop draining the queue
	resumeRolled             // the loop draining the queue, with the threshold drawn at a snapshot
	resumeFlush              // the hand-on of a completed fsync's batch
	resumeRace               // ZOOKEEPER-4712's draw of which thread goes first at shutdown
)

// syncCore is SyncRequestProcessor's state. Its step reads the view and its own memory only; its
// pending work (the queue, the batch an fsync covers, the turn it asked for) is data, so that a copy
// of the core is a copy of the processor.
type syncCore struct {
	snapCount int
	// queue[queueHead:] waits for the processor's next turn.
	queue     []*request
	queueHead int
	// toFlush holds what the turn appended (and what queued behind it), for the next fsync.
	toFlush []*request

	scheduled bool // a turn is posted
	flushing  bool // an fsync is in progress (at most one)
	stopped   bool
	// abandoned is the ZOOKEEPER-4712 processor that the fast-forward went before: it goes on
	// appending what it has queued, and its driver hands nothing on.
	abandoned bool
	randRoll  int

	// idleWaiters are the steps of other threads that the scheduler put off until this thread had
	// written, fsynced and passed on all its work (syncWhenIdle); the core posts them
	// (effectPostIdle) at the end of the first step that leaves it idle.
	idleWaiters []timer

	// flushBatch[flushNext:] are the requests a completed fsync still hands on; spareBatch is the
	// array of the batch before, which the next batch reuses.
	flushBatch []*request
	flushNext  int
	spareBatch []*request
	resume     syncResume

	readies readyPool
}

func (c *syncCore) pending() int { return len(c.queue) - c.queueHead }

// busy reports whether the processor has work in hand: queued, appended and not fsynced, or in an
// fsync.
func (c *syncCore) busy() bool { return c.pending() > 0 || c.flushing || len(c.toFlush) > 0 }

// step takes one input and returns what must happen; the ready is the driver's until it gives it
// back with done. A step whose ready does not resume ends by posting the idle waiters if the
// thread is idle then (releaseIdle): the driver applies the ready's other effects first.
func (c *syncCore) step(in syncInput, view syncView) *ready {
	out := c.readies.get()
	switch in.kind {
	case syncStart:
		out.add(c.thresholdDraw())
		c.yield(out, resumeStart)
	case syncRequest:
		if c.stopped {
			break
		}
		c.queue = append(c.queue, in.req)
		c.schedule(out)
	case syncTurn:
		c.scheduled = false
		if !c.flushing {
			c.drain(out, view)
		}
	case syncContinue:
		what := c.resume
		c.resume = resumeNothing
		switch what {
		case resumeStart:
			c.randRoll = in.draw
		case resumeRolled:
			c.randRoll = in.draw
			c.drain(out, view)
		case resumeTurn:
			c.drain(out, view)
		case resumeFlush:
			c.handOnBatch(out)
		case resumeRace:
			c.raceDecided(out, view, in.draw == 1)
		}
	case syncFlushed:
		out.add(effect{kind: effectFsyncDone, zxid: int64(in.covered)})
		c.flushing = false
		if c.stopped {
			c.flushNext = len(c.flushBatch)
		}
		c.handOnBatch(out)
	case syncStop:
		c.stop(out, view, in.race)
	case syncWhenIdle:
		c.idleWaiters = append(c.idleWaiters, in.waiter)
	}
	if !out.resume {
		c.releaseIdle(out)
	}
	return out
}

// thresholdDraw asks the world for the randomized part of the snapshot threshold (Java's
// ThreadLocalRandom.nextInt(snapCount / 2)), which the core takes when it resumes.
func (c *syncCore) thresholdDraw() effect {
	return effect{kind: effectDraw, zxid: int64(max(c.snapCount/2, 1))}
}

// releaseIdle posts the idle waiters once the thread has nothing queued, appended, in an fsync or
// posted: it is blocked in queuedRequests.take().
func (c *syncCore) releaseIdle(out *ready) {
	if len(c.idleWaiters) == 0 || c.busy() || c.scheduled {
		return
	}
	for _, t := range c.idleWaiters {
		out.posts = append(out.posts, t)
		out.add(effect{kind: effectPostIdle, event: int32(len(out.posts) - 1)})
	}
	clear(c.idleWaiters)
	c.idleWaiters = c.idleWaiters[:0]
}

// stop is the processor's part of ZooKeeperServer.shutdown(false), with the subclass order of
// 3.8.0's fixed code: the processor is stopped (flushing what it holds) before the tree is
// fast-forwarded to the log. With race, LearnerZooKeeperServer.shutdown in 3.8.0
// (ZOOKEEPER-4712): super.shutdown() fast-forwards the database first, and the sync processor is
// only told to stop afterwards; meanwhile it goes on appending what it had queued. The two
// threads race: while the QuorumPeer thread shuts the request processors down and reads the log,
// the SyncRequestProcessor thread may already have appended its queue (then the fast-forward sees
// it and memory matches the disk), or still be in an fsync or not yet scheduled (then it appends
// after the fast-forward, and the disk holds txns the tree lacks). Which thread gets there first
// is the scheduler's choice, drawn (effectDraw n=2) whenever the sync thread has a queue to
// append; the core resumes with it (raceDecided).
func (c *syncCore) stop(out *ready, view syncView, race bool) {
	switch {
	case !race:
		c.stopFirst(out, view)
	case c.pending() > 0:
		out.add(effect{kind: effectDraw, zxid: 2})
		c.yield(out, resumeRace)
	default:
		c.abandon(out)
	}
}

// raceDecided goes on with ZOOKEEPER-4712's draw: syncFirst if the sync thread appends its queue
// before the fast-forward.
func (c *syncCore) raceDecided(out *ready, view syncView, syncFirst bool) {
	if syncFirst {
		out.note("sync", "the sync thread appends its queue before the fast-forward")
		c.stopFirst(out, view)
		return
	}
	c.abandon(out)
}

// stopFirst is SyncRequestProcessor.shutdown followed by the fast-forward: the waiters the
// processor's last step leaves idle are posted, the others are dropped with the thread.
func (c *syncCore) stopFirst(out *ready, view syncView) {
	c.shutdown(out, view)
	c.releaseIdle(out)
	clear(c.idleWaiters)
	c.idleWaiters = nil
	out.add(effect{kind: effectFastForward})
}

// abandon is the fast-forward going first: the processor, which stops passing requests on,
// keeps appending what it has queued, as its own later steps.
func (c *syncCore) abandon(out *ready) {
	if c.pending() > 0 {
		out.note("sync", "the fast-forward comes before the sync thread appends its queue")
	}
	out.add(effect{kind: effectFastForward})
	c.abandoned = true
	if c.pending() > 0 {
		c.schedule(out)
	}
}

// done gives a ready back once the driver has applied it.
func (c *syncCore) done(r *ready) { c.readies.put(r) }

func (c *syncCore) schedule(out *ready) {
	if c.scheduled || c.flushing {
		return
	}
	c.scheduled = true
	out.add(effect{kind: effectPost})
}

// drain is the body of SyncRequestProcessor.run between two flushes: append what is queued, then
// start an fsync covering it. It stops early (resume) where the Java thread calls out: at a
// request it hands on at once, and at the start of the snapshot thread, whose draw the rest of
// the turn needs. Requests may join the queue meanwhile (a commit the processor passes on can lead
// to a new proposal), so the loop reads the queue's length afresh each time.
func (c *syncCore) drain(out *ready, view syncView) {
	last, txns := view.LastZxid(), view.TxnsSinceSnapshot()
	for c.queueHead < len(c.queue) && !c.flushing {
		r := c.queue[c.queueHead]
		c.queue[c.queueHead] = nil
		c.queueHead++
		appended := false
		if r.entry != nil {
			appended = r.entry.Header.Zxid > last
			out.add(effect{kind: effectAppend, entry: r.entry, appended: appended})
			if appended {
				last = r.entry.Header.Zxid
				txns++
			}
		}
		if !appended && len(c.toFlush) == 0 {
			// Nothing waits for an fsync: the request passes straight on (reads, syncs, and txns
			// the log refused).
			out.add(effect{kind: effectHandOn, req: r})
			c.yield(out, resumeTurn)
			return
		}
		c.toFlush = append(c.toFlush, r)
		if appended && txns > c.snapCount/2+c.randRoll {
			// SyncRequestProcessor.run redraws the threshold, rolls the log and starts the
			// snapshot thread, which walks the live tree while this processor and the commits go
			// on; the turn resumes with the new threshold.
			out.add(c.thresholdDraw())
			out.add(effect{kind: effectSnapshotThread})
			c.yield(out, resumeRolled)
			return
		}
	}
	if c.queueHead == len(c.queue) {
		c.queue, c.queueHead = c.queue[:0], 0 // Drained: the array is reused.
	}
	if len(c.toFlush) == 0 || c.flushing {
		return
	}
	out.add(effect{kind: effectFsyncStart})
	c.flushing = true
	c.flushBatch, c.flushNext = c.toFlush, 0
	c.toFlush, c.spareBatch = c.spareBatch[:0], nil
}

func (c *syncCore) yield(out *ready, what syncResume) {
	out.resume = true
	c.resume = what
}

// handOnBatch hands a completed fsync's requests on one at a time (each may come back to this
// processor), then frees the batch and takes up what queued meanwhile.
func (c *syncCore) handOnBatch(out *ready) {
	if c.flushNext < len(c.flushBatch) {
		r := c.flushBatch[c.flushNext]
		c.flushNext++
		out.add(effect{kind: effectHandOn, req: r})
		c.yield(out, resumeFlush)
		return
	}
	// No fsync can have started during the hand-ons (turns are events of their own), so the
	// batch's array is free for the next one.
	batch := c.flushBatch
	c.flushBatch, c.flushNext = nil, 0
	clear(batch)
	c.spareBatch = batch[:0]
	if c.pending() > 0 {
		c.schedule(out)
	}
}

// shutdown is SyncRequestProcessor.shutdown: the queued requests are still appended and the log is
// fsynced, synchronously, and nothing more is passed on.
func (c *syncCore) shutdown(out *ready, view syncView) {
	if c.stopped {
		return
	}
	c.stopped = true
	last := view.LastZxid()
	for _, r := range c.queue[c.queueHead:] {
		if r.entry != nil {
			appended := r.entry.Header.Zxid > last
			if appended {
				last = r.entry.Header.Zxid
			}
			out.add(effect{kind: effectAppend, entry: r.entry, appended: appended})
		}
	}
	c.queue, c.queueHead = nil, 0
	c.toFlush = nil
	out.add(effect{kind: effectFsyncAll})
}

// syncProcessor is the sync processor's driver: it feeds inputs to the core and applies each ready
// in order, and it is the processor's handle for the rest of the server.
type syncProcessor struct {
	p    *peer
	core syncCore
	// zk is the server whose next stage takes what the processor logged: SendAckRequestProcessor,
	// AckRequestProcessor or the final stage by its kind, nothing for an observer or once
	// abandoned (syncCore.abandoned). A field rather than a function value, so that the world
	// holds no closure and can be copied (package modelcheck).
	zk *zkServer

	// flushCovered is what the fsync in progress covers, for its completion (fsyncTimer), and
	// flushGeneration the log's generation when it started (storage.Disk.Generation); the
	// processor's turns are syncTurnTimer.
	flushCovered    int
	flushGeneration uint64
}

func newSyncProcessor(p *peer, zk *zkServer) *syncProcessor {
	sp := &syncProcessor{p: p, zk: zk}
	sp.core.snapCount = p.cfg.SnapCount
	sp.run(syncInput{kind: syncStart}) // The threshold the processor starts with.
	return sp
}

// LastZxid and TxnsSinceSnapshot make the driver the core's syncView.
func (sp *syncProcessor) LastZxid() int64        { return sp.p.h.disk().LastZxid() }
func (sp *syncProcessor) TxnsSinceSnapshot() int { return sp.p.db.txnsSinceSnapshot }

func (sp *syncProcessor) pending() int { return sp.core.pending() }

// busy reports whether the processor has work in hand (see syncCore.busy).
func (sp *syncProcessor) busy() bool { return sp.core.busy() }

// processRequest queues a request for the processor's next turn.
func (sp *syncProcessor) processRequest(r *request) { sp.run(syncInput{kind: syncRequest, req: r}) }

// stop is the processor's part of ZooKeeperServer.shutdown, the fast-forward of the tree included
// (see syncCore.stop); race is ZOOKEEPER-4712's processor that is not stopped first.
func (sp *syncProcessor) stop(race bool) { sp.run(syncInput{kind: syncStop, race: race}) }

// whenIdle runs fn (a timer that fires at once) as a step of its own once this thread has
// appended, fsynced and passed on (to SendAckRequestProcessor: the ACKs) everything it holds now,
// or at once if it holds nothing. It is how another thread of the server runs when the scheduler
// lets this one go first.
func (sp *syncProcessor) whenIdle(fn timer) { sp.run(syncInput{kind: syncWhenIdle, waiter: fn}) }

// next passes a logged request on to the server's next stage.
func (sp *syncProcessor) next(r *request) {
	if sp.core.abandoned {
		return
	}
	switch sp.zk.kind {
	case kindStandalone:
		sp.zk.standaloneCommit(r)
	case kindLeader:
		sp.zk.leaderAck(r)
	case kindFollower:
		sp.zk.followerAck(r)
	}
}

// run steps the core with in and applies what it returns, stepping it again as long as a ready
// asks to resume, with the world's answer to the ready's draw.
func (sp *syncProcessor) run(in syncInput) {
	for {
		out := sp.core.step(in, sp)
		resume := out.resume
		next := syncInput{kind: syncContinue}
		for i := range out.effects {
			sp.apply(out, &out.effects[i], &next)
		}
		sp.core.done(out)
		if !resume {
			return
		}
		in = next
	}
}

// apply is the driver of one effect of the sync processor's core; next is the continue input,
// which gathers the world's answer to a draw.
func (sp *syncProcessor) apply(out *ready, e *effect, next *syncInput) {
	p := sp.p
	if p.applyReport(out, e) {
		return
	}
	switch e.kind {
	case effectAppend:
		if ok := p.applyStorageEffect(*e); ok != e.appended {
			p.assert(false, InvariantCoreView, "the log %s an append of %s the sync processor expected it to %s",
				tookOrRefused(ok), FormatZxid(e.entry.Header.Zxid), tookOrRefused(e.appended))
		}
	case effectFsyncDone, effectFsyncAll:
		p.applyStorageEffect(*e)
	case effectFsyncStart:
		p.askBoundaries(e.kind, 0)
		sp.flushCovered, sp.flushGeneration = p.h.disk().Len(), p.h.disk().Generation()
		p.h.setTimer(p.fsyncLatency(), (*fsyncTimer)(sp))
	case effectDraw:
		next.draw = p.h.choose(int(e.zxid))
	case effectSnapshotThread:
		p.db.startSnapshotThread()
	case effectHandOn:
		sp.next(e.req)
	case effectPost:
		p.h.setTimer(0, (*syncTurnTimer)(sp))
	case effectPostIdle:
		p.h.setTimer(0, out.posts[e.event]) // A post: a step of its own at this instant.
	case effectFastForward:
		sp.zk.fastForward()
	default:
		panic("zabmodel: the sync processor's core asked for " + e.kind.String())
	}
}

func tookOrRefused(ok bool) string {
	if ok {
		return "took"
	}
	return "refused"
}
