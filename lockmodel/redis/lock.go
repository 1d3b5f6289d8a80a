package redis

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
)

// LockConfig sets a lock's parameters. The defaults are go-redsync/redsync v4's (redsync.go
// NewMutex): an 8 s expiry, 32 tries, a retry delay drawn from [50, 250) ms, a drift factor of
// 0.01 and a timeout factor of 0.05 (each instance's command may take 5% of the expiry).
type LockConfig struct {
	// Key is the lock's key.
	Key string
	// TTL is the key's expiry (redsync's expiry; PX in the SET).
	TTL clock.Duration
	// Tries is how many rounds an acquisition makes before it gives up.
	Tries int
	// RetryDelayMin and RetryDelayMax bound the delay before each new round (uniform, in ms steps).
	RetryDelayMin, RetryDelayMax clock.Duration
	// DriftPPM is the allowance for clock drift, in parts per million of the TTL, subtracted from
	// the validity (redsync's driftFactor 0.01 is 10000 ppm). A negative value means none.
	DriftPPM int64
	// TimeoutPPM is each command's timeout, in parts per million of the TTL (redsync's
	// timeoutFactor 0.05 is 50000 ppm).
	TimeoutPPM int64
	// Fencing makes every SET NX come with an INCR of Key+":token" on the same instance, pipelined
	// after it; the grant's token is the largest counter among the instances that granted the lock.
	Fencing bool
}

// Defaults (redsync's).
const (
	DefaultTTL           = 8 * clock.Second
	DefaultTries         = 32
	DefaultRetryDelayMin = 50 * clock.Millisecond
	DefaultRetryDelayMax = 250 * clock.Millisecond
	DefaultDriftPPM      = 10_000
	DefaultTimeoutPPM    = 50_000
)

func (c LockConfig) withDefaults() LockConfig {
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.Tries == 0 {
		c.Tries = DefaultTries
	}
	if c.RetryDelayMin == 0 && c.RetryDelayMax == 0 {
		c.RetryDelayMin, c.RetryDelayMax = DefaultRetryDelayMin, DefaultRetryDelayMax
	}
	if c.DriftPPM == 0 {
		c.DriftPPM = DefaultDriftPPM
	}
	if c.TimeoutPPM == 0 {
		c.TimeoutPPM = DefaultTimeoutPPM
	}
	return c
}

func ppmOf(d clock.Duration, ppm int64) clock.Duration {
	if ppm <= 0 {
		return 0
	}
	return clock.Duration(int64(d) / 1_000_000 * ppm)
}

// Grant is how an acquisition ended.
type Grant struct {
	Held bool
	// Value is the random value the lock's key holds for this holder.
	Value string
	// Token is the fencing token (0 without fencing).
	Token int64
	// Until is the end of the lock's validity on the holder's monotonic clock (sim.World.Elapsed):
	// the round's start plus TTL minus the round's time minus the drift allowance.
	Until clock.Time
	// Votes is how many instances granted the lock in the deciding round.
	Votes int
	// Rounds is how many rounds the acquisition made.
	Rounds int
}

// ErrBusy: the lock has an acquisition, a holder or a release in progress.
var ErrBusy = errors.New("redis: the lock is busy")

// Lock is a lock on one Redis instance or, as Redlock, on N independent masters: one algorithm,
// redsync's Mutex (mutex.go lockContext), of which the single-instance lock of the SET command's
// documentation is the case N = 1.
//
// An acquisition round draws a random value (once per acquisition, as redsync's genValueFunc),
// sends SET key value NX PX ttl to every instance at once, each with its own timeout, and waits
// for every answer or timeout. The lock is held if a quorum (N/2+1) said OK and the validity
// (TTL minus the round's time minus the drift allowance) is still positive on the client's
// monotonic clock; otherwise the round releases on every instance and the next round starts
// after a random delay, up to Tries rounds. Release runs compare-and-delete on every instance;
// Extend runs compare-and-extend and computes the validity again.
type Lock struct {
	w       *sim.World
	node    sim.NodeID
	clients []*Client
	cfg     LockConfig
	quorum  int

	busy  bool
	held  bool
	value string
	until clock.Time
}

// NewLock returns a lock over the instances the clients talk to (one client per instance, all on
// the lock holder's node).
func NewLock(w *sim.World, node sim.NodeID, cfg LockConfig, clients ...*Client) (*Lock, error) {
	if w == nil || len(clients) == 0 || cfg.Key == "" {
		return nil, errors.New("redis: a lock needs a world, a key and at least one client")
	}
	cfg = cfg.withDefaults()
	if cfg.TTL < clock.Millisecond || cfg.Tries < 1 || cfg.RetryDelayMin < 0 || cfg.RetryDelayMax < cfg.RetryDelayMin || cfg.TimeoutPPM > 1_000_000 {
		return nil, fmt.Errorf("redis: bad lock parameters %+v", cfg)
	}
	return &Lock{w: w, node: node, clients: clients, cfg: cfg, quorum: len(clients)/2 + 1}, nil
}

// Config returns the lock's parameters, defaults filled in.
func (l *Lock) Config() LockConfig { return l.cfg }

// Quorum returns N/2+1.
func (l *Lock) Quorum() int { return l.quorum }

// Held reports whether the holder believes it holds the lock: it was granted and its validity has
// not run out on the holder's monotonic clock.
func (l *Lock) Held() bool { return l.held && l.w.Elapsed(l.node) < l.until }

// Until returns the end of the validity on the holder's monotonic clock.
func (l *Lock) Until() clock.Time { return l.until }

// randomValue draws the lock's value: 16 random bytes in hex, from the simulator's choices (redsync
// reads 16 bytes from the operating system's secure random source and base64-encodes them).
func (l *Lock) randomValue() string {
	const digits = "0123456789abcdef"
	b := make([]byte, 32)
	for i := range 16 {
		v := l.w.Choose(256)
		b[2*i], b[2*i+1] = digits[v>>4], digits[v&15]
	}
	return string(b)
}

// Acquire tries to take the lock and calls done with the outcome (never from inside this call).
func (l *Lock) Acquire(done func(Grant)) error {
	if l.busy || l.held {
		return ErrBusy
	}
	l.busy = true
	l.value = l.randomValue()
	l.round(1, done)
	return nil
}

// roundState collects one round's answers.
type roundState struct {
	start    clock.Time
	waiting  int
	votes    int
	token    int64
	granted  []bool
	counters []int64
}

func (l *Lock) timeout() clock.Duration {
	return max(ppmOf(l.cfg.TTL, l.cfg.TimeoutPPM), clock.Millisecond)
}

func (l *Lock) round(n int, done func(Grant)) {
	st := &roundState{start: l.w.Elapsed(l.node), granted: make([]bool, len(l.clients)), counters: make([]int64, len(l.clients))}
	ttlMillis := strconv.FormatInt(int64(l.cfg.TTL/clock.Millisecond), 10)
	finish := func() {
		st.waiting--
		if st.waiting > 0 {
			return
		}
		for i, ok := range st.granted {
			if ok {
				st.votes++
				st.token = max(st.token, st.counters[i])
			}
		}
		now := l.w.Elapsed(l.node)
		until := st.start.Add(l.cfg.TTL - ppmOf(l.cfg.TTL, l.cfg.DriftPPM))
		if st.votes >= l.quorum && now < until {
			l.busy, l.held, l.until = false, true, until
			done(Grant{Held: true, Value: l.value, Token: st.token, Until: until, Votes: st.votes, Rounds: n})
			return
		}
		l.releaseAll(func(int) {})
		if n >= l.cfg.Tries {
			l.busy = false
			done(Grant{Votes: st.votes, Rounds: n})
			return
		}
		delay := l.w.Between(l.cfg.RetryDelayMin, l.cfg.RetryDelayMax, clock.Millisecond)
		l.w.AfterFunc(l.node, delay, func() { l.round(n+1, done) })
	}
	for i, c := range l.clients {
		st.waiting++
		if err := c.Do(l.timeout(), func(r Reply, err error) {
			st.granted[i] = err == nil && r.IsOK()
			finish()
		}, "SET", l.cfg.Key, l.value, "NX", "PX", ttlMillis); err != nil {
			st.waiting--
			continue
		}
		if l.cfg.Fencing {
			st.waiting++
			if err := c.Do(l.timeout(), func(r Reply, err error) {
				if err == nil && r.Kind == KindInteger {
					st.counters[i] = r.Int
				}
				finish()
			}, "INCR", l.cfg.Key+":token"); err != nil {
				st.waiting--
			}
		}
	}
	if st.waiting == 0 {
		// No instance could even be asked (every dial refused at once): the round fails now, later
		// than now so that done is never called from inside Acquire.
		st.waiting = 1
		l.w.AfterFunc(l.node, clock.Millisecond, finish)
	}
}

// Release deletes the key on every instance where it still holds this holder's value and calls
// done with how many did (never from inside this call).
func (l *Lock) Release(done func(deleted int)) error {
	if l.busy || (!l.held && l.value == "") {
		return ErrBusy
	}
	l.held = false
	l.busy = true
	l.releaseAll(func(n int) {
		l.busy, l.value = false, ""
		done(n)
	})
	return nil
}

func (l *Lock) releaseAll(done func(int)) {
	waiting, deleted := 0, 0
	for _, c := range l.clients {
		waiting++
		err := c.Do(l.timeout(), func(r Reply, err error) {
			if err == nil && r.isInt(1) {
				deleted++
			}
			if waiting--; waiting == 0 {
				done(deleted)
			}
		}, "EVAL", ScriptCompareAndDelete, "1", l.cfg.Key, l.value)
		if err != nil {
			waiting--
		}
	}
	if waiting == 0 {
		l.w.AfterFunc(l.node, clock.Millisecond, func() { done(0) })
	}
}

// Extend resets the key's expiry on every instance that still holds this holder's value and
// computes the validity again (redsync's ExtendContext); done says whether a quorum did and the
// new validity is positive.
func (l *Lock) Extend(done func(ok bool)) error {
	if l.busy || !l.held {
		return ErrBusy
	}
	l.busy = true
	start := l.w.Elapsed(l.node)
	ttlMillis := strconv.FormatInt(int64(l.cfg.TTL/clock.Millisecond), 10)
	waiting, votes := 0, 0
	finish := func() {
		if waiting--; waiting > 0 {
			return
		}
		l.busy = false
		until := start.Add(l.cfg.TTL - ppmOf(l.cfg.TTL, l.cfg.DriftPPM))
		if votes >= l.quorum && l.w.Elapsed(l.node) < until {
			l.until = until
			done(true)
			return
		}
		done(false)
	}
	for _, c := range l.clients {
		waiting++
		if err := c.Do(l.timeout(), func(r Reply, err error) {
			if err == nil && r.isInt(1) {
				votes++
			}
			finish()
		}, "EVAL", ScriptCompareAndExtend, "1", l.cfg.Key, l.value, ttlMillis); err != nil {
			waiting--
		}
	}
	if waiting == 0 {
		waiting = 1
		l.w.AfterFunc(l.node, clock.Millisecond, finish)
	}
	return nil
}

// Abandon forgets the lock without releasing it, as a process that crashed does.
func (l *Lock) Abandon() { l.busy, l.held, l.value = false, false, "" }
