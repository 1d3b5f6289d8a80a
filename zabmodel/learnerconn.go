package zabmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// The learner's connection to its leader as steps of its core (see learnercore.go): ZooKeeper
// 3.8.0's Learner.connectToLeader with its LeaderConnector.connectToLeader (one leader address:
// the model has one), the FOLLOWERINFO or OBSERVERINFO that Learner.registerWithLeader writes
// first, the socket's read timeout (Learner.createSocket's setSoTimeout of tickTime * initLimit,
// which syncWithLeader's NEWLEADER case lowers to tickTime * syncLimit) and Learner.shutdown's
// closing of the socket. The core decides; the learner (learner.go) dials, arms and cancels the
// timers and closes the socket, as effects:
//
//   - a try (learnerConnect, learnerConnectRetry) gives up once initLimit ticks have passed since
//     the first ("connectToLeader exceeded on retries"), and otherwise dials (effectDial) with the
//     smaller of the whole budget and what is left of it, as sockConnect does;
//   - a failed try (learnerClosed while connecting) gives up when what is left of the budget is
//     at most leaderConnectDelayDuringRetryMs, or after the fifth failure ("tries >= 4", counting
//     from 0), and otherwise sleeps leaderConnectDelayDuringRetryMs (effectConnectRetry) before
//     the next: 100 ms by default (the comment "retries sleep for 1000 milliseconds" in
//     LeaderConnector.connectToLeader is older than that property);
//   - a connection (learnerConnected) writes FOLLOWERINFO or OBSERVERINFO with the accepted epoch
//     and arms the read timeout of initLimit ticks (effectReadTimeout);
//   - every packet read (learnerRead) re-arms the read timeout: syncLimit ticks once the learner
//     serves or, in Zab 1.0, once NEWLEADER set it, initLimit ticks before;
//   - the read timeout (learnerReadTimeout) or a connection closed after it was made ends the
//     role (effectLeave), as the IOException does that ends Follower.followLeader;
//   - Learner.shutdown (learnerShutdown) cancels the read timeout and closes the socket
//     (effectDisconnect), and drops the pending revalidations.
//
// Ordering contract: FOLLOWERINFO is written before the read timeout is armed; a packet's read
// timeout is re-armed before the packet is handled; the read timeout is cancelled before the socket
// is closed. After a shutdown (lsDead) the core answers no input of the connection.

// connectTry is one try of LeaderConnector.connectToLeader's loop.
func (c *learnerCore) connectTry(out *ready, now clock.Time, view learnerView) {
	remaining := c.initTimeout - now.Sub(c.connectStart)
	if remaining <= 0 {
		out.add(effect{kind: effectLeave, text: "connectToLeader exceeded on retries"})
		return
	}
	if !view.knowsServer(c.leaderSid) {
		out.add(effect{kind: effectLeave, text: fmt.Sprintf("no server %d to follow", c.leaderSid)})
		return
	}
	c.state = lsConnecting
	out.add(effect{kind: effectDial, zxid: int64(min(c.initTimeout, remaining))})
}

// connectFailed is LeaderConnector.connectToLeader's catch of a failed sockConnect.
func (c *learnerCore) connectFailed(out *ready, now clock.Time, reason string) {
	c.tries++
	remaining := c.initTimeout - now.Sub(c.connectStart)
	if remaining <= leaderConnectDelayDuringRetry || c.tries >= 5 {
		out.add(effect{kind: effectLeave, text: fmt.Sprintf("could not connect to leader %d after %d tries: %s", c.leaderSid, c.tries, reason)})
		return
	}
	out.add(effect{kind: effectConnectRetry, zxid: int64(leaderConnectDelayDuringRetry)})
}

// connectionStep is the core's step for the inputs of the connection.
func (c *learnerCore) connectionStep(out *ready, in learnerInput, view learnerView) {
	if c.state == lsDead {
		return
	}
	switch in.kind {
	case learnerConnect:
		c.connectStart = in.now
		c.connectTry(out, in.now, view)
	case learnerConnectRetry:
		if c.state == lsConnecting {
			c.connectTry(out, in.now, view)
		}
	case learnerConnected:
		if c.state != lsConnecting {
			return
		}
		c.state = lsAwaitLeaderInfo
		t := pktFollowerInfo
		if c.observer {
			t = pktObserverInfo
		}
		out.add(effect{kind: effectSend, zxid: int64(t), packet: c.mem.encodePacket(&proto.QuorumPacket{
			Type: t, Zxid: MakeZxid(view.acceptedEpochValue(), 0), Data: learnerInfoData(c.self)})})
		out.add(effect{kind: effectReadTimeout, zxid: int64(c.initTimeout)})
	case learnerClosed:
		if c.state == lsConnecting {
			c.connectFailed(out, in.now, in.failure)
			return
		}
		out.add(effect{kind: effectLeave, text: "connection to leader closed: " + in.failure})
	case learnerRead:
		timeout := c.initTimeout
		if c.state == lsBroadcast || (c.state == lsSyncing && !c.preZab1) {
			timeout = c.syncTimeout
		}
		out.add(effect{kind: effectReadTimeout, zxid: int64(timeout)})
	case learnerReadTimeout:
		out.add(effect{kind: effectLeave, text: "read timed out"})
	case learnerShutdown:
		c.state = lsDead
		out.add(effect{kind: effectDisconnect})
		clear(c.pendingRevalidations)
	}
}
