// Package failurestore keeps the failures a long-running search finds ('simrun farm') in an
// embedded SQLite database, one row per distinct failure, so that the same bug found ten thousand
// times appears once, with its count and the smallest script that shows it.
//
// A failure's signature is its class, its invariant and its shape:
//
//   - class: simrun's failure class, e.g. "zab:ProcessConsistency", "linearizability", "panic";
//   - invariant: what exactly broke within the class: a ZAB invariant's name, a checker finding's
//     rule, a panic's message with its numbers masked;
//   - shape: where in the protocol it broke, not how the run got there: for a ZAB invariant, the
//     kind of protocol event at which the checker saw it and the role of the server in which that
//     event happened (e.g. "current-epoch at FOLLOWING"); for a client-visible checker, the
//     workload whose history broke it.
//
// None of the three names the seed, the servers, the zxids, the times or the faults involved,
// which differ from one find of a bug to the next: a bug that any leader change exposes is found
// after crashes, partitions and resets alike, and stays one signature. Each signature keeps its
// smallest shrunk script, with the fault verbs that script still needs (faults, e.g.
// "crash+partition"), which are shown but are not part of the signature. Two different bugs that
// break the same invariant at the same kind of event share a signature; a person reading its
// script and count sees the commonest one first.
//
// Every Record is one transaction, committed before it returns, on a database in WAL mode with
// synchronous=FULL: a farm killed with SIGKILL (or a machine that loses power) keeps every
// failure it had reported.
//
// Usage:
//
//	store, err := failurestore.Open("failures.db")
//	...
//	defer store.Close()
//	recorded, err := store.Record(failurestore.Failure{Seed: 17, Build: build, Class: class, ...})
//	entries, err := store.List()
//
// The database is plain SQLite (driver modernc.org/sqlite, pure Go): 'sqlite3 failures.db' reads
// it too.
package failurestore
