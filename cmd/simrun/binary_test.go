package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// builtBinary is simrun built once per test binary, for the tests that need separate processes:
// shards run side by side, and a farm killed with SIGKILL.
var builtBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
	log  []byte
}

// TestMain removes the built binary when the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtBinary.dir != "" {
		_ = os.RemoveAll(builtBinary.dir)
	}
	os.Exit(code)
}

// simrunBinary builds simrun from this package's source (once) and returns its path.
func simrunBinary(t *testing.T) string {
	t.Helper()
	builtBinary.once.Do(func() {
		builtBinary.dir, builtBinary.err = os.MkdirTemp("", "simrun-binary-")
		if builtBinary.err != nil {
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		builtBinary.path = filepath.Join(builtBinary.dir, "simrun")
		build := exec.Command(goTool, "build", "-o", builtBinary.path, ".")
		builtBinary.log, builtBinary.err = build.CombinedOutput()
	})
	require.NoError(t, builtBinary.err, "building simrun: %s", builtBinary.log)
	return builtBinary.path
}
