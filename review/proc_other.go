//go:build !unix

package review

import "os/exec"

// ownGroup: without process groups, the check alone is killed.
func ownGroup(*exec.Cmd) {}
