// Package rapidfail makes the fail files that rapid saves under testdata/rapid/<Test>/ count as
// regressions. rapid replays a test's committed fail files before its random cases, but a file it
// cannot use (saved by another version of rapid, or whose draws no longer fit the property) it only
// logs, and the test passes without having replayed anything. Check fails the test instead.
//
//	func TestSomething(t *testing.T) {
//		rapidfail.Check(t, func(t *rapid.T) { ... })
//	}
//
// Files(t) lists the fail files committed for the running test, for a test that wants to insist
// some exist.
package rapidfail
