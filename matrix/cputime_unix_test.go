//go:build unix

package matrix

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process used so far (user and system, every
// thread): a benchmark's figure that the machine's other load does not
// inflate, as it does wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
