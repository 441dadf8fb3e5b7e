//go:build unix

package task

import (
	"io/fs"
	"syscall"
)

// fileID is the file's inode: a file replaced by rename has a new one.
func fileID(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
