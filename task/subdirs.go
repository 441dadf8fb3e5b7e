package task

import "os"

// eachSubdir calls fn with the name of every entry in dir, in the
// directory's own order: os.ReadDir's sort is wasted on thousands of task
// folders of which only the orphans are reported (sorted), and its two
// objects per entry cost more than the check itself. The names come from
// Readdirnames, which does not say what an entry is: callers check with
// isDir the few names they report.
func eachSubdir(dir string, fn func(name string)) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	for _, name := range names {
		fn(name)
	}
	return err
}

// isDir reports whether dir/name is a folder (a symlink is not).
func isDir(dir, name string) bool {
	fi, err := os.Lstat(dir + string(os.PathSeparator) + name)
	return err == nil && fi.IsDir()
}
