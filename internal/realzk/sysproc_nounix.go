//go:build !unix

package realzk

import (
	"os"
	"syscall"
)

// processAttributes has no process groups to offer off Unix.
func processAttributes() *syscall.SysProcAttr { return nil }

// killGroup kills the server process itself; off Unix the JVM has no
// children worth chasing.
func killGroup(pid int) error {
	process, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return process.Kill()
}
