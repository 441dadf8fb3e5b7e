package task

import "os"

// subdirNames returns the names of the entries in dir, in the directory's
// own order: os.ReadDir's sort is wasted on thousands of task folders of
// which only the orphans are reported (sorted), and its two objects per
// entry cost more than the check itself. Readdirnames does not say what an
// entry is: callers check with isDir the few names they report.
func subdirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// isDir reports whether dir/name is a folder (a symlink is not).
func isDir(dir, name string) bool {
	fi, err := os.Lstat(dir + string(os.PathSeparator) + name)
	return err == nil && fi.IsDir()
}
