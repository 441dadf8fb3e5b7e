//go:build !unix

package metadata

import (
	"os"
	"os/exec"
)

// Without Unix process groups only the task process itself can be killed.
func ownGroup(cmd *exec.Cmd) {}

func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}

func killLeftovers(p *os.Process) {}
