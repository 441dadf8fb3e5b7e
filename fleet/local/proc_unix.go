//go:build unix

package local

import (
	"errors"
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own: it survives the CLI call or
// the MCP server that started it, and a terminal's Ctrl-C does not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// signalGroup signals the process group led by pid (gone is not an error).
func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// signalProc signals one process (gone is not an error).
func signalProc(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
