//go:build !unix

package resume

import "os/exec"

func detach(*exec.Cmd) {}
