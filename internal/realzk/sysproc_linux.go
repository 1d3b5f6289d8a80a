package realzk

import "syscall"

// processAttributes puts the server in its own process group, so that
// killGroup reaches everything it spawned, and asks the kernel to kill it
// if the test process dies first. Pdeathsig fires when the OS thread that
// started the child exits; the Go runtime only retires threads whose
// goroutine locked them, which nothing here does.
func processAttributes() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to the process group led by pid.
func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }
