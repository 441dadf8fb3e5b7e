package task

import (
	"io/fs"
	"os"
	"path/filepath"
)

// eachSubdir calls fn with the name of every folder in dir (not symlinks),
// in the directory's own order: os.ReadDir's sort is wasted on thousands of
// task folders of which only the orphans are reported (sorted). name is
// valid only during the call (strings.Clone what you keep): on Linux it
// points into the read buffer, so listing 4,000 folders allocates nothing
// per folder (os.File.ReadDir allocates two objects per entry).
func eachSubdir(dir string, fn func(name string)) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return readSubdirs(f, dir, fn)
}

// isDirEntry reports whether dir/name is a folder, for entries whose type
// the directory listing does not tell (some file systems).
func isDirEntry(dir, name string) bool {
	fi, err := os.Lstat(filepath.Join(dir, name))
	return err == nil && fi.Mode().Type() == fs.ModeDir
}
