//go:build unix

package resume

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own: the resumed run outlives the
// command (or the console) that resumed it, and its terminal.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
