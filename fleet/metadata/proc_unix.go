//go:build unix

package metadata

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts cmd as the leader of a new process group.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process group that p leads, p and whatever it
// started; once p is gone, whatever is left of its group (gone is not an
// error: kill answers ESRCH).
func killGroup(p *os.Process) error {
	if p == nil || p.Pid <= 0 {
		return nil
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	return nil
}

// killLeftovers kills what is left of the group of a task that ended.
func killLeftovers(p *os.Process) { _ = killGroup(p) }
