package realzk

import (
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
)

// EnvRequire names the environment variable that turns a missing real
// server from a skip into a failure: set it to 1 where the server must be
// there (CI with the zookeeper package installed).
const EnvRequire = "ZABSIM_REQUIRE_ZOOKEEPER"

// SkipIfUnavailable skips the test when java or a jar is missing, or fails
// it when $ZABSIM_REQUIRE_ZOOKEEPER is 1.
func SkipIfUnavailable(t testing.TB, opts Options) {
	t.Helper()
	err := Available(opts)
	if err == nil {
		return
	}
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("%v (%s=1 requires the real server)", err, EnvRequire)
	}
	announceSkip.Do(func() { announce(skipNotice(err)) })
	t.Skipf("skipping: %v (set %s=1 to make this a failure)", err, EnvRequire)
}

// announceSkip makes the skip visible once per test binary.
var announceSkip sync.Once

// skipNotice is the one line a test binary shows when it skips the conformance tests.
func skipNotice(err error) string {
	return fmt.Sprintf("zabsim: conformance tests against the real ZooKeeper SKIPPED (%v); install Debian's "+
		"zookeeper package and Java 17 to run them, or set %s=1 to make this a failure", err, EnvRequire)
}

// announce shows a line to the person running the tests. go test prints nothing of a passing
// package but its "ok" line (t.Skip's message only under -v), so the line goes to the terminal
// when there is one, and to stderr as well, which -v and a failing package show.
func announce(line string) {
	fmt.Fprintln(os.Stderr, line)
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		_, _ = io.WriteString(tty, line+"\n")
		_ = tty.Close()
	}
}

// StartForTest starts a server with default options for the test and stops
// it when the test ends, printing the end of its log if the test failed.
// It skips (or fails, see EnvRequire) when the server is unavailable.
func StartForTest(t testing.TB) *Server {
	t.Helper()
	return StartForTestWith(t, Options{})
}

// StartForTestWith is StartForTest with options.
func StartForTestWith(t testing.TB, opts Options) *Server {
	t.Helper()
	SkipIfUnavailable(t, opts)
	server, err := Start(opts)
	if err != nil {
		t.Fatalf("start real ZooKeeper: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("real ZooKeeper log tail:\n%s", server.LogTail(60))
		}
		if err := server.Stop(); err != nil {
			t.Errorf("stop real ZooKeeper: %v", err)
		}
	})
	return server
}
