package realzk

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/scenarios/conform"
)

// TestServerStartStop checks that a server starts fresh, answers four-letter
// words, and leaves nothing behind when stopped.
func TestServerStartStop(t *testing.T) {
	SkipIfUnavailable(t, Options{})
	server, err := Start(Options{})
	require.NoError(t, err)
	ctx := context.Background()
	zxid, err := server.LastZxid(ctx)
	require.NoError(t, err)
	assert.Zero(t, zxid, "a fresh server has applied no transaction")
	tracked, err := server.TracksSession(ctx, 0x1234)
	require.NoError(t, err)
	assert.False(t, tracked)
	pid := server.cmd.Process.Pid

	require.NoError(t, server.Stop())
	require.NoError(t, server.Stop(), "Stop is idempotent")
	assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the server process is gone")
	_, err = os.Stat(server.dir)
	assert.True(t, os.IsNotExist(err), "the server directory is removed")
	assert.Contains(t, server.LogTail(200), "binding to port", "the log survives Stop")
}

// TestStartReportsMissingJars checks the message for a missing install.
func TestStartReportsMissingJars(t *testing.T) {
	_, err := Start(Options{JarDir: t.TempDir()})
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "zookeeper-jute.jar")
	assert.Contains(t, err.Error(), "apt-get install")
	assert.ErrorIs(t, Available(Options{Java: "no-such-java-binary"}), ErrUnavailable)
}

// connect opens a plain go-zookeeper session for the path tests.
func connect(t *testing.T, server *Server) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect([]string{server.Addr()}, 4*time.Second, zk.WithLogInfo(false))
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	deadline := time.After(10 * time.Second)
	for conn.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-deadline:
			t.Fatal("no session after 10 s")
		}
	}
	return conn
}

// pathRunes are the characters path properties draw from: the separator,
// dots, plain and non-ASCII letters, and one rune from each side of every
// boundary of go-zookeeper's and Java's rejected ranges.
var pathRunes = []string{
	"/", "/", "/", ".", ".", "a", "b", "\x00", "\x01", "\x1f", " ", "\x7e", "\x7f", "\u009f", "\u00a0", "é",
	"\ud7ff", "\ue000", "\uefff", "\uf000", "\uf8ff", "\uf900", "\uffef", "\ufff0", "\ufffe", "\uffff",
	"😀", "\xff",
}

func drawPath(t *rapid.T) string {
	parts := rapid.SliceOfN(rapid.SampledFrom(pathRunes), 0, 8).Draw(t, "parts")
	prefix := rapid.SampledFrom([]string{"/", "/", "/", ""}).Draw(t, "prefix")
	path := prefix
	for _, part := range parts {
		path += part
	}
	return path
}

// TestClientRejectsPathMatchesGoZookeeper checks conform.ClientRejectsPath
// against go-zookeeper itself: exists for plain paths, a sequential create
// for sequential ones.
func TestClientRejectsPathMatchesGoZookeeper(t *testing.T) {
	server := StartForTest(t)
	conn := connect(t, server)
	rapid.Check(t, func(t *rapid.T) {
		path := drawPath(t)
		_, _, err := conn.Exists(path)
		assert.Equal(t, conform.ClientRejectsPath(path, false), err == zk.ErrInvalidPath,
			"exists %q: go-zookeeper says %v", path, err)
		_, err = conn.Create(path, nil, zk.FlagSequence, zk.WorldACL(zk.PermAll))
		assert.Equal(t, conform.ClientRejectsPath(path, true), err == zk.ErrInvalidPath,
			"sequential create %q: go-zookeeper says %v", path, err)
	})
}

// TestPathUtilsRejectsMatchesServer checks conform.PathUtilsRejects against
// the server: a create of a child of the root that go-zookeeper lets through
// fails with BADARGUMENTS exactly when PathUtils rejects the path.
func TestPathUtilsRejectsMatchesServer(t *testing.T) {
	server := StartForTest(t)
	conn := connect(t, server)
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SliceOfN(rapid.SampledFrom(pathRunes[3:]), 1, 6).Draw(t, "name")
		path := "/"
		for _, part := range name {
			path += part
		}
		if conform.ClientRejectsPath(path, false) {
			t.Skip("go-zookeeper rejects it locally")
		}
		_, err := conn.Create(path, nil, 0, zk.WorldACL(zk.PermAll))
		if err == zk.ErrNodeExists {
			err = nil
		}
		assert.Equal(t, conform.PathUtilsRejects(path), err == zk.ErrBadArguments,
			"create %q: server says %v", path, err)
		if err != zk.ErrBadArguments {
			assert.NoError(t, err, "create %q", path)
		}
	})
}
