//go:build linux

package matrix

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps the names a and b in dir in one step (renameat2
// RENAME_EXCHANGE): both files exist the whole time, so whatever was at b
// (the matrix, or a file an editor renamed there a moment ago) ends up at a,
// never unlinked. supported is false when the file system cannot do it.
func exchange(dir *os.File, a, b string) (supported bool, err error) {
	if noExchange {
		return false, nil
	}
	var rerr error
	if cerr := control(dir, func(fd uintptr) {
		rerr = unix.Renameat2(int(fd), a, int(fd), b, unix.RENAME_EXCHANGE)
	}); cerr != nil {
		return true, cerr
	}
	if errors.Is(rerr, unix.EINVAL) || errors.Is(rerr, unix.ENOSYS) || errors.Is(rerr, unix.EOPNOTSUPP) {
		return false, nil
	}
	return true, rerr
}
