// Package checkers judges what the simulated clients of a zabsim run observed against what
// ZooKeeper 3.8.0 promises them: linearizable writes, FIFO client order, sequentially consistent
// reads (a session never sees state go backwards, across reconnects too, and sees its own
// writes; a read after sync is at least as new as the leader was when the sync was called),
// one-shot watches delivered before the data that reflects them, ephemeral nodes that die with
// their session, and progress once faults heal.
//
// The runner records a History: per client the operations with their virtual call and return
// times, results and reply zxids (an operation whose outcome is unknown is kept as such, never
// dropped or guessed), the ordered stream of replies, watch events and state changes that reached
// the client, the committed log as the simulator's global view knows it, and a few facts (the
// leader's committed zxid when each sync was called, how sessions ended, when they were healthy,
// the liveness phase). The Recorder fills a History as the run goes.
//
// The committed log holds changes no client issued: the closeSession of an expired session and
// the deleteContainer with which the leader's container manager removes an empty container (the
// lock recipes make their parents as containers). The checkers replay them like any other
// transaction, so a read must reflect them and a watch they trigger must fire.
//
// Each checker returns a Result: Pass, Violation (with findings that name the checker, rule,
// clients, sessions, operations, zxids and virtual times), Unknown when it could not decide (never
// a pass), Skipped when it had nothing to judge, or Known when every finding is a documented
// behaviour of the modelled software (Finding.Known names its class; StatusOf decides), which does
// not fail a run unless the run asks for it. Bad input is an error wrapping
// ErrInvalidHistory (or ErrOutsideModel for a model that does not fit the workload), never a
// panic.
//
// Usage:
//
//	rec := checkers.NewRecorder()
//	ref := rec.Call("c1", now, checkers.Operation{Kind: proto.OpSetData, Session: sid, Xid: 7,
//		Path: "/r/k1", Data: []byte("v"), Version: 3})
//	_ = rec.Reply(ref, later, checkers.Reply{Err: proto.OK, Zxid: 0x100000009, Stat: &stat})
//	_ = rec.Fail(other, later, proto.ConnectionLoss, checkers.OutcomeUnknown)
//	_ = rec.Result(third, later, checkers.Reply{Err: r.Err, Zxid: r.Zxid}) // a reply if Zxid > 0, else unknown
//	rec.Event("c1", sid, t, proto.EventNodeDataChanged, "/r/k1", -1)
//	rec.State("c1", sid, t, proto.StateDisconnected)
//	_ = rec.Commit(entry, t) // every committed txn, in zxid order
//	rec.SessionStarted(sid, "c1", timeout)
//	_ = rec.SessionHealthy(sid, from, to)
//	_ = rec.SessionEnded(sid, checkers.SessionEnd{Zxid: closeZxid, Time: t, Expired: true})
//	_ = rec.ForcedExpiry(checkers.ForcedExpiry{Session: sid, Client: "c1", Killer: "killer-c1", Time: t})
//	h := rec.Finish(end, &checkers.LivenessFacts{HealTime: heal, LeaderTime: elected, Completed: true})
//
//	start := time.Now() // determinism:ok the caller, outside the simulated world, times the checks
//	report, err := checkers.Run(h, checkers.Options{
//		Linearizability: []checkers.LinearizabilityOptions{{Model: checkers.RegisterModel, Prefix: "/r"}},
//		Checker:         checkers.ZxidOrderChecker, // or PorcupineChecker, or BothCheckers
//		Liveness:        checkers.LivenessOptions{LeaderBound: 10 * clock.Second, OperationBound: 30 * clock.Second},
//		Stopwatch:       func() time.Duration { return time.Since(start) }, // determinism:ok optional, host time
//	})
//	if report.Failed() { fmt.Print(report) }
//
// Linearizability is judged with three models (a register per znode, partitioned by path; the
// whole tree, for multi; the sequential queue), by one of two checkers (Options.Checker):
//
//   - zxid order (CheckZxidOrder, the default): every operation is placed at the zxid of its
//     transaction (a replied write at its reply zxid, which must name its own transaction; an
//     unknown outcome where the committed log has it; a read just after its reply zxid), and that
//     one order is verified in near-linear time: the models replay it to every recorded result,
//     it respects real time and each session's order. It never says Unknown. A pass exhibits a
//     linearization, so it holds whatever the zxids say; a violation relies on the zxids reported
//     to clients being truthful, and a server that misreports them is caught as such (rules
//     reply-zxid, reply-transaction) even where porcupine, which ignores zxids, finds some other
//     order that explains the values.
//   - porcupine (CheckLinearizability): a search for a linearization, after settling unknown
//     outcomes from the committed log; exponential in concurrency, bounded by a time limit past
//     which the verdict is Unknown.
//
// BothCheckers runs both and adds a cross-check result that fails when they disagree. Reads are not in the
// linearizability check by default because ZooKeeper does not promise linearizable reads
// (ZOOKEEPER-1675); the sequential-consistency checker judges them instead, exactly, against the
// state at their reply zxid. LinearizableReadsAfterSync is an opt-in check of the stronger
// property, reported as beyond ZooKeeper's guarantees.
//
// Like every simulated package, checkers reads no clock, randomness or environment and never
// ranges over a map in an order that can reach a result; the host time a check takes is measured
// only through the Stopwatch the caller passes.
package checkers
