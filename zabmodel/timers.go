package zabmodel

import "fmt"

// The server's timers as data (see timer in host.go). Each is a type whose value points at the
// object the timer fires on: most are that object's own type under another name (a conversion, no
// allocation), so that arming one allocates nothing. OnTimer enters the server through its host
// (host.fire, a step of the process); fire is the code the timer runs; TimerName names it in
// rendered traces. A post of the server's own code is a timer of 0; only the host's own flush of
// held writes (simhost.go) is still a closure.

// epochWriteTimer is the completion of the learner's currentEpoch write at NEWLEADER
// (effectEpochWrite).
type epochWriteTimer learner

func (t *epochWriteTimer) OnTimer(uint64) { t.p.h.fire(t) }

func (t *epochWriteTimer) fire() {
	if t.p.h.waitForDisk(t) {
		return // The write waits for a stalled disk (Server.StallDisk).
	}
	(*learner)(t).run(learnerInput{kind: learnerEpochWritten})
}

func (t *epochWriteTimer) TimerName(uint64) string { return "learner epoch-write" }

// learnerReadTimer is the learner's socket read timeout (setSoTimeout).
type learnerReadTimer learner

func (t *learnerReadTimer) OnTimer(uint64)          { t.p.h.fire(t) }
func (t *learnerReadTimer) fire()                   { (*learner)(t).run(learnerInput{kind: learnerReadTimeout}) }
func (t *learnerReadTimer) TimerName(uint64) string { return "learner read-timeout" }

// connectRetryTimer is the learner's next try to connect to its leader, in the role it was armed in.
type connectRetryTimer struct {
	l          *learner
	generation uint64
}

func (t *connectRetryTimer) OnTimer(uint64) { t.l.p.h.fire(t) }

func (t *connectRetryTimer) fire() {
	if t.l.p.roleGeneration == t.generation {
		t.l.run(learnerInput{kind: learnerConnectRetry, now: t.l.p.h.elapsed()})
	}
}

func (t *connectRetryTimer) TimerName(uint64) string { return "learner connect-retry" }

// waitDeadline is a quorum waiter's deadline (effectWaitStart).
type waitDeadline struct {
	l *leader
	w *quorumWaiter
}

func (t *waitDeadline) OnTimer(uint64) { t.l.p.h.fire(t) }

func (t *waitDeadline) fire() {
	if !t.l.stopped {
		t.l.discoveryRun(discoveryInput{kind: discoveryDeadline, waiter: t.w})
	}
}

func (t *waitDeadline) TimerName(uint64) string { return "leader " + t.w.wait.String() + " deadline" }

// leaderTickTimer is one turn of lead()'s loop, every half tick.
type leaderTickTimer leader

func (t *leaderTickTimer) OnTimer(uint64)          { t.p.h.fire(t) }
func (t *leaderTickTimer) fire()                   { (*leader)(t).onTick() }
func (t *leaderTickTimer) TimerName(uint64) string { return "leader tick" }

// handlerReadTimer is a learner handler's socket read timeout.
type handlerReadTimer learnerHandler

func (t *handlerReadTimer) OnTimer(uint64) { t.l.p.h.fire(t) }
func (t *handlerReadTimer) fire() {
	(*learnerHandler)(t).handlerRun(handlerInput{kind: handlerReadTimeout})
}
func (t *handlerReadTimer) TimerName(uint64) string { return "handler read-timeout" }

// handlerReadStep is a learner handler's thread reading the next packet of its receive buffer
// (handlerRead): a step of its own, at a drawn moment after the packet arrived (readDelay).
type handlerReadStep learnerHandler

func (t *handlerReadStep) OnTimer(uint64) { t.l.p.h.fire(t) }
func (t *handlerReadStep) fire()          { (*learnerHandler)(t).handlerRun(handlerInput{kind: handlerRead}) }

// TimerName names the learner, or the connection while its FOLLOWERINFO is unread.
func (t *handlerReadStep) TimerName(uint64) string {
	if t.sid == 0 {
		return fmt.Sprintf("handler read conn=%d", t.conn)
	}
	return "handler read " + waiterThread((*learnerHandler)(t))
}

// startupPollTimer is a learner handler's next look at whether the leader's server runs
// (waitForStartup).
type startupPollTimer learnerHandler

func (t *startupPollTimer) OnTimer(uint64) { t.l.p.h.fire(t) }
func (t *startupPollTimer) fire() {
	(*learnerHandler)(t).handlerRun(handlerInput{kind: handlerStartupPoll})
}
func (t *startupPollTimer) TimerName(uint64) string { return "handler startup-poll" }

// senderTurnTimer is a learner handler's sender thread's next turn (effectTimer).
type senderTurnTimer learnerHandler

func (t *senderTurnTimer) OnTimer(uint64)          { t.l.p.h.fire(t) }
func (t *senderTurnTimer) fire()                   { (*learnerHandler)(t).senderRun(senderTurn, nil, 0) }
func (t *senderTurnTimer) TimerName(uint64) string { return "handler sender-turn" }

// syncTurnTimer is the sync processor's thread coming round to its queue (effectPost).
type syncTurnTimer syncProcessor

func (t *syncTurnTimer) OnTimer(uint64)          { t.p.h.fire(t) }
func (t *syncTurnTimer) fire()                   { (*syncProcessor)(t).run(syncInput{kind: syncTurn}) }
func (t *syncTurnTimer) TimerName(uint64) string { return "sync-processor turn" }

// fsyncTimer is the completion of the sync processor's fsync in progress (effectFsyncStart).
type fsyncTimer syncProcessor

func (t *fsyncTimer) OnTimer(uint64) { t.p.h.fire(t) }

func (t *fsyncTimer) fire() {
	sp := (*syncProcessor)(t)
	if sp.p.h.waitForDisk(t) {
		return // The fsync waits for a stalled disk (Server.StallDisk).
	}
	covered := sp.flushCovered
	if d := sp.p.h.disk(); d.Generation() != sp.flushGeneration {
		// Records left the log while the fsync was in flight (a stopped processor's last fsync,
		// with a TRUNC of the next role before it completed): its count no longer names the
		// records it covered, and the ones in their place have fsyncs of their own.
		covered = min(covered, d.SyncedLen())
	}
	sp.run(syncInput{kind: syncFlushed, covered: covered})
}

func (t *fsyncTimer) TimerName(uint64) string { return "sync-processor fsync-done" }

// OnTimer, fire and TimerName make the snapshot thread its walk's timer (effectWalkNext).
func (st *snapshotThread) OnTimer(uint64)          { st.db.p.h.fire(st) }
func (st *snapshotThread) fire()                   { st.db.runSnapshotThread(st, snapshotStep) }
func (st *snapshotThread) TimerName(uint64) string { return "snapshot walk-step" }

// electionTimer is the election's timer (FastLeaderElection's notification timeout).
type electionTimer peer

func (t *electionTimer) OnTimer(uint64)          { t.h.fire(t) }
func (t *electionTimer) fire()                   { (*peer)(t).onElectionTimer() }
func (t *electionTimer) TimerName(uint64) string { return "election timeout" }

// sessionExpiryTimer is the session tracker's next expiry bucket (SessionTrackerImpl.run).
type sessionExpiryTimer globalTracker

func (t *sessionExpiryTimer) OnTimer(uint64)          { t.p.h.fire(t) }
func (t *sessionExpiryTimer) fire()                   { (*globalTracker)(t).tick() }
func (t *sessionExpiryTimer) TimerName(uint64) string { return "sessions expiry" }

// containerCheckTimer is the container manager's fixed-rate check.
type containerCheckTimer containerManager

func (t *containerCheckTimer) OnTimer(uint64)          { t.zk.p.h.fire(t) }
func (t *containerCheckTimer) fire()                   { (*containerManager)(t).fire() }
func (t *containerCheckTimer) TimerName(uint64) string { return "containers check" }

// containerSubmitTimer is the container manager's next deletion after the minimum interval.
type containerSubmitTimer containerManager

func (t *containerSubmitTimer) OnTimer(uint64)          { t.zk.p.h.fire(t) }
func (t *containerSubmitTimer) fire()                   { (*containerManager)(t).submitNext() }
func (t *containerSubmitTimer) TimerName(uint64) string { return "containers submit" }

// syncIdleTimer is the learner's QuorumPeer thread's turn once its sync thread is idle (ZK-4643,
// effectWhenSyncIdle), posted by the sync processor.
type syncIdleTimer learner

func (t *syncIdleTimer) OnTimer(uint64)          { t.p.h.fire(t) }
func (t *syncIdleTimer) fire()                   { (*learner)(t).run(learnerInput{kind: learnerSyncIdle}) }
func (t *syncIdleTimer) TimerName(uint64) string { return "learner after-sync-thread" }

// waiterWake is a thread that a quorum woke (effectWaitWake), posted as a step of its own.
type waiterWake struct {
	l *leader
	w *quorumWaiter
}

func (t *waiterWake) OnTimer(uint64) { t.l.p.h.fire(t) }

func (t *waiterWake) fire() {
	if !t.l.stopped {
		t.l.resumeAfterWait(t.w.wait, t.w.handler)
	}
}

func (t *waiterWake) TimerName(uint64) string {
	return "leader " + t.w.wait.String() + " wake " + waiterThread(t.w.handler)
}

// electionStartTimer starts an election after a role ended, unless another role began meanwhile.
type electionStartTimer struct {
	p          *peer
	generation uint64
}

func (t *electionStartTimer) OnTimer(uint64) { t.p.h.fire(t) }

func (t *electionStartTimer) fire() {
	t.p.runPeer(peerInput{kind: peerStartPosted, generation: t.generation})
}

func (t *electionStartTimer) TimerName(uint64) string { return "peer start-election" }

// OnTimer, fire and TimerName make a SNAP stream its own timer: it begins the stream, then steps
// the walk.
func (s *snapStream) OnTimer(uint64) { s.h.l.p.h.fire(s) }

func (s *snapStream) fire() { s.h.handlerRun(handlerInput{kind: handlerSnapStep}) }

func (s *snapStream) TimerName(uint64) string { return "handler snap-stream" }

// loopbackTimer delivers a notification a server's election sends to itself, as a step of its own
// at the same instant (QuorumCnxManager's receive queue).
type loopbackTimer struct {
	m       *cnxManager
	payload []byte
}

func (t *loopbackTimer) OnTimer(uint64)          { t.m.host.fire(t) }
func (t *loopbackTimer) fire()                   { t.m.deliver.onNotification(t.m.core.sid, t.payload) }
func (t *loopbackTimer) TimerName(uint64) string { return "election loopback" }
