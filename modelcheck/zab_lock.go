package modelcheck

import (
	"fmt"
	"strings"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/checkers/lock"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/lockmodel/locklog"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
)

// The lock configuration of the ZAB model (ZABConfig.Lockers). Each locker is an application
// node with its own ZooKeeper client and Curator session (lockmodel.Session) running
// InterProcessMutex (lockmodel.Mutex) on one fair lock, and a client of the protected resource
// (lockmodel.Resource, fencing by the lock node's czxid unless lock-no-fencing is switched on).
// The environment's action "lock lN" starts locker N's one cycle: acquire, and once granted, one
// write to the resource under the lock's token, then release; everything after the action runs
// from the recipe's callbacks, so its requests, replies, watch events and resource messages are
// the world's events that the search orders like any other. The recipe bug switches
// (ZABConfig.RecipeBugs) act in every locker's session.
//
// Judges at every state: the lock checkers of the sweep (checkers/lock: mutual exclusion,
// unsafe-without-fencing, fairness, herd, orphans, exclusive belief, churn) on the recipes'
// events, the resource's log and the committed log so far, as scenarios' lock workload records
// them; progress, which needs the end of the faults, is left to the deadlock judge: a path that
// ends with a cycle unfinished, not cut by a bound, is a deadlock. The lockers' requests are not
// put in the client-visible history (the sweep judges them with the write-order model, not the
// tree model this one uses), so only c1's operations are judged by checkers.Run.
//
// The lock log takes events of several nodes in the order they happen; between two paths that
// reach one fingerprint by commuting deliveries, only events at the same instant can be
// recorded in another order, and the lock checkers order what they judge by time and zxid. The
// records are made by lockmodel/locklog, as the sweep's lock workloads make them.

// lockPath is the fair lock the lockers share (scenarios' fairLockPath).
const lockPath = "/locks/fair"

// maxLockers bounds ZABConfig.Lockers: the environment names a locker in one action's argument,
// and more than three lockers take a state space no search here finishes.
const maxLockers = 3

// lockDriver holds the lockers, the resource and the lock checkers' records.
type lockDriver struct {
	zw       *zabWorld
	resource *lockmodel.Resource
	lockers  []*locker
	log      *locklog.Log
	issued   int
	done     int
}

// locker is one lock application.
type locker struct {
	name    string
	node    sim.NodeID
	client  *client.Client
	session *lockmodel.Session
	mutex   *lockmodel.Mutex
	rc      *lockmodel.ResourceClient
	issued  bool
	done    bool
}

func newLockDriver(zw *zabWorld) (*lockDriver, error) {
	cfg := zw.m.cfg
	d := &lockDriver{zw: zw, log: locklog.New()}
	res, err := lockmodel.NewResource(zw.w, zw.nw, lockmodel.ResourceConfig{Fencing: !cfg.RecipeBugs.Has(lockmodel.BugNoFencing)})
	if err != nil {
		return nil, fmt.Errorf("modelcheck: the lock resource: %w", err)
	}
	d.resource = res
	for i := range cfg.Lockers {
		l := &locker{name: fmt.Sprintf("l%d", i+1)}
		l.node = zw.w.AddNode(l.name, nil)
		// The session is made after the client, whose watcher passes it every state event.
		l.client, err = client.New(zw.w, zw.nw, l.node, client.Config{Servers: zw.nodes, SessionTimeout: 6 * clock.Second},
			client.WatcherFunc(func(e client.Event) {
				if l.session != nil {
					l.session.ConnectionEvent(e)
				}
			}))
		if err == nil {
			l.session, err = lockmodel.NewSession(zw.w, l.client, lockmodel.Config{Name: l.name, Bugs: cfg.RecipeBugs,
				Observer: d.log})
		}
		if err == nil {
			l.mutex, err = lockmodel.NewMutex(l.session, lockPath, []byte(l.name))
		}
		if err == nil {
			l.rc, err = lockmodel.NewResourceClient(zw.w, zw.nw, l.node, res, l.name)
		}
		if err != nil {
			return nil, fmt.Errorf("modelcheck: locker %s: %w", l.name, err)
		}
		d.lockers = append(d.lockers, l)
	}
	return d, nil
}

// connected reports whether every locker's session is connected (the warm-up waits for it).
func (d *lockDriver) connected() bool {
	for _, l := range d.lockers {
		if !l.session.State().IsConnected() {
			return false
		}
	}
	return true
}

// finished reports whether every cycle that started ran to its end and no locker is left to
// start (canStart: the start window of ZABConfig.LockStartBy is still open).
func (d *lockDriver) finished(canStart bool) bool {
	return d.done == d.issued && (d.issued == len(d.lockers) || !canStart)
}

// start runs locker i's cycle: acquire, one write to the resource under the token, release.
func (d *lockDriver) start(i int) error {
	l := d.lockers[i]
	if l.issued {
		return fmt.Errorf("modelcheck: %s already ran its cycle", l.name)
	}
	l.issued = true
	d.issued++
	d.zw.w.NoteHistory(l.node, "lock")
	d.zw.w.Note(l.node, "op", "acquire %s", lockPath)
	end := func() {
		if !l.done {
			l.done = true
			d.done++
		}
	}
	release := func() {
		if err := l.mutex.Release(func(error) { end() }); err != nil {
			end()
		}
	}
	return l.mutex.Acquire(0, func(g lockmodel.Grant) {
		if !g.Held {
			end()
			return
		}
		if err := l.rc.Access(lockPath, l.session.SessionID(), g.Token, true, func(lockmodel.AccessResult) { release() }); err != nil {
			release()
		}
	})
}

// judge applies the lock checkers to the history so far (committed: the committed log).
func (d *lockDriver) judge(committed []checkers.CommittedTxn) *Violation {
	now := d.zw.w.Now()
	h := &lock.History{
		Locks:     []lock.Lock{{Path: lockPath, Kind: lock.KindFair}},
		Committed: committed, End: now,
		Fencing: d.resource.Fencing(),
	}
	d.log.Fill(h, now)
	for _, a := range d.resource.Log() {
		h.Accesses = append(h.Accesses, lock.Access{Lock: a.Object, Client: a.Client, Session: a.Session, Token: a.Token,
			Write: a.Write, Accepted: a.Accepted, Newest: a.Newest, Time: a.Time})
	}
	results, err := lock.Run(h, lock.Options{})
	if err != nil {
		return &Violation{Invariant: "lock/history", Explanation: "the lock history is malformed: " + err.Error()}
	}
	return firstViolation(results)
}

// firstViolation turns the first failing result (a violation, or a checker that could not
// decide) into a Violation; a known finding (checkers.Known) passes, as in the sweep.
func firstViolation(results []checkers.Result) *Violation {
	for _, res := range results {
		if res.Status != checkers.Violation && res.Status != checkers.Unknown {
			continue
		}
		var lines []string
		for _, f := range res.Findings {
			lines = append(lines, f.String())
		}
		if len(lines) == 0 {
			lines = append(lines, res.Summary)
		}
		return &Violation{Invariant: res.Checker, Explanation: strings.Join(lines, "; ")}
	}
	return nil
}
