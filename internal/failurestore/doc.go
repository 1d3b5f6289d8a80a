// Package failurestore keeps the failures a long-running search finds ('simrun farm') in an
// embedded SQLite database, one row per distinct failure, so that the same bug found ten thousand
// times appears once, with its count and the smallest script that shows it.
//
// A failure's signature is its class, its invariant and its shape:
//
//   - class: simrun's failure class, e.g. "zab:ProcessConsistency", "linearizability", "panic";
//   - invariant: what exactly broke within the class: a ZAB invariant's name, a checker finding's
//     rule, a panic's message with its numbers masked;
//   - shape: the fault verbs that the shrunk script still needs, sorted and without their times,
//     targets or order (e.g. "crash+partition"; "no-faults" when none is needed).
//
// None of the three names the seed, the servers, the zxids or the times involved, which differ
// from one find of a bug to the next; together they tell apart failures that break the same check
// in different ways. A bug that shows under two different fault combinations counts as two
// signatures, which errs on the side of showing a person one more script.
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
