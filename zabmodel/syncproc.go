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
	// syncRequest is processRequest: a request joins the queue.
	syncRequest syncInputKind = iota + 1
	// syncTurn is the processor's thread coming round to its queue (the effectPost it asked for).
	syncTurn
	// syncFlushed is the completion of the fsync the core started, with the records it covers.
	syncFlushed
	// syncContinue resumes the core after a ready that ended with resume; roll is the snapshot
	// threshold the driver drew (rolled) if that ready ended with effectSnapshotThread.
	syncContinue
	// syncShutdown is SyncRequestProcessor.shutdown.
	syncShutdown
	// syncAbandon is a processor whose successor was cut off and which was never told to stop
	// (ZOOKEEPER-4712): it goes on with what it has queued.
	syncAbandon
)

// syncInput is one input of the sync processor's core.
type syncInput struct {
	kind    syncInputKind
	req     *request
	covered int
	roll    int
	rolled  bool
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
	resumeTurn               // the loop draining the queue
	resumeFlush              // the hand-on of a completed fsync's batch
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
	randRoll  int

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
// back with done.
func (c *syncCore) step(in syncInput, view syncView) *ready {
	out := c.readies.get()
	switch in.kind {
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
		if in.rolled {
			c.randRoll = in.roll
		}
		switch c.resume {
		case resumeTurn:
			c.resume = resumeNothing
			c.drain(out, view)
		case resumeFlush:
			c.resume = resumeNothing
			c.handOnBatch(out)
		}
	case syncFlushed:
		out.add(effect{kind: effectFsyncDone, zxid: int64(in.covered)})
		c.flushing = false
		if c.stopped {
			c.flushNext = len(c.flushBatch)
		}
		c.handOnBatch(out)
	case syncShutdown:
		c.shutdown(out, view)
	case syncAbandon:
		if c.pending() > 0 {
			c.schedule(out)
		}
	}
	return out
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
			// SyncRequestProcessor.run rolls the log and starts the snapshot thread, which walks
			// the live tree while this processor and the commits go on.
			out.add(effect{kind: effectSnapshotThread})
			c.yield(out, resumeTurn)
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
	// abandoned. A field and a flag rather than a function value, so that the world holds no
	// closure and can be copied (package modelcheck).
	zk        *zkServer
	abandoned bool

	// flushCovered is what the fsync in progress covers, for its completion (fsyncTimer); the
	// processor's turns are syncTurnTimer.
	flushCovered int

	// idleWaiters are the steps of other threads that the scheduler put off until this thread had
	// written, fsynced and passed on all its work (see whenIdle).
	idleWaiters []timer
}

func newSyncProcessor(p *peer, zk *zkServer) *syncProcessor {
	sp := &syncProcessor{p: p, zk: zk}
	sp.core.snapCount = p.cfg.SnapCount
	sp.core.randRoll = sp.drawRoll() // The threshold the processor starts with.
	return sp
}

// drawRoll draws the randomized snapshot threshold, as Java does with ThreadLocalRandom.
func (sp *syncProcessor) drawRoll() int {
	half := sp.p.cfg.SnapCount / 2
	return sp.p.h.choose(max(half, 1))
}

// LastZxid and TxnsSinceSnapshot make the driver the core's syncView.
func (sp *syncProcessor) LastZxid() int64        { return sp.p.h.disk().LastZxid() }
func (sp *syncProcessor) TxnsSinceSnapshot() int { return sp.p.db.txnsSinceSnapshot }

func (sp *syncProcessor) pending() int { return sp.core.pending() }

// busy reports whether the processor has work in hand (see syncCore.busy).
func (sp *syncProcessor) busy() bool { return sp.core.busy() }

// processRequest queues a request for the processor's next turn.
func (sp *syncProcessor) processRequest(r *request) { sp.run(syncInput{kind: syncRequest, req: r}) }

// shutdown stops the processor, flushing what it holds (see syncCore.shutdown).
func (sp *syncProcessor) shutdown() {
	sp.run(syncInput{kind: syncShutdown})
	sp.idleWaiters = nil
}

// whenIdle runs fn (a timer that fires at once) as a step of its own once this thread has appended, fsynced and passed on (to
// SendAckRequestProcessor: the ACKs) everything it holds now, or at once if it holds nothing. It
// is how another thread of the server runs when the scheduler lets this one go first.
func (sp *syncProcessor) whenIdle(fn timer) {
	sp.idleWaiters = append(sp.idleWaiters, fn)
	sp.releaseIdleWaiters()
}

// releaseIdleWaiters posts the waiting steps once the thread has nothing queued, appended, in an
// fsync or posted: it is blocked in queuedRequests.take().
func (sp *syncProcessor) releaseIdleWaiters() {
	if len(sp.idleWaiters) == 0 || sp.core.busy() || sp.core.scheduled {
		return
	}
	waiters := sp.idleWaiters
	sp.idleWaiters = nil
	for _, t := range waiters {
		sp.p.h.setTimer(0, t) // A post: a step of its own at this instant.
	}
}

// next passes a logged request on to the server's next stage.
func (sp *syncProcessor) next(r *request) {
	if sp.abandoned {
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

// abandon stops passing requests on but lets the processor keep appending what it has queued, as
// its own later events: the thread that was never told to stop (ZOOKEEPER-4712).
func (sp *syncProcessor) abandon() {
	sp.abandoned = true
	sp.run(syncInput{kind: syncAbandon})
}

// run steps the core with in and applies what it returns, stepping it again as long as a ready
// asks to resume.
func (sp *syncProcessor) run(in syncInput) {
	for {
		out := sp.core.step(in, sp)
		resume, roll, rolled := out.resume, 0, false
		for i := range out.effects {
			if r, drew := sp.apply(out.effects[i]); drew {
				roll, rolled = r, true
			}
		}
		sp.core.done(out)
		if !resume {
			sp.releaseIdleWaiters()
			return
		}
		in = syncInput{kind: syncContinue, roll: roll, rolled: rolled}
	}
}

// apply is the driver of one effect of the sync processor's core. It returns the snapshot
// threshold it drew, if the effect asked for one.
func (sp *syncProcessor) apply(e effect) (roll int, drew bool) {
	p := sp.p
	switch e.kind {
	case effectAppend:
		if ok := p.applyStorageEffect(e); ok != e.appended {
			p.assert(false, InvariantCoreView, "the log %s an append of %s the sync processor expected it to %s",
				tookOrRefused(ok), FormatZxid(e.entry.Header.Zxid), tookOrRefused(e.appended))
		}
	case effectFsyncDone, effectFsyncAll:
		p.applyStorageEffect(e)
	case effectFsyncStart:
		p.askBoundaries(e.kind, 0)
		sp.flushCovered = p.h.disk().Len()
		p.h.setTimer(p.fsyncLatency(), (*fsyncTimer)(sp))
	case effectSnapshotThread:
		roll = sp.drawRoll()
		p.db.startSnapshotThread()
		return roll, true
	case effectHandOn:
		sp.next(e.req)
	case effectPost:
		p.h.setTimer(0, (*syncTurnTimer)(sp))
	default:
		panic("zabmodel: the sync processor's core asked for " + e.kind.String())
	}
	return 0, false
}

func tookOrRefused(ok bool) string {
	if ok {
		return "took"
	}
	return "refused"
}
