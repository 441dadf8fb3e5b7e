//go:build !unix

package local

import (
	"os/exec"
	"syscall"
)

// The local fleet needs Unix sessions and process groups; elsewhere runs
// cannot be detached and stop can only reach the supervisor.
func detach(cmd *exec.Cmd)                          {}
func procStart(pid int) string                      { return "" }
func pidAlive(pid int) bool                         { return false }
func childrenOf(ppid int) []int                     { return nil }
func signalGroup(pid int, sig syscall.Signal) error { return nil }
func signalProc(pid int, sig syscall.Signal) error  { return nil }

// childrenVisible says whether the supervisor can see the agent CLI it started.
const childrenVisible = false
