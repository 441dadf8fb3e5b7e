//go:build !linux

package task

import "os"

func readSubdirs(f *os.File, _ string, fn func(name string)) error {
	entries, err := f.ReadDir(-1)
	for _, e := range entries {
		if e.IsDir() {
			fn(e.Name())
		}
	}
	return err
}
