//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package matrix

import (
	"os"

	"github.com/gofrs/flock"
)

// lockFile is the sidecar lock, held through gofrs/flock where flock(2) is
// missing (Windows: LockFileEx; others: fcntl).
type lockFile struct{ fl *flock.Flock }

// openLockFile creates the lock file in the caller's goroutine, so that a wait
// abandoned later does not create it after the caller has returned (unless
// someone removes it in between).
func openLockFile(path string) (*lockFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	_ = f.Close()
	return &lockFile{fl: flock.New(path)}, nil
}

func (l *lockFile) lock() error { return l.fl.Lock() }

func (l *lockFile) release() { _ = l.fl.Close() }
