// Command simrun drives zabsim from the shell: it sweeps seeds in parallel and reports the failing
// ones with the command that replays each, replays one seed with its full trace and checks that it
// replays bit for bit, shrinks a failing seed's fault script, explores a small configuration crash
// point by crash point (one run per place where a server could die between two persistence
// steps), prints the script a seed draws, runs conformance sequences against the simulated server,
// lists the bug switches, merges the shards of a sweep run on several machines, runs a farm that
// records each distinct failure in an SQLite database (and lists them), hunts each bug of the zoo
// to measure how fast a sweep finds it, and benchmarks the simulator.
//
// A seed's script is drawn from a random stream of its own (scenarios.DrawScript), so 'simrun
// script --seed S' does not run the seed, and replaying that script with --seed S is the seed's
// very run. For a failing linearizability check, --out also writes porcupine's HTML visualization.
//
// simrun lives outside the simulated world: it reads the host's clock, starts goroutines and reads
// files. One seed is one scenarios.Run on one goroutine; parallelism is across seeds only.
//
// Usage synopsis:
//
//	simrun run [--seeds N] [--seed-start S | --seed S] [--shard i/n | --shard-from-env N] [--parallel P]
//	           [--time-limit D]
//	           [--servers N] [--observers N] [--clients N] [--workload W] [--faults LIST]
//	           [--duration D] [--liveness-bound D] [--bug NAME]... [--script FILE]
//	           [--linearizable-reads-after-sync] [--datagram-faults] [--fail-on-known]
//	           [--json] [--out DIR] [--out-max N] [--stop-on-failure] [--quiet]
//	simrun merge [--json] [--quiet] [FILE...]            (shards' --json output; stdin if none)
//	simrun farm --db FILE --time-limit D [--seeds N] [--parallel P] [--seed-start S]
//	            [--shrink-time D] [--shrink-runs N] [--quiet] [scenario flags]
//	simrun failures --db FILE [--json] [--id ID] [--export DIR]
//	simrun replay --seed S [scenario flags] [--trace-json]
//	simrun replay --script FILE [--seed S] [scenario flags]
//	simrun shrink --seed S [scenario flags] [--out FILE] [--max-runs N]
//	simrun explore [--seed S] [--script FILE | --servers N --clients N --workload W --duration D]
//	               [--points LIST] [--restart-after D] [--max-runs N] [--parallel P] [--bug NAME]...
//	               [--out DIR] [--json]
//	simrun script --seed S [scenario flags]
//	simrun conform [--normalize] [--seed S] [--extended-types] < sequence.jsonl
//	simrun bugs
//	simrun hunt [--seeds N] [--seed-start S] [--parallel P] [--only BUG,...] [--duration D] [--json]
//	simrun bench [--seeds N] [--parallel P] [--cpuprofile FILE] [--memprofile FILE]
//	simrun help [command]
//
// Exit status: 0 when everything passed, 1 when a run failed (or a determinism bug was seen, or a
// hunted bug was not found), 2 on bad usage or malformed input. Every failure names its class
// (scenarios.Report.Failure; runs with --datagram-faults are classed apart under
// "outside-fault-model:").
package main

// mainUsage opens 'simrun help'.
const mainUsage = `simrun drives zabsim, the deterministic simulation harness for ZooKeeper's ZAB protocol.

Usage: simrun COMMAND [flags]

Examples:
  simrun run --seeds 1000                      # sweep seeds 1..1000 with every fault family
  simrun run --seeds 200 --bug ZK-3911         # find a real bug again
  simrun replay --seed 17 --bug ZK-3911        # the failing seed's full trace, and a determinism check
  simrun shrink --seed 17 --bug ZK-3911        # its minimal fault script
  simrun explore --bug ZK-1653                 # crash a small ensemble at every crash point it reaches
  simrun hunt                                  # the bug zoo: seeds and time until each bug is found
  simrun conform --normalize < scenarios/conform/testdata/set_get.jsonl  # the simulated server's results
`
