package scenarios

import (
	"fmt"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/client"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// killerPatience bounds how long a killer may try to connect and close its victim's session. A
// killer that has not finished by then exits, whether or not its closeSession went out: an
// ensemble without a quorum could otherwise keep it trying into the liveness phase.
const killerPatience = 2 * sessionTimeout

// killer forces an application's session to expire the way ZooKeeper's own tests and Curator's old
// KillSession utility do: a separate client process connects to the ensemble with the victim's
// session id and password (which makes it the session's connection, closing the victim's
// connection on that server, as ZooKeeperServer.processConnectRequest does), and once connected it
// sends closeSession. The ensemble then closes the session while the victim's own client is still
// alive: the servers close the victim's connection when the closeSession commits (ZOOKEEPER-558),
// its ephemeral nodes go, and its client learns on reconnecting that the session expired.
//
// A killer is a process of its own, on its own node ("killer-c1" for c1), reused by every forced
// expiry of that application. It is no application: nothing it does is an operation of the history.
// The runner records only that it sent closeSession (checkers.ForcedExpiry), which is what the
// session checker needs to tell a forced expiry from a session taken from a heartbeating client.
type killer struct {
	r      *runner
	victim *app
	name   string
	node   sim.NodeID

	c        *client.Client
	session  int64
	attempts int  // forced expiries started, for unique client names and stale timers
	active   bool // a forced expiry is under way
	sent     bool // its closeSession went out
}

func newKiller(r *runner, victim *app) *killer {
	k := &killer{r: r, victim: victim, name: "killer-" + victim.name}
	k.node = r.w.AddNode(k.name, k)
	return k
}

// Crash implements sim.Process: the killer's process is gone, and its attempt with it.
func (k *killer) Crash() { k.c, k.active = nil, false }

// Restart implements sim.Process: a killer starts only when a forced expiry asks for one.
func (k *killer) Restart() {}

// expire forces the session of every application target names ("c3" or "all") to expire, and
// returns how many killers it started. An application without a session to take (its process is
// down, it has not connected yet, its client is closed) or whose killer is still at work is left
// alone, with a note in the trace: if every one is, the action did nothing.
func (r *runner) expire(target string) int {
	started := 0
	for _, a := range r.targetApps(target) {
		if r.expireApp(a) {
			started++
		}
	}
	return started
}

// targetApps resolves a client target: "cN" or "all".
func (r *runner) targetApps(target string) []*app {
	if target == "all" {
		return r.apps
	}
	var out []*app
	for _, n := range r.targets(target) {
		for _, a := range r.apps {
			if a.node == n {
				out = append(out, a)
			}
		}
	}
	return out
}

func (r *runner) expireApp(a *app) bool {
	var why string
	switch {
	case !r.w.IsUp(a.node):
		why = "its process is down"
	case a.c == nil:
		why = "it has not started its client yet"
	case !a.c.State().IsAlive():
		why = "its client is closed"
	case a.c.SessionID() == 0:
		why = "it has no session yet"
	case a.killer != nil && a.killer.active:
		why = "its killer is still at work"
	}
	if why != "" {
		r.w.Note(a.node, "fault", "expire %s: nothing to do, %s", a.name, why)
		return false
	}
	if a.killer == nil {
		a.killer = newKiller(r, a)
	}
	timeout := a.c.NegotiatedTimeout()
	if timeout <= 0 {
		timeout = r.appSessionTimeout()
	}
	a.killer.start(a.c.SessionID(), a.c.Password(), timeout)
	return true
}

// killerFirstXid is where a killer's xids start. A learner's CommitProcessor matches a commit to
// its oldest pending write by session and cxid alone; a killer starting at 1, as a plain client
// does, would have its closeSession answer a victim's pending write of the same xid on another
// server, and for a reply with a Stat (create2, setData, setACL) Java's serializer would throw and
// halt that server's CommitProcessor. That is an artifact of hijacking a session, which no
// application does, so the killer keeps out of the victim's xid range instead.
const killerFirstXid = 1 << 30

// start makes the killer's client, which resumes the victim's session, as `new ZooKeeper(connect,
// timeout, watcher, sessionId, sessionPasswd)` does.
func (k *killer) start(session int64, password []byte, timeout clock.Duration) {
	w := k.r.w
	w.Restart(k.node) // The previous forced expiry ended with the killer's exit.
	k.attempts++
	w.Note(k.node, "fault", "%s resumes session %#x of %s to close it", k.name, session, k.victim.name)
	c, err := client.New(w, k.r.nw, k.node, client.Config{
		Servers: k.r.ens.Nodes(), SessionTimeout: timeout, Name: fmt.Sprintf("%s.%d", k.name, k.attempts),
		SessionID: session, Password: password, FirstXid: killerFirstXid,
	}, client.WatcherFunc(k.event))
	if err != nil {
		// The configuration is the victim's own, which its client accepted.
		panic(fmt.Sprintf("scenarios: killer of %s: %v", k.victim.name, err))
	}
	k.c, k.session, k.active, k.sent = c, session, true, false
	attempt := k.attempts
	w.AfterFunc(k.node, killerPatience, func() {
		if k.active && k.attempts == attempt {
			k.finish(fmt.Sprintf("gave up after %v", killerPatience))
		}
	})
}

// event is the killer's default watcher: it closes the session as soon as it holds it.
func (k *killer) event(e client.Event) {
	if e.Type != proto.EventNone || !k.active || k.c == nil {
		return
	}
	switch e.State {
	case proto.StateSyncConnected:
		if k.sent {
			return
		}
		k.sent = true
		now := k.r.w.Now()
		err := k.r.rec.ForcedExpiry(checkers.ForcedExpiry{Session: k.session, Client: k.victim.name, Killer: k.name, Time: now})
		if err != nil {
			k.r.w.Fail(fmt.Errorf("scenarios: forced expiry: %w", err))
			return
		}
		k.r.w.Note(k.node, "fault", "%s holds session %#x of %s: closeSession", k.name, k.session, k.victim.name)
		if err := k.c.Close(k.closed); err != nil {
			k.finish(fmt.Sprintf("could not send closeSession: %v", err))
		}
	case proto.StateExpired:
		k.finish("the session had already expired")
	}
}

// closed receives the closeSession's result: OK, or a code the client chose when it gave up on
// the request (CONNECTIONLOSS: the close may or may not commit).
func (k *killer) closed(res client.Result) {
	if k.active {
		k.finish(fmt.Sprintf("closeSession of %#x finished with %v", k.session, res.Err))
	}
}

// finish ends the forced expiry: the killer's process exits, a moment later, so that its client
// is not torn down from inside its own callback.
func (k *killer) finish(why string) {
	k.r.w.Note(k.node, "fault", "%s: %s", k.name, why)
	k.active = false
	attempt := k.attempts
	k.r.w.After(0, func() {
		if k.attempts == attempt {
			k.r.w.Crash(k.node)
		}
	})
}

// stopKillers ends every forced expiry still under way: the liveness phase heals every fault.
func (r *runner) stopKillers() {
	for _, a := range r.apps {
		if k := a.killer; k != nil && k.active {
			k.finish("stopped by the liveness phase")
		}
	}
}
