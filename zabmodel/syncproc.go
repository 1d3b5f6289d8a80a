package zabmodel

import (
	"github.com/zabsim/zabsim/clock"
)

// syncProcessor is SyncRequestProcessor: it appends each request's txn to the log, batches the
// appended requests, and hands them to the next stage only after an fsync covering them completes.
//
// It runs as its own thread in Java, so its steps are separate events here: requests wait in a
// queue until the processor's next turn; each turn appends what is queued; an fsync then takes time
// (drawn from the world's Chooser), during which new requests queue up again. A crash can therefore
// fall between an append and its fsync, and between the fsync and the ACK it triggers.
type syncProcessor struct {
	p    *peer
	next func(*request) // SendAckRequestProcessor, AckRequestProcessor or the final stage
	// queue[queueHead:] waits for the processor's next turn.
	queue     []*request
	queueHead int
	toFlush   []*request

	scheduled bool
	flushing  bool
	stopped   bool
	randRoll  int

	// The fsync in progress (at most one: flushing): how many log records it covers and the
	// requests it releases. spareBatch is the array of the batch before, which the next batch
	// reuses. turnFunc and flushedFunc are the callbacks of the processor's events, made once
	// rather than for every turn and every fsync.
	flushCovered int
	flushBatch   []*request
	spareBatch   []*request
	turnFunc     func()
	flushedFunc  func()

	// idleWaiters are the steps of other threads that the scheduler put off until this thread had
	// written, fsynced and passed on all its work (see whenIdle).
	idleWaiters []func()
}

func newSyncProcessor(p *peer, next func(*request)) *syncProcessor {
	sp := &syncProcessor{p: p, next: next}
	sp.turnFunc = sp.turn
	sp.flushedFunc = func() { sp.flushed(sp.flushCovered, sp.flushBatch) }
	sp.resetSnapshotStats()
	return sp
}

// resetSnapshotStats draws the randomized snapshot threshold, as Java does with ThreadLocalRandom.
func (sp *syncProcessor) resetSnapshotStats() {
	half := sp.p.cfg.SnapCount / 2
	sp.randRoll = sp.p.h.choose(max(half, 1))
}

func (sp *syncProcessor) shouldSnapshot() bool {
	return sp.p.db.txnsSinceSnapshot > sp.p.cfg.SnapCount/2+sp.randRoll
}

func (sp *syncProcessor) pending() int { return len(sp.queue) - sp.queueHead }

// processRequest queues a request for the processor's next turn.
func (sp *syncProcessor) processRequest(r *request) {
	if sp.stopped {
		return
	}
	sp.queue = append(sp.queue, r)
	sp.schedule()
}

func (sp *syncProcessor) schedule() {
	if sp.scheduled || sp.flushing {
		return
	}
	sp.scheduled = true
	sp.p.h.post(sp.turnFunc)
}

// turn drains the queue: it is the body of SyncRequestProcessor.run between two flushes.
func (sp *syncProcessor) turn() {
	sp.scheduled = false
	if sp.flushing {
		return
	}
	// Requests may join the queue while it drains (a commit the loop passes on can lead to a new
	// proposal), so the loop reads the queue's length afresh each time.
	for sp.queueHead < len(sp.queue) && !sp.flushing {
		r := sp.queue[sp.queueHead]
		sp.queue[sp.queueHead] = nil
		sp.queueHead++
		appended := r.entry != nil && sp.p.db.append(r.entry)
		if appended {
			if sp.shouldSnapshot() {
				sp.resetSnapshotStats()
				// SyncRequestProcessor.run rolls the log and starts the snapshot thread, which
				// walks the live tree while this processor and the commits go on.
				sp.p.db.startSnapshotThread()
			}
		} else if len(sp.toFlush) == 0 {
			// Nothing waits for an fsync: the request passes straight on (reads, syncs, and txns
			// the log refused).
			sp.next(r)
			continue
		}
		sp.toFlush = append(sp.toFlush, r)
	}
	if sp.queueHead == len(sp.queue) {
		sp.queue, sp.queueHead = sp.queue[:0], 0 // Drained: the array is reused.
	}
	if len(sp.toFlush) > 0 {
		sp.p.crashPoint("log-appended")
	}
	sp.flush()
	sp.releaseIdleWaiters()
}

// flush starts an fsync covering everything appended so far; the batch moves on when it completes.
func (sp *syncProcessor) flush() {
	if len(sp.toFlush) == 0 || sp.flushing {
		return
	}
	sp.p.crashPoint("before-fsync")
	sp.flushing = true
	covered := sp.p.h.disk().Len()
	batch := sp.toFlush
	sp.toFlush, sp.spareBatch = sp.spareBatch[:0], nil
	latency := sp.p.h.between(sp.p.cfg.FsyncLatencyMin, sp.p.cfg.FsyncLatencyMax, 100*clock.Microsecond)
	sp.flushCovered, sp.flushBatch = covered, batch
	sp.p.h.after(latency, sp.flushedFunc)
}

func (sp *syncProcessor) flushed(covered int, batch []*request) {
	sp.flushBatch = nil
	d := sp.p.h.disk()
	d.Synced(covered)
	sp.p.observe(Event{Kind: EventFsync, Zxid: d.SyncedZxid(), Count: d.SyncedLen()})
	sp.p.crashPoint("fsynced-before-ack")
	sp.flushing = false
	if !sp.stopped {
		for _, r := range batch {
			sp.next(r)
		}
	}
	// No flush can have started during the loop (turns are events of their own), so the batch's
	// array is free for the next one.
	clear(batch)
	sp.spareBatch = batch[:0]
	if sp.pending() > 0 {
		sp.schedule()
	}
	sp.releaseIdleWaiters()
}

// idle reports whether the thread has nothing queued, nothing appended that waits for an fsync,
// no fsync in progress and no turn to come: it is blocked in queuedRequests.take().
func (sp *syncProcessor) idle() bool {
	return sp.pending() == 0 && len(sp.toFlush) == 0 && !sp.flushing && !sp.scheduled
}

// whenIdle runs fn as a step of its own once this thread has appended, fsynced and passed on (to
// SendAckRequestProcessor: the ACKs) everything it holds now, or at once if it holds nothing. It
// is how another thread of the server runs when the scheduler lets this one go first.
func (sp *syncProcessor) whenIdle(fn func()) {
	sp.idleWaiters = append(sp.idleWaiters, fn)
	sp.releaseIdleWaiters()
}

func (sp *syncProcessor) releaseIdleWaiters() {
	if len(sp.idleWaiters) == 0 || !sp.idle() {
		return
	}
	waiters := sp.idleWaiters
	sp.idleWaiters = nil
	for _, fn := range waiters {
		sp.p.h.post(fn)
	}
}

// shutdown is SyncRequestProcessor.shutdown: the queued requests are still appended and the log is
// fsynced, synchronously, and nothing more is passed on.
func (sp *syncProcessor) shutdown() {
	if sp.stopped {
		return
	}
	sp.stopped = true
	for _, r := range sp.queue[sp.queueHead:] {
		if r.entry != nil {
			sp.p.db.append(r.entry)
		}
	}
	sp.queue, sp.queueHead = nil, 0
	sp.toFlush = nil
	sp.idleWaiters = nil
	sp.p.db.fsyncNow()
}

// abandon stops passing requests on but lets the processor keep appending what it has queued, as
// its own later events: the thread that was never told to stop (ZOOKEEPER-4712).
func (sp *syncProcessor) abandon() {
	sp.next = func(*request) {}
	if sp.pending() > 0 {
		sp.schedule()
	}
}
