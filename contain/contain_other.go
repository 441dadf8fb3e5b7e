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
