//go:build !linux

package contain

import (
	"os/exec"
	"runtime"
)

// Support is what this machine offers to contain an agent's processes.
type Support struct {
	ABI   int    `json:"landlock_abi"`
	Why   string `json:"why,omitempty"`
	Mount bool   `json:"mount_namespace"`
}

// Supported: Landlock is Linux's.
func Supported() Support {
	return Support{Why: "Landlock is a Linux feature; this is " + runtime.GOOS}
}

// Setup gives cmd its environment (ChildEnv); without Landlock there is no
// sandbox to apply.
func Setup(cmd *exec.Cmd, clean bool, adds ...[]string) error {
	setEnv(cmd, clean, adds)
	return nil
}
