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
// that follows, which says how to create one.
func (s *Store) checkWritable() error {
	target := s.Path
	if p, err := filepath.EvalSymlinks(s.Path); err == nil {
		target = p
	}
	fi, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read matrix: %w", err)
	}
	if fi.Mode().Perm()&0o222 == 0 || !canWrite(target) {
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
