// Package electionmodel is ZooKeeper's Fast Leader Election (FastLeaderElection.java in 3.8.0) as a
// pure state machine: notifications and timeouts go in, notifications to send, timer requests and
// a decision come out as data. It has no clock, no network and no goroutines, so the simulator, a
// scripted test or an exhaustive explorer can drive it alike.
//
// One Election object lives as long as its server process. Start begins a round (lookForLeader);
// Receive handles one notification, doing both what the Java WorkerReceiver thread does on arrival
// (answering peers that are behind or not looking) and what lookForLeader does with it; Timeout
// reports that the timer the election asked for expired. While the server is FOLLOWING, LEADING or
// OBSERVING, the election keeps answering LOOKING peers with its current vote, as the real receiver
// thread does.
//
// Usage:
//
//	e, _ := electionmodel.New(electionmodel.Config{ID: 1, Voters: []int64{1, 2, 3}, Participant: true})
//	out := e.Start(lastLoggedZxid, currentEpoch) // new round: vote for self, notify every voter (self too)
//	for _, s := range out.Send { transport.Send(s.To, s.Notification.Encode()) }
//	if out.Timer.Set { arm(out.Timer.After) }
//	...
//	out = e.Receive(n)                           // on each notification, from any sender
//	out = e.Timeout(transport.HaveDelivered())   // when the armed timer expires
//	if out.Decided != nil { becomeRole(out.Decided.State, out.Decided.Leader) }
//
// Notifications to the server itself appear in Send like any other; the transport must deliver them
// locally at once, as QuorumCnxManager does.
package electionmodel
