package matrix

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrReadOnly: the matrix file or its folder cannot be written, so a change is
// refused before any work (rename would otherwise replace a read-only file).
var ErrReadOnly = errors.New("matrix is read-only")

// checkWritable refuses a matrix whose file has no write bit for anyone, or
// that the user may not write, or whose folder (where the lock and the
// temporary file go) the user may not write. Mode bits are checked explicitly
// because root passes every access check. A missing file is left to the read
// that follows, which says how to create one. target is the resolved path.
func (s *Store) checkWritable(target string) error {
	fi, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read matrix: %w", err)
	}
	if fi.Mode().Perm()&0o222 == 0 || !canWrite(target) {
		// A file its owner may write, owned by someone else: chmod is not
		// the cure (e.g. a root-owned matrix left by a write as root).
		if uid, _, ok := ownerOf(fi); ok && uid != os.Geteuid() && fi.Mode().Perm()&0o200 != 0 {
			return fmt.Errorf("%w: %s cannot be written: it belongs to user %s (uid %d), not to this user (uid %d); give it back to its owner (sudo chown %d %s) or run the command as that user; nothing was changed",
				ErrReadOnly, s.Path, userName(uid), uid, os.Geteuid(), os.Geteuid(), s.Path)
		}
		return fmt.Errorf("%w: %s (mode %04o) cannot be written; make it writable (chmod u+w %s) and run the command again; nothing was changed",
			ErrReadOnly, s.Path, fi.Mode().Perm(), s.Path)
	}
	for _, dir := range []string{filepath.Dir(s.Path), filepath.Dir(target)} {
		if !canWrite(dir) {
			return fmt.Errorf("%w: folder %s cannot be written (the matrix is replaced by renaming a new file into it); make it writable and run the command again; nothing was changed",
				ErrReadOnly, dir)
		}
	}
	return nil
}
