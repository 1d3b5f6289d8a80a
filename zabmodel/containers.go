package zabmodel

import (
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// containerManager is ContainerManager, which a leader (LeaderZooKeeperServer.startup) and a
// standalone server (ZooKeeperServerMain) run: every ContainerCheckInterval it collects the empty
// containers that once had a child and the TTL nodes past their time (datatree's
// ContainerCandidates) and submits a deleteContainer request for each, as a request of no session
// straight into the preparation stage, one every minute / ContainerMaxPerMinute. A candidate that
// gained a child or a setData in between fails in preparation (NotEmpty) and is logged as an error
// txn, as in Java.
//
// Java runs the check on a java.util.Timer at a fixed rate, on one thread: a check still
// submitting when the next is due delays it, and the next starts as soon as it is done. Java's
// Timer follows the wall clock; the manager here follows the server's monotonic clock, so a
// wall-clock step does not move its checks.
type containerManager struct {
	zk      *zkServer
	timer   sim.TimerID
	next    clock.Time // when the next check is due, on the server's elapsed clock
	pending []string   // candidates of the running check not yet submitted
	due     bool       // a check came due while one was still submitting
	stopped bool
}

// startContainerManager is ContainerManager.start: the first check one interval from now.
func (zk *zkServer) startContainerManager() {
	cm := &containerManager{zk: zk}
	zk.containers = cm
	interval := zk.p.cfg.ContainerCheckInterval
	cm.next = zk.p.h.elapsed().Add(interval)
	cm.timer = zk.p.h.setTimer(interval, (*containerCheckTimer)(cm))
}

// stop is ContainerManager.stop; the role's shutdown calls it.
func (cm *containerManager) stop() {
	if cm == nil || cm.stopped {
		return
	}
	cm.stopped = true
	cm.pending = nil
	cm.zk.p.h.cancel(cm.timer)
}

// fire is the fixed-rate timer: a check starts now, or when the running one is done.
func (cm *containerManager) fire() {
	if cm.stopped {
		return
	}
	interval := cm.zk.p.cfg.ContainerCheckInterval
	cm.next = cm.next.Add(interval)
	if len(cm.pending) > 0 {
		cm.due = true
	} else {
		cm.check()
	}
	cm.timer = cm.zk.p.h.setTimer(cm.next.Sub(cm.zk.p.h.elapsed()), (*containerCheckTimer)(cm))
}

// check is checkContainers: the candidates of this moment, submitted one per minimum interval.
func (cm *containerManager) check() {
	t := cm.zk.p.db.tree
	if t == nil {
		return
	}
	never := int64(cm.zk.p.cfg.ContainerMaxNeverUsed / clock.Millisecond)
	cm.pending = t.t.ContainerCandidates(cm.zk.p.h.wallMillis(), never)
	cm.submitNext()
}

// submitNext submits the next candidate's deleteContainer and sleeps the minimum interval before
// the one after (the submission itself takes no time).
func (cm *containerManager) submitNext() {
	if cm.stopped {
		return
	}
	if len(cm.pending) == 0 {
		if cm.due {
			cm.due = false
			cm.check()
		}
		return
	}
	path := cm.pending[0]
	cm.pending = cm.pending[1:]
	cm.zk.p.note("containers", "attempting to delete candidate container %s", path)
	cm.zk.submit(&request{op: proto.OpDeleteContainer, body: []byte(path)})
	minInterval := clock.Minute / clock.Duration(cm.zk.p.cfg.ContainerMaxPerMinute)
	cm.zk.p.h.setTimer(minInterval, (*containerSubmitTimer)(cm))
}
