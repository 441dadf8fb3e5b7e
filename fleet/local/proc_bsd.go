//go:build unix && !linux

package local

import "syscall"

// Without /proc the start time is unknown: the pid alone decides.
func procStart(pid int) string { return "" }

func pidAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// childrenOf is not available without /proc: stop then goes through the
// supervisor, which ends its run.
func childrenOf(ppid int) []int { return nil }

// childrenVisible says whether the supervisor can see the agent CLI it started.
const childrenVisible = false
