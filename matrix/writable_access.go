//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package matrix

import "syscall"

// canWrite asks the kernel whether this user may write path (for root, this
// still fails on a read-only file system).
func canWrite(path string) bool { return syscall.Access(path, 0x2 /* W_OK */) == nil }
