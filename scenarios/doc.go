// Package scenarios runs one seed of a randomized scenario against a simulated ZooKeeper ensemble
// and judges it: the ensemble (zabmodel), client applications running a workload (registers,
// queue, config, registry, multi, lock, rwlock, election), a fault script, and every checker
// (checkers/zab as the run goes; checkers, checkers/lock and a convergence check at the end).
//
// A run has a fault phase, in which the script's actions (crashes, crash points, partitions,
// clogs, resets, pauses, clock faults, client kills, forced session expiries) happen at their
// times, and a liveness phase, in which every fault is healed and every server restarted, and a
// leader, every pending operation and converged servers must follow within Options.LivenessBound.
// Each seed draws its own scenario (DrawScript, from a random stream of its own) unless
// Options.Script gives one; the same seed and options replay the same run, bit for bit.
//
//	rep, err := scenarios.Run(scenarios.Options{Seed: 17, Workload: "registers", Faults: []string{"crash", "partition"}})
//	if err != nil {
//		return err // the options are invalid
//	}
//	if rep.Failed() {
//		fmt.Println(rep.Failure()) // a class: "zab:CommittedLogDurability", "linearizability/register", ...
//		fmt.Println(rep.Explain()) // what failed, where, and the script
//	}
//
// Scripts are text (ParseScript; see Script for the format); testdata/named holds the classic
// scenarios and testdata/regressions the runs that once found a fault in zabsim itself. Explore
// crashes a small configuration at every crash point its base run reaches, one run per point.
// cmd/simrun drives all of this from the shell, across cores.
package scenarios
