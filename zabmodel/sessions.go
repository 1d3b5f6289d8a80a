package zabmodel

import (
	"slices"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// sessionTouch is one entry of a learner's touch table, reported to the leader in PING replies.
type sessionTouch struct {
	id        int64
	timeoutMs int32
}

// initialSessionID is SessionTrackerImpl.initializeNextSessionId: the server's elapsed milliseconds
// shifted into the middle bits, the sid in the top byte.
func initialSessionID(p *peer, sid int64) int64 {
	next := int64(uint64(elapsedMillis(p.h)<<24) >> 8)
	next |= sid << 56
	if next == containerEphemeralOwner {
		next++
	}
	return next
}

// containerEphemeralOwner is EphemeralType.CONTAINER_EPHEMERAL_OWNER: the ephemeralOwner value that
// marks a container node.
const containerEphemeralOwner int64 = -1 << 63

// globalTracker is SessionTrackerImpl, the tracker of a leader or a standalone server: it owns every
// session's expiry, in buckets of tickTime (ExpiryQueue), and expires a session by submitting a
// closeSession request.
type globalTracker struct {
	p        *peer
	sessions map[int64]*trackedSession
	// buckets maps an expiry time (elapsed milliseconds, a multiple of tickTime) to the sessions that
	// expire then, in the order they were put there.
	buckets    map[int64][]int64
	nextExpiry int64
	timer      sim.TimerID
	nextID     int64
	expire     sessionExpirer
	stopped    bool
}

type trackedSession struct {
	id        int64
	timeoutMs int32
	expiry    int64
	closing   bool
	owner     any
}

// sessionExpirer is what the tracker calls to expire a session (ZooKeeperServer.expire): the
// server, an interface rather than a function so that the world holds no closure and can be
// copied (package modelcheck).
type sessionExpirer interface {
	expireSession(id int64, timeoutMs int32)
}

// expireFunc adapts a function, for tests.
type expireFunc func(id int64, timeoutMs int32)

func (f expireFunc) expireSession(id int64, timeoutMs int32) { f(id, timeoutMs) }

func newGlobalTracker(p *peer, expire sessionExpirer) *globalTracker {
	t := &globalTracker{
		p: p, sessions: map[int64]*trackedSession{}, buckets: map[int64][]int64{},
		nextID: initialSessionID(p, p.sid), expire: expire,
	}
	t.nextExpiry = t.roundToInterval(elapsedMillis(p.h))
	// Every session the database knows starts with a full timeout: this is why sessions survive a
	// leader change.
	sessions := p.db.sessions
	for _, id := range sortedKeys(sessions) {
		t.trackSession(id, sessions[id])
	}
	t.arm()
	return t
}

func (t *globalTracker) interval() int64 { return int64(t.p.cfg.TickTime / clock.Millisecond) }

// roundToInterval is ExpiryQueue.roundToNextInterval.
func (t *globalTracker) roundToInterval(ms int64) int64 { return (ms/t.interval() + 1) * t.interval() }

func (t *globalTracker) arm() {
	if t.stopped {
		return
	}
	wait := t.nextExpiry - elapsedMillis(t.p.h)
	t.timer = t.p.h.setTimer(clock.Duration(max(wait, 0))*clock.Millisecond, (*sessionExpiryTimer)(t))
}

// tick is SessionTrackerImpl.run: expire the sessions of the bucket that is due. Like Java, it
// expires every session of the bucket, also one that is closing already: a closeSession that
// PrepRequestProcessor marked closing (setSessionClosing) leaves the session in its bucket, and if
// that closeSession has not committed when the bucket comes due, ExpiryQueue.poll hands the session
// over and the tracker submits a second closeSession for it.
func (t *globalTracker) tick() {
	if t.stopped {
		return
	}
	now := elapsedMillis(t.p.h)
	for now >= t.nextExpiry {
		due := t.buckets[t.nextExpiry]
		delete(t.buckets, t.nextExpiry)
		t.nextExpiry += t.interval()
		for _, id := range due {
			s, ok := t.sessions[id]
			if !ok || s.expiry != t.nextExpiry-t.interval() {
				continue // Touched into a later bucket (ExpiryQueue.update left this one), or removed.
			}
			s.closing = true
			t.p.note("session", "expiring session %#x, timeout of %dms exceeded", id, s.timeoutMs)
			t.expire.expireSession(id, s.timeoutMs)
		}
	}
	t.arm()
}

func (t *globalTracker) update(s *trackedSession, timeoutMs int32) {
	if t.p.cfg.SelfTests.Has(SelfTestNoSessionRenewal) {
		if s.expiry == 0 {
			s.expiry = t.roundToInterval(elapsedMillis(t.p.h) + 3*int64(timeoutMs))
			t.buckets[s.expiry] = append(t.buckets[s.expiry], s.id)
		}
		return // The self-test: a session is never renewed.
	}
	expiry := t.roundToInterval(elapsedMillis(t.p.h) + int64(timeoutMs))
	if expiry == s.expiry {
		return
	}
	s.expiry = expiry
	t.buckets[expiry] = append(t.buckets[expiry], s.id)
}

func (t *globalTracker) createSession(timeoutMs int32) int64 {
	id := t.nextID
	t.nextID++
	t.trackSession(id, timeoutMs)
	return id
}

func (t *globalTracker) trackSession(id int64, timeoutMs int32) {
	s, ok := t.sessions[id]
	if !ok {
		s = &trackedSession{id: id, timeoutMs: timeoutMs}
		t.sessions[id] = s
	}
	t.update(s, timeoutMs)
}

// touch is touchSession: false for an unknown or closing session.
func (t *globalTracker) touch(id int64, timeoutMs int32) bool {
	s, ok := t.sessions[id]
	if !ok || s.closing {
		return false
	}
	t.update(s, timeoutMs)
	return true
}

func (t *globalTracker) setClosing(id int64) {
	if s, ok := t.sessions[id]; ok {
		s.closing = true
	}
}

func (t *globalTracker) removeSession(id int64) { delete(t.sessions, id) }

func (t *globalTracker) isTracking(id int64) bool {
	_, ok := t.sessions[id]
	return ok
}

// checkSession is SessionTrackerImpl.checkSession.
func (t *globalTracker) checkSession(id int64, owner any) error {
	s, ok := t.sessions[id]
	switch {
	case !ok:
		return proto.UnknownSession
	case s.closing:
		return proto.SessionExpired
	case s.owner == nil:
		s.owner = owner
	case s.owner != owner:
		return proto.SessionMoved
	}
	return nil
}

// setOwner is SessionTrackerImpl.setOwner.
func (t *globalTracker) setOwner(id int64, owner any) error {
	s, ok := t.sessions[id]
	if !ok || s.closing {
		return proto.SessionExpired
	}
	s.owner = owner
	return nil
}

func (t *globalTracker) shutdown() {
	t.stopped = true
	t.p.h.cancel(t.timer)
}

// learnerTracker is LearnerSessionTracker with local sessions disabled: it only records which
// sessions were touched since the last PING, to report them to the leader, and issues session ids.
type learnerTracker struct {
	touched map[int64]int32
	order   []int64 // first-touch order of the current table, for a deterministic PING payload
	nextID  int64
}

func newLearnerTracker(p *peer) *learnerTracker {
	return &learnerTracker{touched: map[int64]int32{}, nextID: initialSessionID(p, p.sid)}
}

func (t *learnerTracker) createSession(timeoutMs int32) int64 {
	id := t.nextID
	t.nextID++
	t.touch(id, timeoutMs)
	return id
}

func (t *learnerTracker) touch(id int64, timeoutMs int32) bool {
	if _, ok := t.touched[id]; !ok {
		t.order = append(t.order, id)
	}
	t.touched[id] = timeoutMs
	return true
}

// forget is the touch-table part of LearnerSessionTracker.removeSession.
func (t *learnerTracker) forget(id int64) {
	if _, ok := t.touched[id]; !ok {
		return
	}
	delete(t.touched, id)
	t.order = slices.DeleteFunc(t.order, func(s int64) bool { return s == id })
}

// snapshot is getTouchSnapshot: the table is handed over and cleared.
func (t *learnerTracker) snapshot() []sessionTouch {
	out := make([]sessionTouch, 0, len(t.order))
	for _, id := range t.order {
		out = append(out, sessionTouch{id: id, timeoutMs: t.touched[id]})
	}
	clear(t.touched)
	t.order = t.order[:0]
	return out
}
