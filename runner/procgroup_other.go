//go:build !unix

package runner

import (
	"os"
	"os/exec"
	"syscall"
)

// Without Unix process groups only the CLI process itself can be signalled.
func startInGroup(cmd *exec.Cmd) {}

func signalGroup(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	p.Kill()
	return nil
}

func exitInfo(state interface{ Sys() any }) (code int, signaled bool, sig string) {
	if ps, ok := state.(*os.ProcessState); ok {
		return ps.ExitCode(), false, ""
	}
	return -1, false, ""
}
