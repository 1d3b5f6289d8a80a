//go:build unix && !linux

package realzk

import "syscall"

// processAttributes puts the server in its own process group, so that
// killGroup reaches everything it spawned.
func processAttributes() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends SIGKILL to the process group led by pid.
func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }
