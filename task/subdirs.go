package task

import "os"

// subdirNames returns the names of the folders in dir (not symlinks), in the
// directory's own order: os.ReadDir's sort is wasted on thousands of task
// folders of which only the orphans are reported (sorted).
func subdirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, err
}
