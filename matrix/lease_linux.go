//go:build linux

package matrix

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// takeReadLease asks the kernel for a read lease on f (fcntl F_SETLEASE
// F_RDLCK). The kernel grants it only while no process has the file open for
// writing (leaseBusy otherwise: an editor is saving it in place), and while
// it is held another process's open for writing or truncate waits until it
// is released (the holder is told by SIGIO, which Go ignores; leaseBroken
// sees it). Leases need the file's owner or CAP_LEASE and a local file
// system: leaseNone says there is none, and the store falls back to
// comparing what it read.
func takeReadLease(f *os.File) leaseState {
	var err error
	if cerr := control(f, func(fd uintptr) { _, err = unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_RDLCK) }); cerr != nil {
		return leaseNone
	}
	switch {
	case err == nil:
		return leaseHeld
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EBUSY):
		return leaseBusy
	}
	return leaseNone
}

// leaseBroken reports whether another process has started to open f's file
// for writing (or to truncate it) since the lease was taken.
func leaseBroken(f *os.File) bool {
	var (
		typ int
		err error
	)
	if cerr := control(f, func(fd uintptr) { typ, err = unix.FcntlInt(fd, unix.F_GETLEASE, 0) }); cerr != nil || err != nil {
		return true
	}
	return typ != unix.F_RDLCK
}

// releaseLease lets a waiting writer go on (closing f releases it too).
func releaseLease(f *os.File) {
	_ = control(f, func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_UNLCK) })
}

func control(f *os.File, fn func(fd uintptr)) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(fn)
}
