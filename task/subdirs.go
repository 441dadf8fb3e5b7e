package task

import "os"

// eachSubdir calls fn with the name of every folder in dir (not symlinks),
// in the directory's own order: os.ReadDir's sort is wasted on thousands of
// task folders of which only the orphans are reported (sorted). Keep a name
// past the call with strings.Clone: callers must not rely on it living on.
func eachSubdir(dir string, fn func(name string)) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	for _, e := range entries {
		if e.IsDir() {
			fn(e.Name())
		}
	}
	return err
}
