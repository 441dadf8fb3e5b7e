package matrix

import (
	"os"

	"github.com/gofrs/flock"
)

// lockFile is the sidecar lock, held through gofrs/flock (flock(2) on Unix,
// LockFileEx on Windows).
type lockFile struct{ fl *flock.Flock }

// openLockFile creates the lock file in the caller's goroutine: flock.Lock
// opens (and would create) the file only when the waiting goroutine runs, and
// a wait abandoned before then must not create it after the caller returned.
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
