// Package sim is zabsim's deterministic simulation kernel: one world per run, single-threaded, in
// which a seed decides everything.
//
// A World owns virtual time, an event queue ordered by (virtual time, insertion sequence), the
// registered nodes with their local clocks, their timers, and the trace. Every nondeterministic
// decision (a latency, a fault, a client's choice of server) is asked of the world's Chooser:
//
//   - NewPCG(seed): random simulation; the same seed gives the same run, bit for bit;
//   - NewReplay(values): replays a recorded choice list (answers 0 once it runs out), for replay and
//     shrinking;
//   - NewBytes(data): reads choices from bytes, so that `go test -fuzz` can drive a run;
//   - NewRecorder(inner, limit): records another Chooser's answers for later replay.
//
// Simulated code never reads the host's clock, global randomness or the environment, and never
// starts goroutines; the determinism test in this module enforces that by parsing the source.
//
// A run is bounded by its Budget (events, virtual time, pending events): exhausting one ends the run
// with a distinct Outcome, never a hang. A panic in simulated code ends the run with a Panic outcome
// carrying the seed, the virtual time, the node, and the stack; the process survives. Checkers end a
// run with Fail.
//
// Usage:
//
//	w, err := sim.New(sim.Config{Seed: 42, Trace: sim.TraceConfig{Text: os.Stdout}})
//	if err != nil { ... }
//	id := w.AddNode("s1", server)             // server implements sim.Process (Crash, Restart)
//	w.SetTimer(id, 2*clock.Second, server, 1) // server implements sim.TimerHandler
//	w.After(10*clock.Second, func() { w.Crash(id) })
//	w.After(20*clock.Second, func() { w.Restart(id) })
//	w.RunUntil(clock.Time(60 * clock.Second))
//	o := w.Outcome()                          // kind, seed, virtual time, trace hash
//	w.Release()                               // optional: the next world reuses the queue's arrays
//
// Crash marks a node down, kills its timers (they belong to its incarnation), tells observers (the
// network breaks its connections) and calls its Crash hook, which must drop volatile state and keep
// only durable state; Restart calls its Restart hook. Pause and Resume model a stopped process (a
// long GC): its events wait, in order, while its clock keeps running.
//
// The trace has one record per event: virtual time, node, kind, detail. Every record feeds a running
// 64-bit hash (Outcome.TraceHash) whether or not text is produced; two runs are the same run exactly
// when their hashes are equal. Text and JSON-lines renderings, and an in-memory tail, are optional.
package sim
