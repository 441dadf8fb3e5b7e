// Package regularfile reads a file only if it is a regular file of bounded
// size. A path from input may name a FIFO (a read that waits forever for a
// writer), a device or /proc file (endless, or lying about its size):
// opening without blocking and checking the open file itself, not the path,
// leaves no moment for the path to become something else.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrNotRegular is a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is a file over the caller's limit.
var ErrTooLarge = errors.New("file too large")

// MaxConfigBytes bounds a file a person writes to configure agentinfra:
// .agent/config.yaml, .agent/policy.yaml, the user's allowlist. Real ones
// are a few KiB; without a bound, a file grown by mistake (or a link to
// something endless) would be read whole into memory before any check.
const MaxConfigBytes = 1 << 20

// Read returns the content of the regular file at path (symbolic links
// followed), refusing anything else with ErrNotRegular and a file of more
// than max bytes with ErrTooLarge (max < 0: no limit).
func Read(path string, max int64) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO with no writer would wait forever.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is %s", ErrNotRegular, path, kind(fi.Mode()))
	}
	if max >= 0 && fi.Size() > max {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the limit of %d bytes", ErrTooLarge, path, fi.Size(), max)
	}
	r := io.Reader(f)
	if max >= 0 {
		r = io.LimitReader(f, max+1) // the file may grow after the stat
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if max >= 0 && int64(len(b)) > max {
		return nil, fmt.Errorf("%w: %s is over the limit of %d bytes", ErrTooLarge, path, max)
	}
	return b, nil
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
