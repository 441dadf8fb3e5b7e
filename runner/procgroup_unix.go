//go:build unix

package runner

import (
	"errors"
	"os/exec"
	"syscall"
)

// startInGroup makes the child the leader of a new process group, so that the
// agent CLI and everything it spawns (node workers, shells, tools) can be
// signalled at once.
func startInGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// signalGroup sends sig to the whole process group led by pid. A group that no
// longer exists is not an error.
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

// exitInfo extracts the exit code (128+signal for a signal death, like a shell).
func exitInfo(state interface{ Sys() any }) (code int, signaled bool, sig string) {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok {
		return -1, false, ""
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), true, ws.Signal().String()
	}
	return ws.ExitStatus(), false, ""
}
