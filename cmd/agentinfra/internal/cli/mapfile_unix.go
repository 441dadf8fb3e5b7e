//go:build unix

package cli

import (
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapThreshold is the size from which readFileMapped maps a file instead of
// reading it: below it the copy is cheap and a mapping is one more syscall.
const mapThreshold = 64 << 10

// mapped remembers the mappings, so that a fault in them can be told apart
// from a bug (see mappedFault).
var mapped struct {
	sync.Mutex
	ranges [][2]uintptr
}

// readFileMapped returns the contents of a large regular file as a read-only
// memory mapping that lives until the process exits; smaller or special files
// are read with os.ReadFile. Only short-lived, read-only commands use it: a
// 1.7 MB matrix read into fresh heap memory costs ~420 page faults (~1 ms),
// mapped from the page cache it costs ~30 (the kernel maps 16 pages per
// fault). The bytes must never be written to: the mapping is read-only.
func readFileMapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() || size < mapThreshold || size != int64(int(size)) {
		return os.ReadFile(path)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return os.ReadFile(path) // e.g. a file system that cannot map
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	mapped.Lock()
	mapped.ranges = append(mapped.ranges, [2]uintptr{start, start + uintptr(len(b))})
	mapped.Unlock()
	// A file truncated by another program while mapped makes the pages past
	// its new end fault (SIGBUS): turn that into a panic mappedFault catches.
	debug.SetPanicOnFault(true)
	return b[:len(b):len(b)], nil
}

// errFileShrank reports that a mapped file was truncated while being read.
var errFileShrank = errors.New("the matrix was rewritten in place (truncated) while it was being read; run the command again")

// mappedFault turns a panic from a fault inside a mapping made by
// readFileMapped into errFileShrank; any other value is returned as is.
func mappedFault(r any) (error, bool) {
	re, ok := r.(runtime.Error)
	if !ok {
		return nil, false
	}
	addrErr, ok := re.(interface{ Addr() uintptr })
	if !ok {
		return nil, false
	}
	addr := addrErr.Addr()
	mapped.Lock()
	defer mapped.Unlock()
	for _, rg := range mapped.ranges {
		if addr >= rg[0] && addr < rg[1] {
			return errFileShrank, true
		}
	}
	return nil, false
}
