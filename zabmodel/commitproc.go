package zabmodel

// CommitProcessor as a core (see ready.go): commitCore holds the requests waiting per session and
// decides, input by input, which requests reach the final processor and in what order;
// commitProcessor is its driver. The core's only effect is effectFinal: the request goes to
// FinalRequestProcessor (applied to the tree if it is a txn, answered if its client waits). Each
// one ends its ready (resume), because applying a request may feed this processor again (a reply
// that leads to a new request, an expired session's close), and the core goes on after it.
//
// It is CommitProcessor reduced to the order it guarantees: requests of one session are answered in
// the order they arrived; a request that needs a commit waits for it, and the reads of its session
// behind it wait too; commits are applied in the order they arrive (zxid order).

// commitInputKind names what a step of the commit processor's core is about.
type commitInputKind uint8

const (
	// commitLocal is CommitProcessor.processRequest: a local request arrives.
	commitLocal commitInputKind = iota + 1
	// commitCommitted is CommitProcessor.commit: a committed request arrives.
	commitCommitted
	// commitContinue resumes the core after a ready that ended with resume.
	commitContinue
)

// commitDrain is a commit in progress: the requests of its session behind the committed one,
// answered one at a time until the next that needs a commit. Commits can nest (a request applied
// may lead to another commit at once), so the core keeps a stack of them.
type commitDrain struct {
	session int64
	queue   []*request
}

// commitCore is CommitProcessor's state.
type commitCore struct {
	matchSyncs bool
	// pending holds, per session with anything waiting, its requests in arrival order.
	pending map[int64][]*request
	drains  []commitDrain
	readies readyPool
}

func (c *commitCore) step(kind commitInputKind, r *request) *ready {
	out := c.readies.get()
	switch kind {
	case commitLocal:
		queue := c.pending[r.sessionID]
		if len(queue) == 0 && !r.needsCommit(c.matchSyncs) {
			out.add(effect{kind: effectFinal, req: r})
			break
		}
		c.pending[r.sessionID] = append(queue, r)
	case commitCommitted:
		// The waiting local request it answers if it is the session's oldest waiting write with
		// that cxid, else the committed request alone (a remote write, or one of this session's
		// that went through another server after the session moved, ZOOKEEPER-2684).
		queue := c.pending[r.sessionID]
		if len(queue) == 0 || !queue[0].needsCommit(c.matchSyncs) || queue[0].cxid != r.cxid {
			out.add(effect{kind: effectFinal, req: r})
			break
		}
		head := queue[0]
		if head != r {
			head.entry = r.entry
		}
		out.add(effect{kind: effectFinal, req: head})
		out.resume = true
		c.drains = append(c.drains, commitDrain{session: r.sessionID, queue: queue[1:]})
	case commitContinue:
		c.drain(out)
	}
	return out
}

func (c *commitCore) done(r *ready) { c.readies.put(r) }

// drain answers the next request behind the innermost commit, or ends that commit: the session's
// waiting list becomes what is left behind it.
func (c *commitCore) drain(out *ready) {
	top := &c.drains[len(c.drains)-1]
	if len(top.queue) > 0 && !top.queue[0].needsCommit(c.matchSyncs) {
		r := top.queue[0]
		top.queue = top.queue[1:]
		out.add(effect{kind: effectFinal, req: r})
		out.resume = true
		return
	}
	if len(top.queue) == 0 {
		delete(c.pending, top.session)
	} else {
		c.pending[top.session] = top.queue
	}
	*top = commitDrain{}
	c.drains = c.drains[:len(c.drains)-1]
}

// commitProcessor is the commit processor's driver.
type commitProcessor struct {
	zk   *zkServer
	core commitCore
}

func newCommitProcessor(zk *zkServer, matchSyncs bool) *commitProcessor {
	return &commitProcessor{zk: zk, core: commitCore{matchSyncs: matchSyncs, pending: map[int64][]*request{}}}
}

// processRequest accepts a local request.
func (cp *commitProcessor) processRequest(r *request) { cp.run(commitLocal, r) }

// commit applies a committed request.
func (cp *commitProcessor) commit(committed *request) { cp.run(commitCommitted, committed) }

// run steps the core and applies its readies: each is at most one request for the final processor.
func (cp *commitProcessor) run(kind commitInputKind, r *request) {
	for {
		out := cp.core.step(kind, r)
		resume := out.resume
		for i := range out.effects {
			cp.zk.finalProcess(out.effects[i].req)
		}
		cp.core.done(out)
		if !resume {
			return
		}
		kind, r = commitContinue, nil
	}
}
