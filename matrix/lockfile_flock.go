//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package matrix

import (
	"errors"
	"os"
	"syscall"
)

// lockFile is the sidecar lock, held with flock(2) (what gofrs/flock uses on
// these systems, so older agentinfra binaries and this one exclude each other).
type lockFile struct{ f *os.File }

// openLockFile opens, creating if needed, the lock file in the caller's
// goroutine: a wait that is abandoned later then blocks on this descriptor and
// can never create the file after the caller has returned.
func openLockFile(path string) (*lockFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	return &lockFile{f: f}, nil
}

// lock blocks until the lock is held; the kernel queues the waiters.
func (l *lockFile) lock() error {
	for {
		err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// release drops the lock (if held) and closes the file.
func (l *lockFile) release() { _ = l.f.Close() } // closing the last descriptor releases a flock
