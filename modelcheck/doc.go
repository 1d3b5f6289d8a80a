// Package modelcheck explores every state of a small configuration of zabsim's implementation
// within bounds, as TLC or stateright explore a specification: breadth-first (a shortest
// counterexample) or depth-first with a visited set, each state identified by a canonical
// fingerprint and judged by the same invariants as the random sweep, and a violation reported as
// the path of actions that reaches it, which Replay (and 'simrun replay --counterexample') runs
// again step by step.
//
// Two models are built in:
//
//   - FLEModel drives electionmodel.Election, the Fast Leader Election every simulated server
//     runs, over FIFO channels, with abstract timers (any armed timer may expire at any step) and
//     bounded crashes, restarts, notification timeouts and abandoned roles. Its states are
//     immutable values copied on write and hashed from a canonical encoding, so it explores tens of
//     thousands of states a second and finishes three servers completely.
//   - ZABModel runs the whole ensemble (zabmodel) and a client in a sim.World in schedule mode:
//     every enabled event of the world is a step, and the environment adds writes, crashes (now or
//     at a server's next effect boundary) and restarts. A state is its path; its fingerprint is
//     made of the nodes' history hashes. The first step from a state continues in its live world,
//     and the later ones in copies of it (package internal/deepcopy; copy.go), so a depth-first
//     search never re-executes a path; a breadth-first one re-executes a queued state's path
//     once, from a copy of the world after the warm-up (ZABConfig.NoCopy re-executes instead,
//     firing the warm-up's recorded choice prefix; ZABConfig.NoReuse switches every saving off). Besides checkers/zab, every state's client history
//     (creates, exists reads with a watch, events, the committed log) is judged by the sweep's
//     client-visible checkers (checkers.Run), and a terminal state by the deadlock rules.
//     The client's session health is recorded at every state, so that the session checker's
//     wrongful-expiry rule applies (ZABConfig.MinTimers lets time pass after the writes).
//     With ZABConfig.Lockers, lock applications run Curator's InterProcessMutex against a
//     fenced resource (zab_lock.go), and every state is judged by the lock checkers too
//     (checkers/lock), with the recipe bugs of ZABConfig.RecipeBugs.
//     With ZABConfig.Coarse it explores a coarser space: after every step the due events run in
//     their canonical order (the first enabled), and the choices are only timers, writes and
//     faults (crashes now, or armed to strike at a server's next effect boundary or, within
//     BoundarySkips, a later one; restarts). That is NOT the full interleaving space: no two
//     deliveries are ever reordered, so a coarse run without a violation proves only that no
//     fault and timer schedule within the bounds breaks the canonical delivery order. What it
//     buys is depth where the bug zoo's bugs live: the full space spends every step on one
//     delivery and reaches four or five steps past the warm-up in a minute, the coarse one nine
//     or ten faults and timers.
//
// Usage:
//
//	m, _ := modelcheck.NewFLE(modelcheck.FLEConfig{Servers: 3, Crashes: 1, Restarts: 1})
//	r, err := modelcheck.Check(ctx, m, modelcheck.Options{Strategy: modelcheck.BFS, Workers: 2})
//	if err != nil { ... }                        // the model itself failed: a bug in zabsim
//	fmt.Println(r.Distinct, r.Depth, r.Complete) // TLC's figures
//	if r.Violation != nil {
//		cx := &modelcheck.Counterexample{Model: m, Path: r.Path, Violation: r.Violation}
//		cx.Write(file)                           // one step per line; ReadCounterexample reads it
//	}
//
// Soundness. A search prunes a state whose fingerprint it has seen, so a fingerprint must cover
// everything that can influence the future: the FLE model encodes every election's complete state,
// every channel's contents, the send slots and the bounds used. The ZAB model's history hashes
// are sound because a node's state is a function of its inputs in order (sim.World's schedule
// mode folds every dispatched event and every trace record of the node into its hash); values
// from global counters (connection and timer ids) are treated as names, which holds as long as no
// code orders its work by them. Symmetry reduction is not applied: Fast Leader Election breaks
// ties by sid (totalOrderPredicate), so two servers are interchangeable only when their zxids and
// epochs differ in a way that decides every comparison before the sid does, and the bookkeeping
// to exploit that is not worth it at these sizes. Deliveries to different nodes commute in the
// ZAB model's fingerprint by construction (each node's history is its own; ZABConfig.NoCommute
// switches that off). Sleep sets (sleep.go; Options.NoSleepSets switches them off) are the
// partial-order reduction: they keep every state and skip the successors that commuting actions
// would only reach again.
//
// The package is not simulated code: it reads the wall clock for its time budget and progress,
// and BFS expands each level on several goroutines, merging their results in a fixed order so
// that every count and counterexample is the same for any number of workers.
package modelcheck
