//go:build unix

package waiting

import (
	"errors"
	"syscall"
)

// alive reports whether process pid exists (EPERM: it does, another
// user's).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
