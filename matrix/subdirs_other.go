//go:build !linux

package matrix

import "os"

// subdirNames returns the names of the folders in dir (not symlinks).
func subdirNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, err
}
