//go:build !linux

package contain

// Without /proc the run's processes cannot be found: only the agent CLI's
// process group is signalled (by the runner).

// BecomeSubreaper is Linux's; elsewhere it does nothing.
func BecomeSubreaper() error { return nil }

// KillDescendants finds nothing without /proc.
func KillDescendants() int { return 0 }

func marked(needle string) []int { return nil }
func reap(pids []int)            {}

// ProcStart cannot be told without /proc.
func ProcStart(pid int) string { return "" }

// Alive cannot tell a dead process without /proc: any pid counts as
// alive (a live supervisor is never taken for a crashed one).
func Alive(pid int, start string) bool { return pid > 0 }
